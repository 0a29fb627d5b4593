/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Packaging: what an outside developer gets from `cmake --install` and the
 * Debian packages. The SONAME and the Debian symbols file agree with the
 * exported API (test_api checks that against the header); the examples build
 * against an installed copy with pkg-config and with find_package (shared and
 * static) and agree with the CLI; the man page and the bash/zsh completion
 * describe exactly the subcommands and options `tracecorn --help` shows, and
 * load; dpkg-buildpackage gives installable, lintian-clean .debs (not in
 * sanitizer builds: it rebuilds the tree). */
#include <ctype.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "tracecorn/tracecorn.h"

/* Runs a shell command; returns its exit status, stdout (+ stderr when
 * merge) in *out (may be NULL). */
static int shx(char **out, int merge, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int shx(char **out, int merge, const char *fmt, ...) {
  char cmd[16384];
  va_list ap;
  va_start(ap, fmt);
  int k = vsnprintf(cmd, sizeof cmd, fmt, ap);
  va_end(ap);
  if (k < 0 || (size_t)k >= sizeof cmd)
    return -1;
  char *o = NULL;
  int st = tu_run(cmd, &o, merge);
  if (out)
    *out = o;
  else
    free(o);
  return st;
}

/* Runs a command that must succeed; on failure prints it and its output. */
#define MUST(...)                                                              \
  do {                                                                         \
    char *must_out = NULL;                                                     \
    int must_st = shx(&must_out, 1, __VA_ARGS__);                              \
    if (must_st != 0) {                                                        \
      fprintf(stderr, "\n%s:%d: exit %d from: ", __FILE__, __LINE__, must_st); \
      fprintf(stderr, __VA_ARGS__);                                            \
      fprintf(stderr, "\n%s\n", must_out ? must_out : "");                     \
    }                                                                          \
    CU_ASSERT_EQUAL(must_st, 0);                                               \
    free(must_out);                                                            \
  } while (0)

/* ------------------------------------------------------------ name sets */

typedef struct names {
  char v[256][64];
  int n;
} names;

static bool has(const names *s, const char *x) {
  for (int i = 0; i < s->n; i++)
    if (strcmp(s->v[i], x) == 0)
      return true;
  return false;
}

static void add(names *s, const char *x, size_t len) {
  char tmp[64];
  if (len >= sizeof tmp)
    len = sizeof tmp - 1;
  memcpy(tmp, x, len);
  tmp[len] = 0;
  if (!has(s, tmp) && s->n < 256)
    snprintf(s->v[s->n++], sizeof s->v[0], "%s", tmp);
}

/* Every word of a space/newline separated list. */
static void add_words(names *s, const char *text) {
  for (const char *p = text; *p;) {
    while (*p && isspace((unsigned char)*p))
      p++;
    const char *w = p;
    while (*p && !isspace((unsigned char)*p))
      p++;
    if (p > w)
      add(s, w, (size_t)(p - w));
  }
}

/* The option names in a text: "--long-name" and "-x", each standing alone
 * (not inside a word such as "static-pie" or "x86-64"). */
static void add_options(names *s, const char *text) {
  for (const char *p = text; *p; p++) {
    if (*p != '-' || (p > text && (isalnum((unsigned char)p[-1]) ||
                                   p[-1] == '-' || p[-1] == '_')))
      continue;
    if (p[1] == '-' && islower((unsigned char)p[2])) {
      const char *e = p + 2;
      while (islower((unsigned char)*e) || isdigit((unsigned char)*e) ||
             *e == '-')
        e++;
      while (e[-1] == '-')
        e--;
      if (!isalnum((unsigned char)*e) && *e != '_')
        add(s, p, (size_t)(e - p));
      p = e - 1;
    } else if (isalpha((unsigned char)p[1]) && !isalnum((unsigned char)p[2]) &&
               p[2] != '-' && p[2] != '_') {
      add(s, p, 2);
    }
  }
}

static char *read_text(const char *path) {
  size_t n;
  char *t = (char *)tu_read_file(path, &n);
  if (!t)
    fprintf(stderr, "\ncannot read %s\n", path);
  return t;
}

/* The text between `start` (exclusive) and the first `end` after it, as a
 * new string; NULL if start is not in text. */
static char *between(const char *text, const char *start, const char *end) {
  const char *a = strstr(text, start);
  if (!a)
    return NULL;
  a += strlen(start);
  const char *b = strstr(a, end);
  size_t n = b ? (size_t)(b - a) : strlen(a);
  char *r = malloc(n + 1);
  memcpy(r, a, n);
  r[n] = 0;
  return r;
}

/* ------------------------------------------------------- the CLI's help */

#define SRC TC_SOURCE_DIR
#define BIN TC_BINARY_DIR

/* The subcommands listed by `tracecorn --help`. */
static void help_commands(names *cmds) {
  char *out = NULL;
  CU_ASSERT_EQUAL_FATAL(shx(&out, 0, "%s --help", TC_CLI), 0);
  for (char *l = out; l && *l;) {
    char *nl = strchr(l, '\n');
    char *t = strstr(l, "tracecorn ");
    if (t && (!nl || t < nl)) {
      t += strlen("tracecorn ");
      char *e = t;
      while (islower((unsigned char)*e))
        e++;
      if (e > t && *e == ' ')
        add(cmds, t, (size_t)(e - t));
    }
    l = nl ? nl + 1 : NULL;
  }
  free(out);
  CU_ASSERT(cmds->n >= 6 && has(cmds, "record") && has(cmds, "formats"));
}

/* The options `tracecorn CMD --help` shows. */
static void help_options(const char *cmd, names *opts) {
  char *out = NULL;
  CU_ASSERT_EQUAL(shx(&out, 0, "%s %s --help", TC_CLI, cmd), 0);
  if (out)
    add_options(opts, out);
  free(out);
}

/* 1 if `tracecorn CMD OPT` knows OPT: every command takes -h and --help;
 * otherwise getopt must not call it unrecognized (no program or file is
 * given, so nothing runs). verify passes record's options on. */
static bool cli_accepts(const char *cmd, const char *opt) {
  if (!strcmp(opt, "-h") || !strcmp(opt, "--help")) {
    char *out = NULL;
    int st = shx(&out, 0, "%s %s %s", TC_CLI, cmd, opt);
    bool ok = st == 0 && out && strstr(out, "usage:");
    free(out);
    return ok;
  }
  if (!strcmp(cmd, "verify") || !strcmp(cmd, "info") || !strcmp(cmd, "formats"))
    return false; /* no getopt: only what their help shows */
  char *out = NULL;
  shx(&out, 1, "LC_ALL=C %s %s %s </dev/null", TC_CLI, cmd, opt);
  bool ok = out && !strstr(out, "unrecognized option") &&
            !strstr(out, "invalid option");
  free(out);
  return ok;
}

/* Every option in `doc` (a man section or completion list of cmd) exists. */
static void check_known(const char *what, const char *cmd, const names *doc,
                        const names *help) {
  names record_help = {0};
  if (!strcmp(cmd, "verify"))
    help_options("record", &record_help);
  for (int i = 0; i < doc->n; i++) {
    const char *o = doc->v[i];
    bool ok = has(help, o) || has(&record_help, o) || cli_accepts(cmd, o) ||
              (!strcmp(cmd, "verify") && cli_accepts("record", o));
    if (!ok)
      fprintf(stderr, "\n%s: %s %s: no such option\n", what, cmd, o);
    CU_ASSERT(ok);
  }
}

static void check_covers(const char *what, const char *cmd, const names *doc,
                         const names *help) {
  for (int i = 0; i < help->n; i++) {
    bool ok = has(doc, help->v[i]);
    if (!ok)
      fprintf(stderr, "\n%s: %s %s (in --help) is missing\n", what, cmd,
              help->v[i]);
    CU_ASSERT(ok);
  }
}

/* `tracecorn formats`: names that can be written / read. */
static void cli_formats(names *write, names *read) {
  char *out = NULL;
  CU_ASSERT_EQUAL_FATAL(shx(&out, 0, "%s formats", TC_CLI), 0);
  char *save = NULL;
  int line = 0;
  for (char *l = strtok_r(out, "\n", &save); l;
       l = strtok_r(NULL, "\n", &save)) {
    char name[64], w[8], r[8];
    if (line++ == 0 || sscanf(l, "%63s %7s %7s", name, w, r) != 3)
      continue;
    if (!strcmp(w, "yes"))
      add(write, name, strlen(name));
    if (!strcmp(r, "yes"))
      add(read, name, strlen(name));
  }
  free(out);
  CU_ASSERT(write->n >= 8 && read->n >= 6 && has(write, "tct"));
}

/* ------------------------------------------------------- the public API */

/* What the shared library exports (tests/test_api.c checks that it is
 * lib/libtracecorn.map and the header's TC_API functions), its SONAME,
 * and that the versions and the Debian package agree with them. */
static void test_api_exports(void) {
  names exported = {0};
  char *out = NULL;
  CU_ASSERT_EQUAL_FATAL(
      shx(&out, 0,
          "nm -D --defined-only %s/libtracecorn.so | awk '$2 != \"A\" "
          "{ print $3 }'",
          BIN),
      0);
  add_words(&exported, out);
  free(out);
  CU_ASSERT(exported.n >= 30 && has(&exported, "tc_version") &&
            has(&exported, "tc_session_new"));

  /* SONAME, versions: the header, the library, CMake and Debian agree */
  CU_ASSERT_EQUAL(shx(&out, 0, "readelf -d %s/libtracecorn.so", BIN), 0);
  CU_ASSERT(out &&
            strstr(out, "Library soname: [libtracecorn.so." TC_SOVERSION "]"));
  free(out);
  CU_ASSERT_STRING_EQUAL(tc_version(), TC_VERSION_STRING);
  CU_ASSERT_STRING_EQUAL(tc_version(), TC_PROJECT_VERSION);
  char ver[64];
  snprintf(ver, sizeof ver, "%d.%d.%d", TC_VERSION_MAJOR, TC_VERSION_MINOR,
           TC_VERSION_PATCH);
  CU_ASSERT_STRING_EQUAL(ver, TC_VERSION_STRING);
  CU_ASSERT_EQUAL(TC_VERSION_NUMBER, (TC_VERSION_MAJOR << 16) |
                                         (TC_VERSION_MINOR << 8) |
                                         TC_VERSION_PATCH);
  CU_ASSERT_EQUAL(shx(&out, 0, "head -1 %s/debian/changelog", SRC), 0);
  char want[128];
  snprintf(want, sizeof want, "tracecorn (%s-", tc_version());
  CU_ASSERT(out && strncmp(out, want, strlen(want)) == 0);
  free(out);
  /* the library package is named after the SONAME, and its symbols file
   * lists exactly the exported functions */
  char *control = read_text(SRC "/debian/control");
  CU_ASSERT(control &&
            strstr(control, "\nPackage: libtracecorn" TC_SOVERSION "\n"));
  free(control);
  char *syms = read_text(SRC "/debian/libtracecorn" TC_SOVERSION ".symbols");
  CU_ASSERT_FATAL(syms != NULL);
  CU_ASSERT(strncmp(syms, "libtracecorn.so." TC_SOVERSION " libtracecorn",
                    strlen("libtracecorn.so." TC_SOVERSION " libtracecorn")) ==
            0);
  names listed = {0};
  for (char *p = syms; (p = strstr(p, "\n ")) != NULL; p++) {
    char *at = strchr(p + 2, '@');
    if (at)
      add(&listed, p + 2, (size_t)(at - (p + 2)));
  }
  free(syms);
  CU_ASSERT_EQUAL(listed.n, exported.n);
  for (int i = 0; i < listed.n; i++)
    CU_ASSERT(has(&exported, listed.v[i]));
}

/* ------------------------------------------- man page and completions */

static const char *man_page(void) { return BIN "/man/tracecorn.1"; }

/* The man page's roff source with `\-` as `-` and font changes removed. */
static char *man_source(void) {
  char *t = read_text(man_page());
  if (!t)
    return NULL;
  char *w = t;
  for (const char *r = t; *r;) {
    if (r[0] == '\\' && r[1] == '-') {
      *w++ = '-';
      r += 2;
    } else if (r[0] == '\\' && r[1] == 'f' && r[2]) {
      r += 3;
    } else {
      *w++ = *r++;
    }
  }
  *w = 0;
  return t;
}

static void test_help_documented(void) {
  names cmds = {0};
  help_commands(&cmds);
  char *man = man_source();
  char *bash = read_text(SRC "/completions/tracecorn.bash");
  char *zsh = read_text(SRC "/completions/_tracecorn");
  CU_ASSERT_FATAL(man && bash && zsh);

  /* the subcommands, both ways */
  char *bash_cmds = between(bash, "_tracecorn_cmds=\"", "\"");
  CU_ASSERT_FATAL(bash_cmds != NULL);
  names bc = {0};
  add_words(&bc, bash_cmds);
  free(bash_cmds);
  CU_ASSERT_EQUAL(bc.n, cmds.n);
  for (int i = 0; i < bc.n; i++)
    CU_ASSERT(has(&cmds, bc.v[i]));
  for (char *p = zsh; (p = strstr(p, "\n_tracecorn_cmd_")) != NULL; p++) {
    char *e = strchr(p, '(');
    CU_ASSERT_FATAL(e != NULL);
    add(&bc, p + 16, (size_t)(e - (p + 16)));
    bool known = has(&cmds, bc.v[bc.n - 1]);
    if (!known)
      fprintf(stderr, "\n_tracecorn: no command %s\n", bc.v[bc.n - 1]);
    CU_ASSERT(known);
  }

  for (int i = 0; i < cmds.n; i++) {
    const char *cmd = cmds.v[i];
    names help = {0};
    help_options(cmd, &help);
    char key[128];

    /* man: a section per command describing every option of its help */
    snprintf(key, sizeof key, "\n.SS %s\n", cmd);
    char *sec = between(man, key, "\n.S");
    if (!sec)
      fprintf(stderr, "\nman page: no section for %s\n", cmd);
    CU_ASSERT(sec != NULL);
    names m = {0};
    if (sec)
      add_options(&m, sec);
    free(sec);
    check_covers("tracecorn.1", cmd, &m, &help);
    check_known("tracecorn.1", cmd, &m, &help);

    /* The completions offer the options the command takes: its help may
     * name another command's option in its prose (strace: "a trace
     * recorded --no-memory"), which the man page explains but a
     * completion must not offer. verify, info and formats have no getopt
     * to ask: everything in their help. */
    names takes = {0};
    bool no_getopt = !strcmp(cmd, "verify") || !strcmp(cmd, "info") ||
                     !strcmp(cmd, "formats");
    for (int k = 0; k < help.n; k++)
      if (no_getopt || cli_accepts(cmd, help.v[k]))
        add(&takes, help.v[k], strlen(help.v[k]));

    /* bash: _tracecorn_opts_CMD */
    snprintf(key, sizeof key, "_tracecorn_opts_%s=\"", cmd);
    char *list = between(bash, key, "\"");
    CU_ASSERT(list != NULL);
    names b = {0};
    if (list)
      add_options(&b, list);
    free(list);
    check_covers("tracecorn.bash", cmd, &b, &takes);
    check_known("tracecorn.bash", cmd, &b, &help);

    /* zsh: _tracecorn_cmd_CMD */
    snprintf(key, sizeof key, "\n_tracecorn_cmd_%s() {\n", cmd);
    char *body = between(zsh, key, "\n}\n");
    CU_ASSERT(body != NULL);
    names z = {0};
    if (body) {
      /* _arguments' own flags (-s -S -C) are not the command's */
      for (char *p = body; (p = strstr(p, "_arguments")) != NULL;) {
        p += strlen("_arguments");
        while (p[0] == ' ' && p[1] == '-' && isalpha((unsigned char)p[2]) &&
               (p[3] == ' ' || p[3] == '\\')) {
          p[1] = p[2] = ' ';
          p += 3;
        }
      }
      add_options(&z, body);
    }
    free(body);
    check_covers("_tracecorn", cmd, &z, &takes);
    check_known("_tracecorn", cmd, &z, &help);
    /* verify records: it completes record's options too */
    if (!strcmp(cmd, "verify")) {
      names rec = {0};
      help_options("record", &rec);
      check_covers("tracecorn.bash", cmd, &b, &rec);
      check_covers("_tracecorn", cmd, &z, &rec);
    }
  }

  /* every format has an entry in the man page's FORMATS section */
  names fw = {0}, fr = {0};
  cli_formats(&fw, &fr);
  char *fsec = between(man, "\n.SH FORMATS\n", "\n.SH");
  CU_ASSERT_FATAL(fsec != NULL);
  for (int i = 0; i < fw.n; i++) {
    char b[96];
    snprintf(b, sizeof b, "\n.B %s\n", fw.v[i]);
    if (!strstr(fsec, b))
      fprintf(stderr, "\ntracecorn.1: format %s is not in FORMATS\n", fw.v[i]);
    CU_ASSERT(strstr(fsec, b) != NULL);
  }
  free(fsec);

  /* the arch names the completions offer are arches tracecorn knows */
  char *arches = between(bash, "_tracecorn_arches=\"", "\"");
  char *zarches = between(zsh, "arch of the raw code]:arch:(", ")");
  CU_ASSERT_FATAL(arches && zarches);
  CU_ASSERT_STRING_EQUAL(arches, zarches);
  names an = {0};
  add_words(&an, arches);
  CU_ASSERT(an.n >= 6);
  for (int i = 0; i < an.n; i++)
    CU_ASSERT(tc_arch_by_name(an.v[i]) != NULL);
  free(arches);
  free(zarches);
  free(man);
  free(bash);
  free(zsh);
}

static void test_man_renders(void) {
  char *out = NULL;
  /* groff warns about any bad request or escape (-ww) */
  CU_ASSERT_EQUAL(shx(&out, 1, "groff -man -Tutf8 -ww -z %s", man_page()), 0);
  if (out && *out)
    fprintf(stderr, "\ngroff: %s\n", out);
  CU_ASSERT(out && !*out);
  free(out);
  CU_ASSERT_EQUAL(shx(&out, 0, "MANWIDTH=80 man -l %s | col -b", man_page()),
                  0);
  CU_ASSERT(out && strstr(out, "record Linux programs under the Unicorn"));
  CU_ASSERT(out && strstr(out, "EXIT STATUS"));
  CU_ASSERT(out && strstr(out, "--max-insns"));
  CU_ASSERT(out && strstr(out, "tracecorn " TC_VERSION_STRING));
  free(out);
}

/* bash: the completion of COMP_WORDS = words (space-separated, "" for an
 * empty last word) with the built CLI first on PATH. */
static char *bash_complete(const char *words) {
  char *out = NULL;
  shx(&out, 1,
      "PATH=%s:$PATH bash --norc --noprofile -c '. %s/completions/"
      "tracecorn.bash; COMP_WORDS=(tracecorn %s); "
      "COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); _tracecorn; "
      "printf \"%%s\\n\" \"${COMPREPLY[@]}\" | sort'",
      BIN, SRC, words);
  return out;
}

static void expect_words(const char *got, const names *want, const char *extra,
                         const char *what) {
  names g = {0}, w = *want;
  add_words(&g, got ? got : "");
  add_words(&w, extra);
  bool same = g.n == w.n;
  for (int i = 0; i < g.n; i++)
    same = same && has(&w, g.v[i]);
  if (!same)
    fprintf(stderr, "\nbash completion of %s gave: %s\n", what, got);
  CU_ASSERT(same);
}

static void test_completions_load(void) {
  char *out = NULL;
  /* bash: loads, registers, and completes from the live CLI */
  CU_ASSERT_EQUAL(shx(&out, 1,
                      "bash --norc --noprofile -c '. "
                      "%s/completions/tracecorn.bash && complete -p tracecorn'",
                      SRC),
                  0);
  CU_ASSERT(out && strstr(out, "-F _tracecorn tracecorn"));
  free(out);
  names cmds = {0}, fw = {0}, fr = {0}, none = {0};
  help_commands(&cmds);
  cli_formats(&fw, &fr);
  out = bash_complete("\"\"");
  expect_words(out, &cmds, "--help --version", "tracecorn ''");
  free(out);
  out = bash_complete("record -f \"\"");
  expect_words(out, &fw, "all readable", "record -f \"\"");
  free(out);
  out = bash_complete("verify --format \"\"");
  expect_words(out, &fr, "all readable", "verify --format \"\"");
  free(out);
  out = bash_complete("dump --format = \"\"");
  expect_words(out, &fr, "", "dump --format=");
  free(out);
  out = bash_complete("convert in.tct --to \"\"");
  expect_words(out, &fw, "", "convert --to");
  free(out);
  out = bash_complete("record -f tct,tr");
  expect_words(out, &none, "tct,trac", "record -f tct,tr");
  free(out);
  out = bash_complete("dump --j");
  expect_words(out, &none, "--json", "dump --j");
  free(out);
  out = bash_complete("record --ar");
  expect_words(out, &none, "--arch", "record --ar");
  free(out);

  /* zsh: what an interactive zsh completes (tests/zsh_complete.zsh) */
  static const char *const zlines[] = {"tracecorn ",
                                       "tracecorn record -f ",
                                       "tracecorn record -f tct,t",
                                       "tracecorn verify -f ",
                                       "tracecorn dump --format=",
                                       "tracecorn convert in.tct --to ",
                                       "tracecorn verify --ke",
                                       "tracecorn record --arch ",
                                       NULL};
  char cmdline[4096] = "";
  for (int i = 0; zlines[i]; i++) {
    size_t n = strlen(cmdline);
    snprintf(cmdline + n, sizeof cmdline - n, " '%s'", zlines[i]);
  }
  CU_ASSERT_EQUAL(shx(&out, 1,
                      "cd %s && PATH=%s:$PATH timeout 60 zsh -f "
                      "%s/tests/zsh_complete.zsh %s/completions %s%s",
                      tu_tmpdir(), BIN, SRC, SRC, tu_tmp("zcompdump-z"),
                      cmdline),
                  0);
  names arches = {0}; /* every arch tracecorn knows (--raw --arch) */
  for (int id = 1; id <= TC_ARCH_MIPS64EL; id++)
    if (tc_arch_by_id((tc_arch_id)id))
      add_words(&arches, tc_arch_by_id((tc_arch_id)id)->name);
  /* after "tct,t": the other writable formats starting with t (_values
   * leaves out the one already given) */
  names t_formats = {0};
  for (int i = 0; i < fw.n; i++)
    if (fw.v[i][0] == 't' && strcmp(fw.v[i], "tct") != 0)
      add(&t_formats, fw.v[i], strlen(fw.v[i]));
  CU_ASSERT(has(&t_formats, "trac") && has(&t_formats, "tfile"));
  const names *zwant[] = {&cmds, &fw, &t_formats, &fr,
                          &fr,   &fw, &none,      &arches};
  const char *zextra[] = {"", "all readable", "", "all readable", "",
                          "", "--keyframe",   ""};
  for (int i = 0; zlines[i]; i++) {
    char key[256];
    snprintf(key, sizeof key, "== %s\n", zlines[i]);
    char *hits = out ? between(out, key, "\n==") : NULL;
    names got = {0}, want = *zwant[i];
    add_words(&want, zextra[i]);
    for (char *h = hits; h && (h = strstr(h, "HIT:")) != NULL; h += 4) {
      size_t k = strcspn(h + 4, " \n");
      add(&got, h + 4, k);
    }
    bool same = got.n == want.n && hits;
    for (int j = 0; j < got.n; j++)
      same = same && has(&want, got.v[j]);
    if (!same)
      fprintf(stderr, "\nzsh completion of '%s' gave: %s\n", zlines[i],
              hits ? hits : out);
    CU_ASSERT(same);
    free(hits);
  }
  free(out);

  /* zsh: parses, and compinit registers _tracecorn for tracecorn */
  CU_ASSERT_EQUAL(shx(&out, 1, "zsh -n %s/completions/_tracecorn", SRC), 0);
  free(out);
  CU_ASSERT_EQUAL(
      shx(&out, 1,
          "cd %s && zsh -f -c 'fpath=(%s/completions $fpath); autoload -Uz "
          "compinit && compinit -u -d %s && print -r -- $_comps[tracecorn] && "
          "autoload +X _tracecorn && print loaded'",
          tu_tmpdir(), SRC, tu_tmp("zcompdump")),
      0);
  CU_ASSERT(out && strstr(out, "_tracecorn\nloaded\n"));
  if (!out || !strstr(out, "loaded"))
    fprintf(stderr, "\nzsh: %s\n", out ? out : "");
  free(out);
}

/* --------------------------------------------------- installed copy */

static void check_examples(const char *dir, const char *label) {
  char *out = NULL, *info = NULL, *count = NULL, *rec = NULL;
  const char *trace = tu_tmp("installed.tct");
  /* embed_raw: 7 + 35 = 42 */
  CU_ASSERT_EQUAL(shx(&out, 0, "%s/embed_raw", dir), 0);
  CU_ASSERT(out && strstr(out, "exit status 42\n"));
  free(out);
  /* record_elf: a guest, with a trace; the guest's own exit status */
  int st = shx(&rec, 0, "%s/record_elf -o %s %s one 2>&1 >/dev/null", dir,
               trace, tu_guest("hello64"));
  CU_ASSERT_EQUAL(st, 1); /* hello64 exits with its number of arguments */
  CU_ASSERT(rec && strstr(rec, "syscall write(0x1, "));
  CU_ASSERT(rec && strstr(rec, "libtracecorn " TC_VERSION_STRING));
  unsigned long long insns = 0, sys = 0;
  const char *sum = rec ? strstr(rec, "x86_64: ") : NULL;
  CU_ASSERT_FATAL(sum != NULL);
  CU_ASSERT_EQUAL(
      sscanf(sum, "x86_64: %llu instructions, %llu syscalls", &insns, &sys), 2);
  CU_ASSERT(insns > 50 && sys >= 3);
  /* count_events and `tracecorn info` read the same numbers back */
  CU_ASSERT_EQUAL(shx(&count, 0, "%s/count_events %s", dir, trace), 0);
  CU_ASSERT_EQUAL(shx(&info, 0, "%s info %s", TC_CLI, trace), 0);
  char line[128];
  snprintf(line, sizeof line, "instructions:  %llu\n", insns);
  CU_ASSERT(count && strstr(count, line));
  snprintf(line, sizeof line, "syscalls:      %llu\n", sys);
  CU_ASSERT(count && strstr(count, line));
  CU_ASSERT(count && strstr(count, "exit:          status 1\n"));
  snprintf(line, sizeof line, "instructions: %llu\n", insns);
  CU_ASSERT(info && strstr(info, line));
  snprintf(line, sizeof line, "syscalls:     %llu\n", sys);
  CU_ASSERT(info && strstr(info, line));
  if (!count || !strstr(count, "exit:"))
    fprintf(stderr, "\n%s: record_elf said %s\ncount_events said %s\n", label,
            rec, count);
  free(rec);
  free(count);
  free(info);
}

static void test_install(void) {
  const char *prefix = tu_tmp("prefix");
  MUST("rm -rf %s && cmake --install %s --prefix %s >/dev/null", prefix, BIN,
       prefix);
  /* everything went under the prefix, laid out by GNUInstallDirs */
  char *out = NULL;
  CU_ASSERT_EQUAL(
      shx(&out, 0, "grep -cv '^%s/' %s/install_manifest.txt", prefix, BIN),
      1); /* grep: no line outside the prefix */
  free(out);
  static const char *const files[] = {
      "bin/tracecorn",
      "lib/libtracecorn.so",
      ("lib/libtracecorn.so." TC_SOVERSION),
      "lib/libtracecorn.a",
      "include/tracecorn/tracecorn.h",
      "lib/pkgconfig/tracecorn.pc",
      "lib/cmake/tracecorn/tracecornConfig.cmake",
      "share/man/man1/tracecorn.1",
      "share/bash-completion/completions/tracecorn",
      "share/zsh/site-functions/_tracecorn",
      "share/doc/tracecorn/api.md",
      "share/doc/tracecorn/examples/Makefile",
      "lib/python3/dist-packages/tracecorn/__init__.py",
      "lib/python3/dist-packages/tracecorn/_config.py",
      "share/doc/tracecorn/python.md",
      "share/doc/tracecorn/python-examples/who_wrote.py",
      NULL};
  for (int i = 0; files[i]; i++) {
    char p[4096];
    snprintf(p, sizeof p, "%s/%s", prefix, files[i]);
    if (!tu_have(p))
      fprintf(stderr, "\nnot installed: %s\n", files[i]);
    CU_ASSERT(tu_have(p));
  }
  /* the installed Python package loads the installed library by itself
   * (its _config.py), not the build tree's; not in sanitizer builds, whose
   * library an uninstrumented python3 cannot load */
  if (!TC_SANITIZED) {
    CU_ASSERT_EQUAL(
        shx(&out, 0,
            "cd / && env -u TRACECORN_LIBRARY PYTHONDONTWRITEBYTECODE=1 "
            "PYTHONPATH=%s/lib/python3/dist-packages /usr/bin/python3 -c "
            "'import tracecorn, tracecorn._lib as l; "
            "print(tracecorn.version(), l.library_path, tracecorn.__file__)'",
            prefix),
        0);
    char want[4200];
    snprintf(want, sizeof want,
             TC_VERSION_STRING " %s/lib/libtracecorn.so." TC_SOVERSION
                               " %s/lib/python3/dist-packages/tracecorn/",
             prefix, prefix);
    CU_ASSERT(out && !strncmp(out, want, strlen(want)));
    if (!out || strncmp(out, want, strlen(want)))
      fprintf(stderr, "\ninstalled python: %s\nexpected %s\n", out, want);
    free(out);
  }
  /* the installed CLI runs; man finds the installed page */
  CU_ASSERT_EQUAL(shx(&out, 0, "%s/bin/tracecorn --version", prefix), 0);
  CU_ASSERT(out && !strcmp(out, "tracecorn " TC_VERSION_STRING "\n"));
  free(out);
  CU_ASSERT_EQUAL(shx(&out, 0, "MANPATH=%s/share/man man -w tracecorn", prefix),
                  0);
  CU_ASSERT(out && strstr(out, "/share/man/man1/tracecorn.1"));
  free(out);
  /* pkg-config: the public API only; the dependencies are private */
  CU_ASSERT_EQUAL(shx(&out, 0,
                      "PKG_CONFIG_PATH=%s/lib/pkgconfig pkg-config --modversion"
                      " tracecorn",
                      prefix),
                  0);
  CU_ASSERT(out && !strcmp(out, TC_VERSION_STRING "\n"));
  free(out);
  CU_ASSERT_EQUAL(
      shx(&out, 0,
          "PKG_CONFIG_PATH=%s/lib/pkgconfig pkg-config --libs tracecorn",
          prefix),
      0);
  CU_ASSERT(out && strstr(out, "-ltracecorn") && !strstr(out, "-lunicorn"));
  free(out);
  CU_ASSERT_EQUAL(shx(&out, 0,
                      "PKG_CONFIG_PATH=%s/lib/pkgconfig pkg-config --static "
                      "--libs tracecorn",
                      prefix),
                  0);
  CU_ASSERT(out && strstr(out, "-lunicorn") && strstr(out, "-lcapstone") &&
            strstr(out, "-lzstd") && strstr(out, "-lm"));
  free(out);

  /* The examples, built from the installed copy four ways. In sanitizer
   * builds the library is instrumented, so the examples are too. */
  const char *san = TC_EXAMPLE_SAN_FLAGS;
  const char *ex = tu_tmp("ex");
  MUST("rm -rf %s && mkdir -p %s && cp -r %s/share/doc/tracecorn/examples "
       "%s/make",
       ex, ex, prefix, ex);
  MUST("cp -r %s/make %s/make-static", ex, ex);
  MUST("make -s -C %s/make CC='%s' CFLAGS='-O1 -g -Werror %s' LDFLAGS='%s' "
       "PKG_CONFIG_PATH=%s/lib/pkgconfig",
       ex, TC_C_COMPILER, san, san, prefix);
  MUST("make -s -C %s/make-static STATIC=1 CC='%s' CFLAGS='-O1 -g -Werror %s' "
       "LDFLAGS='%s' PKG_CONFIG_PATH=%s/lib/pkgconfig",
       ex, TC_C_COMPILER, san, san, prefix);
  /* shared really is shared, static really is static */
  CU_ASSERT_EQUAL(shx(&out, 0, "ldd %s/make/embed_raw", ex), 0);
  CU_ASSERT(out && strstr(out, prefix) &&
            strstr(out, "libtracecorn.so." TC_SOVERSION));
  free(out);
  shx(&out, 0, "ldd %s/make-static/embed_raw", ex);
  CU_ASSERT(out && !strstr(out, "libtracecorn"));
  free(out);
  check_examples(tu_tmp("ex/make"), "pkg-config, shared");
  check_examples(tu_tmp("ex/make-static"), "pkg-config, static");

  static const char *const modes[] = {"OFF", "ON"};
  for (int i = 0; i < 2; i++) {
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/cmake-%s", ex, modes[i]);
    MUST("cmake -S %s/share/doc/tracecorn/examples -B %s "
         "-DCMAKE_PREFIX_PATH=%s -DTC_EXAMPLES_STATIC=%s "
         "-DCMAKE_C_COMPILER='%s' -DCMAKE_C_FLAGS='-Werror %s' "
         "-DCMAKE_EXE_LINKER_FLAGS='%s' >/dev/null && "
         "cmake --build %s -j2 >/dev/null",
         prefix, dir, prefix, modes[i], TC_C_COMPILER, san, san, dir);
    CU_ASSERT_EQUAL(shx(&out, 0, "ldd %s/embed_raw", dir), 0);
    CU_ASSERT(out && (strstr(out, "libtracecorn.so") != NULL) == (i == 0));
    free(out);
    check_examples(dir, i ? "find_package, static" : "find_package, shared");
  }
  MUST("rm -rf %s %s", ex, prefix);
}

/* ------------------------------------------------------ Debian packages */

/* Only in the normal build's suite: the package build compiles the tree
 * again with Debian's flags, whatever this build's are. */
#if !TC_SANITIZED
static void test_debs(void) {
  const char *out_dir = tu_tmp("debs");
  char *out = NULL;
  char *said = NULL;
  CU_ASSERT_EQUAL(shx(&said, 1, "rm -rf %s && %s/scripts/build-debs.sh %s",
                      out_dir, SRC, out_dir),
                  0);
  /* build-debs.sh gives lintian's verdict itself (issue 36) */
  CU_ASSERT(said && strstr(said, "build-debs: lintian: clean"));
  free(said);
  char *ma = NULL;
  CU_ASSERT_EQUAL_FATAL(
      shx(&ma, 0, "dpkg-architecture -qDEB_HOST_MULTIARCH | tr -d '\\n'"), 0);
  static const char *const pkgs[] = {"tracecorn", ("libtracecorn" TC_SOVERSION),
                                     "libtracecorn-dev", "python3-tracecorn"};
  char debs[4][4096];
  for (int i = 0; i < 4; i++) {
    CU_ASSERT_EQUAL(shx(&out, 0, "ls %s/%s_%s-*.deb | tr -d '\\n'", out_dir,
                        pkgs[i], TC_VERSION_STRING),
                    0);
    snprintf(debs[i], sizeof debs[i], "%s", out ? out : "");
    free(out);
    CU_ASSERT(tu_have(debs[i]));
  }
  /* what each package holds, and the Debian libraries it needs */
  CU_ASSERT_EQUAL(shx(&out, 0, "dpkg-deb -c %s", debs[0]), 0);
  CU_ASSERT(out && strstr(out, "./usr/bin/tracecorn\n") &&
            strstr(out, "./usr/share/man/man1/tracecorn.1.gz") &&
            strstr(out, "./usr/share/bash-completion/completions/tracecorn") &&
            strstr(out, "./usr/share/zsh/vendor-completions/_tracecorn"));
  free(out);
  CU_ASSERT_EQUAL(shx(&out, 0, "dpkg-deb -f %s Depends", debs[0]), 0);
  CU_ASSERT(out && strstr(out, "libunicorn") && strstr(out, "libcapstone") &&
            strstr(out, "libzstd") && strstr(out, "libc6"));
  free(out);
  /* its bash completion works once installed (issue 36) */
  CU_ASSERT_EQUAL(shx(&out, 0, "dpkg-deb -f %s Recommends", debs[0]), 0);
  CU_ASSERT(out && strstr(out, "bash-completion"));
  free(out);
  CU_ASSERT_EQUAL(shx(&out, 0, "dpkg-deb -c %s", debs[1]), 0);
  CU_ASSERT(out && strstr(out, "libtracecorn.so." TC_SOVERSION
                               " -> libtracecorn.so." TC_PROJECT_VERSION));
  free(out);
  CU_ASSERT_EQUAL(shx(&out, 0, "dpkg-deb -c %s", debs[2]), 0);
  CU_ASSERT(out && strstr(out, "./usr/include/tracecorn/tracecorn.h") &&
            strstr(out, "/pkgconfig/tracecorn.pc") &&
            strstr(out, "/cmake/tracecorn/tracecornConfig.cmake") &&
            strstr(out, "/libtracecorn.a") &&
            strstr(out, "/examples/record_elf.c"));
  free(out);
  CU_ASSERT_EQUAL(shx(&out, 0, "dpkg-deb -f %s Depends", debs[2]), 0);
  CU_ASSERT(out && strstr(out, "libtracecorn" TC_SOVERSION " (= ") &&
            strstr(out, "libunicorn-dev"));
  free(out);

  /* the Python module, for every architecture, on the shared library */
  CU_ASSERT_EQUAL(shx(&out, 0, "dpkg-deb -c %s", debs[3]), 0);
  CU_ASSERT(
      out &&
      strstr(out, "./usr/lib/python3/dist-packages/tracecorn/__init__.py") &&
      strstr(out, "/tracecorn/_config.py") &&
      strstr(out, "./usr/share/doc/python3-tracecorn/python.md"));
  free(out);
  CU_ASSERT_EQUAL(shx(&out, 0, "dpkg-deb -f %s Depends Architecture", debs[3]),
                  0);
  CU_ASSERT(out && strstr(out, "libtracecorn" TC_SOVERSION " (>= ") &&
            strstr(out, "python3") && strstr(out, "Architecture: all"));
  free(out);

  /* installable: apt resolves them against this system without changing
   * it (--simulate) */
  MUST("apt-get install --simulate --no-install-recommends %s %s %s %s",
       debs[0], debs[1], debs[2], debs[3]);
  /* and they work: unpacked side by side, the CLI runs and an example
   * builds from the -dev package's pkg-config file */
  const char *root = tu_tmp("debroot");
  MUST("rm -rf %s && for d in %s %s %s %s; do dpkg-deb -x $d %s; done", root,
       debs[0], debs[1], debs[2], debs[3], root);
  CU_ASSERT_EQUAL(shx(&out, 0,
                      "LD_LIBRARY_PATH=%s/usr/lib/%s "
                      "%s/usr/bin/tracecorn --version",
                      root, ma, root),
                  0);
  CU_ASSERT(out && !strcmp(out, "tracecorn " TC_VERSION_STRING "\n"));
  free(out);
  MUST("cd %s && PKG_CONFIG_SYSROOT_DIR=%s "
       "PKG_CONFIG_LIBDIR=%s/usr/lib/%s/pkgconfig:/usr/lib/%s/pkgconfig:"
       "/usr/share/pkgconfig %s -Werror -o embed_raw "
       "usr/share/doc/libtracecorn-dev/examples/embed_raw.c "
       "$(PKG_CONFIG_SYSROOT_DIR=%s PKG_CONFIG_LIBDIR=%s/usr/lib/%s/pkgconfig:"
       "/usr/lib/%s/pkgconfig:/usr/share/pkgconfig pkg-config --cflags --libs "
       "tracecorn) -Wl,-rpath,%s/usr/lib/%s",
       root, root, root, ma, ma, TC_C_COMPILER, root, root, ma, ma, root, ma);
  CU_ASSERT_EQUAL(shx(&out, 0, "%s/embed_raw", root), 0);
  CU_ASSERT(out && strstr(out, "exit status 42"));
  free(out);
  /* the module finds libtracecorn1's library by its SONAME */
  CU_ASSERT_EQUAL(shx(&out, 0,
                      "cd / && env -u TRACECORN_LIBRARY "
                      "PYTHONDONTWRITEBYTECODE=1 LD_LIBRARY_PATH=%s/usr/lib/%s "
                      "PYTHONPATH=%s/usr/lib/python3/dist-packages "
                      "/usr/bin/python3 -c 'import tracecorn; "
                      "print(tracecorn.version(), tracecorn.__file__, "
                      "tracecorn.arch(\"arm64\").pc)'",
                      root, ma, root),
                  0);
  CU_ASSERT(out && strstr(out, TC_VERSION_STRING " ") &&
            strstr(out, "/usr/lib/python3/dist-packages/tracecorn/") &&
            strstr(out, " pc\n"));
  free(out);
  /* lintian: no error and no warning (tags that do not apply to a
   * package outside the archive are overridden in debian/) */
  MUST("lintian --fail-on error,warning %s/*.changes", out_dir);
  free(ma);
  MUST("rm -rf %s %s", root, out_dir);
}
#endif

/* The licence (issue 36): GPL-2.0-or-later in COPYING, debian/copyright
 * and an SPDX line at the top of every source file of the tree (C, headers,
 * CMake, shell; third-party copies excepted, as debian/copyright lists). */
static void test_licence(void) {
  size_t n = 0;
  char *copying = (char *)tu_read_file(SRC "/COPYING", &n);
  CU_ASSERT(copying && strstr(copying, "GNU GENERAL PUBLIC LICENSE") &&
            strstr(copying, "Version 2, June 1991"));
  free(copying);
  char *dc = (char *)tu_read_file(SRC "/debian/copyright", &n);
  CU_ASSERT(dc && strstr(dc, "Files: *\nCopyright: 2026 the tracecorn "
                             "developers\nLicense: GPL-2+\n"));
  free(dc);
  char *list = NULL;
  int st = tu_runf(&list, 0,
                   "cd '%s' && find . -path ./build\\* -prune -o -path "
                   "./.git -prune -o -path ./tests/data -prune -o -path "
                   "./tests/fuzz/regress -prune -o -type f \\( -name '*.c' "
                   "-o -name '*.h' -o -name '*.cc' -o -name '*.inc' -o -name "
                   "'*.sh' -o -name '*.cmake' -o -name CMakeLists.txt \\) "
                   "-print | sort",
                   SRC);
  CU_ASSERT_EQUAL(st, 0);
  int files = 0, without = 0;
  for (char *line = list ? strtok(list, "\n") : NULL; line;
       line = strtok(NULL, "\n")) {
    if (strncmp(line, "./build", 7) == 0)
      continue; /* build trees inside the source tree */
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", SRC, line + 2);
    char *text = (char *)tu_read_file(path, &n);
    files++;
    if (!text || !memmem(text, n < 300 ? n : 300,
                         "SPDX-License-Identifier: GPL-2.0-or-later", 41)) {
      without++;
      fprintf(stderr, "\nno SPDX line: %s", line);
    }
    free(text);
  }
  free(list);
  CU_ASSERT(files > 200);
  CU_ASSERT_EQUAL(without, 0);
}

int main(void) {
  static const tu_case cases[] = {
    {"api_exports", test_api_exports},
    {"help_documented", test_help_documented},
    {"man_renders", test_man_renders},
    {"completions_load", test_completions_load},
    {"install", test_install},
    {"licence", test_licence},
#if !TC_SANITIZED
    {"debs", test_debs},
#endif
    {NULL, NULL}
  };
  return tu_run_suite("packaging", cases);
}
