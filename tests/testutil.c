#include "testutil.h"

#include <CUnit/Basic.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

int tu_run_suite(const char *suite, const tu_case *cases) {
  if (CU_initialize_registry() != CUE_SUCCESS)
    return 2;
  CU_pSuite s = CU_add_suite(suite, NULL, NULL);
  if (!s)
    return 2;
  for (const tu_case *c = cases; c->name; c++)
    if (!CU_add_test(s, c->name, c->fn))
      return 2;
  CU_basic_set_mode(CU_BRM_VERBOSE);
  CU_basic_run_tests();
  unsigned failed =
      CU_get_number_of_failures() + CU_get_number_of_tests_failed();
  CU_cleanup_registry();
  return failed ? 1 : 0;
}

uint8_t *tu_read_file(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return NULL;
  size_t cap = 1 << 16, n = 0;
  uint8_t *buf = malloc(cap + 1);
  size_t got;
  while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0) {
    n += got;
    if (n == cap) {
      cap *= 2;
      uint8_t *nb = realloc(buf, cap + 1);
      if (!nb) {
        free(buf);
        buf = NULL;
      }
      buf = nb;
    }
  }
  fclose(f);
  if (!buf)
    return NULL;
  buf[n] = 0;
  if (len)
    *len = n;
  return buf;
}

int tu_write_file(const char *path, const void *data, size_t len) {
  FILE *f = fopen(path, "wb");
  if (!f)
    return -1;
  size_t w = fwrite(data, 1, len, f);
  return (fclose(f) == 0 && w == len) ? 0 : -1;
}

int tu_run(const char *cmd, char **out, int merge_stderr) {
  char *full = NULL;
  if (asprintf(&full, "%s%s", cmd, merge_stderr ? " 2>&1" : "") < 0)
    return -1;
  FILE *p = popen(full, "r");
  free(full);
  if (!p)
    return -1;
  size_t cap = 4096, n = 0;
  char *buf = malloc(cap);
  size_t got;
  while (buf && (got = fread(buf + n, 1, cap - n - 1, p)) > 0) {
    n += got;
    if (cap - n < 2) {
      cap *= 2;
      char *nb = realloc(buf, cap);
      if (!nb)
        free(buf);
      buf = nb;
    }
  }
  if (buf)
    buf[n] = 0;
  int st = pclose(p);
  if (out)
    *out = buf;
  else
    free(buf);
  if (st == -1)
    return -1;
  if (WIFEXITED(st))
    return WEXITSTATUS(st);
  if (WIFSIGNALED(st))
    return 128 + WTERMSIG(st);
  return -1;
}

const char *tu_tmpdir(void) {
  static char dir[4096];
  if (!dir[0]) {
    snprintf(dir, sizeof dir, "%s/tests/tmp-%d", TC_BINARY_DIR, (int)getpid());
    mkdir(TC_BINARY_DIR "/tests", 0755);
    if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
      perror(dir);
      abort();
    }
  }
  return dir;
}

const char *tu_tmp(const char *name) {
  static char bufs[8][4096];
  static int i;
  char *b = bufs[i++ & 7];
  snprintf(b, 4096, "%s/%s", tu_tmpdir(), name);
  return b;
}

const char *tu_guest(const char *name) {
  static char bufs[8][4096];
  static int i;
  char *b = bufs[i++ & 7];
  snprintf(b, 4096, "%s/%s", TC_GUEST_DIR, name);
  return b;
}

int tu_have(const char *path) { return access(path, R_OK) == 0; }

int tu_run_merge(char **out, const char *prog, ...) {
  char cmd[16384];
  size_t n = 0;
  va_list ap;
  va_start(ap, prog);
  for (const char *a = prog; a; a = va_arg(ap, const char *)) {
    /* single-quote each argument */
    if (n + 4 * strlen(a) + 4 >= sizeof cmd)
      break;
    cmd[n++] = '\'';
    for (const char *c = a; *c; c++) {
      if (*c == '\'') {
        memcpy(cmd + n, "'\\''", 4);
        n += 4;
      } else {
        cmd[n++] = *c;
      }
    }
    cmd[n++] = '\'';
    cmd[n++] = ' ';
  }
  va_end(ap);
  cmd[n] = 0;
  return tu_run(cmd, out, 1);
}
