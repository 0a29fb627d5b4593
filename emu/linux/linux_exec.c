/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Emulated kernel: execve and execveat, in the current process (same
 * engine, same trace), as Linux's fs/exec.c, binfmt_script and binfmt_elf
 * do it.
 *
 * Until the point of no return everything that can fail is checked and
 * returned as Linux returns it, and the program goes on: the file is found
 * through the guest's view of the filesystem (ENOENT, ENOTDIR, ELOOP,
 * EACCES for no execute permission or not a regular file), `#!` scripts
 * are rewritten to their interpreter (with its optional argument, at most
 * MAX_INTERP_DEPTH deep: ELOOP), the ELF is read and parsed (ENOEXEC for
 * anything else, and for an ELF of another arch: one engine runs one
 * arch), its interpreter too (ENOENT, ELIBBAD), argv and envp are copied
 * from guest memory (EFAULT for a bad pointer, E2BIG past a quarter of the
 * stack or one string over 32 pages).
 *
 * Then, as Linux: the other threads end, every mapping goes (UNMAP
 * events), close-on-exec fds are closed, caught signals return to their
 * default (ignored ones stay ignored; the mask and pending signals stay),
 * the alternate stack, robust list and clear-child-tid are forgotten, and
 * the new image is mapped and its stack built by the loader the first
 * program was loaded with (MAP events, contents as kernel writes of the
 * SYSCALL). The registers return to their process-start values. The
 * engine then stops; the new PC is set and the recorder gives a KEYFRAME
 * after the execve's SYSCALL (docs/event-model.md). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/notice.h"
#include "emu/linux/linux_sys.h"
#include "loaders/loader.h"

#define BINPRM_BUF_SIZE 256
#define MAX_INTERP_DEPTH 5 /* binfmt_script rewrites, as exec_binprm */
#define MAX_ARG_STRINGS 0x7fffffff

/* A string list copied from the guest (argv, envp), NULL-terminated. */
typedef struct strvec {
  char **v;
  size_t n, cap;
} strvec;

static void strvec_free(strvec *s) {
  for (size_t i = 0; i < s->n; i++)
    free(s->v[i]);
  free(s->v);
  memset(s, 0, sizeof *s);
}

static int strvec_push(strvec *s, char *str) {
  if (!str)
    return -ENOMEM;
  if (s->n + 2 > s->cap) {
    size_t cap = s->cap ? s->cap * 2 : 16;
    char **v = realloc(s->v, cap * sizeof *v);
    if (!v) {
      free(str);
      return -ENOMEM;
    }
    s->v = v;
    s->cap = cap;
  }
  s->v[s->n++] = str;
  s->v[s->n] = NULL;
  return 0;
}

/* How many bytes of strings and pointers the new stack may hold: a
 * quarter of the stack (Linux: of RLIMIT_STACK, at least ARG_MAX). */
static uint64_t arg_limit(const tc_emu *emu) {
  uint64_t size = emu->opt.stack_size ? emu->opt.stack_size : 8u << 20;
  return size / 4;
}

/* Copies the guest's NULL-terminated array of string pointers at addr
 * (0: an empty list) into out; *used counts bytes of strings and
 * pointers against limit. 0, -EFAULT, -E2BIG or -ENOMEM. */
static int copy_strings(tc_emu *emu, uint64_t addr, strvec *out, uint64_t *used,
                        uint64_t limit, char *scratch, size_t scratch_max) {
  unsigned ptr = emu->arch->ptr_size;
  if (addr == 0)
    return 0;
  for (uint64_t i = 0;; i++) {
    if (i >= MAX_ARG_STRINGS)
      return -E2BIG;
    uint64_t p = 0;
    if (addr + i * ptr < addr ||
        tc_sys_get_uint(emu, addr + i * ptr, ptr, &p) < 0)
      return -EFAULT;
    if (p == 0)
      return 0;
    int r = tc_sys_read_path(emu, p, scratch, scratch_max);
    if (r == -ENAMETOOLONG)
      return -E2BIG; /* one string over MAX_ARG_STRLEN */
    if (r < 0)
      return -EFAULT;
    *used += (uint64_t)r + 1 + ptr;
    if (*used > limit)
      return -E2BIG;
    if (strvec_push(out, strdup(scratch)) < 0)
      return -ENOMEM;
  }
}

/* The file to run, open on the host. */
typedef struct exec_file {
  int fd;
  char guest[TC_PATH_MAX]; /* absolute guest path */
} exec_file;

/* Whether the host lets this process execute the file (the guest runs
 * with tracecorn's permissions, as for every other access). */
static int check_exec(int fd) {
  struct stat st;
  if (fstat(fd, &st) < 0)
    return -errno;
  if (!S_ISREG(st.st_mode))
    return -EACCES;
  char link[64];
  snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  if (access(link, X_OK) < 0)
    return errno == ENOENT ? -EACCES : -errno;
  return 0;
}

/* Finds and opens (dirfd, path) as execve does: symlinks followed unless
 * nofollow, "" only with AT_EMPTY_PATH (the fd itself). */
static int open_exec(tc_emu *emu, int dirfd, const char *path, bool empty_path,
                     bool nofollow, exec_file *f) {
  f->fd = -1;
  char link[64];
  if (path[0] == 0) {
    if (!empty_path)
      return -ENOENT;
    tc_fd *g = tc_sys_fd(emu, dirfd);
    if (!g)
      return -EBADF;
    snprintf(link, sizeof link, "/proc/self/fd/%d", g->host_fd);
    f->fd = open(link, O_RDONLY | O_CLOEXEC);
    if (f->fd < 0)
      return errno == ENOENT ? -EACCES : -errno;
    snprintf(f->guest, sizeof f->guest, "/dev/fd/%d", dirfd);
    return check_exec(f->fd);
  }
  tc_gfs_loc loc;
  int r = tc_guestfs_walk(emu, dirfd, path, nofollow ? 0 : TC_GFS_FOLLOW, &loc);
  if (r < 0)
    return r;
  r = 0;
  switch (loc.kind) {
  case TC_GFS_REAL:
    f->fd = openat(loc.dirfd, tc_guestfs_loc_name(&loc),
                   O_RDONLY | O_CLOEXEC | (loc.name[0] ? O_NOFOLLOW : 0));
    if (f->fd < 0) {
      r = -errno;
    } else if (loc.must_dir) {
      struct stat st;
      r = fstat(f->fd, &st) == 0 && S_ISDIR(st.st_mode) ? -EACCES : -ENOTDIR;
    }
    break;
  case TC_GFS_EXE:
    f->fd = tc_emu_exe_open(emu, O_RDONLY);
    r = f->fd < 0 ? -errno : 0;
    break;
  case TC_GFS_FD: {
    tc_fd *g = tc_sys_fd(emu, loc.fd);
    if (!g) {
      r = -EBADF;
      break;
    }
    snprintf(link, sizeof link, "/proc/self/fd/%d", g->host_fd);
    f->fd = open(link, O_RDONLY | O_CLOEXEC);
    r = f->fd < 0 ? -EACCES : 0;
    break;
  }
  default: /* /proc/self, /proc/self/fd, maps: not executables */
    r = -EACCES;
    break;
  }
  snprintf(f->guest, sizeof f->guest, "%s", loc.guest);
  tc_guestfs_loc_done(&loc);
  if (r == 0)
    r = check_exec(f->fd);
  return r;
}

static void exec_file_close(exec_file *f) {
  if (f->fd >= 0)
    close(f->fd);
  f->fd = -1;
}

/* binfmt_script: "#!interp [arg]" in the first BINPRM_BUF_SIZE bytes.
 * 1 with the interpreter and optional argument, 0 when head is not a
 * script, -ENOEXEC when the line names no interpreter whole. */
static int parse_shebang(const char *head, size_t n, char *interp, size_t imax,
                         char *arg, size_t amax) {
  if (n < 2 || head[0] != '#' || head[1] != '!')
    return 0;
  const char *end = memchr(head, '\n', n);
  bool truncated = !end;
  if (!end)
    end = head + n;
  const char *p = head + 2;
  while (p < end && (*p == ' ' || *p == '\t'))
    p++;
  const char *q = p;
  while (q < end && *q != ' ' && *q != '\t' && *q != 0)
    q++;
  if (q == p || (truncated && q == end) || (size_t)(q - p) >= imax)
    return -ENOEXEC;
  memcpy(interp, p, (size_t)(q - p));
  interp[q - p] = 0;
  /* the rest of the line, blanks trimmed at both ends, is one argument */
  while (q < end && (*q == ' ' || *q == '\t'))
    q++;
  const char *e = q;
  while (e < end && *e != 0)
    e++;
  while (e > q &&
         (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r' || e[-1] == '\n'))
    e--;
  if ((size_t)(e - q) >= amax)
    return -ENOEXEC;
  memcpy(arg, q, (size_t)(e - q));
  arg[e - q] = 0;
  return 1;
}

/* Everything the new image needs, gathered before the point of no
 * return. */
typedef struct exec_image {
  uint8_t *data;
  size_t size;
  tc_elf_image img;
  tc_interp_file interp;
  bool have_interp;
  char guest[TC_PATH_MAX]; /* the ELF's absolute guest path */
  char host[TC_PATH_MAX];  /* and its host path (a name only) */
  int fd;                  /* the ELF, held open for /proc/self/exe */
} exec_image;

static void exec_image_free(exec_image *x) {
  free(x->data);
  x->data = NULL;
  if (x->fd >= 0)
    close(x->fd);
  x->fd = -1;
  if (x->have_interp)
    tc_loader_interp_free(&x->interp);
  x->have_interp = false;
}

/* Opens the program (rewriting scripts to their interpreters: argv
 * changes), reads and checks the ELF and its interpreter. 0 or -errno. */
static int prepare(tc_sys_call *c, int dirfd, const char *path, int flags,
                   strvec *argv, exec_image *x) {
  tc_emu *emu = c->emu;
  exec_file f;
  int r = open_exec(emu, dirfd, path, flags & TC_AT_EMPTY_PATH,
                    flags & TC_AT_SYMLINK_NOFOLLOW, &f);
  /* A script's filename argument is the path as execve was given it. */
  const char *filename = path[0] ? path : f.guest;
  char *script_name = NULL;
  for (int depth = 0; r == 0; depth++) {
    char head[BINPRM_BUF_SIZE];
    ssize_t n = pread(f.fd, head, sizeof head, 0);
    if (n < 0) {
      r = -EIO;
      break;
    }
    char interp[BINPRM_BUF_SIZE], arg[BINPRM_BUF_SIZE];
    int s =
        parse_shebang(head, (size_t)n, interp, sizeof interp, arg, sizeof arg);
    if (s < 0) {
      r = s;
      break;
    }
    if (s == 0)
      break; /* not a script: an ELF or nothing */
    if (depth >= MAX_INTERP_DEPTH) {
      r = -ELOOP;
      break;
    }
    /* argv: interp [arg] filename argv[1..] (argv[0] is dropped) */
    strvec nv = {0};
    r = strvec_push(&nv, strdup(interp));
    if (r == 0 && arg[0])
      r = strvec_push(&nv, strdup(arg));
    if (r == 0)
      r = strvec_push(&nv, strdup(script_name ? script_name : filename));
    for (size_t i = 1; r == 0 && i < argv->n; i++)
      r = strvec_push(&nv, strdup(argv->v[i]));
    if (r < 0) {
      strvec_free(&nv);
      break;
    }
    strvec_free(argv);
    *argv = nv;
    free(script_name);
    script_name = strdup(interp);
    exec_file_close(&f);
    r = open_exec(emu, TC_AT_FDCWD, interp, false, false, &f);
  }
  free(script_name);
  if (r < 0) {
    exec_file_close(&f);
    return r;
  }
  snprintf(x->guest, sizeof x->guest, "%s", f.guest);
  char link[64];
  snprintf(link, sizeof link, "/proc/self/fd/%d", f.fd);
  ssize_t hl = readlink(link, x->host, sizeof x->host - 1);
  x->host[hl > 0 ? hl : 0] = 0;
  tc_error err = {{0}};
  int fd = f.fd;
  f.fd = -1;
  if ((x->fd = fcntl(fd, F_DUPFD_CLOEXEC, 3)) < 0) {
    close(fd);
    return -errno;
  }
  if (!(x->data = tc_loader_read_fd(fd, x->guest, &x->size, &err)))
    return -EACCES;
  if (tc_elf_parse(x->data, x->size, &x->img, &err) < 0 ||
      x->img.arch != tc_arch_base(emu->arch))
    return -ENOEXEC;
  if (x->img.has_interp) {
    x->have_interp = true;
    r = tc_linux_open_interp(emu, &x->img, &x->interp, &err);
    if (r < 0)
      return r;
  }
  return 0;
}

/* Linux's de_thread: the other threads end; the caller becomes the
 * process's only thread, with the pid as its tid. */
static void end_other_threads(tc_emu *emu) {
  tc_linux_threads_free(emu);
  emu->tid = emu->pid;
  emu->cur_thread = 0;
}

static void reset_kernel_state(tc_emu *emu, tc_linux_state *st,
                               const char *filename) {
  for (int i = 0; i < TC_MAX_FDS; i++) {
    tc_fd *f = &emu->fds[i];
    if (f->kind == TC_FD_CLOSED || !f->cloexec)
      continue;
    if (f->owned)
      close(f->host_fd);
    memset(f, 0, sizeof *f);
  }
  /* flush_signal_handlers: caught signals to SIG_DFL, SIG_IGN kept */
  for (int s = 1; s <= TC_NSIG; s++) {
    if (st->sigact[s].handler != 1)
      st->sigact[s].handler = 0;
    st->sigact[s].flags = 0;
    st->sigact[s].restorer = 0;
    st->sigact[s].mask = 0;
  }
  st->altstack_sp = st->altstack_size = 0;
  st->altstack_flags = 2; /* SS_DISABLE */
  st->robust_list = 0;
  st->suspend_active = false;
  emu->clear_child_tid = 0;
  /* comm: the base name of the file execve was given */
  const char *slash = strrchr(filename, '/');
  const char *base = slash ? slash + 1 : filename;
  size_t n = strnlen(base, sizeof st->comm - 1);
  memcpy(st->comm, base, n);
  st->comm[n] = 0;
}

/* The point of no return: the old image goes, the new one comes. 0, or
 * -1 when the new image could not be built (the process then dies of
 * SIGSEGV, as Linux's exec after the point of no return). */
static int replace_image(tc_sys_call *c, exec_image *x, const char *execfn,
                         strvec *argv, strvec *envp) {
  tc_emu *emu = c->emu;
  end_other_threads(emu);
  tc_emu_drop_code(emu);
  while (emu->nregions > 0) {
    const tc_region *r = &emu->regions[0];
    if (tc_emu_unmap(emu, r->start, r->end - r->start) < 0)
      return -1;
  }
  emu->gdt_addr = 0;
  emu->brk_start = emu->brk_cur = 0;
  reset_kernel_state(emu, c->st, execfn);
  tc_emu_reset_regs(emu);
  tc_error err = {{0}};
  tc_load_result lr;
  if (tc_load_elf_exec(emu, &x->img, x->data, x->size, x->guest, execfn,
                       (const char *const *)argv->v,
                       (const char *const *)envp->v,
                       x->have_interp ? &x->interp.in : NULL, &lr, &err) < 0 ||
      tc_linux_process_init(emu) < 0) {
    if (!emu->opt.quiet)
      tc_notice("execve %s: %s", x->guest, err.msg);
    return -1;
  }
  tc_emu_set_reg(emu, emu->arch->sp_reg, lr.sp);
  if (tc_emu_set_exe(emu, x->fd, x->host[0] ? x->host : x->guest) < 0 &&
      emu->exe_fd >= 0) {
    close(emu->exe_fd); /* /proc/self/exe then fails, never names the old */
    emu->exe_fd = -1;
  }
  snprintf(emu->exe_guest_path, sizeof emu->exe_guest_path, "%s", x->guest);
  /* The PC is set once the engine has stopped (a PC written inside a
   * hook makes Unicorn 2.0.1 resume at once and drop the stop). */
  emu->restart_pc = lr.entry;
  emu->restart_pending = true;
  emu->resched = TC_RESCHED_KEEP;
  emu->execed = true;
  tc_proc_vfork_release(emu); /* a vfork parent goes on now */
  uc_emu_stop(emu->uc);
  return 0;
}

static int64_t do_execve(tc_sys_call *c, int dirfd, uint64_t path_addr,
                         uint64_t argv_addr, uint64_t envp_addr, int flags) {
  tc_emu *emu = c->emu;
  if (flags & ~(TC_AT_EMPTY_PATH | TC_AT_SYMLINK_NOFOLLOW))
    return -EINVAL;
  char path[TC_PATH_MAX];
  int r = tc_sys_read_path(emu, path_addr, path, sizeof path);
  if (r < 0)
    return r;
  /* One string may be up to 32 pages (MAX_ARG_STRLEN). */
  size_t smax = 32 * (size_t)emu->arch->page_size;
  char *scratch = malloc(smax);
  if (!scratch)
    return -ENOMEM;
  strvec argv = {0}, envp = {0};
  uint64_t used = 0, limit = arg_limit(emu);
  r = copy_strings(emu, argv_addr, &argv, &used, limit, scratch, smax);
  if (r == 0)
    r = copy_strings(emu, envp_addr, &envp, &used, limit, scratch, smax);
  free(scratch);
  exec_image x;
  memset(&x, 0, sizeof x);
  x.fd = -1;
  if (r == 0)
    r = prepare(c, dirfd, path, flags, &argv, &x);
  /* execfn (AT_EXECFN) is the name as given; a script's interpreter may
   * have added strings: all of it must fit the stack's quarter. */
  const char *execfn = path[0] ? path : x.guest;
  if (r == 0) {
    uint64_t total = strlen(execfn) + 1;
    for (size_t i = 0; i < argv.n; i++)
      total += strlen(argv.v[i]) + 1 + emu->arch->ptr_size;
    for (size_t i = 0; i < envp.n; i++)
      total += strlen(envp.v[i]) + 1 + emu->arch->ptr_size;
    if (total > limit)
      r = -E2BIG;
  }
  if (r == 0 && emu->opt.no_follow_exec) {
    snprintf(emu->exec_notice, sizeof emu->exec_notice,
             "execve(\"%.200s\") not followed (--no-follow): the recording "
             "ends here",
             path);
    if (!emu->opt.quiet)
      tc_notice("%s", emu->exec_notice);
    c->action = TC_SYS_ACT_EXEC_STOP;
    c->no_return = true;
  } else if (r == 0) {
    /* execve returns 0 into the new image, whose registers are the
     * process-start ones: nothing more is written. */
    c->no_return = true;
    if (replace_image(c, &x, execfn, &argv, &envp) < 0) {
      c->action = TC_SYS_ACT_KILL;
      c->action_arg = 11;
    }
  }
  exec_image_free(&x);
  strvec_free(&argv);
  strvec_free(&envp);
  return r;
}

static int64_t sys_execve(tc_sys_call *c) {
  return do_execve(c, TC_AT_FDCWD, c->a[0], c->a[1], c->a[2], 0);
}

static int64_t sys_execveat(tc_sys_call *c) {
  return do_execve(c, tc_sys_int(c, 0), c->a[1], c->a[2], c->a[3],
                   tc_sys_int(c, 4));
}

const tc_sys_entry tc_sys_exec_table[] = {
    {"execve", sys_execve},
    {"execveat", sys_execveat},
    {NULL, NULL},
};

int tc_linux_open_interp(tc_emu *emu, const tc_elf_image *prog,
                         tc_interp_file *f, tc_error *err) {
  memset(f, 0, sizeof *f);
  f->in.img = &f->img;
  f->in.guest_path = prog->interp;
  int fd = tc_guestfs_open_read(emu, prog->interp);
  if (fd < 0) {
    tc_error_set(err, "its interpreter %s: %s", prog->interp, strerror(-fd));
    return fd;
  }
  uint8_t *data = tc_loader_read_fd(fd, prog->interp, &f->in.size, err);
  if (!data) {
    char m[sizeof err->msg];
    snprintf(m, sizeof m, "%s", err ? err->msg : "");
    tc_error_set(err, "its interpreter %s", m);
    return -EACCES; /* not a regular file, or unreadable */
  }
  f->in.data = data;
  if (tc_elf_parse(data, f->in.size, &f->img, err) < 0) {
    char m[sizeof err->msg];
    snprintf(m, sizeof m, "%s", err ? err->msg : "");
    tc_error_set(err, "interpreter %s: %s", prog->interp, m);
    return -ELIBBAD;
  }
  if (f->img.arch != prog->arch || f->img.has_interp) {
    tc_error_set(err, "interpreter %s: not a %s program interpreter",
                 prog->interp, prog->arch->name);
    return -ELIBBAD;
  }
  return 0;
}
