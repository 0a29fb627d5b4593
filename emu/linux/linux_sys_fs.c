/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Emulated kernel: files, fds, paths, directories, pipes, poll.
 *
 * Guest fds are indices into emu->fds (lowest free first, like Linux);
 * host fds are separate. Guest fds that emu.c set up for stdio are not
 * "owned": closing or dup2-ing over them never closes the host's own
 * descriptors, and they look like pipes to the guest (fstat, lseek), so
 * a recording does not depend on whether tracecorn's stdout is a tty, a
 * pipe or a file. */
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/linux/linux_abi.h"
#include "common/linux/linux_abi_tables.h"
#include "common/linux/linux_xlat.h"
#include "emu/linux/linux_sys.h"

#define GUEST_O_LARGEFILE 0100000 /* x86 (asm-generic) value */
#define VIRT_EPOCH_SEC 1704067200 /* 2024-01-01: synthetic file times */

/* ---------------------------------------------------------------- fd table */

tc_fd *tc_sys_fd(tc_emu *emu, int fd) {
  if (fd < 0 || fd >= TC_MAX_FDS)
    return NULL;
  tc_fd *f = &emu->fds[fd];
  return f->kind == TC_FD_CLOSED ? NULL : f;
}

static int fd_limit(tc_emu *emu) {
  uint64_t lim = tc_linux_state_of(emu)->rlim_cur[7];
  return lim < TC_MAX_FDS ? (int)lim : TC_MAX_FDS;
}

int tc_sys_fd_alloc(tc_emu *emu, int min) {
  int lim = fd_limit(emu);
  for (int i = min < 0 ? 0 : min; i < lim; i++)
    if (emu->fds[i].kind == TC_FD_CLOSED)
      return i;
  return -EMFILE;
}

static bool is_host_stdio(tc_emu *emu, int host_fd) {
  return host_fd <= 2 || host_fd == emu->opt.stdin_fd ||
         host_fd == emu->opt.stdout_fd || host_fd == emu->opt.stderr_fd;
}

static void fd_release(tc_emu *emu, tc_fd *f) {
  if (f->owned && f->host_fd >= 0 && !is_host_stdio(emu, f->host_fd))
    close(f->host_fd);
  memset(f, 0, sizeof *f);
  f->kind = TC_FD_CLOSED;
  f->host_fd = -1;
}

/* Makes guest fd `to` (already free) a duplicate of `from`. */
static int fd_dup_into(tc_emu *emu, tc_fd *from, int to, bool cloexec) {
  tc_fd nf = *from;
  if (from->owned) {
    int h = fcntl(from->host_fd, F_DUPFD_CLOEXEC, 3);
    if (h < 0)
      return -errno;
    nf.host_fd = h;
  }
  nf.cloexec = cloexec;
  emu->fds[to] = nf;
  return to;
}

/* -------------------------------------------------------------- read/write */

/* Reads up to count bytes from a guest fd into guest memory at buf, in
 * bounded chunks. off < 0: at the file position. */
static int64_t fd_read(tc_sys_call *c, tc_fd *f, uint64_t buf, uint64_t count,
                       int64_t off) {
  tc_emu *emu = c->emu;
  if (f->kind == TC_FD_DIR)
    return -EISDIR;
  if ((f->flags & O_ACCMODE) == O_WRONLY)
    return -EBADF;
  if (count > 0x7ffff000u)
    count = 0x7ffff000u; /* MAX_RW_COUNT */
  if (count == 0)
    return 0;
  size_t cap = count < TC_SYS_CHUNK ? (size_t)count : TC_SYS_CHUNK;
  uint8_t *tmp = malloc(cap);
  if (!tmp)
    return -ENOMEM;
  uint64_t done = 0;
  int64_t err = 0;
  while (done < count) {
    size_t want = count - done < cap ? (size_t)(count - done) : cap;
    /* Check first: data taken from a pipe cannot be given back. */
    if (!tc_sys_range_ok(emu, buf + done, want, TC_PROT_WRITE)) {
      err = -EFAULT;
      break;
    }
    ssize_t n = off < 0 ? read(f->host_fd, tmp, want)
                        : pread(f->host_fd, tmp, want, off + (int64_t)done);
    if (n < 0) {
      err = -errno;
      break;
    }
    if (n > 0 && tc_sys_write(emu, buf + done, tmp, (size_t)n) < 0) {
      err = -EFAULT;
      break;
    }
    done += (uint64_t)n;
    if ((size_t)n < want)
      break; /* short read: return what this read gave, as Linux does */
  }
  free(tmp);
  return done > 0 ? (int64_t)done : err;
}

static int64_t fd_write(tc_sys_call *c, tc_fd *f, uint64_t buf, uint64_t count,
                        int64_t off) {
  tc_emu *emu = c->emu;
  if (f->kind == TC_FD_DIR)
    return -EBADF;
  if ((f->flags & O_ACCMODE) == O_RDONLY)
    return -EBADF;
  if (count > 0x7ffff000u)
    count = 0x7ffff000u;
  if (count == 0)
    return 0;
  size_t cap = count < TC_SYS_CHUNK ? (size_t)count : TC_SYS_CHUNK;
  uint8_t *tmp = malloc(cap);
  if (!tmp)
    return -ENOMEM;
  uint64_t done = 0;
  int64_t err = 0;
  while (done < count) {
    size_t want = count - done < cap ? (size_t)(count - done) : cap;
    if (tc_sys_read(emu, buf + done, tmp, want) < 0) {
      err = -EFAULT;
      break;
    }
    ssize_t n = off < 0 ? write(f->host_fd, tmp, want)
                        : pwrite(f->host_fd, tmp, want, off + (int64_t)done);
    if (n < 0) {
      err = -errno;
      break;
    }
    done += (uint64_t)n;
    if ((size_t)n < want)
      break;
  }
  free(tmp);
  if (done == 0 && err == -EPIPE && c->st->sigact[13].handler == 0) {
    /* Writing to a broken pipe raises SIGPIPE, whose default action
     * terminates the process. */
    c->action = TC_SYS_ACT_KILL;
    c->action_arg = 13;
  }
  return done > 0 ? (int64_t)done : err;
}

/* Extended attributes are not part of the guest's view (ACLs, SELinux
 * labels and capabilities would differ from host to host): every file
 * system says it has none, as one mounted without xattr support does. */
static int64_t sys_no_xattr(tc_sys_call *c) {
  (void)c;
  return -EOPNOTSUPP;
}

/* A blocking read/write of a guest pipe with other threads alive waits
 * for them in the scheduler instead of blocking the host. */
static bool waits_for_threads(tc_sys_call *c, const tc_fd *f, short events) {
  return f->guest_pipe && !(f->flags & O_NONBLOCK) && c->a[2] > 0 &&
         tc_thread_wait_fd(c, f->host_fd, events);
}

static int64_t sys_read(tc_sys_call *c) {
  tc_fd *f = tc_sys_fd(c->emu, tc_sys_int(c, 0));
  if (f && waits_for_threads(c, f, POLLIN))
    return 0;
  return f ? fd_read(c, f, c->a[1], c->a[2], -1) : -EBADF;
}

static int64_t sys_write(tc_sys_call *c) {
  tc_fd *f = tc_sys_fd(c->emu, tc_sys_int(c, 0));
  if (f && waits_for_threads(c, f, POLLOUT))
    return 0;
  return f ? fd_write(c, f, c->a[1], c->a[2], -1) : -EBADF;
}

static int64_t positional(tc_sys_call *c, bool is_write) {
  tc_fd *f = tc_sys_fd(c->emu, tc_sys_int(c, 0));
  if (!f)
    return -EBADF;
  int64_t off = (int64_t)tc_sys_arg64(c, 3);
  if (off < 0)
    return -EINVAL;
  if (!f->owned)
    return -ESPIPE;
  return is_write ? fd_write(c, f, c->a[1], c->a[2], off)
                  : fd_read(c, f, c->a[1], c->a[2], off);
}

static int64_t sys_pread64(tc_sys_call *c) { return positional(c, false); }
static int64_t sys_pwrite64(tc_sys_call *c) { return positional(c, true); }

static int64_t vectored(tc_sys_call *c, bool is_write) {
  tc_emu *emu = c->emu;
  tc_fd *f = tc_sys_fd(emu, tc_sys_int(c, 0));
  if (!f)
    return -EBADF;
  int cnt = tc_sys_int(c, 2);
  if (cnt < 0 || cnt > 1024) /* UIO_MAXIOV */
    return -EINVAL;
  if (cnt == 0)
    return 0;
  unsigned l = emu->arch->ptr_size;
  uint8_t *iov = malloc((size_t)cnt * 2 * l);
  if (!iov)
    return -ENOMEM;
  int64_t r = tc_sys_read(emu, c->a[1], iov, (size_t)cnt * 2 * l);
  uint64_t total = 0;
  for (int i = 0; r == 0 && i < cnt; i++) {
    uint64_t len = tc_abi_get(emu->arch, iov + (size_t)i * 2 * l + l, l);
    total += len;
    if (len > 0x7fffffffffffffffull || total > 0x7fffffffffffffffull ||
        (l == 4 && total > 0x7fffffffu))
      r = -EINVAL;
  }
  int64_t done = 0;
  for (int i = 0; r == 0 && i < cnt; i++) {
    uint64_t base = tc_abi_get(emu->arch, iov + (size_t)i * 2 * l, l);
    uint64_t len = tc_abi_get(emu->arch, iov + (size_t)i * 2 * l + l, l);
    if (len == 0)
      continue;
    int64_t n =
        is_write ? fd_write(c, f, base, len, -1) : fd_read(c, f, base, len, -1);
    if (n < 0) {
      if (done == 0)
        r = n;
      break;
    }
    done += n;
    if ((uint64_t)n < len)
      break;
  }
  free(iov);
  if (done > 0)
    c->action = TC_SYS_ACT_NONE; /* a later EPIPE after progress: no kill */
  return r < 0 ? r : done;
}

static int64_t sys_readv(tc_sys_call *c) { return vectored(c, false); }
static int64_t sys_writev(tc_sys_call *c) { return vectored(c, true); }

/* ------------------------------------------------------------ open/close */

/* FNV-1a over s, continuing from h (0 starts a new hash). */
static uint64_t path_hash(const char *s, uint64_t h) {
  if (!h)
    h = 1469598103934665603ull;
  for (; *s; s++)
    h = (h ^ (uint8_t)*s) * 1099511628211ull;
  return h;
}

static bool guest_wrote(const tc_emu *emu, uint64_t hash) {
  for (size_t i = 0; i < emu->nwritten_files; i++)
    if (emu->written_files[i] == hash)
      return true;
  return false;
}

/* The guest opened the file for writing: its times are this run's. */
static void note_written(tc_emu *emu, uint64_t hash) {
  if (guest_wrote(emu, hash))
    return;
  if (emu->nwritten_files == emu->capwritten_files) {
    size_t cap = emu->capwritten_files ? 2 * emu->capwritten_files : 16;
    uint64_t *n = realloc(emu->written_files, cap * sizeof *n);
    if (!n)
      return; /* its times stay the host's */
    emu->written_files = n;
    emu->capwritten_files = cap;
  }
  emu->written_files[emu->nwritten_files++] = hash;
}

/* The inode number a path hash stands for: non-zero, below 2^31 so every
 * ABI's st_ino and d_ino hold it. */
static uint64_t hash_ino(uint64_t h) {
  return ((h ^ (h >> 31)) & 0x7fffffffu) | 0x100;
}

/* Host flags of an open the guest asked for (already in host values):
 * O_LARGEFILE is implied on the host, and no host fd leaks to exec. */
static int host_open_flags(int flags) {
  return (flags & ~GUEST_O_LARGEFILE) | O_CLOEXEC;
}

/* The host path a walked guest path stands for (fs_root + guest path),
 * the key of the deterministic inode numbers. */
static void guest_host_path(tc_emu *emu, const tc_gfs_loc *loc, char *out,
                            size_t max) {
  const char *root = emu->opt.fs_root;
  size_t rl = root ? strlen(root) : 0;
  while (rl > 0 && root[rl - 1] == '/')
    rl--;
  if (loc->kind == TC_GFS_EXE)
    snprintf(out, max, "%s", emu->exe_host_path);
  else if (rl && strcmp(loc->guest, "/") == 0)
    snprintf(out, max, "%.*s/", (int)rl, root);
  else
    snprintf(out, max, "%.*s%s", (int)rl, rl ? root : "", loc->guest);
}

/* flags: the guest's O_* bits (translated here to host values). */
/* /proc/self/maps as Linux prints it (show_map_vma: the name starts in
 * column 25 + 6 * pointer size), from the guest's own regions, in a
 * memory file: the guest reads, seeks and stats it like the real one. */
static int maps_file(tc_emu *emu) {
  int h = memfd_create("maps", MFD_CLOEXEC);
  if (h < 0)
    return -1;
  FILE *f = fdopen(dup(h), "w");
  if (!f) {
    close(h);
    return -1;
  }
  int width = 25 + 6 * emu->arch->ptr_size - 1;
  char exe[TC_PATH_MAX];
  if (emu->opt.fs_root && emu->opt.fs_root[0]
          ? tc_guestfs_exe_path(emu, exe, sizeof exe) < 0
          : snprintf(exe, sizeof exe, "%s", emu->exe_host_path) <= 0)
    exe[0] = 0;
  for (size_t i = 0; i < emu->nregions; i++) {
    const tc_region *r = &emu->regions[i];
    uint64_t end = r->end;
    bool file = r->name[0] && r->name[0] != '[';
    /* One line per mapping as the kernel merges them: tracecorn keeps
     * adjacent regions apart (brk growth) that Linux shows as one. */
    while (i + 1 < emu->nregions && emu->regions[i + 1].start == end &&
           emu->regions[i + 1].prot == r->prot &&
           strcmp(emu->regions[i + 1].name, r->name) == 0 &&
           (!file || emu->regions[i + 1].file_offset ==
                         r->file_offset + (end - r->start)))
      end = emu->regions[++i].end;
    /* The program's maps are named as the path it was given: show the
     * absolute guest path, as /proc/self/exe does. */
    const char *name = r->name;
    char real[TC_PATH_MAX > 4096 ? TC_PATH_MAX : 4096];
    if (file && exe[0] &&
        (strcmp(name, emu->exe_guest_path) == 0 ||
         (!emu->opt.fs_root && realpath(name, real) &&
          strcmp(real, emu->exe_host_path) == 0)))
      name = exe;
    int n = fprintf(
        f, "%08" PRIx64 "-%08" PRIx64 " %c%c%cp %08" PRIx64 " 00:00 %u",
        r->start, end, (r->prot & 1) ? 'r' : '-', (r->prot & 2) ? 'w' : '-',
        (r->prot & 4) ? 'x' : '-', file ? r->file_offset : 0, file ? 1u : 0u);
    if (name[0])
      fprintf(f, "%*s%s", n < width ? width - n + 1 : 1, "", name);
    fputc('\n', f);
  }
  if (fclose(f) != 0) {
    close(h);
    errno = EIO;
    return -1;
  }
  lseek(h, 0, SEEK_SET);
  return h;
}

static int64_t do_open(tc_sys_call *c, int dirfd, uint64_t path_addr,
                       int guest_flags, uint32_t mode) {
  tc_emu *emu = c->emu;
  int flags = tc_xlat_open_to_host(emu->arch, guest_flags);
  char gpath[TC_PATH_MAX], host[TC_PATH_MAX];
  int r = tc_sys_read_path(emu, path_addr, gpath, sizeof gpath);
  if (r < 0)
    return r;
  int g = tc_sys_fd_alloc(emu, 0);
  if (g < 0)
    return g;
  /* O_CREAT|O_EXCL never follows a final symlink (EEXIST), like Linux. */
  bool follow = !(flags & O_NOFOLLOW) &&
                (flags & (O_CREAT | O_EXCL)) != (O_CREAT | O_EXCL);
  tc_gfs_loc loc;
  if ((r = tc_guestfs_walk(emu, dirfd, gpath, follow ? TC_GFS_FOLLOW : 0,
                           &loc)) < 0)
    return r;
  int h;
  if (loc.kind == TC_GFS_EXE) {
    h = (flags & O_ACCMODE) == O_RDONLY
            ? tc_emu_exe_open(emu, host_open_flags(flags & ~O_CREAT))
            : (errno = ETXTBSY, -1);
  } else if (loc.kind == TC_GFS_FD) {
    /* /proc/self/fd/N: a new open file description of the guest's fd N
     * (the host's own link to the host fd behind it). */
    char self[64];
    snprintf(self, sizeof self, "/proc/self/fd/%d", emu->fds[loc.fd].host_fd);
    h = open(self, host_open_flags(flags & ~(O_CREAT | O_EXCL | O_NOFOLLOW)));
  } else if (loc.kind == TC_GFS_MAPS) {
    h = (flags & O_ACCMODE) == O_RDONLY ? maps_file(emu) : (errno = EACCES, -1);
  } else if (loc.kind == TC_GFS_VLINK) {
    h = -1;
    errno = (flags & O_PATH) ? ENOENT : ELOOP;
  } else if (loc.kind == TC_GFS_VDIR) {
    h = -1;
    errno = ENOENT; /* synthesised directories cannot be listed */
  } else {
    /* Never follow the last component here: the walk already did. */
    int hf = host_open_flags(flags) | (loc.must_dir ? O_DIRECTORY : 0);
    if (loc.name[0])
      hf |= O_NOFOLLOW;
    h = openat(loc.dirfd, tc_guestfs_loc_name(&loc), hf,
               (mode_t)(mode & 07777 & ~c->st->umask));
  }
  int e = errno;
  tc_guestfs_loc_done(&loc);
  if (h < 0)
    return -e;
  guest_host_path(emu, &loc, host, sizeof host);
  if (is_host_stdio(emu, h)) {
    /* tracecorn's own stdio was closed: never hand those numbers out. */
    int h2 = fcntl(h, F_DUPFD_CLOEXEC, 3);
    close(h);
    if (h2 < 0)
      return -errno;
    h = h2;
  }
  struct stat st;
  bool is_dir = fstat(h, &st) == 0 && S_ISDIR(st.st_mode);
  tc_fd *f = &emu->fds[g];
  memset(f, 0, sizeof *f);
  f->kind = is_dir ? TC_FD_DIR : TC_FD_HOST;
  f->host_fd = h;
  f->flags = flags & ~(O_CREAT | O_EXCL | O_NOCTTY | O_TRUNC | O_CLOEXEC);
  /* A 64-bit kernel forces O_LARGEFILE on every open (F_GETFL shows it). */
  if (emu->arch->ptr_size == 8)
    f->flags |= GUEST_O_LARGEFILE;
  f->cloexec = (flags & O_CLOEXEC) != 0;
  f->owned = true;
  f->path_hash = path_hash(host, 0);
  if ((flags & O_ACCMODE) != O_RDONLY || (flags & (O_CREAT | O_TRUNC)))
    note_written(emu, f->path_hash);
  return g;
}

static int64_t sys_open(tc_sys_call *c) {
  return do_open(c, TC_AT_FDCWD, c->a[0], tc_sys_int(c, 1), (uint32_t)c->a[2]);
}

static int64_t sys_openat(tc_sys_call *c) {
  return do_open(c, tc_sys_int(c, 0), c->a[1], tc_sys_int(c, 2),
                 (uint32_t)c->a[3]);
}

static int64_t sys_creat(tc_sys_call *c) {
  return do_open(
      c, TC_AT_FDCWD, c->a[0],
      tc_xlat_open_to_guest(c->emu->arch, O_CREAT | O_WRONLY | O_TRUNC),
      (uint32_t)c->a[1]);
}

static int64_t sys_close(tc_sys_call *c) {
  tc_fd *f = tc_sys_fd(c->emu, tc_sys_int(c, 0));
  if (!f)
    return -EBADF;
  fd_release(c->emu, f);
  return 0;
}

/* ------------------------------------------------------------------ seek */

/* Directory offsets are entry ordinals (see tc_fd.dir_pos): seeking to k
 * rewinds the host directory and skips k entries. */
static int64_t dir_seek(tc_fd *f, int64_t off, int whence) {
  if (whence == SEEK_CUR && off == 0)
    return (int64_t)f->dir_pos;
  if (whence != SEEK_SET || off < 0)
    return -EINVAL;
  if (lseek(f->host_fd, 0, SEEK_SET) < 0)
    return -errno;
  uint64_t want = (uint64_t)off, done = 0;
  uint8_t buf[8192];
  while (done < want) {
    long n = syscall(SYS_getdents64, f->host_fd, buf, sizeof buf);
    if (n < 0)
      return -errno;
    if (n == 0)
      break; /* past the end: stay at the end */
    size_t pos = 0;
    int64_t stop = -1;
    while (pos + 19 < (size_t)n && done < want) {
      uint16_t reclen;
      int64_t hoff;
      memcpy(&hoff, buf + pos + 8, 8);
      memcpy(&reclen, buf + pos + 16, 2);
      if (reclen < 20 || pos + reclen > (size_t)n)
        return -EIO;
      pos += reclen;
      done++;
      stop = hoff;
    }
    if (done == want && pos < (size_t)n &&
        lseek(f->host_fd, stop, SEEK_SET) < 0)
      return -errno;
  }
  f->dir_pos = done;
  return (int64_t)done;
}

static int64_t do_lseek(tc_emu *emu, int fd, int64_t off, int whence) {
  tc_fd *f = tc_sys_fd(emu, fd);
  if (!f)
    return -EBADF;
  if (whence < 0 || whence > 4) /* SEEK_SET..SEEK_HOLE */
    return -EINVAL;
  if (!f->owned)
    return -ESPIPE; /* stdio looks like a pipe */
  if (f->kind == TC_FD_DIR)
    return dir_seek(f, off, whence);
  off_t r = lseek(f->host_fd, (off_t)off, whence);
  return r < 0 ? -errno : (int64_t)r;
}

static int64_t sys_lseek(tc_sys_call *c) {
  int64_t r =
      do_lseek(c->emu, tc_sys_int(c, 0), tc_sys_long(c, 1), tc_sys_int(c, 2));
  if (r > 0 && c->emu->arch->ptr_size == 4 && r > 0x7fffffff)
    return -EOVERFLOW; /* does not fit a 32-bit off_t */
  return r;
}

static int64_t sys_llseek(tc_sys_call *c) {
  /* _llseek(fd, offset_high, offset_low, loff_t *result, whence) */
  int64_t off =
      (int64_t)(((c->a[1] & 0xffffffffu) << 32) | (c->a[2] & 0xffffffffu));
  int64_t r = do_lseek(c->emu, tc_sys_int(c, 0), off, tc_sys_int(c, 4));
  if (r < 0)
    return r;
  int w = tc_sys_put_uint(c->emu, c->a[3], 8, (uint64_t)r);
  return w < 0 ? w : 0;
}

/* ------------------------------------------------------------------ stat */

#define NORMAL_DEV 0x803 /* 8:3, a fixed "disk" for every host file */

/* Deterministic stat: what varies between runs of the same program on the
 * same files (access time, inode and device numbers) gets a stable value,
 * unless the user asked for host stat results. */
static bool after_start(const tc_emu *emu, const struct timespec *t) {
  return t->tv_sec > emu->host_start.tv_sec ||
         (t->tv_sec == emu->host_start.tv_sec &&
          t->tv_nsec > emu->host_start.tv_nsec);
}

static void normalize_stat(tc_emu *emu, struct stat *st, uint64_t hash) {
  if (emu->opt.host_stat || !hash)
    return;
  st->st_ino = hash_ino(hash);
  st->st_dev = NORMAL_DEV;
  st->st_atim = st->st_mtim;
  /* A file the guest wrote (its own output, say), or that changed during
   * the recording, has host times of this run: it shows the virtual
   * clock's instead. */
  if (guest_wrote(emu, hash) || after_start(emu, &st->st_mtim) ||
      after_start(emu, &st->st_ctim)) {
    struct timespec now = {(time_t)(emu->clock_ns / 1000000000u),
                           (long)(emu->clock_ns % 1000000000u)};
    st->st_atim = st->st_mtim = st->st_ctim = now;
  }
}

/* Stat of a guest fd; stdio fds get a fixed pipe-like answer, or under
 * tc_options.tty the terminal they are (its device; times of the virtual
 * epoch), so glibc line-buffers a terminal as natively. */
static int fd_stat(tc_emu *emu, int fd, struct stat *st) {
  tc_fd *f = tc_sys_fd(emu, fd);
  if (!f)
    return -EBADF;
  if (!f->owned && emu->opt.tty && isatty(f->host_fd) &&
      fstat(f->host_fd, st) == 0) {
    st->st_atim.tv_sec = st->st_mtim.tv_sec = st->st_ctim.tv_sec =
        VIRT_EPOCH_SEC;
    st->st_atim.tv_nsec = st->st_mtim.tv_nsec = st->st_ctim.tv_nsec = 0;
    return 0;
  }
  if (!f->owned) {
    memset(st, 0, sizeof *st);
    st->st_dev = 0xc; /* pipefs 0:12 */
    st->st_ino = 0x1000u + (unsigned)fd;
    st->st_mode = S_IFIFO | 0600;
    st->st_nlink = 1;
    st->st_uid = st->st_gid = 1000;
    st->st_blksize = 4096;
    st->st_atim.tv_sec = st->st_mtim.tv_sec = st->st_ctim.tv_sec =
        VIRT_EPOCH_SEC;
    return 0;
  }
  if (fstat(f->host_fd, st) < 0)
    return -errno;
  normalize_stat(emu, st, f->path_hash);
  return 0;
}

/* The synthesised /proc/self entries: read-only directories and links. */
static void virtual_stat(const tc_gfs_loc *loc, struct stat *st) {
  memset(st, 0, sizeof *st);
  st->st_dev = 0x16; /* proc */
  st->st_ino = hash_ino(path_hash(loc->guest, 0));
  st->st_mode = loc->kind == TC_GFS_VDIR   ? (S_IFDIR | 0555)
                : loc->kind == TC_GFS_MAPS ? (S_IFREG | 0444)
                                           : (S_IFLNK | 0777);
  st->st_nlink = loc->kind == TC_GFS_VDIR ? 2 : 1;
  st->st_uid = st->st_gid = TC_GUEST_UID;
  st->st_size = loc->kind == TC_GFS_VLINK ? (off_t)strlen(loc->link) : 0;
  st->st_blksize = 1024;
  st->st_atim.tv_sec = st->st_mtim.tv_sec = st->st_ctim.tv_sec = VIRT_EPOCH_SEC;
}

/* Stat of (dirfd, path) with AT_* flags, into *st. */
static int path_stat(tc_sys_call *c, int dirfd, uint64_t path_addr, int flags,
                     struct stat *st) {
  tc_emu *emu = c->emu;
  char gpath[TC_PATH_MAX], host[TC_PATH_MAX];
  int r = tc_sys_read_path(emu, path_addr, gpath, sizeof gpath);
  if (r < 0)
    return r;
  if (gpath[0] == 0 && (flags & TC_AT_EMPTY_PATH)) {
    if (dirfd != TC_AT_FDCWD)
      return fd_stat(emu, dirfd, st);
    snprintf(gpath, sizeof gpath, ".");
  }
  tc_gfs_loc loc;
  if ((r = tc_guestfs_walk(emu, dirfd, gpath,
                           (flags & TC_AT_SYMLINK_NOFOLLOW) ? 0 : TC_GFS_FOLLOW,
                           &loc)) < 0)
    return r;
  guest_host_path(emu, &loc, host, sizeof host);
  const char *name = tc_guestfs_loc_name(&loc);
  if (loc.kind == TC_GFS_REAL)
    r = fstatat(loc.dirfd, name, st, AT_SYMLINK_NOFOLLOW) < 0 ? -errno : 0;
  else if (loc.kind == TC_GFS_EXE)
    r = emu->exe_fd < 0 ? -ENOENT : fstat(emu->exe_fd, st) < 0 ? -errno : 0;
  else if (loc.kind == TC_GFS_FD)
    r = fd_stat(emu, loc.fd, st); /* already normalised */
  else
    virtual_stat(&loc, st);
  tc_guestfs_loc_done(&loc);
  if (r < 0 || loc.kind == TC_GFS_FD)
    return r;
  if (loc.must_dir && !S_ISDIR(st->st_mode))
    return -ENOTDIR;
  normalize_stat(emu, st, path_hash(host, 0));
  return 0;
}

static int64_t put_stat(tc_sys_call *c, tc_stat_kind kind,
                        const struct stat *st, uint64_t addr) {
  uint8_t buf[TC_ABI_STAT_MAX];
  int n = tc_abi_encode_stat(c->emu->arch, kind, st, buf);
  if (n < 0)
    return n;
  return tc_sys_write(c->emu, addr, buf, (size_t)n);
}

static int64_t stat_path_common(tc_sys_call *c, tc_stat_kind kind, int dirfd,
                                uint64_t path, int flags, uint64_t out) {
  if (flags & ~(TC_AT_SYMLINK_NOFOLLOW | TC_AT_EMPTY_PATH | 0x800))
    return -EINVAL;
  struct stat st;
  int r = path_stat(c, dirfd, path, flags, &st);
  return r < 0 ? r : put_stat(c, kind, &st, out);
}

static int64_t stat_fd_common(tc_sys_call *c, tc_stat_kind kind) {
  struct stat st;
  int r = fd_stat(c->emu, tc_sys_int(c, 0), &st);
  return r < 0 ? r : put_stat(c, kind, &st, c->a[1]);
}

static int64_t sys_stat(tc_sys_call *c) {
  return stat_path_common(c, TC_STAT_NATIVE, TC_AT_FDCWD, c->a[0], 0, c->a[1]);
}
static int64_t sys_lstat(tc_sys_call *c) {
  return stat_path_common(c, TC_STAT_NATIVE, TC_AT_FDCWD, c->a[0],
                          TC_AT_SYMLINK_NOFOLLOW, c->a[1]);
}
static int64_t sys_fstat(tc_sys_call *c) {
  return stat_fd_common(c, TC_STAT_NATIVE);
}
static int64_t sys_newfstatat(tc_sys_call *c) {
  return stat_path_common(c, TC_STAT_NATIVE, tc_sys_int(c, 0), c->a[1],
                          tc_sys_int(c, 3), c->a[2]);
}
static int64_t sys_stat64(tc_sys_call *c) {
  return stat_path_common(c, TC_STAT_64, TC_AT_FDCWD, c->a[0], 0, c->a[1]);
}
static int64_t sys_lstat64(tc_sys_call *c) {
  return stat_path_common(c, TC_STAT_64, TC_AT_FDCWD, c->a[0],
                          TC_AT_SYMLINK_NOFOLLOW, c->a[1]);
}
static int64_t sys_fstat64(tc_sys_call *c) {
  return stat_fd_common(c, TC_STAT_64);
}
static int64_t sys_fstatat64(tc_sys_call *c) {
  return stat_path_common(c, TC_STAT_64, tc_sys_int(c, 0), c->a[1],
                          tc_sys_int(c, 3), c->a[2]);
}

static int64_t sys_statx(tc_sys_call *c) {
  /* statx(dirfd, path, flags, mask, buf) */
  int flags = tc_sys_int(c, 2);
  /* AT_STATX_SYNC_TYPE bits 0x6000 are accepted and meaningless here. */
  if (flags & ~(TC_AT_SYMLINK_NOFOLLOW | TC_AT_EMPTY_PATH | 0x800 | 0x6000))
    return -EINVAL;
  if ((flags & 0x6000) == 0x6000)
    return -EINVAL;
  if (c->a[3] & 0x80000000u) /* STATX__RESERVED */
    return -EINVAL;
  struct stat st;
  int r = path_stat(c, tc_sys_int(c, 0), c->a[1], flags, &st);
  if (r < 0)
    return r;
  uint8_t buf[256];
  tc_abi_encode_statx(c->emu->arch, &st, buf);
  return tc_sys_write(c->emu, c->a[4], buf, sizeof buf);
}

/* ---------------------------------------------------------------- access */

static int64_t do_access(tc_sys_call *c, int dirfd, uint64_t path, int mode,
                         int flags) {
  if (mode & ~7)
    return -EINVAL;
  if (flags & ~(TC_AT_EACCESS | TC_AT_SYMLINK_NOFOLLOW | TC_AT_EMPTY_PATH))
    return -EINVAL;
  char gpath[TC_PATH_MAX];
  int r = tc_sys_read_path(c->emu, path, gpath, sizeof gpath);
  if (r < 0)
    return r;
  if (gpath[0] == 0 && (flags & TC_AT_EMPTY_PATH)) {
    tc_fd *f = tc_sys_fd(c->emu, dirfd);
    if (!f)
      return -EBADF;
    return faccessat(f->host_fd, "", mode, AT_EMPTY_PATH) < 0 ? -errno : 0;
  }
  tc_gfs_loc loc;
  if ((r = tc_guestfs_walk(c->emu, dirfd, gpath,
                           (flags & TC_AT_SYMLINK_NOFOLLOW) ? 0 : TC_GFS_FOLLOW,
                           &loc)) < 0)
    return r;
  int hflags = ((flags & TC_AT_EACCESS) ? AT_EACCESS : 0) | AT_SYMLINK_NOFOLLOW;
  if (loc.kind == TC_GFS_REAL) {
    r = faccessat(loc.dirfd, tc_guestfs_loc_name(&loc), mode, hflags) < 0
            ? -errno
            : 0;
    struct stat st;
    if (r == 0 && loc.must_dir &&
        (fstatat(loc.dirfd, tc_guestfs_loc_name(&loc), &st,
                 AT_SYMLINK_NOFOLLOW) < 0 ||
         !S_ISDIR(st.st_mode)))
      r = -ENOTDIR;
  } else if (loc.kind == TC_GFS_EXE) {
    char self[64];
    snprintf(self, sizeof self, "/proc/self/fd/%d", c->emu->exe_fd);
    r = c->emu->exe_fd < 0 ? -ENOENT : access(self, mode) < 0 ? -errno : 0;
  } else {
    r = (mode & 2) && loc.kind != TC_GFS_FD ? -EACCES : 0; /* W_OK */
  }
  tc_guestfs_loc_done(&loc);
  return r;
}

static int64_t sys_access(tc_sys_call *c) {
  return do_access(c, TC_AT_FDCWD, c->a[0], tc_sys_int(c, 1), 0);
}
static int64_t sys_faccessat(tc_sys_call *c) {
  return do_access(c, tc_sys_int(c, 0), c->a[1], tc_sys_int(c, 2), 0);
}
static int64_t sys_faccessat2(tc_sys_call *c) {
  return do_access(c, tc_sys_int(c, 0), c->a[1], tc_sys_int(c, 2),
                   tc_sys_int(c, 3));
}

/* -------------------------------------------------------------- readlink */

static int64_t do_readlink(tc_sys_call *c, int dirfd, uint64_t path,
                           uint64_t buf, int bufsiz) {
  tc_emu *emu = c->emu;
  if (bufsiz <= 0)
    return -EINVAL;
  char gpath[TC_PATH_MAX], target[TC_PATH_MAX];
  int r = tc_sys_read_path(emu, path, gpath, sizeof gpath);
  if (r < 0)
    return r;
  tc_gfs_loc loc;
  if ((r = tc_guestfs_walk(emu, dirfd, gpath, 0, &loc)) < 0)
    return r;
  size_t n = 0;
  if (loc.kind == TC_GFS_VLINK) {
    n = strlen(loc.link);
    memcpy(target, loc.link, n);
  } else if (loc.kind != TC_GFS_REAL || !loc.name[0] || loc.must_dir) {
    r = -EINVAL;
  } else {
    ssize_t k = readlinkat(loc.dirfd, loc.name, target, sizeof target);
    if (k < 0)
      r = -errno;
    n = k < 0 ? 0 : (size_t)k; /* the link text is already a guest path */
  }
  tc_guestfs_loc_done(&loc);
  if (r < 0)
    return r;
  if (n > (size_t)bufsiz)
    n = (size_t)bufsiz;
  r = tc_sys_write(emu, buf, target, n);
  return r < 0 ? r : (int64_t)n;
}

static int64_t sys_readlink(tc_sys_call *c) {
  return do_readlink(c, TC_AT_FDCWD, c->a[0], c->a[1], tc_sys_int(c, 2));
}
static int64_t sys_readlinkat(tc_sys_call *c) {
  return do_readlink(c, tc_sys_int(c, 0), c->a[1], c->a[2], tc_sys_int(c, 3));
}

/* ------------------------------------------------------------ cwd, dirs */

static int64_t sys_getcwd(tc_sys_call *c) {
  const char *cwd = c->emu->cwd[0] == '/' ? c->emu->cwd : "/";
  size_t n = strlen(cwd) + 1;
  if (c->a[1] < n)
    return -ERANGE;
  int r = tc_sys_write(c->emu, c->a[0], cwd, n);
  return r < 0 ? r : (int64_t)n;
}

static int64_t set_cwd(tc_emu *emu, const char *abs) {
  if (strlen(abs) >= sizeof emu->cwd)
    return -ENAMETOOLONG;
  strcpy(emu->cwd, abs);
  return 0;
}

static int64_t sys_chdir(tc_sys_call *c) {
  char gpath[TC_PATH_MAX];
  int r = tc_sys_read_path(c->emu, c->a[0], gpath, sizeof gpath);
  if (r < 0)
    return r;
  tc_gfs_loc loc;
  if ((r = tc_guestfs_walk(c->emu, TC_AT_FDCWD, gpath, TC_GFS_FOLLOW, &loc)) <
      0)
    return r;
  struct stat st;
  if (loc.kind == TC_GFS_EXE)
    r = -ENOTDIR;
  else if (loc.kind != TC_GFS_REAL)
    r = -ENOENT; /* the synthesised /proc directories */
  else if (fstatat(loc.dirfd, tc_guestfs_loc_name(&loc), &st,
                   AT_SYMLINK_NOFOLLOW) < 0)
    r = -errno;
  else if (!S_ISDIR(st.st_mode))
    r = -ENOTDIR;
  tc_guestfs_loc_done(&loc);
  return r < 0 ? r : set_cwd(c->emu, loc.guest);
}

static int64_t sys_fchdir(tc_sys_call *c) {
  int fd = tc_sys_int(c, 0);
  tc_fd *f = tc_sys_fd(c->emu, fd);
  if (!f)
    return -EBADF;
  if (f->kind != TC_FD_DIR)
    return -ENOTDIR;
  char abs[TC_PATH_MAX];
  int r = tc_guestfs_fd_path(c->emu, fd, abs, sizeof abs);
  return r < 0 ? r : set_cwd(c->emu, abs);
}

/* getdents64 / getdents: read host records, re-encode each one in the
 * guest layout; a record that does not fit is left for the next call by
 * seeking the host directory back to it. */
static int64_t do_getdents(tc_sys_call *c, bool is64) {
  tc_emu *emu = c->emu;
  tc_fd *f = tc_sys_fd(emu, tc_sys_int(c, 0));
  if (!f)
    return -EBADF;
  if (f->kind != TC_FD_DIR)
    return -ENOTDIR;
  uint64_t count = c->a[2];
  if (count > TC_SYS_CHUNK)
    count = TC_SYS_CHUNK; /* fewer entries per call is always allowed */
  if (!tc_sys_range_ok(emu, c->a[1], count, TC_PROT_WRITE))
    return -EFAULT;
  uint8_t *hb = malloc((size_t)count + 1), *gb = malloc((size_t)count + 1);
  if (!hb || !gb) {
    free(hb);
    free(gb);
    return -ENOMEM;
  }
  int64_t ret;
  bool proc_root = tc_guestfs_dir_is_proc(f->host_fd); /* host /proc */
again:;
  off_t start = lseek(f->host_fd, 0, SEEK_CUR);
  long n = syscall(SYS_getdents64, f->host_fd, hb, (size_t)count);
  if (n < 0) {
    ret = -errno;
    goto out;
  }
  size_t pos = 0, hpos = 0;
  uint64_t nent = 0;
  int64_t last_off = (int64_t)start;
  ret = 0;
  while (hpos + 19 < (size_t)n) {
    uint64_t ino;
    int64_t off;
    uint16_t reclen;
    memcpy(&ino, hb + hpos, 8);
    memcpy(&off, hb + hpos + 8, 8);
    memcpy(&reclen, hb + hpos + 16, 2);
    if (reclen < 20 || hpos + reclen > (size_t)n)
      break;
    uint8_t type = hb[hpos + 18];
    char *name = (char *)hb + hpos + 19;
    hb[hpos + reclen - 1] = 0; /* belt and braces: names are NUL-padded */
    if (proc_root && tc_guestfs_proc_hidden(emu, name)) {
      hpos += reclen; /* not shown, but counted: cookies stay ordinals */
      last_off = off;
      nent++;
      continue;
    }
    /* the guest's cookie: the ordinal after this entry */
    int64_t goff = (int64_t)(f->dir_pos + nent + 1);
    if (!emu->opt.host_stat && f->path_hash)
      ino = strcmp(name, ".") == 0
                ? hash_ino(f->path_hash)
                : hash_ino(path_hash(name, path_hash("/", f->path_hash)));
    int k = is64 ? tc_abi_encode_dirent64(emu->arch, ino, goff, type, name,
                                          gb + pos, (size_t)count - pos)
                 : tc_abi_encode_dirent(emu->arch, ino, goff, type, name,
                                        gb + pos, (size_t)count - pos);
    if (k <= 0) {
      if (pos == 0)
        ret = k < 0 ? k : -EINVAL;
      lseek(f->host_fd, (off_t)last_off, SEEK_SET);
      break;
    }
    pos += (size_t)k;
    hpos += reclen;
    last_off = off;
    nent++;
  }
  if (ret == 0 && pos == 0 && nent > 0) {
    f->dir_pos += nent; /* every entry read was hidden: read on */
    goto again;
  }
  if (ret == 0 && pos > 0) {
    int w = tc_sys_write(emu, c->a[1], gb, pos);
    ret = w < 0 ? w : (int64_t)pos;
    if (w >= 0)
      f->dir_pos += nent;
  }
out:
  free(hb);
  free(gb);
  return ret;
}

static int64_t sys_getdents64(tc_sys_call *c) { return do_getdents(c, true); }
static int64_t sys_getdents(tc_sys_call *c) { return do_getdents(c, false); }

/* ---------------------------------------------------------- path changes */

/* A change of the last component itself (never followed). */
static int64_t path_op(tc_sys_call *c, int dirfd, uint64_t path,
                       int (*op)(int dirfd, const char *name, int arg),
                       int arg) {
  char gpath[TC_PATH_MAX];
  int r = tc_sys_read_path(c->emu, path, gpath, sizeof gpath);
  if (r < 0)
    return r;
  tc_gfs_loc loc;
  if ((r = tc_guestfs_walk(c->emu, dirfd, gpath, 0, &loc)) < 0)
    return r;
  if (loc.kind != TC_GFS_REAL)
    r = -EACCES; /* the synthesised /proc entries */
  else if (op(loc.dirfd, tc_guestfs_loc_name(&loc), arg) < 0)
    r = -errno;
  tc_guestfs_loc_done(&loc);
  return r;
}

static int op_unlink(int dirfd, const char *name, int arg) {
  return unlinkat(dirfd, name, arg ? AT_REMOVEDIR : 0);
}
static int op_mkdir(int dirfd, const char *name, int mode) {
  return mkdirat(dirfd, name, (mode_t)mode);
}

static int64_t sys_unlink(tc_sys_call *c) {
  return path_op(c, TC_AT_FDCWD, c->a[0], op_unlink, 0);
}
static int64_t sys_rmdir(tc_sys_call *c) {
  return path_op(c, TC_AT_FDCWD, c->a[0], op_unlink, 1);
}
static int64_t sys_unlinkat(tc_sys_call *c) {
  int flags = tc_sys_int(c, 2);
  if (flags & ~TC_AT_REMOVEDIR)
    return -EINVAL;
  return path_op(c, tc_sys_int(c, 0), c->a[1], op_unlink,
                 (flags & TC_AT_REMOVEDIR) != 0);
}
static int64_t sys_mkdir(tc_sys_call *c) {
  return path_op(c, TC_AT_FDCWD, c->a[0], op_mkdir,
                 (int)(c->a[1] & 07777 & ~c->st->umask));
}
static int64_t sys_mkdirat(tc_sys_call *c) {
  return path_op(c, tc_sys_int(c, 0), c->a[1], op_mkdir,
                 (int)(c->a[2] & 07777 & ~c->st->umask));
}

static int64_t do_rename(tc_sys_call *c, int olddir, uint64_t oldp, int newdir,
                         uint64_t newp, unsigned flags) {
  if (flags & ~1u) /* RENAME_NOREPLACE only */
    return -EINVAL;
  char g1[TC_PATH_MAX], g2[TC_PATH_MAX];
  int r = tc_sys_read_path(c->emu, oldp, g1, sizeof g1);
  if (r < 0 || (r = tc_sys_read_path(c->emu, newp, g2, sizeof g2)) < 0)
    return r;
  tc_gfs_loc *l = malloc(2 * sizeof *l);
  if (!l)
    return -ENOMEM;
  l[0].dirfd = l[1].dirfd = -1;
  if ((r = tc_guestfs_walk(c->emu, olddir, g1, 0, &l[0])) == 0 &&
      (r = tc_guestfs_walk(c->emu, newdir, g2, 0, &l[1])) == 0) {
    if (l[0].kind != TC_GFS_REAL || l[1].kind != TC_GFS_REAL)
      r = -EACCES;
    else if (renameat2(l[0].dirfd, tc_guestfs_loc_name(&l[0]), l[1].dirfd,
                       tc_guestfs_loc_name(&l[1]), flags) < 0)
      r = -errno;
  }
  tc_guestfs_loc_done(&l[0]);
  tc_guestfs_loc_done(&l[1]);
  free(l);
  return r;
}

/* symlink(2): the link's text is stored as the guest gave it and only
 * ever read back by the guest walk, which resolves it inside the root
 * (an absolute or "../.." target stays there); the host never follows a
 * link on the guest's behalf, and no output of tracecorn's is inside the
 * root (lib/session.c), so a link cannot redirect one. */
static int64_t do_symlink(tc_sys_call *c, uint64_t target_addr, int dirfd,
                          uint64_t path) {
  char target[TC_PATH_MAX];
  int r = tc_sys_read_path(c->emu, target_addr, target, sizeof target);
  if (r < 0)
    return r;
  char gpath[TC_PATH_MAX];
  if ((r = tc_sys_read_path(c->emu, path, gpath, sizeof gpath)) < 0)
    return r;
  tc_gfs_loc loc;
  if ((r = tc_guestfs_walk(c->emu, dirfd, gpath, 0, &loc)) < 0)
    return r;
  if (loc.kind != TC_GFS_REAL)
    r = -EEXIST; /* the synthesised /proc entries exist */
  else if (symlinkat(target, loc.dirfd, tc_guestfs_loc_name(&loc)) < 0)
    r = -errno;
  tc_guestfs_loc_done(&loc);
  return r;
}

static int64_t sys_symlink(tc_sys_call *c) {
  return do_symlink(c, c->a[0], TC_AT_FDCWD, c->a[1]);
}
static int64_t sys_symlinkat(tc_sys_call *c) {
  return do_symlink(c, c->a[0], tc_sys_int(c, 1), c->a[2]);
}

static int64_t sys_rename(tc_sys_call *c) {
  return do_rename(c, TC_AT_FDCWD, c->a[0], TC_AT_FDCWD, c->a[1], 0);
}
static int64_t sys_renameat(tc_sys_call *c) {
  return do_rename(c, tc_sys_int(c, 0), c->a[1], tc_sys_int(c, 2), c->a[3], 0);
}
static int64_t sys_renameat2(tc_sys_call *c) {
  return do_rename(c, tc_sys_int(c, 0), c->a[1], tc_sys_int(c, 2), c->a[3],
                   (unsigned)c->a[4]);
}

/* posix_fadvise: a hint that changes nothing a program can see, so it
 * succeeds on a file (Linux: EBADF for a bad fd, ESPIPE for a pipe or
 * FIFO). One handler for every arch's name and argument order (fd is
 * always first): fadvise64, fadvise64_64, arm_fadvise64_64. `sort` and
 * `cp` call it; it was ENOSYS. */
static int64_t sys_fadvise(tc_sys_call *c) {
  tc_fd *f = tc_sys_fd(c->emu, tc_sys_int(c, 0));
  if (!f)
    return -EBADF;
  struct stat st;
  if (fstat(f->host_fd, &st) == 0 && S_ISFIFO(st.st_mode))
    return -ESPIPE;
  return 0;
}

/* ---------------------------------------------------------------- statfs */

/* statfs: the file system's kind, name length and mount flags are the
 * host's; its size and free counts, which change from run to run, are
 * fixed (a 64 GiB file system, half free), as stat's inode numbers are,
 * unless --host-stat passes the host's through. /proc/self's synthesised
 * entries are proc's and the stdio descriptors pipefs's, as on Linux. */
#define TC_ST_VALID 0x20u /* ST_VALID: f_flags is filled (Linux 2.6.36) */
static void statfs_vals(tc_emu *emu, const struct statfs *h,
                        tc_statfs_vals *v) {
  memset(v, 0, sizeof *v);
  v->type = (uint64_t)h->f_type;
  v->namelen = (uint64_t)h->f_namelen;
  v->flags = (uint64_t)h->f_flags;
  if (emu->opt.host_stat) {
    v->bsize = (uint64_t)h->f_bsize;
    v->frsize = (uint64_t)h->f_frsize;
    v->blocks = h->f_blocks;
    v->bfree = h->f_bfree;
    v->bavail = h->f_bavail;
    v->files = h->f_files;
    v->ffree = h->f_ffree;
    memcpy(v->fsid, &h->f_fsid, sizeof v->fsid);
    return;
  }
  v->bsize = v->frsize = 4096;
  v->blocks = 1u << 24;
  v->bfree = v->bavail = 1u << 23;
  v->files = 1u << 22;
  v->ffree = 1u << 21;
}

static void statfs_synthetic(tc_statfs_vals *v, uint64_t magic,
                             uint64_t flags) {
  memset(v, 0, sizeof *v);
  v->type = magic;
  v->bsize = v->frsize = 4096;
  v->namelen = 255;
  v->flags = flags | TC_ST_VALID;
}

static int fd_statfs(tc_emu *emu, int fd, tc_statfs_vals *v) {
  tc_fd *f = tc_sys_fd(emu, fd);
  if (!f)
    return -EBADF;
  if (!f->owned) { /* stdio: a pipe, as fd_stat says */
    statfs_synthetic(v, 0x50495045u /* PIPEFS_MAGIC */, 0);
    return 0;
  }
  struct statfs h;
  if (fstatfs(f->host_fd, &h) < 0)
    return -errno;
  statfs_vals(emu, &h, v);
  return 0;
}

static int path_statfs(tc_sys_call *c, uint64_t path_addr, tc_statfs_vals *v) {
  tc_emu *emu = c->emu;
  char gpath[TC_PATH_MAX];
  int r = tc_sys_read_path(emu, path_addr, gpath, sizeof gpath);
  if (r < 0)
    return r;
  tc_gfs_loc loc;
  if ((r = tc_guestfs_walk(emu, TC_AT_FDCWD, gpath, TC_GFS_FOLLOW, &loc)) < 0)
    return r;
  struct statfs h;
  if (loc.kind == TC_GFS_REAL) {
    /* O_PATH: statfs needs no permission on the file itself */
    int fd = openat(loc.dirfd, tc_guestfs_loc_name(&loc),
                    O_PATH | O_CLOEXEC | O_NOFOLLOW);
    r = fd < 0 ? -errno : fstatfs(fd, &h) < 0 ? -errno : 0;
    if (fd >= 0)
      close(fd);
    if (r == 0)
      statfs_vals(emu, &h, v);
  } else if (loc.kind == TC_GFS_EXE) {
    r = emu->exe_fd < 0 ? -ENOENT : fstatfs(emu->exe_fd, &h) ? -errno : 0;
    if (r == 0)
      statfs_vals(emu, &h, v);
  } else if (loc.kind == TC_GFS_FD) {
    r = fd_statfs(emu, loc.fd, v);
  } else { /* /proc/self's own entries: proc, nosuid,nodev,noexec,relatime */
    statfs_synthetic(v, 0x9fa0u /* PROC_SUPER_MAGIC */, 0x40eu);
  }
  tc_guestfs_loc_done(&loc);
  return r;
}

static int64_t put_statfs(tc_sys_call *c, tc_stat_kind kind,
                          const tc_statfs_vals *v, uint64_t addr) {
  uint8_t buf[128];
  int n = tc_abi_encode_statfs(c->emu->arch, kind, v, buf);
  if (n < 0)
    return n;
  return tc_sys_write(c->emu, addr, buf, (size_t)n);
}

static int64_t sys_statfs(tc_sys_call *c) {
  tc_statfs_vals v;
  int r = path_statfs(c, c->a[0], &v);
  return r < 0 ? r : put_statfs(c, TC_STAT_NATIVE, &v, c->a[1]);
}
static int64_t sys_fstatfs(tc_sys_call *c) {
  tc_statfs_vals v;
  int r = fd_statfs(c->emu, tc_sys_int(c, 0), &v);
  return r < 0 ? r : put_statfs(c, TC_STAT_NATIVE, &v, c->a[1]);
}
/* statfs64(path, size, buf): size must be the struct's (EINVAL), or the
 * other size the arch takes (arm's 88: statfs64_size_also). */
static int64_t statfs64_size_ok(tc_sys_call *c) {
  uint8_t buf[128];
  tc_statfs_vals zero = {0};
  const tc_arch *a = c->emu->arch;
  int n = tc_abi_encode_statfs(a, TC_STAT_64, &zero, buf);
  if (n < 0)
    return n;
  uint16_t also = a->linux_abi ? a->linux_abi->statfs64_size_also : 0;
  if (c->a[1] == (uint64_t)n || (also && c->a[1] == also))
    return 0;
  return -EINVAL;
}
static int64_t sys_statfs64(tc_sys_call *c) {
  int64_t r = statfs64_size_ok(c);
  tc_statfs_vals v;
  if (r == 0)
    r = path_statfs(c, c->a[0], &v);
  return r < 0 ? r : put_statfs(c, TC_STAT_64, &v, c->a[2]);
}
static int64_t sys_fstatfs64(tc_sys_call *c) {
  int64_t r = statfs64_size_ok(c);
  tc_statfs_vals v;
  if (r == 0)
    r = fd_statfs(c->emu, tc_sys_int(c, 0), &v);
  return r < 0 ? r : put_statfs(c, TC_STAT_64, &v, c->a[2]);
}

static int64_t do_ftruncate(tc_sys_call *c, int64_t len) {
  tc_fd *f = tc_sys_fd(c->emu, tc_sys_int(c, 0));
  if (!f)
    return -EBADF;
  if (len < 0 || !f->owned || f->kind != TC_FD_HOST)
    return -EINVAL;
  return ftruncate(f->host_fd, (off_t)len) < 0 ? -errno : 0;
}
static int64_t sys_ftruncate(tc_sys_call *c) {
  return do_ftruncate(c, tc_sys_long(c, 1));
}
static int64_t sys_ftruncate64(tc_sys_call *c) {
  return do_ftruncate(c, (int64_t)tc_sys_arg64(c, 1));
}

static int64_t sys_fsync(tc_sys_call *c) {
  return tc_sys_fd(c->emu, tc_sys_int(c, 0)) ? 0 : -EBADF;
}

/* sync(2), syncfs(2): the guest's writes are the host's page cache's
 * already; nothing to wait for (a host-wide sync on a guest's behalf would
 * make every recording as slow as the slowest disk). */
static int64_t sys_sync(tc_sys_call *c) {
  (void)c;
  return 0;
}
static int64_t sys_syncfs(tc_sys_call *c) { return sys_fsync(c); }

/* ---------------------------------------------- chmod, utimensat (issue 32) */

/* The host file a guest path names, symlinks in its last component
 * followed inside the root when follow (chmod always, utimensat without
 * AT_SYMLINK_NOFOLLOW), as Linux does; the synthesised /proc entries
 * refuse (EACCES). The op gets (dirfd, name). */
static int64_t path_call(tc_sys_call *c, int dirfd, uint64_t path, bool follow,
                         int (*op)(int dirfd, const char *name, void *arg),
                         void *arg) {
  char gpath[TC_PATH_MAX];
  int r = tc_sys_read_path(c->emu, path, gpath, sizeof gpath);
  if (r < 0)
    return r;
  tc_gfs_loc loc;
  if ((r = tc_guestfs_walk(c->emu, dirfd, gpath, follow ? TC_GFS_FOLLOW : 0,
                           &loc)) < 0)
    return r;
  if (loc.kind != TC_GFS_REAL)
    r = -EACCES;
  else if (op(loc.dirfd, tc_guestfs_loc_name(&loc), arg) < 0)
    r = -errno;
  tc_guestfs_loc_done(&loc);
  return r;
}

/* The walk followed any link: the host call acts on the file itself and
 * never follows a link out of the root. */
static int op_chmod(int dirfd, const char *name, void *mode) {
  return fchmodat(dirfd, name, *(mode_t *)mode, 0);
}

static int64_t sys_chmod(tc_sys_call *c) {
  mode_t mode = (mode_t)(c->a[1] & 07777);
  return path_call(c, TC_AT_FDCWD, c->a[0], true, op_chmod, &mode);
}
static int64_t sys_fchmodat(tc_sys_call *c) {
  mode_t mode = (mode_t)(c->a[2] & 07777);
  return path_call(c, tc_sys_int(c, 0), c->a[1], true, op_chmod, &mode);
}

/* A file the guest opened itself (not the standard streams tracecorn lends
 * it: the guest cannot change the host's terminal or output files). */
static tc_fd *own_host_fd(tc_sys_call *c, int fd, int *err) {
  tc_fd *f = tc_sys_fd(c->emu, fd);
  *err = !f ? -EBADF : f->kind != TC_FD_HOST || !f->owned ? -EPERM : 0;
  return *err ? NULL : f;
}

static int64_t sys_fchmod(tc_sys_call *c) {
  int r;
  tc_fd *f = own_host_fd(c, tc_sys_int(c, 0), &r);
  if (!f)
    return r;
  return fchmod(f->host_fd, (mode_t)(c->a[1] & 07777)) < 0 ? -errno : 0;
}

/* utimensat(dirfd, path, times, flags): times NULL = now; UTIME_NOW and
 * UTIME_OMIT in tv_nsec as Linux; a NULL path acts on dirfd itself. */
typedef struct utime_arg {
  struct timespec ts[2];
  int flags;
} utime_arg;

static int op_utimens(int dirfd, const char *name, void *arg) {
  const utime_arg *u = arg;
  return utimensat(dirfd, name, u->ts, AT_SYMLINK_NOFOLLOW);
}

static int64_t do_utimensat(tc_sys_call *c, bool time64) {
  int dirfd = tc_sys_int(c, 0), flags = tc_sys_int(c, 3);
  if (flags & ~TC_AT_SYMLINK_NOFOLLOW)
    return -EINVAL;
  utime_arg u = {.ts = {{0, UTIME_NOW}, {0, UTIME_NOW}}, .flags = flags};
  if (c->a[2]) {
    const tc_arch *a = c->emu->arch;
    unsigned n = tc_abi_timespec_size(a, time64);
    uint8_t b[32];
    int r = tc_sys_read(c->emu, c->a[2], b, 2 * n);
    if (r < 0)
      return r;
    for (int k = 0; k < 2; k++) {
      int64_t sec, nsec;
      tc_abi_decode_timespec(a, time64, b + k * n, &sec, &nsec);
      if (nsec != UTIME_NOW && nsec != UTIME_OMIT &&
          (nsec < 0 || nsec >= 1000000000))
        return -EINVAL;
      u.ts[k].tv_sec = (time_t)sec;
      u.ts[k].tv_nsec = (long)nsec;
    }
  }
  if (!c->a[1]) { /* futimens(dirfd) */
    int r;
    tc_fd *f = own_host_fd(c, dirfd, &r);
    if (!f)
      return r;
    return futimens(f->host_fd, u.ts) < 0 ? -errno : 0;
  }
  return path_call(c, dirfd, c->a[1], !(flags & TC_AT_SYMLINK_NOFOLLOW),
                   op_utimens, &u);
}
static int64_t sys_utimensat(tc_sys_call *c) { return do_utimensat(c, false); }
static int64_t sys_utimensat_time64(tc_sys_call *c) {
  return do_utimensat(c, true);
}

/* copy_file_range(2) between two files the guest opened: the host's own
 * call on their host fds (offsets: the guest's loff_t, read and written
 * back, or the files' positions). cp and install use it; without it they
 * fall back to another sequence of calls than under Linux. */
static int64_t sys_copy_file_range(tc_sys_call *c) {
  if (c->a[5] != 0)
    return -EINVAL;
  int r;
  tc_fd *in = own_host_fd(c, tc_sys_int(c, 0), &r);
  if (!in)
    return r == -EPERM ? -EINVAL : r;
  tc_fd *out = own_host_fd(c, tc_sys_int(c, 2), &r);
  if (!out)
    return r == -EPERM ? -EINVAL : r;
  const tc_arch *a = c->emu->arch;
  loff_t off[2];
  uint64_t at[2] = {c->a[1], c->a[3]};
  for (int k = 0; k < 2; k++) {
    uint8_t b[8];
    if (at[k] && (r = tc_sys_read(c->emu, at[k], b, 8)) < 0)
      return r;
    off[k] = at[k] ? (loff_t)tc_abi_get(a, b, 8) : 0;
  }
  uint64_t len = a->ptr_size == 4 ? (uint32_t)c->a[4] : c->a[4];
  ssize_t n = copy_file_range(in->host_fd, at[0] ? &off[0] : NULL, out->host_fd,
                              at[1] ? &off[1] : NULL, (size_t)len, 0);
  if (n < 0)
    return -errno;
  for (int k = 0; k < 2; k++) {
    uint8_t b[8];
    tc_abi_put(a, b, 8, (uint64_t)off[k]);
    if (at[k] && (r = tc_sys_write(c->emu, at[k], b, 8)) < 0)
      return r;
  }
  return n;
}

/* ------------------------------------------------------------ dup, fcntl */

static int64_t sys_dup(tc_sys_call *c) {
  tc_fd *f = tc_sys_fd(c->emu, tc_sys_int(c, 0));
  if (!f)
    return -EBADF;
  int g = tc_sys_fd_alloc(c->emu, 0);
  return g < 0 ? g : fd_dup_into(c->emu, f, g, false);
}

static int64_t do_dup3(tc_sys_call *c, int oldfd, int newfd, bool cloexec) {
  tc_emu *emu = c->emu;
  tc_fd *f = tc_sys_fd(emu, oldfd);
  if (!f || newfd < 0 || newfd >= fd_limit(emu))
    return -EBADF;
  if (oldfd == newfd)
    return newfd;
  tc_fd old = *f; /* fd_release(newfd) must not disturb the source */
  if (emu->fds[newfd].kind != TC_FD_CLOSED)
    fd_release(emu, &emu->fds[newfd]);
  return fd_dup_into(emu, &old, newfd, cloexec);
}

static int64_t sys_dup2(tc_sys_call *c) {
  return do_dup3(c, tc_sys_int(c, 0), tc_sys_int(c, 1), false);
}

static int64_t sys_dup3(tc_sys_call *c) {
  int flags = tc_xlat_open_to_host(c->emu->arch, tc_sys_int(c, 2));
  if (flags & ~O_CLOEXEC)
    return -EINVAL;
  if (tc_sys_int(c, 0) == tc_sys_int(c, 1))
    return -EINVAL;
  return do_dup3(c, tc_sys_int(c, 0), tc_sys_int(c, 1),
                 (flags & O_CLOEXEC) != 0);
}

static int64_t sys_fcntl(tc_sys_call *c) {
  tc_emu *emu = c->emu;
  tc_fd *f = tc_sys_fd(emu, tc_sys_int(c, 0));
  if (!f)
    return -EBADF;
  int cmd = tc_sys_int(c, 1);
  switch (cmd) {
  case F_DUPFD:
  case F_DUPFD_CLOEXEC: {
    int64_t min = tc_sys_long(c, 2);
    if (min < 0 || min >= fd_limit(emu))
      return -EINVAL;
    int g = tc_sys_fd_alloc(emu, (int)min);
    return g < 0 ? g : fd_dup_into(emu, f, g, cmd == F_DUPFD_CLOEXEC);
  }
  case F_GETFD:
    return f->cloexec ? FD_CLOEXEC : 0;
  case F_SETFD:
    f->cloexec = (c->a[2] & FD_CLOEXEC) != 0;
    return 0;
  case F_GETFL:
    return tc_xlat_open_to_guest(emu->arch, f->flags);
  case F_SETFL: {
    const int changeable =
        O_APPEND | O_NONBLOCK | O_ASYNC | O_DIRECT | O_NOATIME;
    int arg = tc_xlat_open_to_host(emu->arch, tc_sys_int(c, 2));
    f->flags = (f->flags & ~changeable) | (arg & changeable);
    /* Only our own host fds follow: tracecorn's stdio stays as it is. */
    if (f->owned) {
      int hfl = fcntl(f->host_fd, F_GETFL);
      if (hfl >= 0)
        fcntl(f->host_fd, F_SETFL,
              (hfl & ~(O_APPEND | O_NONBLOCK)) |
                  (arg & (O_APPEND | O_NONBLOCK)));
    }
    return 0;
  }
  default:
    return -EINVAL; /* locks, leases, pipe sizes, seals: not emulated */
  }
}

/* tc_options.tty: a guest fd that is the host's terminal answers its
 * queries and mode changes from it, where the arch has Linux's generic
 * termios (its struct is then the host kernel's, field by field: four
 * 32-bit flag words, c_line, 19 control characters). Everything else is
 * not a terminal. */
enum {
  TTY_TCGETS = 0x5401,
  TTY_TCSETS = 0x5402,
  TTY_TCSETSW = 0x5403,
  TTY_TCSETSF = 0x5404,
  TTY_TIOCGWINSZ = 0x5413,
  TTY_TERMIOS_SIZE = 36,
  TTY_WINSIZE_SIZE = 8
};

static int64_t tty_ioctl(tc_sys_call *c, const tc_fd *f) {
  tc_emu *emu = c->emu;
  const tc_linux_abi *abi = emu->arch->linux_abi;
  if (!emu->opt.tty || !abi || !abi->ioctl_generic || f->kind != TC_FD_HOST ||
      !isatty(f->host_fd))
    return -ENOTTY;
  uint32_t req = (uint32_t)c->a[1];
  uint8_t host[TTY_TERMIOS_SIZE], guest[TTY_TERMIOS_SIZE];
  switch (req) {
  case TTY_TCGETS:
  case TTY_TIOCGWINSZ: {
    size_t n = req == TTY_TCGETS ? TTY_TERMIOS_SIZE : TTY_WINSIZE_SIZE;
    if (ioctl(f->host_fd, req == TTY_TCGETS ? TCGETS : TIOCGWINSZ, host) < 0)
      return -errno;
    /* the same layout; the guest's byte order (4-byte words, 2-byte
     * winsize fields) */
    unsigned word = req == TTY_TCGETS ? 4 : 2;
    size_t words = 4;
    for (size_t i = 0; i < words; i++) {
      uint64_t v = 0;
      memcpy(&v, host + i * word, word);
      tc_abi_put(emu->arch, guest + i * word, word, v);
    }
    memcpy(guest + words * word, host + words * word, n - words * word);
    return tc_sys_write(emu, c->a[2], guest, n) < 0 ? -EFAULT : 0;
  }
  case TTY_TCSETS:
  case TTY_TCSETSW:
  case TTY_TCSETSF: {
    if (tc_sys_read(emu, c->a[2], guest, sizeof guest) < 0)
      return -EFAULT;
    for (size_t i = 0; i < 4; i++) {
      uint32_t v = (uint32_t)tc_abi_get(emu->arch, guest + i * 4, 4);
      memcpy(host + i * 4, &v, 4);
    }
    memcpy(host + 16, guest + 16, sizeof host - 16);
    unsigned long hreq = req == TTY_TCSETS    ? TCSETS
                         : req == TTY_TCSETSW ? TCSETSW
                                              : TCSETSF;
    return ioctl(f->host_fd, hreq, host) < 0 ? -errno : 0;
  }
  default:
    return -ENOTTY;
  }
}

static int64_t sys_ioctl(tc_sys_call *c) {
  tc_fd *f = tc_sys_fd(c->emu, tc_sys_int(c, 0));
  if (!f)
    return -EBADF;
  switch ((uint32_t)c->a[1]) {
  case 0x5451: /* FIOCLEX */
    f->cloexec = true;
    return 0;
  case 0x5450: /* FIONCLEX */
    f->cloexec = false;
    return 0;
  case 0x5421: { /* FIONBIO */
    uint64_t on;
    int r = tc_sys_get_uint(c->emu, c->a[2], 4, &on);
    if (r < 0)
      return r;
    f->flags = on ? (f->flags | O_NONBLOCK) : (f->flags & ~O_NONBLOCK);
    return 0;
  }
  case 0x40049409:   /* FICLONE (asm-generic's _IOW numbering) */
  case 0x4020940d: { /* FICLONERANGE */
    /* The host file system's answer, as a native cp gets it (ext4:
     * EOPNOTSUPP; btrfs, xfs: a reflink), between two files the guest
     * opened; the source is the guest's fd. */
    const tc_linux_abi *abi = c->emu->arch->linux_abi;
    if (!abi || !abi->ioctl_generic)
      return -ENOTTY;
    uint8_t range[32];
    int64_t src = (int64_t)(int32_t)c->a[2];
    if ((uint32_t)c->a[1] == 0x4020940d) {
      if (tc_sys_read(c->emu, c->a[2], range, sizeof range) < 0)
        return -EFAULT;
      src = (int64_t)tc_abi_get(c->emu->arch, range, 8);
    }
    tc_fd *from =
        src >= 0 && src <= INT32_MAX ? tc_sys_fd(c->emu, (int)src) : NULL;
    if (!from || from->kind != TC_FD_HOST)
      return -EBADF;
    if (f->kind != TC_FD_HOST)
      return -EINVAL;
    if ((uint32_t)c->a[1] == 0x40049409)
      return ioctl(f->host_fd, FICLONE, from->host_fd) < 0 ? -errno : 0;
    struct file_clone_range r = {
        .src_fd = from->host_fd,
        .src_offset = tc_abi_get(c->emu->arch, range + 8, 8),
        .src_length = tc_abi_get(c->emu->arch, range + 16, 8),
        .dest_offset = tc_abi_get(c->emu->arch, range + 24, 8)};
    return ioctl(f->host_fd, FICLONERANGE, &r) < 0 ? -errno : 0;
  }
  default:
    /* TCGETS, TIOCGWINSZ and every other terminal request: no fd of the
     * emulated process is a terminal, unless --tty (tty_ioctl). */
    return tty_ioctl(c, f);
  }
}

/* ------------------------------------------------------------------ pipes */

static int64_t do_pipe(tc_sys_call *c, int guest_flags) {
  tc_emu *emu = c->emu;
  int flags = tc_xlat_open_to_host(emu->arch, guest_flags);
  if (flags & ~(O_CLOEXEC | O_NONBLOCK | O_DIRECT))
    return -EINVAL;
  int g0 = tc_sys_fd_alloc(emu, 0);
  if (g0 < 0)
    return g0;
  emu->fds[g0].kind = TC_FD_HOST; /* reserve while finding the second */
  int g1 = tc_sys_fd_alloc(emu, 0);
  emu->fds[g0].kind = TC_FD_CLOSED;
  if (g1 < 0)
    return g1;
  if (!tc_sys_range_ok(emu, c->a[0], 8, TC_PROT_WRITE))
    return -EFAULT;
  int hp[2];
  if (pipe2(hp, O_CLOEXEC | (flags & (O_NONBLOCK | O_DIRECT))) < 0)
    return -errno;
  uint8_t out[8];
  tc_abi_put(emu->arch, out, 4, (uint32_t)g0);
  tc_abi_put(emu->arch, out + 4, 4, (uint32_t)g1);
  int r = tc_sys_write(emu, c->a[0], out, sizeof out);
  if (r < 0) {
    close(hp[0]);
    close(hp[1]);
    return r;
  }
  int fl = flags & O_NONBLOCK;
  bool cloexec = (flags & O_CLOEXEC) != 0;
  emu->fds[g0] = (tc_fd){.kind = TC_FD_HOST,
                         .host_fd = hp[0],
                         .flags = O_RDONLY | fl,
                         .cloexec = cloexec,
                         .owned = true,
                         .guest_pipe = true};
  emu->fds[g1] = (tc_fd){.kind = TC_FD_HOST,
                         .host_fd = hp[1],
                         .flags = O_WRONLY | fl,
                         .cloexec = cloexec,
                         .owned = true,
                         .guest_pipe = true};
  return 0;
}

/* Socket calls on an fd. tracecorn creates no sockets, so an open fd is
 * never one: ENOTSOCK, and EBADF for a closed one, as Linux answers. */
static int64_t sys_socket_fd(tc_sys_call *c) {
  return tc_sys_fd(c->emu, tc_sys_int(c, 0)) ? -ENOTSOCK : -EBADF;
}

/* i386's socketcall(call, args): the same for the calls on an fd (their
 * fd is args[0]); socket and socketpair are not emulated. */
static int64_t sys_socketcall(tc_sys_call *c) {
  int call = tc_sys_int(c, 0);
  if (call < 1 || call > 20)
    return -EINVAL;
  if (call == 1 || call == 8) /* SYS_SOCKET, SYS_SOCKETPAIR */
    return -ENOSYS;
  uint64_t fd;
  int r = tc_sys_get_uint(c->emu, c->a[1], c->emu->arch->ptr_size, &fd);
  if (r < 0)
    return r;
  return tc_sys_fd(c->emu, (int)(int32_t)fd) ? -ENOTSOCK : -EBADF;
}

static int64_t sys_pipe(tc_sys_call *c) { return do_pipe(c, 0); }
static int64_t sys_pipe2(tc_sys_call *c) {
  return do_pipe(c, tc_sys_int(c, 1));
}

/* ------------------------------------------------------------------- poll */

/* Polls guest fds on the host. A timeout that expires advances the
 * virtual clock by the timeout instead of depending on host time. */
static int64_t do_poll(tc_sys_call *c, uint64_t fds, uint64_t nfds,
                       int64_t timeout_ms) {
  tc_emu *emu = c->emu;
  if (nfds == 0) {
    /* No fds: a sleep (glibc's pause() on arches without the syscall is
     * ppoll(NULL, 0, NULL, NULL)); only a signal ends it early, and the
     * host is never asked to wait. */
    if (timeout_ms < 0)
      return tc_signal_wait(c, c->name ? c->name : "poll");
    bool intr;
    emu->clock_ns +=
        tc_signal_sleep_ns(c, (uint64_t)timeout_ms * 1000000u, &intr);
    return intr ? -EINTR : 0;
  }
  int64_t timed_out;
  if (tc_thread_restarted(c, &timed_out))
    timeout_ms = 0; /* it waited its timeout on the virtual clock */
  if (nfds > (uint64_t)fd_limit(emu) && nfds > 1024)
    return -EINVAL;
  if (nfds > 1024)
    return -EINVAL;
  size_t n = (size_t)nfds;
  uint8_t *raw = malloc(n * 8 + 1);
  struct pollfd *hp = calloc(n + 1, sizeof *hp);
  int64_t ret = 0;
  if (!raw || !hp) {
    ret = -ENOMEM;
    goto out;
  }
  if ((ret = tc_sys_read(emu, fds, raw, n * 8)) < 0)
    goto out;
  int64_t ready = 0;
  for (size_t i = 0; i < n; i++) {
    int gfd = (int)(int32_t)tc_abi_get(emu->arch, raw + i * 8, 4);
    short ev = (short)tc_abi_get(emu->arch, raw + i * 8 + 4, 2);
    tc_fd *f = gfd >= 0 ? tc_sys_fd(emu, gfd) : NULL;
    hp[i].fd = f ? f->host_fd : -1;
    hp[i].events = ev;
    hp[i].revents = (gfd >= 0 && !f) ? POLLNVAL : 0;
    if (hp[i].revents)
      ready++;
  }
  int hto = timeout_ms < 0            ? -1
            : timeout_ms > 0x7fffffff ? 0x7fffffff
                                      : (int)timeout_ms;
  if (ready)
    hto = 0;
  /* Only guest pipes: what would wake it is another guest thread or
   * process, so it waits for them instead of holding up the host. */
  bool all_pipes = n > 0 && hto != 0;
  for (size_t i = 0; i < n && all_pipes; i++) {
    int gfd = (int)(int32_t)tc_abi_get(emu->arch, raw + i * 8, 4);
    tc_fd *f = gfd >= 0 ? tc_sys_fd(emu, gfd) : NULL;
    all_pipes = gfd < 0 || (f && f->guest_pipe);
  }
  if (all_pipes && poll(hp, n, 0) == 0 &&
      tc_thread_wait_poll(
          c, hp, n,
          timeout_ms < 0 ? UINT64_MAX
                         : emu->clock_ns + (uint64_t)timeout_ms * 1000000u)) {
    ret = 0;
    goto out;
  }
  /* The POLLNVAL entries keep fd -1 so the host ignores them. */
  struct pollfd *saved = malloc((n + 1) * sizeof *saved);
  if (!saved) {
    ret = -ENOMEM;
    goto out;
  }
  memcpy(saved, hp, n * sizeof *hp);
  int r = poll(hp, n, hto);
  if (r < 0) {
    free(saved);
    ret = -errno;
    goto out;
  }
  ready = 0;
  for (size_t i = 0; i < n; i++) {
    short rev = saved[i].revents == POLLNVAL ? POLLNVAL : hp[i].revents;
    if (rev)
      ready++;
    tc_abi_put(emu->arch, raw + i * 8 + 6, 2, (uint16_t)rev);
  }
  free(saved);
  if (ready == 0 && timeout_ms > 0)
    emu->clock_ns += (uint64_t)timeout_ms * 1000000u;
  if ((ret = tc_sys_write(emu, fds, raw, n * 8)) < 0)
    goto out;
  ret = ready;
out:
  free(raw);
  free(hp);
  return ret;
}

static int64_t sys_poll(tc_sys_call *c) {
  return do_poll(c, c->a[0], c->a[1], (int64_t)tc_sys_int(c, 2));
}

static int64_t ppoll_common(tc_sys_call *c, bool time64) {
  int64_t ms = -1;
  if (c->a[2]) {
    uint8_t ts[16];
    unsigned sz = tc_abi_timespec_size(c->emu->arch, time64);
    int r = tc_sys_read(c->emu, c->a[2], ts, sz);
    if (r < 0)
      return r;
    int64_t sec, nsec;
    tc_abi_decode_timespec(c->emu->arch, time64, ts, &sec, &nsec);
    if (sec < 0 || nsec < 0 || nsec >= 1000000000)
      return -EINVAL;
    ms = sec > 0x7fffffff / 1000 ? 0x7fffffff : sec * 1000 + nsec / 1000000;
  }
  return do_poll(c, c->a[0], c->a[1], ms);
}

static int64_t sys_ppoll(tc_sys_call *c) { return ppoll_common(c, false); }
static int64_t sys_ppoll_time64(tc_sys_call *c) {
  return ppoll_common(c, true);
}

const tc_sys_entry tc_sys_fs_table[] = {
    {"read", sys_read},
    {"write", sys_write},
    {"pread64", sys_pread64},
    {"pwrite64", sys_pwrite64},
    {"readv", sys_readv},
    {"writev", sys_writev},
    {"open", sys_open},
    {"openat", sys_openat},
    {"creat", sys_creat},
    {"close", sys_close},
    {"lseek", sys_lseek},
    {"_llseek", sys_llseek},
    {"stat", sys_stat},
    {"lstat", sys_lstat},
    {"fstat", sys_fstat},
    {"newfstatat", sys_newfstatat},
    {"stat64", sys_stat64},
    {"lstat64", sys_lstat64},
    {"fstat64", sys_fstat64},
    {"fstatat64", sys_fstatat64},
    {"statx", sys_statx},
    {"access", sys_access},
    {"faccessat", sys_faccessat},
    {"faccessat2", sys_faccessat2},
    {"readlink", sys_readlink},
    {"readlinkat", sys_readlinkat},
    {"getcwd", sys_getcwd},
    {"chdir", sys_chdir},
    {"fchdir", sys_fchdir},
    {"getdents64", sys_getdents64},
    {"getdents", sys_getdents},
    {"unlink", sys_unlink},
    {"unlinkat", sys_unlinkat},
    {"rmdir", sys_rmdir},
    {"mkdir", sys_mkdir},
    {"mkdirat", sys_mkdirat},
    {"symlink", sys_symlink},
    {"symlinkat", sys_symlinkat},
    {"rename", sys_rename},
    {"renameat", sys_renameat},
    {"renameat2", sys_renameat2},
    {"ftruncate", sys_ftruncate},
    {"fadvise64", sys_fadvise},
    {"statfs", sys_statfs},
    {"fstatfs", sys_fstatfs},
    {"statfs64", sys_statfs64},
    {"fstatfs64", sys_fstatfs64},
    {"fadvise64_64", sys_fadvise},
    {"arm_fadvise64_64", sys_fadvise},
    {"ftruncate64", sys_ftruncate64},
    {"fsync", sys_fsync},
    {"fdatasync", sys_fsync},
    {"sync", sys_sync},
    {"copy_file_range", sys_copy_file_range},
    {"syncfs", sys_syncfs},
    {"chmod", sys_chmod},
    {"fchmod", sys_fchmod},
    {"fchmodat", sys_fchmodat},
    {"utimensat", sys_utimensat},
    {"utimensat_time64", sys_utimensat_time64},
    {"dup", sys_dup},
    {"dup2", sys_dup2},
    {"dup3", sys_dup3},
    {"fcntl", sys_fcntl},
    {"fcntl64", sys_fcntl},
    {"ioctl", sys_ioctl},
    {"pipe", sys_pipe},
    {"socketcall", sys_socketcall},
    {"connect", sys_socket_fd},
    {"bind", sys_socket_fd},
    {"listen", sys_socket_fd},
    {"accept", sys_socket_fd},
    {"accept4", sys_socket_fd},
    {"getsockname", sys_socket_fd},
    {"getpeername", sys_socket_fd},
    {"sendto", sys_socket_fd},
    {"recvfrom", sys_socket_fd},
    {"sendmsg", sys_socket_fd},
    {"recvmsg", sys_socket_fd},
    {"shutdown", sys_socket_fd},
    {"getsockopt", sys_socket_fd},
    {"setsockopt", sys_socket_fd},
    {"pipe2", sys_pipe2},
    {"poll", sys_poll},
    {"ppoll", sys_ppoll},
    {"ppoll_time64", sys_ppoll_time64},
    {"getxattr", sys_no_xattr},
    {"lgetxattr", sys_no_xattr},
    {"fgetxattr", sys_no_xattr},
    {"listxattr", sys_no_xattr},
    {"llistxattr", sys_no_xattr},
    {"flistxattr", sys_no_xattr},
    {"setxattr", sys_no_xattr},
    {"lsetxattr", sys_no_xattr},
    {"fsetxattr", sys_no_xattr},
    {"removexattr", sys_no_xattr},
    {"lremovexattr", sys_no_xattr},
    {"fremovexattr", sys_no_xattr},
    {NULL, NULL},
};
