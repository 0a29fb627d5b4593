/* STUB: the CLI is being written. */
#include <stdio.h>
int main(void) {
  fprintf(stderr, "tracecorn: not built yet\n");
  return 1;
}
