/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Guest filesystem: every guest path argument is resolved here.
 *
 * tc_guestfs_walk walks a guest path one component at a time, from an
 * O_PATH descriptor of the guest root (opt.fs_root, or the host "/"):
 *
 * - each component is opened with O_PATH|O_NOFOLLOW relative to the
 *   previous one, so the HOST kernel never follows a symlink for us;
 * - a symlink's text is read and spliced into the rest of the path; an
 *   absolute target restarts at the guest root, so "/" and "../../.." in
 *   a link inside fs_root stay inside it; 40 links at most (ELOOP);
 * - ".." at the guest root stays there; elsewhere it is the physical
 *   parent (openat ".."), as POSIX resolves ".." after a symlink;
 * - the last component is handed back as (parent fd, name) and the
 *   syscall handler acts on it with AT_SYMLINK_NOFOLLOW / O_NOFOLLOW, so
 *   a symlink swapped in between the walk and the use is never followed
 *   (the guest gets ELOOP or acts on the link itself);
 * - the host's procfs root (reached as /proc without --root) shows only an
 *   allow-list of system-wide files: no pid directories, so tracecorn's own
 *   pid, maps and fds are not reachable or listable (nor are the pid lists
 *   of cgroup file systems: cgroup.procs, cgroup.threads, tasks); /proc/self,
 *   /proc/thread-self and /proc/<guest pid> are synthesised (exe, cwd,
 *   root, fd/N) with or without --root.
 *
 * Without fs_root the guest root is the host "/" (the guest sees the host
 * filesystem with the user's permissions); docs/sandbox.md. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "emu/linux/linux_sys.h"

#define MAX_LINKS 40
#define PROC_MAGIC 0x9fa0
#define CGROUP_MAGIC 0x27e0eb
#define CGROUP2_MAGIC 0x63677270
#define PATH_FLAGS (O_PATH | O_NOFOLLOW | O_CLOEXEC)

/* Appends the components of `path` to the normalised absolute path in
 * out[0..*len) ("/" or "/a/b"). */
static int append_components(char *out, size_t *len, size_t max,
                             const char *path) {
  const char *p = path;
  while (*p) {
    while (*p == '/')
      p++;
    if (!*p)
      break;
    const char *start = p;
    while (*p && *p != '/')
      p++;
    size_t clen = (size_t)(p - start);
    if (clen == 1 && start[0] == '.')
      continue;
    if (clen == 2 && start[0] == '.' && start[1] == '.') {
      while (*len > 1 && out[*len - 1] != '/')
        (*len)--;
      if (*len > 1)
        (*len)--; /* the separator */
      out[*len] = 0;
      continue;
    }
    size_t need = *len + (*len > 1 ? 1 : 0) + clen + 1;
    if (need > max)
      return -ENAMETOOLONG;
    if (*len > 1)
      out[(*len)++] = '/';
    memcpy(out + *len, start, clen);
    *len += clen;
    out[*len] = 0;
  }
  return 0;
}

/* A path naming a directory implicitly: "x/", "x/.", "x/..". */
static int ends_as_dir(const char *path) {
  size_t n = strlen(path);
  if (n == 0)
    return 0;
  if (path[n - 1] == '/')
    return 1;
  if (n >= 2 && path[n - 1] == '.' && path[n - 2] == '/')
    return 1;
  if (n == 1 && path[0] == '.')
    return 1;
  if (n >= 3 && path[n - 1] == '.' && path[n - 2] == '.' && path[n - 3] == '/')
    return 1;
  return n == 2 && path[0] == '.' && path[1] == '.';
}

int tc_guestfs_guest_abs(tc_emu *emu, int dirfd, const char *guest_path,
                         char *out, size_t max) {
  if (!guest_path)
    return -EFAULT;
  if (!guest_path[0])
    return -ENOENT;
  if (max < 2)
    return -ENAMETOOLONG;
  size_t len = 1;
  out[0] = '/';
  out[1] = 0;
  int r;
  if (guest_path[0] != '/') {
    char base[TC_PATH_MAX];
    if (dirfd == TC_AT_FDCWD) {
      snprintf(base, sizeof base, "%s", emu->cwd[0] == '/' ? emu->cwd : "/");
    } else {
      tc_fd *f = tc_sys_fd(emu, dirfd);
      if (!f)
        return -EBADF;
      if (f->kind != TC_FD_DIR)
        return -ENOTDIR;
      if ((r = tc_guestfs_fd_path(emu, dirfd, base, sizeof base)) < 0)
        return r;
    }
    if ((r = append_components(out, &len, max, base)) < 0)
      return r;
  }
  if ((r = append_components(out, &len, max, guest_path)) < 0)
    return r;
  return (int)len;
}

/* fs_root without trailing slashes ("" for "/"), or NULL if unset. */
static const char *root_prefix(tc_emu *emu, char *buf, size_t max) {
  const char *root = emu->opt.fs_root;
  if (!root || !root[0])
    return NULL;
  size_t n = strlen(root);
  while (n > 0 && root[n - 1] == '/')
    n--;
  if (n >= max)
    n = max - 1;
  memcpy(buf, root, n);
  buf[n] = 0;
  return buf;
}

/* ------------------------------------------------------------------ /proc */

/* What the guest sees in the host's /proc: system-wide information that
 * names no process. Not listed: pid directories, loadavg and sys (they
 * show the last pid), and everything that is a link to /proc/self. */
static const char *const proc_allowed[] = {
    "self",   "thread-self", "cpuinfo", "meminfo", "version",
    "uptime", "filesystems", "stat",    NULL,
};

int tc_guestfs_proc_hidden(tc_emu *emu, const char *name) {
  (void)emu;
  for (int i = 0; proc_allowed[i]; i++)
    if (strcmp(name, proc_allowed[i]) == 0)
      return 0;
  return 1;
}

/* cgroup files that list pids (tracecorn's among them). */
static int cgroup_hidden(int dir_fd, const char *name) {
  struct statfs sf;
  if (strcmp(name, "cgroup.procs") && strcmp(name, "cgroup.threads") &&
      strcmp(name, "tasks"))
    return 0;
  return fstatfs(dir_fd, &sf) == 0 &&
         (sf.f_type == CGROUP_MAGIC || sf.f_type == CGROUP2_MAGIC);
}

int tc_guestfs_dir_is_proc(int host_fd) {
  struct statfs sf;
  struct stat st;
  return fstatfs(host_fd, &sf) == 0 && sf.f_type == PROC_MAGIC &&
         fstat(host_fd, &st) == 0 && st.st_ino == 1; /* PROC_ROOT_INO */
}

static int is_self_name(tc_emu *emu, const char *c) {
  char own[32];
  snprintf(own, sizeof own, "%u", (unsigned)emu->pid);
  return strcmp(c, "self") == 0 || strcmp(c, "thread-self") == 0 ||
         strcmp(c, own) == 0;
}

int tc_guestfs_exe_path(tc_emu *emu, char *out, size_t max) {
  const char *g = emu->exe_guest_path;
  char buf[TC_PATH_MAX];
  if (!g[0])
    return -ENOENT;
  if (emu->opt.fs_root && emu->opt.fs_root[0]) {
    /* The program's place inside the root, else its given name made
     * absolute: /proc/self/exe is always an absolute guest path. */
    char *real = realpath(emu->opt.fs_root, NULL);
    size_t rl = real ? strlen(real) : 0;
    if (real && rl == 1)
      rl = 0;
    const char *h = emu->exe_host_path;
    if (real && strncmp(h, real, rl) == 0 && h[rl] == '/') {
      snprintf(buf, sizeof buf, "%s", h + rl);
      g = buf;
    } else if (g[0] != '/') {
      size_t len = 1;
      buf[0] = '/';
      buf[1] = 0;
      if (append_components(buf, &len, sizeof buf, g) < 0)
        buf[1] = 0;
      g = buf;
    }
    free(real);
  }
  if (strlen(g) >= max)
    return -ENAMETOOLONG;
  strcpy(out, g);
  return 0;
}

/* ------------------------------------------------------------------ walk */

enum { V_NONE, V_PROC, V_SELF, V_FD };

typedef struct walker {
  tc_emu *emu;
  int root; /* O_PATH fd of the guest "/" */
  int cur;  /* O_PATH fd of g; -1 past a missing directory (lenient) */
  char g[TC_PATH_MAX]; /* guest path of cur, "" for "/" */
  size_t glen;
  char rest[2 * TC_PATH_MAX]; /* what is left to walk */
  size_t pos;
  int links;
  int virt; /* V_*: inside synthesised /proc entries */
} walker;

/* The next component of w->rest into c; *last when nothing but "/" and "."
 * follows, *trailing when something (a "/" or ".") did. 0, or -errno. */
static int next_comp(walker *w, char *c, size_t max, bool *last,
                     bool *trailing) {
  const char *p = w->rest + w->pos;
  for (;;) { /* "/" and "." name nothing */
    while (*p == '/')
      p++;
    if (p[0] == '.' && (p[1] == '/' || p[1] == 0))
      p++;
    else
      break;
  }
  const char *s = p;
  while (*p && *p != '/')
    p++;
  size_t n = (size_t)(p - s);
  if (n >= max)
    return -ENAMETOOLONG;
  memcpy(c, s, n);
  c[n] = 0;
  w->pos = (size_t)(p - w->rest);
  const char *q = p;
  *trailing = false;
  for (;;) {
    while (*q == '/') {
      q++;
      *trailing = true;
    }
    if (q[0] == '.' && (q[1] == '/' || q[1] == 0)) {
      q++;
      *trailing = true;
      continue;
    }
    break;
  }
  *last = *q == 0;
  return 0;
}

/* Replaces the walked part of w->rest with text (a link target). */
static int splice_link(walker *w, const char *text) {
  size_t tl = strlen(text), rl = strlen(w->rest + w->pos);
  if (tl + rl + 2 > sizeof w->rest)
    return -ENAMETOOLONG;
  /* The rest is "" or starts with "/" (it follows a component). */
  memmove(w->rest + tl, w->rest + w->pos, rl + 1);
  memcpy(w->rest, text, tl);
  w->pos = 0;
  if (text[0] == '/') { /* absolute: back to the guest root */
    int fd = dup(w->root);
    if (fd < 0)
      return -errno;
    if (w->cur >= 0)
      close(w->cur);
    w->cur = fd;
    w->g[0] = 0;
    w->glen = 0;
    w->virt = V_NONE;
  }
  return 0;
}

static int g_push(walker *w, const char *c) {
  size_t n = strlen(c);
  if (w->glen + n + 2 > sizeof w->g)
    return -ENAMETOOLONG;
  w->g[w->glen++] = '/';
  memcpy(w->g + w->glen, c, n + 1);
  w->glen += n;
  return 0;
}

static void g_pop(walker *w) {
  while (w->glen > 0 && w->g[w->glen - 1] != '/')
    w->glen--;
  if (w->glen > 0)
    w->glen--;
  w->g[w->glen] = 0;
}

static int finish(walker *w, tc_gfs_loc *loc, tc_gfs_kind kind,
                  const char *name, bool must_dir) {
  loc->kind = kind;
  loc->must_dir = must_dir;
  if (strlen(name) >= sizeof loc->name)
    return -ENAMETOOLONG;
  strcpy(loc->name, name);
  int n = snprintf(loc->guest, sizeof loc->guest, "%s%s%s", w->g,
                   name[0] ? "/" : "", name);
  if (n < 0 || (size_t)n >= sizeof loc->guest)
    return -ENAMETOOLONG;
  if (!loc->guest[0])
    strcpy(loc->guest, "/");
  if (kind == TC_GFS_REAL) {
    loc->dirfd = w->cur;
    w->cur = -1;
  }
  return 0;
}

/* A synthesised link: returned as such, or followed (text spliced). */
static int vlink(walker *w, tc_gfs_loc *loc, const char *c, const char *text,
                 bool last, bool follow, int *done) {
  if (last && !follow) {
    if (strlen(text) >= sizeof loc->link)
      return -ENAMETOOLONG;
    strcpy(loc->link, text);
    *done = 1;
    return finish(w, loc, TC_GFS_VLINK, c, false);
  }
  if (text[0] != '/')
    return -ENOENT; /* pipe:[...]: nothing to open by path here */
  if (++w->links > MAX_LINKS)
    return -ELOOP;
  return splice_link(w, text);
}

/* One component inside /proc/self (virt V_SELF / V_FD). */
static int walk_virtual(walker *w, tc_gfs_loc *loc, const char *c, bool last,
                        bool follow, int *done) {
  tc_emu *emu = w->emu;
  char text[TC_PATH_MAX];
  if (strcmp(c, "..") == 0)
    return -ENOENT; /* not synthesised */
  if (w->virt == V_SELF) {
    if (strcmp(c, "exe") == 0) {
      if (!last)
        return -ENOTDIR;
      if (follow) {
        if (!emu->exe_host_path[0])
          return -ENOENT;
        *done = 1;
        return finish(w, loc, TC_GFS_EXE, c, false);
      }
      int r = tc_guestfs_exe_path(emu, text, sizeof text);
      return r < 0 ? r : vlink(w, loc, c, text, last, follow, done);
    }
    if (strcmp(c, "maps") == 0) {
      if (!last)
        return -ENOTDIR;
      *done = 1;
      return finish(w, loc, TC_GFS_MAPS, c, false);
    }
    if (strcmp(c, "cwd") == 0)
      return vlink(w, loc, c, emu->cwd[0] == '/' ? emu->cwd : "/", last, follow,
                   done);
    if (strcmp(c, "root") == 0)
      return vlink(w, loc, c, "/", last, follow, done);
    if (strcmp(c, "fd") == 0) {
      w->virt = V_FD;
      int r = g_push(w, c);
      if (r == 0 && last) {
        *done = 1;
        return finish(w, loc, TC_GFS_VDIR, "", false);
      }
      return r;
    }
    return -ENOENT;
  }
  /* V_FD */
  long n = 0;
  for (const char *d = c; *d && n < TC_MAX_FDS; d++)
    n = (*d >= '0' && *d <= '9') ? n * 10 + (*d - '0') : TC_MAX_FDS;
  tc_fd *f = n < TC_MAX_FDS ? tc_sys_fd(emu, (int)n) : NULL;
  if (!f)
    return -ENOENT;
  /* tracecorn's own stdio looks like a pipe (as fstat says), whatever the
   * host has there; so does anything without a path in the guest view. */
  if (!f->owned || tc_guestfs_fd_path(emu, (int)n, text, sizeof text) < 0)
    snprintf(text, sizeof text, "pipe:[%u]", 0x1000u + (unsigned)n);
  if (last && follow) { /* reopening the guest's own open file, as Linux */
    loc->fd = (int)n;
    *done = 1;
    return finish(w, loc, TC_GFS_FD, c, false);
  }
  return vlink(w, loc, c, text, last, follow, done);
}

static int walk_open_root(tc_emu *emu) {
  const char *root =
      emu->opt.fs_root && emu->opt.fs_root[0] ? emu->opt.fs_root : "/";
  int fd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
  return fd < 0 ? -errno : fd;
}

static int walk_loop(walker *w, tc_gfs_loc *loc, int flags) {
  char c[NAME_MAX + 2];
  char text[TC_PATH_MAX];
  for (;;) {
    bool last, trailing;
    int r = next_comp(w, c, sizeof c, &last, &trailing);
    if (r < 0)
      return r;
    if (!c[0]) /* nothing left: the directory itself */
      return finish(w, loc, w->virt >= V_SELF ? TC_GFS_VDIR : TC_GFS_REAL, "",
                    true);
    bool follow = (flags & TC_GFS_FOLLOW) || trailing;
    int done = 0;
    if (w->virt >= V_SELF) {
      if ((r = walk_virtual(w, loc, c, last, follow, &done)) < 0 || done)
        return r;
      continue;
    }
    if (strcmp(c, "..") == 0) {
      bool was_virtual = w->virt == V_PROC; /* cur is still the root */
      w->virt = V_NONE;
      if (w->glen == 0)
        continue; /* clamped at the guest root */
      g_pop(w);
      int fd = -1;
      if (w->glen == 0 || was_virtual) {
        if (w->glen == 0 && (fd = dup(w->root)) < 0)
          return -errno;
      } else if (w->cur >= 0 &&
                 (fd = openat(w->cur, "..", O_PATH | O_DIRECTORY | O_CLOEXEC)) <
                     0) {
        return -errno;
      }
      if (fd >= 0) {
        if (w->cur >= 0)
          close(w->cur);
        w->cur = fd;
      }
      continue;
    }
    /* Entering /proc: the synthesised self names, and nothing of the
     * host's procfs root but the allow-list. */
    bool proc_root = w->cur >= 0 && tc_guestfs_dir_is_proc(w->cur);
    bool in_proc = w->virt == V_PROC || proc_root || strcmp(w->g, "/proc") == 0;
    if (in_proc && is_self_name(w->emu, c)) {
      if (last && !follow && strcmp(c, "self") == 0) {
        snprintf(text, sizeof text, "%u", (unsigned)w->emu->pid);
        return vlink(w, loc, c, text, true, false, &done);
      }
      if (last && !follow && strcmp(c, "thread-self") == 0) {
        snprintf(text, sizeof text, "%u/task/%u", (unsigned)w->emu->pid,
                 (unsigned)w->emu->tid);
        return vlink(w, loc, c, text, true, false, &done);
      }
      char own[32];
      snprintf(own, sizeof own, "%u", (unsigned)w->emu->pid);
      if ((r = g_push(w, own)) < 0)
        return r;
      w->virt = V_SELF;
      if (last)
        return finish(w, loc, TC_GFS_VDIR, "", false);
      continue;
    }
    if (w->virt == V_PROC || (proc_root && tc_guestfs_proc_hidden(w->emu, c)) ||
        (w->cur >= 0 && cgroup_hidden(w->cur, c)))
      return -ENOENT;
    if (w->cur < 0) { /* lenient, past a missing directory */
      if ((r = g_push(w, c)) < 0)
        return r;
      if (last)
        return finish(w, loc, TC_GFS_REAL, "", trailing);
      continue;
    }
    if (last && !follow)
      return finish(w, loc, TC_GFS_REAL, c, false);
    int fd = openat(w->cur, c, PATH_FLAGS);
    if (fd < 0) {
      int e = errno;
      if (last)
        return finish(w, loc, TC_GFS_REAL, c, trailing);
      /* "/proc" missing from fs_root: /proc/self is still there. */
      if (e == ENOENT && w->glen == 0 && strcmp(c, "proc") == 0) {
        w->virt = V_PROC;
        if ((r = g_push(w, c)) < 0)
          return r;
        continue;
      }
      if (e == ENOENT && (flags & TC_GFS_LENIENT)) {
        close(w->cur);
        w->cur = -1;
        if ((r = g_push(w, c)) < 0)
          return r;
        continue;
      }
      return -e;
    }
    struct stat st;
    if (fstat(fd, &st) < 0) {
      r = -errno;
      close(fd);
      return r;
    }
    if (S_ISLNK(st.st_mode)) {
      ssize_t n = readlinkat(fd, "", text, sizeof text - 1);
      r = n < 0 ? -errno : 0;
      close(fd);
      if (r < 0)
        return r;
      text[n] = 0;
      if (++w->links > MAX_LINKS)
        return -ELOOP;
      if (!text[0])
        return -ENOENT;
      if ((r = splice_link(w, text)) < 0)
        return r;
      continue;
    }
    if (last) {
      close(fd);
      return finish(w, loc, TC_GFS_REAL, c, trailing);
    }
    if (!S_ISDIR(st.st_mode)) {
      close(fd);
      return -ENOTDIR;
    }
    close(w->cur);
    w->cur = fd;
    if ((r = g_push(w, c)) < 0)
      return r;
  }
}

int tc_guestfs_walk(tc_emu *emu, int dirfd, const char *path, int flags,
                    tc_gfs_loc *loc) {
  loc->dirfd = -1;
  loc->fd = -1;
  loc->kind = TC_GFS_REAL;
  loc->name[0] = 0;
  if (!path)
    return -EFAULT;
  if (!path[0])
    return -ENOENT;
  walker *w = malloc(sizeof *w);
  if (!w)
    return -ENOMEM;
  memset(w, 0, offsetof(walker, rest));
  w->emu = emu;
  w->cur = -1;
  w->rest[0] = 0;
  w->pos = 0;
  w->links = 0;
  w->virt = V_NONE;
  int r = 0;
  size_t plen = strlen(path);
  if (path[0] != '/') {
    /* Relative: the cwd's or the directory fd's guest path first. */
    char base[TC_PATH_MAX];
    if (dirfd == TC_AT_FDCWD) {
      snprintf(base, sizeof base, "%s", emu->cwd[0] == '/' ? emu->cwd : "/");
    } else {
      tc_fd *f = tc_sys_fd(emu, dirfd);
      if (!f)
        r = -EBADF;
      else if (f->kind != TC_FD_DIR)
        r = -ENOTDIR;
      else
        r = tc_guestfs_fd_path(emu, dirfd, base, sizeof base);
    }
    if (r == 0) {
      size_t bl = strlen(base);
      if (bl + plen + 2 > sizeof w->rest)
        r = -ENAMETOOLONG;
      else
        snprintf(w->rest, sizeof w->rest, "%s/%s", base, path);
    }
  } else if (plen + 1 > sizeof w->rest) {
    r = -ENAMETOOLONG;
  } else {
    memcpy(w->rest, path, plen + 1);
  }
  if (r == 0 && (r = w->root = walk_open_root(emu)) >= 0) {
    w->cur = dup(w->root);
    r = w->cur < 0 ? -errno : walk_loop(w, loc, flags);
    close(w->root);
  }
  if (w->cur >= 0)
    close(w->cur);
  free(w);
  if (r < 0 && loc->dirfd >= 0) {
    close(loc->dirfd);
    loc->dirfd = -1;
  }
  return r < 0 ? r : 0;
}

void tc_guestfs_loc_done(tc_gfs_loc *loc) {
  if (loc->dirfd >= 0)
    close(loc->dirfd);
  loc->dirfd = -1;
}

const char *tc_guestfs_loc_name(const tc_gfs_loc *loc) {
  return loc->name[0] ? loc->name : ".";
}

/* The host path a guest path stands for, for messages, map names and
 * inode hashes: fs_root + the walked guest path (missing directories
 * continue lexically). Syscall handlers act through tc_guestfs_walk. */
int tc_guestfs_resolve(tc_emu *emu, int dirfd, const char *guest_path,
                       char *host_path, size_t host_max) {
  tc_gfs_loc *loc = malloc(sizeof *loc);
  if (!loc)
    return -ENOMEM;
  int r = tc_guestfs_walk(emu, dirfd, guest_path,
                          TC_GFS_FOLLOW | TC_GFS_LENIENT, loc);
  if (r == 0) {
    tc_guestfs_loc_done(loc);
    const char *abs = loc->guest;
    char rootbuf[TC_PATH_MAX];
    const char *root = root_prefix(emu, rootbuf, sizeof rootbuf);
    const char *tail = ends_as_dir(guest_path) && strcmp(abs, "/") ? "/" : "";
    int n;
    if (loc->kind == TC_GFS_EXE)
      n = snprintf(host_path, host_max, "%s", emu->exe_host_path);
    else if (loc->kind != TC_GFS_REAL)
      n = -1, r = -ENOENT;
    else
      n = snprintf(host_path, host_max, "%s%s%s", root ? root : "",
                   (root && strcmp(abs, "/") == 0) ? "/" : abs, tail);
    if (r == 0 && (n < 0 || (size_t)n >= host_max))
      r = -ENAMETOOLONG;
  }
  free(loc);
  return r;
}

int tc_guestfs_fd_path(tc_emu *emu, int fd, char *out, size_t max) {
  tc_fd *f = tc_sys_fd(emu, fd);
  if (!f)
    return -EBADF;
  char link[64], host[TC_PATH_MAX];
  snprintf(link, sizeof link, "/proc/self/fd/%d", f->host_fd);
  ssize_t n = readlink(link, host, sizeof host - 1);
  if (n < 0)
    return -errno;
  host[n] = 0;
  if (host[0] != '/')
    return -ENOENT; /* pipe:[...], anon_inode:... */
  const char *guest = host;
  char rootbuf[TC_PATH_MAX];
  if (root_prefix(emu, rootbuf, sizeof rootbuf)) {
    /* The link target is canonical, so compare with the canonical root. */
    char *real = realpath(emu->opt.fs_root, NULL);
    if (!real)
      return -ENOENT;
    size_t rl = strlen(real);
    if (rl == 1)
      rl = 0; /* fs_root "/" */
    int inside =
        strncmp(host, real, rl) == 0 && (host[rl] == 0 || host[rl] == '/');
    free(real);
    if (!inside)
      return -ENOENT;
    guest = host[rl] ? host + rl : "/";
  }
  if (strlen(guest) >= max)
    return -ENAMETOOLONG;
  strcpy(out, guest);
  return 0;
}

int tc_guestfs_open_read(tc_emu *emu, const char *path) {
  tc_gfs_loc loc;
  int r = tc_guestfs_walk(emu, TC_AT_FDCWD, path, TC_GFS_FOLLOW, &loc);
  if (r < 0)
    return r;
  int fd = -ENOENT;
  if (loc.kind == TC_GFS_REAL) {
    fd = openat(loc.dirfd, tc_guestfs_loc_name(&loc),
                O_RDONLY | O_CLOEXEC | (loc.name[0] ? O_NOFOLLOW : 0));
    if (fd < 0)
      fd = -errno;
  }
  tc_guestfs_loc_done(&loc);
  return fd;
}
