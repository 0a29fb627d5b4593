/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The layers of libtracecorn (docs/architecture.md, CMakeLists.txt) hold:
 * every symbol a layer's objects use is defined by that layer, a layer
 * below it, or outside tracecorn (libc, Unicorn...), never by a layer
 * above; and the build's include paths refuse what a layer may not see
 * (Unicorn and capstone below the engine, the folders of higher layers). */
#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#define MAX_LAYERS 16

/* The order the docs give, bottom first. */
static const char *const expected[] = {"common",   "isa",      "formats",
                                       "analysis", "engine",   "loaders",
                                       "kernel",   "recorder", "lib"};
#define NEXPECTED (sizeof expected / sizeof *expected)

typedef struct {
  char name[32];
  char *objects; /* space-separated object paths */
} layer;

static layer layers[MAX_LAYERS];
static size_t nlayers;

static void load_layers(void) {
  if (nlayers)
    return;
  FILE *f = fopen(TC_BINARY_DIR "/layers.txt", "r");
  CU_ASSERT_PTR_NOT_NULL_FATAL(f);
  char *line = NULL;
  size_t cap = 0;
  while (getline(&line, &cap, f) > 0 && nlayers < MAX_LAYERS) {
    line[strcspn(line, "\n")] = 0;
    char *sp = strchr(line, ' ');
    if (!sp)
      continue;
    *sp = 0;
    snprintf(layers[nlayers].name, sizeof layers[nlayers].name, "%s", line);
    layers[nlayers].objects = strdup(sp + 1);
    nlayers++;
  }
  free(line);
  fclose(f);
}

static void test_order(void) {
  load_layers();
  CU_ASSERT_EQUAL(nlayers, NEXPECTED);
  for (size_t i = 0; i < nlayers && i < NEXPECTED; i++)
    CU_ASSERT_STRING_EQUAL(layers[i].name, expected[i]);
}

/* symbol -> index of the layer defining it */
typedef struct {
  char *sym;
  int layer;
} def;
static def *defs;
static size_t ndefs, capdefs;

static int def_cmp(const void *a, const void *b) {
  return strcmp(((const def *)a)->sym, ((const def *)b)->sym);
}

static int layer_of(const char *sym) {
  def key = {(char *)sym, 0};
  def *d = bsearch(&key, defs, ndefs, sizeof *defs, def_cmp);
  return d ? d->layer : -1;
}

static void test_symbols_point_down(void) {
  load_layers();
  for (size_t i = 0; i < nlayers; i++) {
    char *cmd = malloc(strlen(layers[i].objects) + 64);
    sprintf(cmd, "nm -g --defined-only %s", layers[i].objects);
    char *out = NULL;
    CU_ASSERT_EQUAL_FATAL(tu_run(cmd, &out, 0), 0);
    free(cmd);
    for (char *l = strtok(out, "\n"); l; l = strtok(NULL, "\n")) {
      char addr[64], type[8], sym[512];
      if (sscanf(l, "%63s %7s %511s", addr, type, sym) != 3)
        continue;
      if (ndefs == capdefs) {
        capdefs = capdefs ? 2 * capdefs : 4096;
        defs = realloc(defs, capdefs * sizeof *defs);
      }
      defs[ndefs++] = (def){strdup(sym), (int)i};
    }
    free(out);
  }
  CU_ASSERT(ndefs > 500); /* the whole library, not an empty list */
  qsort(defs, ndefs, sizeof *defs, def_cmp);
  int upward = 0;
  for (size_t i = 0; i < nlayers; i++) {
    char *cmd = malloc(strlen(layers[i].objects) + 64);
    sprintf(cmd, "nm -A -u %s", layers[i].objects);
    char *out = NULL;
    CU_ASSERT_EQUAL_FATAL(tu_run(cmd, &out, 0), 0);
    free(cmd);
    for (char *l = strtok(out, "\n"); l; l = strtok(NULL, "\n")) {
      char *colon = strrchr(l, ':');
      char type[8], sym[512];
      if (!colon || sscanf(colon + 1, "%7s %511s", type, sym) != 2)
        continue;
      int at = layer_of(sym);
      if (at > (int)i) {
        *colon = 0;
        const char *obj = strrchr(l, '/');
        if (upward++ < 20)
          fprintf(stderr, "  %s (%s) uses %s of %s\n", obj ? obj + 1 : l,
                  layers[i].name, sym, layers[at].name);
      }
    }
    free(out);
  }
  CU_ASSERT_EQUAL(upward, 0);
}

/* Compiles one line with a layer's include path (as the build gives it):
 * the exit status of the compiler. */
static int compile_as(const char *layer_name, const char *forbid,
                      const char *line) {
  char src[] = "/tmp/tc-layer-XXXXXX.c";
  int fd = mkstemps(src, 2);
  CU_ASSERT_FATAL(fd >= 0);
  FILE *f = fdopen(fd, "w");
  fprintf(f, "%s\nint tc_layer_probe;\n", line);
  fclose(f);
  char cmd[4096];
  snprintf(cmd, sizeof cmd,
           "cc -fsyntax-only -D_GNU_SOURCE %s -I%s/layers/%s -I%s/include "
           "%s 2>&1",
           forbid, TC_BINARY_DIR, layer_name, TC_SOURCE_DIR, src);
  char *out = NULL;
  int st = tu_run(cmd, &out, 1);
  free(out);
  remove(src);
  return st;
}

static void test_includes_refused(void) {
  const char *no_uc_cs =
      "-I" TC_SOURCE_DIR "/cmake/forbid/unicorn -I" TC_SOURCE_DIR
      "/cmake/forbid/capstone";
  /* controls: what a format may include compiles */
  CU_ASSERT_EQUAL(
      compile_as("formats", no_uc_cs, "#include \"writers/io/outfile.h\""), 0);
  CU_ASSERT_EQUAL(
      compile_as("formats", no_uc_cs, "#include \"common/byteorder.h\""), 0);
  /* a format cannot see Unicorn, capstone, the engine or the kernel */
  CU_ASSERT_NOT_EQUAL(
      compile_as("formats", no_uc_cs, "#include <unicorn/unicorn.h>"), 0);
  CU_ASSERT_NOT_EQUAL(
      compile_as("formats", no_uc_cs, "#include <capstone/capstone.h>"), 0);
  CU_ASSERT_NOT_EQUAL(
      compile_as("formats", no_uc_cs, "#include \"emu/engine/emu.h\""), 0);
  CU_ASSERT_NOT_EQUAL(
      compile_as("formats", no_uc_cs, "#include \"emu/linux/linux_sys.h\""), 0);
  /* the engine cannot see the kernel, the recorder or the formats */
  CU_ASSERT_EQUAL(compile_as("engine", "", "#include \"emu/engine/emu.h\""), 0);
  CU_ASSERT_NOT_EQUAL(
      compile_as("engine", "", "#include \"emu/linux/linux_sys.h\""), 0);
  CU_ASSERT_NOT_EQUAL(
      compile_as("engine", "", "#include \"recorder/recorder.h\""), 0);
  CU_ASSERT_NOT_EQUAL(
      compile_as("engine", "", "#include \"writers/io/outfile.h\""), 0);
  /* the kernel cannot see the recorder */
  CU_ASSERT_NOT_EQUAL(
      compile_as("kernel", "", "#include \"recorder/recorder.h\""), 0);
}

/* The generic files never test which arch they run (docs/architecture.md,
 * "One folder per arch in each layer"): they read the arch's descriptor
 * (its data and hooks, tc_arch.traits) and no file outside an arch folder
 * names a TC_ARCH_<name> id (but NONE, COUNT, WIRE_FPU), so adding an
 * arch touches its folders and one line of common/arch/arches.def. The
 * exceptions are listed, each with its reason. */
static int arch_tests_in(const char *path) {
  FILE *f = fopen(path, "r");
  if (!f)
    return -1;
  char line[1024];
  int n = 0, lineno = 0;
  while (fgets(line, sizeof line, f)) {
    lineno++;
    for (const char *p = line; (p = strstr(p, "TC_ARCH_")) != NULL; p += 8)
      if (p[8] >= 'A' && p[8] <= 'Z' && strncmp(p + 8, "NONE", 4) != 0 &&
          strncmp(p + 8, "COUNT", 5) != 0 &&
          strncmp(p + 8, "WIRE_FPU", 8) != 0) {
        fprintf(stderr, "%s:%d: tests the arch: %s", path, lineno, line);
        n++;
        break;
      }
    if (strstr(line, "tc_arch_is_")) {
      fprintf(stderr, "%s:%d: tests the arch: %s", path, lineno, line);
      n++;
    }
  }
  fclose(f);
  return n;
}

/* The arch folders: common/arch/ and every folder of emu/engine/ and
 * emu/linux/ (each one an arch's, as the layers' CMake globs take them),
 * where the arch is named. */
static bool arch_folder(const char *rel) {
  return strcmp(rel, "common/arch") == 0 ||
         (strncmp(rel, "emu/engine/", 11) == 0 && !strchr(rel + 11, '/')) ||
         (strncmp(rel, "emu/linux/", 10) == 0 && !strchr(rel + 10, '/'));
}

static const char *const arch_exceptions[] = {
    /* one probe per known engine defect, each about an arch */
    "emu/engine/probes.c",
    /* the formats' own arch ids: machine names and numbers, register
     * sets, what each format holds */
    "writers/registry.c", /* the default arch an extension is asked with */
    "writers/io/caps.c",  /* the capability table's register columns */
    "writers/bap/bap.c", "writers/ucir/ucir_read.c",
    "writers/ucir/ucir_write.c", "writers/tfile/tfile.c",
    "writers/tfile/tfile_tdesc.c", "writers/trac/trac.c",
    "writers/trac/trac_regdump.c", "writers/rvn/rvn.c",
    "writers/rvn/rvn_read.c", "writers/rvn/rvn_machine.c",
    "writers/tenet/tenet.c", "writers/drcov/drcov.c", NULL};

/* Checks every .c/.h under rel (recursively, arch folders aside); the
 * number of files read. */
static int check_tree(const char *rel) {
  if (arch_folder(rel))
    return 0;
  char dir[1024];
  snprintf(dir, sizeof dir, "%s/%s", TC_SOURCE_DIR, rel);
  DIR *dp = opendir(dir);
  CU_ASSERT_PTR_NOT_NULL_FATAL(dp);
  int files = 0;
  struct dirent *de;
  while ((de = readdir(dp)) != NULL) {
    if (de->d_name[0] == '.')
      continue;
    char sub[1024], path[2048];
    snprintf(sub, sizeof sub, "%s/%s", rel, de->d_name);
    snprintf(path, sizeof path, "%s/%s", TC_SOURCE_DIR, sub);
    DIR *is_dir = opendir(path);
    if (is_dir) {
      closedir(is_dir);
      files += check_tree(sub);
      continue;
    }
    size_t len = strlen(de->d_name);
    if (len < 3 || (strcmp(de->d_name + len - 2, ".c") != 0 &&
                    strcmp(de->d_name + len - 2, ".h") != 0))
      continue;
    bool skip = false;
    for (const char *const *e = arch_exceptions; *e; e++)
      skip |= strcmp(sub, *e) == 0;
    if (!skip)
      CU_ASSERT_EQUAL(arch_tests_in(path), 0);
    files++;
  }
  closedir(dp);
  return files;
}

static void test_generic_files_name_no_arch(void) {
  static const char *const roots[] = {"common", "writers", "analysis",
                                      "emu",    "loaders", "recorder",
                                      "lib",    "tools",   NULL};
  int files = 0;
  for (const char *const *r = roots; *r; r++)
    files += check_tree(*r);
  CU_ASSERT(files >= 100); /* the folders were read */
  /* each exception is still there (a moved file is not excused twice) */
  for (const char *const *e = arch_exceptions; *e; e++) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", TC_SOURCE_DIR, *e);
    CU_ASSERT(arch_tests_in(path) > 0);
  }
  /* the check itself finds a test of the arch */
  const char *probe = tu_tmp("arch-test.c");
  FILE *f = fopen(probe, "w");
  CU_ASSERT_PTR_NOT_NULL_FATAL(f);
  fputs("if (a->id == TC_ARCH_MIPS || tc_arch_is_x86(a)) {}\n", f);
  fputs("x = TC_ARCH_WIRE_FPU | TC_ARCH_NONE;\n", f);
  fclose(f);
  CU_ASSERT_EQUAL(arch_tests_in(probe), 2);
  remove(probe);
}

int main(void) {
  static const tu_case cases[] = {
      {"order", test_order},
      {"symbols_point_down", test_symbols_point_down},
      {"includes_refused", test_includes_refused},
      {"generic_files_name_no_arch", test_generic_files_name_no_arch},
      {NULL, NULL}};
  return tu_run_suite("layers", cases);
}
