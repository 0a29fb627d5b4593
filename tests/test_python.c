/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The Python package (python/tracecorn, docs/python.md): each of its pytest
 * files run by Debian's python3 -m pytest against this build's
 * libtracecorn.so and tracecorn command, one case each. A case passes when
 * pytest exits 0 and its summary line says that at least as many tests
 * passed as the file is known to hold, and that none failed or erred (a
 * file whose tests were all skipped or not collected fails here). */
#include <CUnit/CUnit.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

/* Runs python/tests/FILE; its output is printed when it fails. */
static void pytest_file(const char *file, int min_passed) {
  char *out = NULL;
  char base[64];
  snprintf(base, sizeof base, "pytest-%s", file);
  const char *tmp = tu_tmp(base);
  int rc = tu_runf(&out, 1,
                   "cd %s/python/tests && env TRACECORN_LIBRARY=%s "
                   "TRACECORN_CLI=%s TRACECORN_GUESTS=%s "
                   "PYTHONPATH=%s/python PYTHONDONTWRITEBYTECODE=1 "
                   "%s -m pytest -q -p no:cacheprovider --basetemp=%s %s 2>&1",
                   TC_SOURCE_DIR, TC_SHARED_LIB, TC_CLI, TC_GUEST_DIR,
                   TC_SOURCE_DIR, TC_PYTHON3, tmp, file);
  /* the last line: "12 passed in 3.41s" (or "1 failed, 11 passed ...") */
  const char *last = out ? out : "";
  for (const char *p = last; (p = strstr(p, " passed")); p++) {
    const char *q = p;
    while (q > last && q[-1] >= '0' && q[-1] <= '9')
      q--;
    if (q < p)
      last = q;
  }
  int passed = atoi(last);
  bool clean = out && !strstr(out, " failed") && !strstr(out, " error");
  if (rc != 0 || passed < min_passed || !clean)
    fprintf(stderr, "\n%s: status %d, %d passed (at least %d expected)\n%s\n",
            file, rc, passed, min_passed, out ? out : "(no output)");
  CU_ASSERT_EQUAL(rc, 0);
  CU_ASSERT(passed >= min_passed);
  CU_ASSERT(clean);
  free(out);
}

static void test_read(void) { pytest_file("test_read.py", 11); }
static void test_record(void) { pytest_file("test_record.py", 9); }
static void test_errors(void) { pytest_file("test_errors.py", 3); }
static void test_examples(void) { pytest_file("test_examples.py", 6); }

int main(void) {
  static const tu_case cases[] = {{"read", test_read},
                                  {"record", test_record},
                                  {"errors", test_errors},
                                  {"examples", test_examples},
                                  {NULL, NULL}};
  return tu_run_suite("python", cases);
}
