/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Issue 29's reproducer: printf of doubles and pow, each the first call of
 * its function (lazy binding: ld.so's resolver runs between the caller
 * loading the FP argument registers and the callee reading them). Built
 * dynamically, -O1, -z lazy. `fpdyn 1.75` prints 1.7500 3.5000 5.2500 and
 * 2.3150. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  double a = atof(argc > 1 ? argv[1] : "1.75");
  printf("%.4f %.4f %.4f\n", a, a * 2, a * 3);
  printf("%.4f\n", pow(a, 1.5));
  return 0;
}
