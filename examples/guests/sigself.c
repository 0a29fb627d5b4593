/* raise() with a handler installed (signal delivery, issue 15). */
#include <signal.h>
#include <stdio.h>
static volatile int got;
static void h(int s) { got = s; }
int main(void) {
  signal(SIGALRM, h);
  raise(SIGALRM);
  printf("got=%d\n", got);
  return 0;
}
