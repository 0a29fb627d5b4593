/* Guest filesystem: every guest path argument becomes a host path here.
 *
 * Guest paths are made absolute (against the cwd or a directory fd's guest
 * path) and normalised lexically: "." and empty components vanish, ".."
 * drops the previous component and stops at "/". With opt.fs_root set, the
 * guest "/" is that host directory, and a lexical ".." can never leave it.
 *
 * Not handled yet (a later hardening step): symlinks inside fs_root whose
 * targets are absolute or climb out with "..", which the HOST resolves
 * when we open the path; and a lexical ".." after a symlink component,
 * which POSIX would resolve against the link target. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "emu/linux_sys.h"

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

int tc_guestfs_is_proc_exe(tc_emu *emu, const char *abs) {
  if (strcmp(abs, "/proc/self/exe") == 0)
    return 1;
  char own[64];
  snprintf(own, sizeof own, "/proc/%u/exe", (unsigned)emu->pid);
  return strcmp(abs, own) == 0;
}

/* The emulated process's own /proc entries other than exe would expose
 * the HOST process (tracecorn's pid, maps, fds), so they do not exist. */
static int is_proc_self_other(tc_emu *emu, const char *abs) {
  static const char *const selves[] = {"/proc/self", "/proc/thread-self"};
  char own[64];
  snprintf(own, sizeof own, "/proc/%u", (unsigned)emu->pid);
  const char *prefixes[] = {selves[0], selves[1], own};
  for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++) {
    size_t n = strlen(prefixes[i]);
    if (strncmp(abs, prefixes[i], n) == 0 && (abs[n] == 0 || abs[n] == '/'))
      return 1;
  }
  return 0;
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

int tc_guestfs_resolve(tc_emu *emu, int dirfd, const char *guest_path,
                       char *host_path, size_t host_max) {
  char abs[TC_PATH_MAX];
  int r = tc_guestfs_guest_abs(emu, dirfd, guest_path, abs, sizeof abs);
  if (r < 0)
    return r;
  if (tc_guestfs_is_proc_exe(emu, abs)) {
    if (!emu->exe_host_path[0])
      return -ENOENT;
    if (strlen(emu->exe_host_path) >= host_max)
      return -ENAMETOOLONG;
    strcpy(host_path, emu->exe_host_path);
    return 0;
  }
  if (is_proc_self_other(emu, abs))
    return -ENOENT;
  char rootbuf[TC_PATH_MAX];
  const char *root = root_prefix(emu, rootbuf, sizeof rootbuf);
  const char *tail = ends_as_dir(guest_path) && strcmp(abs, "/") ? "/" : "";
  int n = snprintf(host_path, host_max, "%s%s%s", root ? root : "",
                   (root && strcmp(abs, "/") == 0) ? "/" : abs, tail);
  if (n < 0 || (size_t)n >= host_max)
    return -ENAMETOOLONG;
  return 0;
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
