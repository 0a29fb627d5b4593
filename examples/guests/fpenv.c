/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The floating-point environment a process starts with and what libm does
 * in it. Built dynamically for every arch (tests/test_differential.c).
 *   fpenv env A B   the control register as Linux sets it (arm64 FPCR|FPSR,
 *                   arm FPSCR, mips FCSR, x87 control word|MXCSR), A/B in
 *                   each rounding mode, subnormals, NaNs (A=1, B=3)
 *   fpenv flags     the exception flags 1/0, 0/0, underflow, overflow set
 *   fpenv libm      a hash of 2000 results of each of 17 libm functions
 *                   (last-bit differences show), then results of domain
 *                   errors (log(-1), pow(-8, 1/3)...), fmod and long double */
#include <fenv.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static unsigned long start_control(const char **name) {
  unsigned long v = 0;
#if defined(__aarch64__)
  unsigned long sr = 0;
  __asm__ volatile("mrs %0, fpcr" : "=r"(v));
  __asm__ volatile("mrs %0, fpsr" : "=r"(sr));
  *name = "fpcr|fpsr";
  v = v << 32 | sr;
#elif defined(__arm__) && defined(__ARM_PCS_VFP)
  __asm__ volatile("vmrs %0, fpscr" : "=r"(v));
  *name = "fpscr";
#elif defined(__mips__) && !defined(__mips_soft_float)
  __asm__ volatile("cfc1 %0, $31" : "=r"(v));
  *name = "fcsr";
#elif defined(__x86_64__) || defined(__i386__)
  unsigned short cw = 0;
  unsigned mx = 0;
  __asm__ volatile("fnstcw %0" : "=m"(cw));
#if defined(__SSE__)
  __asm__ volatile("stmxcsr %0" : "=m"(mx));
#endif
  *name = "fpcw|mxcsr";
  v = (unsigned long)cw << 16 | mx;
#else
  *name = "none";
#endif
  return v;
}

static const char *flags(void) {
  static char s[64];
  int f = fetestexcept(FE_ALL_EXCEPT);
  snprintf(s, sizeof s, "%s%s%s%s%s", f & FE_INVALID ? "I" : "-",
           f & FE_DIVBYZERO ? "Z" : "-", f & FE_OVERFLOW ? "O" : "-",
           f & FE_UNDERFLOW ? "U" : "-", f & FE_INEXACT ? "X" : "-");
  return s;
}

/* Values from the command line, so nothing is folded at compile time. */
static void env(double one_, double three_) {
  const char *name = "";
  unsigned long ctl = start_control(&name);
  printf("%s at start %#lx, flags %s, round %d\n", name, ctl, flags(),
         fegetround() == FE_TONEAREST);
  volatile double one = one_, three = three_;
  volatile double tiny = DBL_MIN;
  static const struct {
    int mode;
    const char *name;
  } modes[] = {{FE_TONEAREST, "nearest"},
               {FE_UPWARD, "upward"},
               {FE_DOWNWARD, "downward"},
               {FE_TOWARDZERO, "towardzero"}};
  for (unsigned i = 0; i < sizeof modes / sizeof modes[0]; i++) {
    if (fesetround(modes[i].mode) != 0) {
      printf("%s: not settable\n", modes[i].name);
      continue;
    }
    volatile double q = one / three, nq = -one / three;
    volatile float fq = (float)one / (float)three;
    printf("%-10s %a %a %a %.17g rint(2.5)=%g\n", modes[i].name, q, nq,
           (double)fq, sqrt(three), rint(2.5));
  }
  fesetround(FE_TONEAREST);
  volatile double r = tiny / three;
  printf("DBL_MIN/3 = %a (subnormal %d)\n", r, fpclassify(r) == FP_SUBNORMAL);
  r = tiny * tiny;
  printf("DBL_MIN^2 = %a, DBL_MAX*3 = %g\n", r, DBL_MAX * three);
  volatile float ft = FLT_MIN;
  printf("FLT_MIN/8 = %a, 5e-324*0.5 = %a\n", (double)(ft / 8.0f),
         4.9406564584124654e-324 * (one / 2));
  printf("sqrt(-1) is nan %d, fma %a, nextafter %a\n", isnan(sqrt(-one)),
         fma(one / three, three, -one), nextafter(one, 2.0));
}

static void flag_ops(double one_, double three_) {
  volatile double one = one_, three = three_;
  volatile double tiny = DBL_MIN, zero = one - one;
  feclearexcept(FE_ALL_EXCEPT);
  volatile double r = one / zero;
  printf("1/0 = %g flags %s\n", r, flags());
  feclearexcept(FE_ALL_EXCEPT);
  r = zero / zero;
  printf("0/0 is nan %d flags %s\n", isnan(r), flags());
  feclearexcept(FE_ALL_EXCEPT);
  r = tiny / three;
  printf("DBL_MIN/3 = %a (subnormal %d) flags %s\n", r,
         fpclassify(r) == FP_SUBNORMAL, flags());
  feclearexcept(FE_ALL_EXCEPT);
  r = DBL_MAX * three;
  printf("DBL_MAX*3 = %g flags %s\n", r, flags());
  feclearexcept(FE_ALL_EXCEPT);
  r = tiny * tiny;
  printf("DBL_MIN^2 = %a flags %s\n", r, flags());
  feclearexcept(FE_ALL_EXCEPT);
  r = one / three;
  printf("1/3 flags %s\n", flags());
}

static double pow15(double x) { return pow(x, 1.5); }
static double atan2_07(double x) { return atan2(x, 0.7); }

static void libm(void) {
  static const struct {
    const char *name;
    double (*f)(double);
    double lo, span; /* inputs in [lo, lo + span) */
  } fs[] = {{"log", log, 0, 8},      {"exp", exp, -4, 8},
            {"pow", pow15, 0, 8},    {"atan2", atan2_07, -4, 8},
            {"sin", sin, -4, 8},     {"cos", cos, -4, 8},
            {"tan", tan, -4, 8},     {"log10", log10, 0, 8},
            {"log2", log2, 0, 8},    {"exp2", exp2, -4, 8},
            {"expm1", expm1, -4, 8}, {"log1p", log1p, -0.5, 8},
            {"atan", atan, -4, 8},   {"sinh", sinh, -4, 8},
            {"sqrt", sqrt, 0, 8},    {"cbrt", cbrt, -4, 8},
            {"asin", asin, -1, 2}};
  for (unsigned k = 0; k < sizeof fs / sizeof fs[0]; k++) {
    uint64_t h = 1469598103934665603ull; /* FNV-1a over the results */
    uint32_t s = 12345;
    for (int i = 0; i < 2000; i++) {
      s = s * 1103515245u + 12345u;
      double x = fs[k].lo + (double)(s >> 8) / (1 << 24) * fs[k].span;
      double y = fs[k].f(x);
      uint64_t b;
      memcpy(&b, &y, sizeof b);
      h = (h ^ b) * 1099511628211ull;
    }
    printf("%s %016llx\n", fs[k].name, (unsigned long long)h);
  }
  volatile double m1 = -1, z = 0, m8 = -8, third = 1.0 / 3;
  printf("log(-1) %g log(0) %g pow(-8,1/3) %g log2(-1) %g\n", log(m1), log(z),
         pow(m8, third), log2(m1));
  volatile double ten = 10, big = 1e300;
  printf("fmod(10,0.3) %a fmod(1e300,7.1) %a\n", fmod(ten, 0.3),
         fmod(big, 7.1));
  volatile long double half = 0.5L;
  printf("logl(0.5) %La expl(0.5) %La\n", logl(half), expl(half));
}

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "env";
  double a = argc > 2 ? atof(argv[2]) : 1.0, b = argc > 3 ? atof(argv[3]) : 3.0;
  if (strcmp(mode, "env") == 0)
    env(a, b);
  else if (strcmp(mode, "flags") == 0)
    flag_ops(a, b);
  else if (strcmp(mode, "libm") == 0)
    libm();
  else {
    fprintf(stderr, "usage: fpenv env|flags|libm [A B]\n");
    return 2;
  }
  return 0;
}
