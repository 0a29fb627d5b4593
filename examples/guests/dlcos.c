/* SPDX-License-Identifier: GPL-2.0-or-later */
/* dlopen: libm is loaded at run time and cos called through the pointer
 * dlsym gives; a library that does not exist is an error from dlerror. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  void *m = dlopen("libm.so.6", RTLD_LAZY);
  if (!m) {
    printf("dlopen: %s\n", dlerror());
    return 1;
  }
  double (*cosp)(double) = (double (*)(double))dlsym(m, "cos");
  double (*powp)(double, double) = (double (*)(double, double))dlsym(m, "pow");
  if (!cosp || !powp) {
    printf("dlsym: %s\n", dlerror());
    return 1;
  }
  for (int i = 1; i < argc; i++) {
    double x = atof(argv[i]);
    printf("cos(%g) = %.12f pow(%g, 0.5) = %.12f\n", x, cosp(x), x,
           powp(x, 0.5));
  }
  printf("missing: %s\n",
         dlopen("libnot-there.so.9", RTLD_NOW) ? "loaded" : "not loaded");
  return dlclose(m) == 0 ? 4 : 5;
}
