/* SPDX-License-Identifier: GPL-2.0-or-later */
/* strace-style syscall decoding (see sysdecode.h).
 *
 * One table (`syscalls[]`) describes every syscall tracecorn decodes, keyed
 * by NAME, so every arch shares it: the arch table maps numbers to names.
 * Each entry lists the argument kinds (K_*) and how the return value
 * prints (R_*). Values that differ between arches are decoded in the
 * guest's own numbering by translating them first with the ABI tables the
 * emulator itself uses (common/linux/linux_xlat.c: open and mmap flags, errno
 * and signal numbers; common/linux/linux_abi.c: struct stat layouts), so one
 * set of names serves every arch. Output follows strace 6's default style: -s
 * 32 strings with `...`, abbreviated structs, flags in strace's order. */
#include "common/linux/sysdecode.h"
#include "common/byteorder.h"

#include <arpa/inet.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>

#include "common/arch.h"
#include "common/linux/linux_abi.h"
#include "common/linux/linux_xlat.h"
#include "common/memimage.h"

/* ---------------------------------------------------------- string buffer */

typedef struct sbuf {
  char *p;
  size_t n, cap;
  bool oom;
} sbuf;

static void sb_grow(sbuf *b, size_t more) {
  if (b->oom || b->n + more + 1 <= b->cap)
    return;
  size_t cap = b->cap ? b->cap : 256;
  while (cap < b->n + more + 1)
    cap *= 2;
  char *p = realloc(b->p, cap);
  if (!p) {
    b->oom = true;
    return;
  }
  b->p = p;
  b->cap = cap;
}

static void sb_putn(sbuf *b, const char *s, size_t n) {
  sb_grow(b, n);
  if (b->oom)
    return;
  memcpy(b->p + b->n, s, n);
  b->n += n;
  b->p[b->n] = 0;
}

static void sb_puts(sbuf *b, const char *s) { sb_putn(b, s, strlen(s)); }

static void sb_putc(sbuf *b, char c) { sb_putn(b, &c, 1); }

__attribute__((format(printf, 2, 3))) static void
sb_printf(sbuf *b, const char *fmt, ...) {
  char tmp[256];
  va_list ap;
  va_start(ap, fmt);
  int k = vsnprintf(tmp, sizeof tmp, fmt, ap);
  va_end(ap);
  if (k < 0)
    return;
  if ((size_t)k < sizeof tmp) {
    sb_putn(b, tmp, (size_t)k);
    return;
  }
  sb_grow(b, (size_t)k);
  if (b->oom)
    return;
  va_start(ap, fmt);
  vsnprintf(b->p + b->n, (size_t)k + 1, fmt, ap);
  va_end(ap);
  b->n += (size_t)k;
}

/* ------------------------------------------------------------ the decoder */

struct tc_sysdecode {
  const tc_arch *arch;
  tc_memimage *mem;
  unsigned strsize;
  bool has_memory; /* instruction memory effects are in the events */
  sbuf out;
  /* the syscall being formatted: its kernel writes overlay the image */
  const tc_syscall_event *cur;
};

tc_sysdecode *tc_sysdecode_new(const tc_arch *arch, unsigned strsize,
                               int has_memory) {
  tc_sysdecode *d = calloc(1, sizeof *d);
  if (!d)
    return NULL;
  d->arch = arch;
  d->has_memory = has_memory != 0;
  d->strsize = strsize ? strsize : TC_SYSDECODE_STRSIZE;
  d->mem = tc_memimage_new();
  if (!d->mem) {
    free(d);
    return NULL;
  }
  return d;
}

void tc_sysdecode_free(tc_sysdecode *d) {
  if (!d)
    return;
  tc_memimage_free(d->mem);
  free(d->out.p);
  free(d);
}

int tc_sysdecode_observe(tc_sysdecode *d, const tc_event *ev) {
  if (d->has_memory)
    return tc_memimage_apply(d->mem, ev);
  /* Without the guest's own writes, only memory it cannot write stays
   * as mapped: keep read-only maps, forget a region made writable. */
  switch (ev->kind) {
  case TC_EV_MAP:
    if (ev->u.map.prot & TC_PROT_WRITE)
      return 0;
    return tc_memimage_apply(d->mem, ev);
  case TC_EV_UNMAP:
    return tc_memimage_apply(d->mem, ev);
  case TC_EV_PROTECT:
    if (ev->u.map.prot & TC_PROT_WRITE) {
      tc_event forget = *ev;
      forget.kind = TC_EV_UNMAP;
      return tc_memimage_apply(d->mem, &forget);
    }
    return 0;
  default:
    return 0;
  }
}

int tc_sysdecode_observe_or_fail(tc_sysdecode *d, const tc_event *ev,
                                 const char *path, tc_error *err) {
  if (tc_sysdecode_observe(d, ev) < 0) {
    tc_error_set(err, "%s: out of memory", path);
    return -1;
  }
  return 0;
}

/* Guest memory as the syscall saw it on entry. 1 if every byte is known. */
static bool mem_in(const tc_sysdecode *d, uint64_t addr, void *out, size_t n) {
  if (n == 0)
    return true;
  if (addr + n < addr)
    return false;
  return tc_memimage_read(d->mem, addr, out, n) == 1;
}

/* Guest memory as the syscall left it: the image overlaid with the bytes
 * the kernel wrote. 1 if every byte is known. */
static bool mem_out(const tc_sysdecode *d, uint64_t addr, void *out, size_t n) {
  if (n == 0)
    return true;
  if (addr + n < addr)
    return false;
  uint8_t *o = out;
  if (tc_memimage_read(d->mem, addr, o, n) == 1 && !d->cur->nmem)
    return true;
  /* covered[i]: byte i comes from a kernel write */
  uint8_t *covered = calloc(n, 1);
  if (!covered)
    return false;
  for (uint32_t k = 0; k < d->cur->nmem; k++) {
    const tc_mem_access *m = &d->cur->mem[k];
    if (!m->after || m->addr + m->size < m->addr)
      continue;
    uint64_t lo = m->addr > addr ? m->addr : addr;
    uint64_t hi = m->addr + m->size < addr + n ? m->addr + m->size : addr + n;
    for (uint64_t a = lo; a < hi; a++) {
      o[a - addr] = m->after[a - m->addr];
      covered[a - addr] = 1;
    }
  }
  bool known = true;
  for (size_t i = 0; i < n && known;) {
    if (covered[i]) {
      i++;
      continue;
    }
    size_t j = i;
    while (j < n && !covered[j])
      j++;
    known = tc_memimage_read(d->mem, addr + i, o + i, j - i) == 1;
    i = j;
  }
  free(covered);
  return known;
}

static uint64_t get_guest(const tc_arch *a, const uint8_t *p, unsigned size) {
  return get_uint(p, size, a->big_endian);
}

static int64_t get_int(const tc_arch *a, const uint8_t *p, unsigned size) {
  uint64_t v = get_guest(a, p, size);
  if (size < 8 && (v >> (8 * size - 1)) & 1)
    v |= ~0ull << (8 * size);
  return (int64_t)v;
}

/* ----------------------------------------------------------------- names */

typedef struct xlat {
  uint64_t val;
  const char *name;
} xlat;

#define N(a) (sizeof(a) / sizeof((a)[0]))

static const char *xlat_name(const xlat *t, size_t n, uint64_t v) {
  for (size_t i = 0; i < n; i++)
    if (t[i].val == v)
      return t[i].name;
  return NULL;
}

/* A value from a table, else as strace prints an unknown one: hex (or
 * decimal) with a comment naming the table's prefix. */
static void put_xval(sbuf *b, const xlat *t, size_t n, uint64_t v,
                     const char *unknown, bool dec) {
  const char *s = xlat_name(t, n, v);
  if (s) {
    sb_puts(b, s);
    return;
  }
  if (dec)
    sb_printf(b, "%" PRId64, (int64_t)v);
  else
    sb_printf(b, "%#" PRIx64, v);
  if (unknown)
    sb_printf(b, " /* %s */", unknown);
}

/* Flags in table order, as strace's printflags: every entry whose bits
 * are all set is printed and cleared; leftover bits follow in hex; no
 * named bit prints the value with a comment; zero prints "0". */
static void put_flags_except(sbuf *b, const xlat *t, size_t n, uint64_t v,
                             const char *unknown, uint64_t except) {
  int printed = 0;
  for (size_t i = 0; i < n; i++)
    if (t[i].val && t[i].val != except && (v & t[i].val) == t[i].val) {
      if (printed++)
        sb_putc(b, '|');
      sb_puts(b, t[i].name);
      v &= ~t[i].val;
    }
  if (printed) {
    if (v)
      sb_printf(b, "|%#" PRIx64, v);
  } else if (v) {
    sb_printf(b, "%#" PRIx64, v);
    if (unknown)
      sb_printf(b, " /* %s */", unknown);
  } else {
    sb_putc(b, '0');
  }
}

static void put_flags(sbuf *b, const xlat *t, size_t n, uint64_t v,
                      const char *unknown) {
  put_flags_except(b, t, n, v, unknown, 0);
}

/* errno names in the host (asm-generic / x86) numbering. */
static const char *const errno_names[] = {NULL,
                                          "EPERM",
                                          "ENOENT",
                                          "ESRCH",
                                          "EINTR",
                                          "EIO",
                                          "ENXIO",
                                          "E2BIG",
                                          "ENOEXEC",
                                          "EBADF",
                                          "ECHILD",
                                          "EAGAIN",
                                          "ENOMEM",
                                          "EACCES",
                                          "EFAULT",
                                          "ENOTBLK",
                                          "EBUSY",
                                          "EEXIST",
                                          "EXDEV",
                                          "ENODEV",
                                          "ENOTDIR",
                                          "EISDIR",
                                          "EINVAL",
                                          "ENFILE",
                                          "EMFILE",
                                          "ENOTTY",
                                          "ETXTBSY",
                                          "EFBIG",
                                          "ENOSPC",
                                          "ESPIPE",
                                          "EROFS",
                                          "EMLINK",
                                          "EPIPE",
                                          "EDOM",
                                          "ERANGE",
                                          "EDEADLK",
                                          "ENAMETOOLONG",
                                          "ENOLCK",
                                          "ENOSYS",
                                          "ENOTEMPTY",
                                          "ELOOP",
                                          NULL,
                                          "ENOMSG",
                                          "EIDRM",
                                          "ECHRNG",
                                          "EL2NSYNC",
                                          "EL3HLT",
                                          "EL3RST",
                                          "ELNRNG",
                                          "EUNATCH",
                                          "ENOCSI",
                                          "EL2HLT",
                                          "EBADE",
                                          "EBADR",
                                          "EXFULL",
                                          "ENOANO",
                                          "EBADRQC",
                                          "EBADSLT",
                                          NULL,
                                          "EBFONT",
                                          "ENOSTR",
                                          "ENODATA",
                                          "ETIME",
                                          "ENOSR",
                                          "ENONET",
                                          "ENOPKG",
                                          "EREMOTE",
                                          "ENOLINK",
                                          "EADV",
                                          "ESRMNT",
                                          "ECOMM",
                                          "EPROTO",
                                          "EMULTIHOP",
                                          "EDOTDOT",
                                          "EBADMSG",
                                          "EOVERFLOW",
                                          "ENOTUNIQ",
                                          "EBADFD",
                                          "EREMCHG",
                                          "ELIBACC",
                                          "ELIBBAD",
                                          "ELIBSCN",
                                          "ELIBMAX",
                                          "ELIBEXEC",
                                          "EILSEQ",
                                          "ERESTART",
                                          "ESTRPIPE",
                                          "EUSERS",
                                          "ENOTSOCK",
                                          "EDESTADDRREQ",
                                          "EMSGSIZE",
                                          "EPROTOTYPE",
                                          "ENOPROTOOPT",
                                          "EPROTONOSUPPORT",
                                          "ESOCKTNOSUPPORT",
                                          "EOPNOTSUPP",
                                          "EPFNOSUPPORT",
                                          "EAFNOSUPPORT",
                                          "EADDRINUSE",
                                          "EADDRNOTAVAIL",
                                          "ENETDOWN",
                                          "ENETUNREACH",
                                          "ENETRESET",
                                          "ECONNABORTED",
                                          "ECONNRESET",
                                          "ENOBUFS",
                                          "EISCONN",
                                          "ENOTCONN",
                                          "ESHUTDOWN",
                                          "ETOOMANYREFS",
                                          "ETIMEDOUT",
                                          "ECONNREFUSED",
                                          "EHOSTDOWN",
                                          "EHOSTUNREACH",
                                          "EALREADY",
                                          "EINPROGRESS",
                                          "ESTALE",
                                          "EUCLEAN",
                                          "ENOTNAM",
                                          "ENAVAIL",
                                          "EISNAM",
                                          "EREMOTEIO",
                                          "EDQUOT",
                                          "ENOMEDIUM",
                                          "EMEDIUMTYPE",
                                          "ECANCELED",
                                          "ENOKEY",
                                          "EKEYEXPIRED",
                                          "EKEYREVOKED",
                                          "EKEYREJECTED",
                                          "EOWNERDEAD",
                                          "ENOTRECOVERABLE",
                                          "ERFKILL",
                                          "EHWPOISON"};

/* The kernel's internal restart codes (a syscall interrupted by a
 * signal), which strace shows with its own explanations. */
static const struct {
  int nr;
  const char *name, *msg;
} restart_errnos[] = {
    {512, "ERESTARTSYS", "To be restarted if SA_RESTART is set"},
    {513, "ERESTARTNOINTR", "To be restarted"},
    {514, "ERESTARTNOHAND", "To be restarted if no handler"},
    {516, "ERESTART_RESTARTBLOCK", "Interrupted by signal"}};

const char *tc_sysdecode_errname(const tc_arch *arch, int guest_errno) {
  int e = tc_xlat_errno_to_host(arch, guest_errno);
  if (e > 0 && (size_t)e < N(errno_names))
    return errno_names[e];
  for (size_t i = 0; i < N(restart_errnos); i++)
    if (restart_errnos[i].nr == e)
      return restart_errnos[i].name;
  return NULL;
}

/* Signal names in the host numbering; guest numbers are translated. */
static const char *const signal_names[] = {
    NULL,      "SIGHUP",  "SIGINT",    "SIGQUIT", "SIGILL",    "SIGTRAP",
    "SIGABRT", "SIGBUS",  "SIGFPE",    "SIGKILL", "SIGUSR1",   "SIGSEGV",
    "SIGUSR2", "SIGPIPE", "SIGALRM",   "SIGTERM", "SIGSTKFLT", "SIGCHLD",
    "SIGCONT", "SIGSTOP", "SIGTSTP",   "SIGTTIN", "SIGTTOU",   "SIGURG",
    "SIGXCPU", "SIGXFSZ", "SIGVTALRM", "SIGPROF", "SIGWINCH",  "SIGIO",
    "SIGPWR",  "SIGSYS"};

/* mips' own UAPI numbering (tc_arch_traits.sys). */
static bool is_mips(const tc_arch *a) { return a->traits.sys.mips_uapi; }

const char *tc_sysdecode_signame(const tc_arch *arch, int guest_sig) {
  static char rt[16][12];
  if (guest_sig <= 0)
    return NULL;
  if (is_mips(arch) && guest_sig == 7)
    return "SIGEMT";
  int s = tc_xlat_signal_to_host(arch, guest_sig);
  if (s > 0 && (size_t)s < N(signal_names))
    return signal_names[s];
  /* real-time signals: strace names them from the kernel's SIGRTMIN */
  if (guest_sig == 32)
    return "SIGRTMIN";
  int nsig = is_mips(arch) ? 128 : 64;
  if (guest_sig > 32 && guest_sig <= nsig) {
    char *buf = rt[guest_sig % 16];
    snprintf(buf, sizeof rt[0], "SIGRT_%d", (guest_sig - 32) & 127);
    return buf;
  }
  return NULL;
}

/* Fault and exit events number signals as the host does (tracecorn's
 * exit status is 128 + the host signal). */
static const char *host_signame(int sig) {
  return sig > 0 && (size_t)sig < N(signal_names) ? signal_names[sig] : NULL;
}

static void put_signal(sbuf *b, const tc_arch *a, int64_t sig) {
  const char *n =
      sig > 0 && sig < 256 ? tc_sysdecode_signame(a, (int)sig) : NULL;
  if (n)
    sb_puts(b, n);
  else
    sb_printf(b, "%" PRId64, sig);
}

/* --------------------------------------------------------------- strings */

/* strace's string_quote for one byte run: C escapes for the common
 * controls, printable ASCII as is, everything else in minimal octal (3
 * digits when an octal digit follows). hex: every byte as \xNN. */
static void put_quoted(sbuf *b, const uint8_t *s, size_t n, bool hex) {
  static const char hx[] = "0123456789abcdef";
  sb_putc(b, '"');
  for (size_t i = 0; i < n; i++) {
    unsigned c = s[i];
    if (hex) {
      char e[4] = {'\\', 'x', hx[c >> 4], hx[c & 15]};
      sb_putn(b, e, 4);
      continue;
    }
    switch (c) {
    case '"':
    case '\\': {
      char e[2] = {'\\', (char)c};
      sb_putn(b, e, 2);
      break;
    }
    case '\f':
      sb_puts(b, "\\f");
      break;
    case '\n':
      sb_puts(b, "\\n");
      break;
    case '\r':
      sb_puts(b, "\\r");
      break;
    case '\t':
      sb_puts(b, "\\t");
      break;
    case '\v':
      sb_puts(b, "\\v");
      break;
    default:
      if (c >= ' ' && c < 0x7f) {
        sb_putc(b, (char)c);
      } else {
        bool digit_next = i + 1 < n && s[i + 1] >= '0' && s[i + 1] <= '7';
        char e[5];
        int k = 0;
        e[k++] = '\\';
        if (digit_next || c >> 6)
          e[k++] = (char)('0' + (c >> 6));
        if (digit_next || c >> 3)
          e[k++] = (char)('0' + ((c >> 3) & 7));
        e[k++] = (char)('0' + (c & 7));
        sb_putn(b, e, (size_t)k);
      }
    }
  }
  sb_putc(b, '"');
}

static void put_addr(sbuf *b, uint64_t addr) {
  if (addr)
    sb_printf(b, "%#" PRIx64, addr);
  else
    sb_puts(b, "NULL");
}

/* A buffer of len bytes (strace's printstrn): at most strsize of them,
 * then "..." if there were more. in: read as on entry, else as on exit. */
static void put_buf(tc_sysdecode *d, uint64_t addr, uint64_t len, bool in,
                    bool hex) {
  sbuf *b = &d->out;
  if (!addr) {
    sb_puts(b, "NULL");
    return;
  }
  size_t n = len > d->strsize ? d->strsize : (size_t)len;
  uint8_t *buf = malloc(n ? n : 1);
  if (!buf || !(in ? mem_in(d, addr, buf, n) : mem_out(d, addr, buf, n))) {
    free(buf);
    put_addr(b, addr);
    return;
  }
  put_quoted(b, buf, n, hex);
  if (len > n)
    sb_puts(b, "...");
  free(buf);
}

/* A NUL-terminated string of at most max bytes (strace's printpathn /
 * printstr with QUOTE_0_TERMINATED): "..." when no NUL came within max. */
static void put_cstr(tc_sysdecode *d, uint64_t addr, size_t max, bool in) {
  sbuf *b = &d->out;
  if (!addr) {
    sb_puts(b, "NULL");
    return;
  }
  uint8_t *buf = malloc(max + 1);
  size_t len = 0;
  bool nul = false, ok = buf != NULL;
  /* read in small chunks: the string usually ends long before max */
  while (ok && len <= max && !nul) {
    size_t chunk = max + 1 - len < 64 ? max + 1 - len : 64;
    /* a chunk may cross into unknown memory past the string's end */
    size_t got = 0;
    for (; got < chunk; got++) {
      uint8_t c;
      if (!(in ? mem_in(d, addr + len + got, &c, 1)
               : mem_out(d, addr + len + got, &c, 1))) {
        ok = false;
        break;
      }
      buf[len + got] = c;
      if (c == 0) {
        nul = true;
        break;
      }
    }
    len += got;
  }
  if (!nul && !ok) {
    free(buf);
    put_addr(b, addr);
    return;
  }
  put_quoted(b, buf, len > max ? max : len, false);
  if (!nul || len > max)
    sb_puts(b, "...");
  free(buf);
}

static void put_path(tc_sysdecode *d, uint64_t addr) {
  put_cstr(d, addr, 4095, true);
}

/* ------------------------------------------------------------ flag tables
 * Values in the host (asm-generic / x86-64 kernel) numbering, in strace's
 * printing order; guest values are translated to it first. */

static const xlat open_access[] = {
    {0, "O_RDONLY"}, {1, "O_WRONLY"}, {2, "O_RDWR"}, {3, "O_ACCMODE"}};

static const xlat open_flags[] = {
    {0100, "O_CREAT"},          {0200, "O_EXCL"},
    {0400, "O_NOCTTY"},         {01000, "O_TRUNC"},
    {02000, "O_APPEND"},        {04000, "O_NONBLOCK"},
    {04010000, "O_SYNC"},       {04000000, "__O_SYNC"},
    {010000, "O_DSYNC"},        {040000, "O_DIRECT"},
    {0100000, "O_LARGEFILE"},   {0400000, "O_NOFOLLOW"},
    {01000000, "O_NOATIME"},    {02000000, "O_CLOEXEC"},
    {010000000, "O_PATH"},      {020200000, "O_TMPFILE"},
    {020000000, "__O_TMPFILE"}, {0200000, "O_DIRECTORY"},
    {020000, "FASYNC"}};

#define HOST_O_CREAT 0100
#define HOST_O_TMPFILE 020000000

static uint64_t open_to_host(const tc_arch *a, uint64_t v) {
  return (uint32_t)tc_xlat_open_to_host(a, (int)(uint32_t)v);
}

/* strace's sprint_open_modes: the access mode, then the other flags. */
static void put_open_flags(sbuf *b, const tc_arch *a, uint64_t guest) {
  uint64_t v = open_to_host(a, guest);
  sb_puts(b, xlat_name(open_access, N(open_access), v & 3));
  v &= ~3ull;
  if (v) {
    sb_putc(b, '|');
    put_flags(b, open_flags, N(open_flags), v, NULL);
  }
}

static const xlat fd_flags[] = {{1, "FD_CLOEXEC"}};

static const xlat access_modes[] = {{4, "R_OK"}, {2, "W_OK"}, {1, "X_OK"}};

static const xlat at_flags[] = {
    {0x100, "AT_SYMLINK_NOFOLLOW"}, {0x200, "AT_REMOVEDIR"},
    {0x400, "AT_SYMLINK_FOLLOW"},   {0x800, "AT_NO_AUTOMOUNT"},
    {0x1000, "AT_EMPTY_PATH"},      {0x8000, "AT_RECURSIVE"}};

/* faccessat2's own flag: AT_EACCESS shares AT_REMOVEDIR's value. */
static const xlat faccessat_flags[] = {{0x100, "AT_SYMLINK_NOFOLLOW"},
                                       {0x200, "AT_EACCESS"},
                                       {0x1000, "AT_EMPTY_PATH"}};

static const xlat statx_sync[] = {{0x2000, "AT_STATX_FORCE_SYNC"},
                                  {0x4000, "AT_STATX_DONT_SYNC"}};

static const xlat statx_masks[] = {
    {0xfff, "STATX_ALL"},     {0x7ff, "STATX_BASIC_STATS"},
    {0x1, "STATX_TYPE"},      {0x2, "STATX_MODE"},
    {0x4, "STATX_NLINK"},     {0x8, "STATX_UID"},
    {0x10, "STATX_GID"},      {0x20, "STATX_ATIME"},
    {0x40, "STATX_MTIME"},    {0x80, "STATX_CTIME"},
    {0x100, "STATX_INO"},     {0x200, "STATX_SIZE"},
    {0x400, "STATX_BLOCKS"},  {0x800, "STATX_BTIME"},
    {0x1000, "STATX_MNT_ID"}, {0x2000, "STATX_DIOALIGN"}};

static const xlat statx_attrs[] = {
    {0x4, "STATX_ATTR_COMPRESSED"},    {0x10, "STATX_ATTR_IMMUTABLE"},
    {0x20, "STATX_ATTR_APPEND"},       {0x40, "STATX_ATTR_NODUMP"},
    {0x800, "STATX_ATTR_ENCRYPTED"},   {0x1000, "STATX_ATTR_AUTOMOUNT"},
    {0x2000, "STATX_ATTR_MOUNT_ROOT"}, {0x100000, "STATX_ATTR_VERITY"},
    {0x200000, "STATX_ATTR_DAX"}};

static const xlat mmap_prot[] = {{1, "PROT_READ"},
                                 {2, "PROT_WRITE"},
                                 {4, "PROT_EXEC"},
                                 {0x8, "PROT_SEM"},
                                 {0x01000000, "PROT_GROWSDOWN"},
                                 {0x02000000, "PROT_GROWSUP"}};

static const xlat mmap_types[] = {
    {1, "MAP_SHARED"}, {2, "MAP_PRIVATE"}, {3, "MAP_SHARED_VALIDATE"}};

static const xlat mmap_flags[] = {{0x10, "MAP_FIXED"},
                                  {0x20, "MAP_ANONYMOUS"},
                                  {0x40, "MAP_32BIT"},
                                  {0x4000, "MAP_NORESERVE"},
                                  {0x8000, "MAP_POPULATE"},
                                  {0x10000, "MAP_NONBLOCK"},
                                  {0x100, "MAP_GROWSDOWN"},
                                  {0x800, "MAP_DENYWRITE"},
                                  {0x1000, "MAP_EXECUTABLE"},
                                  {0x2000, "MAP_LOCKED"},
                                  {0x20000, "MAP_STACK"},
                                  {0x40000, "MAP_HUGETLB"},
                                  {0x80000, "MAP_SYNC"},
                                  {0x4000000, "MAP_UNINITIALIZED"},
                                  {0x100000, "MAP_FIXED_NOREPLACE"}};

static void put_prot(sbuf *b, uint64_t v) {
  if (v == 0)
    sb_puts(b, "PROT_NONE");
  else
    put_flags(b, mmap_prot, N(mmap_prot), v, "PROT_???");
}

static void put_mmap_flags(sbuf *b, const tc_arch *a, uint64_t guest) {
  uint64_t v = (uint32_t)tc_xlat_mmap_to_host(a, (int)(uint32_t)guest);
  put_xval(b, mmap_types, N(mmap_types), v & 0xf, "MAP_???", false);
  v &= ~0xfull;
  if (v) {
    sb_putc(b, '|');
    /* MAP_32BIT exists on x86 only */
    bool m32 = a->traits.sys.map_32bit;
    put_flags_except(b, mmap_flags, N(mmap_flags), v, NULL, m32 ? 0 : 0x40);
  }
}

static const xlat mremap_flags[] = {
    {1, "MREMAP_MAYMOVE"}, {2, "MREMAP_FIXED"}, {4, "MREMAP_DONTUNMAP"}};

static const xlat msync_flags[] = {
    {1, "MS_ASYNC"}, {2, "MS_INVALIDATE"}, {4, "MS_SYNC"}};

static const xlat madvise_cmds[] = {
    {0, "MADV_NORMAL"},          {1, "MADV_RANDOM"},
    {2, "MADV_SEQUENTIAL"},      {3, "MADV_WILLNEED"},
    {4, "MADV_DONTNEED"},        {8, "MADV_FREE"},
    {9, "MADV_REMOVE"},          {10, "MADV_DONTFORK"},
    {11, "MADV_DOFORK"},         {12, "MADV_MERGEABLE"},
    {13, "MADV_UNMERGEABLE"},    {14, "MADV_HUGEPAGE"},
    {15, "MADV_NOHUGEPAGE"},     {16, "MADV_DONTDUMP"},
    {17, "MADV_DODUMP"},         {18, "MADV_WIPEONFORK"},
    {19, "MADV_KEEPONFORK"},     {20, "MADV_COLD"},
    {21, "MADV_PAGEOUT"},        {22, "MADV_POPULATE_READ"},
    {23, "MADV_POPULATE_WRITE"}, {100, "MADV_HWPOISON"}};

static const xlat whence_codes[] = {{0, "SEEK_SET"},
                                    {1, "SEEK_CUR"},
                                    {2, "SEEK_END"},
                                    {3, "SEEK_DATA"},
                                    {4, "SEEK_HOLE"}};

static const xlat fcntl_cmds[] = {
    {0, "F_DUPFD"},          {1, "F_GETFD"},
    {2, "F_SETFD"},          {3, "F_GETFL"},
    {4, "F_SETFL"},          {5, "F_GETLK"},
    {6, "F_SETLK"},          {7, "F_SETLKW"},
    {8, "F_SETOWN"},         {9, "F_GETOWN"},
    {10, "F_SETSIG"},        {11, "F_GETSIG"},
    {15, "F_SETOWN_EX"},     {16, "F_GETOWN_EX"},
    {17, "F_GETOWNER_UIDS"}, {36, "F_OFD_GETLK"},
    {37, "F_OFD_SETLK"},     {38, "F_OFD_SETLKW"},
    {1024, "F_SETLEASE"},    {1025, "F_GETLEASE"},
    {1026, "F_NOTIFY"},      {1030, "F_DUPFD_CLOEXEC"},
    {1031, "F_SETPIPE_SZ"},  {1032, "F_GETPIPE_SZ"},
    {1033, "F_ADD_SEALS"},   {1034, "F_GET_SEALS"}};

/* 32-bit arches: the flock64 commands (fcntl64). */
static const xlat fcntl64_cmds[] = {
    {12, "F_GETLK64"}, {13, "F_SETLK64"}, {14, "F_SETLKW64"}};

/* mips numbers the lock and owner commands its own way. */
static const xlat fcntl_mips_cmds[] = {
    {14, "F_GETLK"},  {6, "F_SETLK"},    {7, "F_SETLKW"},   {24, "F_SETOWN"},
    {23, "F_GETOWN"}, {33, "F_GETLK64"}, {34, "F_SETLK64"}, {35, "F_SETLKW64"}};

static const xlat sigprocmask_cmds[] = {
    {0, "SIG_BLOCK"}, {1, "SIG_UNBLOCK"}, {2, "SIG_SETMASK"}};

static const xlat sigprocmask_mips_cmds[] = {
    {1, "SIG_BLOCK"}, {2, "SIG_UNBLOCK"}, {3, "SIG_SETMASK"}};

static const xlat sigact_flags[] = {
    {0x04000000, "SA_RESTORER"}, {0x08000000, "SA_ONSTACK"},
    {0x10000000, "SA_RESTART"},  {0x20000000, "SA_INTERRUPT"},
    {0x40000000, "SA_NODEFER"},  {0x80000000, "SA_RESETHAND"},
    {4, "SA_SIGINFO"},           {1, "SA_NOCLDSTOP"},
    {2, "SA_NOCLDWAIT"}};

static const xlat sigact_mips_flags[] = {
    {0x08000000, "SA_ONSTACK"},   {0x10000000, "SA_RESTART"},
    {0x20000000, "SA_INTERRUPT"}, {0x40000000, "SA_NODEFER"},
    {0x80000000, "SA_RESETHAND"}, {8, "SA_SIGINFO"},
    {1, "SA_NOCLDSTOP"},          {0x10000, "SA_NOCLDWAIT"}};

static const xlat sigaltstack_flags[] = {
    {1, "SS_ONSTACK"}, {2, "SS_DISABLE"}, {0x80000000u, "SS_AUTODISARM"}};

static const xlat clocks[] = {{0, "CLOCK_REALTIME"},
                              {1, "CLOCK_MONOTONIC"},
                              {2, "CLOCK_PROCESS_CPUTIME_ID"},
                              {3, "CLOCK_THREAD_CPUTIME_ID"},
                              {4, "CLOCK_MONOTONIC_RAW"},
                              {5, "CLOCK_REALTIME_COARSE"},
                              {6, "CLOCK_MONOTONIC_COARSE"},
                              {7, "CLOCK_BOOTTIME"},
                              {8, "CLOCK_REALTIME_ALARM"},
                              {9, "CLOCK_BOOTTIME_ALARM"},
                              {11, "CLOCK_TAI"}};

static const xlat timer_flags[] = {{1, "TIMER_ABSTIME"}};

static const xlat rlimits[] = {
    {0, "RLIMIT_CPU"},       {1, "RLIMIT_FSIZE"},  {2, "RLIMIT_DATA"},
    {3, "RLIMIT_STACK"},     {4, "RLIMIT_CORE"},   {5, "RLIMIT_RSS"},
    {6, "RLIMIT_NPROC"},     {7, "RLIMIT_NOFILE"}, {8, "RLIMIT_MEMLOCK"},
    {9, "RLIMIT_AS"},        {10, "RLIMIT_LOCKS"}, {11, "RLIMIT_SIGPENDING"},
    {12, "RLIMIT_MSGQUEUE"}, {13, "RLIMIT_NICE"},  {14, "RLIMIT_RTPRIO"},
    {15, "RLIMIT_RTTIME"}};

static const xlat rlimits_mips[] = {
    {0, "RLIMIT_CPU"},       {1, "RLIMIT_FSIZE"},  {2, "RLIMIT_DATA"},
    {3, "RLIMIT_STACK"},     {4, "RLIMIT_CORE"},   {5, "RLIMIT_NOFILE"},
    {6, "RLIMIT_AS"},        {7, "RLIMIT_RSS"},    {8, "RLIMIT_NPROC"},
    {9, "RLIMIT_MEMLOCK"},   {10, "RLIMIT_LOCKS"}, {11, "RLIMIT_SIGPENDING"},
    {12, "RLIMIT_MSGQUEUE"}, {13, "RLIMIT_NICE"},  {14, "RLIMIT_RTPRIO"},
    {15, "RLIMIT_RTTIME"}};

static const xlat grnd_flags[] = {
    {1, "GRND_NONBLOCK"}, {2, "GRND_RANDOM"}, {4, "GRND_INSECURE"}};

static const xlat rename_flags[] = {
    {1, "RENAME_NOREPLACE"}, {2, "RENAME_EXCHANGE"}, {4, "RENAME_WHITEOUT"}};

static const xlat arch_prctl_codes[] = {
    {0x1001, "ARCH_SET_GS"},       {0x1002, "ARCH_SET_FS"},
    {0x1003, "ARCH_GET_FS"},       {0x1004, "ARCH_GET_GS"},
    {0x1011, "ARCH_GET_CPUID"},    {0x1012, "ARCH_SET_CPUID"},
    {0x2001, "ARCH_MAP_VDSO_X32"}, {0x2002, "ARCH_MAP_VDSO_32"},
    {0x2003, "ARCH_MAP_VDSO_64"}};

static const xlat prctl_options[] = {{1, "PR_SET_PDEATHSIG"},
                                     {2, "PR_GET_PDEATHSIG"},
                                     {3, "PR_GET_DUMPABLE"},
                                     {4, "PR_SET_DUMPABLE"},
                                     {15, "PR_SET_NAME"},
                                     {16, "PR_GET_NAME"},
                                     {22, "PR_SET_SECCOMP"},
                                     {21, "PR_GET_SECCOMP"},
                                     {23, "PR_CAPBSET_READ"},
                                     {36, "PR_SET_CHILD_SUBREAPER"},
                                     {37, "PR_GET_CHILD_SUBREAPER"},
                                     {38, "PR_SET_NO_NEW_PRIVS"},
                                     {39, "PR_GET_NO_NEW_PRIVS"},
                                     {40, "PR_GET_TID_ADDRESS"},
                                     {41, "PR_SET_THP_DISABLE"},
                                     {42, "PR_GET_THP_DISABLE"},
                                     {0x53564d41, "PR_SET_VMA"}};

static const xlat futex_cmds[] = {{0, "FUTEX_WAIT"},
                                  {1, "FUTEX_WAKE"},
                                  {2, "FUTEX_FD"},
                                  {3, "FUTEX_REQUEUE"},
                                  {4, "FUTEX_CMP_REQUEUE"},
                                  {5, "FUTEX_WAKE_OP"},
                                  {6, "FUTEX_LOCK_PI"},
                                  {7, "FUTEX_UNLOCK_PI"},
                                  {8, "FUTEX_TRYLOCK_PI"},
                                  {9, "FUTEX_WAIT_BITSET"},
                                  {10, "FUTEX_WAKE_BITSET"},
                                  {11, "FUTEX_WAIT_REQUEUE_PI"},
                                  {12, "FUTEX_CMP_REQUEUE_PI"},
                                  {13, "FUTEX_LOCK_PI2"}};

static const xlat poll_events[] = {
    {0x1, "POLLIN"},       {0x2, "POLLPRI"},     {0x4, "POLLOUT"},
    {0x8, "POLLERR"},      {0x10, "POLLHUP"},    {0x20, "POLLNVAL"},
    {0x40, "POLLRDNORM"},  {0x80, "POLLRDBAND"}, {0x100, "POLLWRNORM"},
    {0x200, "POLLWRBAND"}, {0x400, "POLLMSG"},   {0x2000, "POLLRDHUP"}};

static const xlat ioctl_reqs[] = {
    {0x5401, "TCGETS"},
    {0x5402, "TCSETS"},
    {0x5403, "TCSETSW"},
    {0x5404, "TCSETSF"},
    {0x540f, "TIOCGPGRP"},
    {0x5410, "TIOCSPGRP"},
    {0x5413, "TIOCGWINSZ"},
    {0x5414, "TIOCSWINSZ"},
    {0x541b, "FIONREAD"},
    {0x5421, "FIONBIO"},
    {0x5450, "FIONCLEX"},
    {0x5451, "FIOCLEX"},
    {0x40049409, "BTRFS_IOC_CLONE or FICLONE"},
    {0x4020940d, "BTRFS_IOC_CLONE_RANGE or FICLONERANGE"}};

static const xlat ioctl_mips_reqs[] = {
    {0x540d, "TCGETS"},         {0x540e, "TCSETS"},
    {0x540f, "TCSETSW"},        {0x5410, "TCSETSF"},
    {0x40047477, "TIOCGPGRP"},  {0x80047476, "TIOCSPGRP"},
    {0x40087468, "TIOCGWINSZ"}, {0x80087467, "TIOCSWINSZ"},
    {0x467f, "FIONREAD"},       {0x667e, "FIONBIO"},
    {0x6602, "FIONCLEX"},       {0x6601, "FIOCLEX"}};

static const xlat address_families[] = {{0, "AF_UNSPEC"},   {1, "AF_UNIX"},
                                        {2, "AF_INET"},     {10, "AF_INET6"},
                                        {16, "AF_NETLINK"}, {17, "AF_PACKET"}};

static const xlat socket_types[] = {{1, "SOCK_STREAM"},    {2, "SOCK_DGRAM"},
                                    {3, "SOCK_RAW"},       {4, "SOCK_RDM"},
                                    {5, "SOCK_SEQPACKET"}, {6, "SOCK_DCCP"},
                                    {10, "SOCK_PACKET"}};

static const xlat socket_mips_types[] = {
    {2, "SOCK_STREAM"}, {1, "SOCK_DGRAM"},     {3, "SOCK_RAW"},
    {4, "SOCK_RDM"},    {5, "SOCK_SEQPACKET"}, {6, "SOCK_DCCP"},
    {10, "SOCK_PACKET"}};

static const xlat msg_flags[] = {{0x1, "MSG_OOB"},
                                 {0x2, "MSG_PEEK"},
                                 {0x4, "MSG_DONTROUTE"},
                                 {0x8, "MSG_CTRUNC"},
                                 {0x10, "MSG_PROXY"},
                                 {0x20, "MSG_TRUNC"},
                                 {0x40, "MSG_DONTWAIT"},
                                 {0x80, "MSG_EOR"},
                                 {0x100, "MSG_WAITALL"},
                                 {0x200, "MSG_FIN"},
                                 {0x400, "MSG_SYN"},
                                 {0x800, "MSG_CONFIRM"},
                                 {0x1000, "MSG_RST"},
                                 {0x2000, "MSG_ERRQUEUE"},
                                 {0x4000, "MSG_NOSIGNAL"},
                                 {0x8000, "MSG_MORE"},
                                 {0x10000, "MSG_WAITFORONE"},
                                 {0x40000000, "MSG_CMSG_CLOEXEC"}};

static const xlat shutdown_modes[] = {
    {0, "SHUT_RD"}, {1, "SHUT_WR"}, {2, "SHUT_RDWR"}};

/* ------------------------------------------------------------ the table */

/* Argument kinds. "in" arguments are read as on syscall entry, "out"
 * ones as on exit (and print as their address when the call failed). A
 * buffer's length is the argument that follows it (write, writev,
 * connect) or the return value (read, readlink). */
typedef enum argk {
  K_END = 0,
  K_INT,        /* int */
  K_UINT,       /* unsigned int */
  K_LONG,       /* long (the guest's size) */
  K_ULONG,      /* unsigned long, size_t */
  K_HEX,        /* %#x */
  K_PTR,        /* NULL or an address */
  K_DIRFD,      /* AT_FDCWD or an fd */
  K_PATH,       /* path in (no -s limit, as strace) */
  K_STR,        /* string in (-s limit) */
  K_BUF_IN,     /* buffer in, length = next argument */
  K_BUF_OUT,    /* buffer out, length = return value */
  K_HEXBUF_OUT, /* the same, every byte in hex (getrandom) */
  K_PATH_OUT,   /* getcwd's path out (return value = length + NUL) */
  K_NAME_OUT,   /* a NUL-terminated string out (PR_GET_NAME) */
  K_OPEN_FLAGS, /* O_*; a following K_OPEN_MODE prints only with
                   O_CREAT or O_TMPFILE */
  K_OPEN_MODE,  /* the mode of open/openat */
  K_MODE,       /* mode_t in octal (%#03o) */
  K_FDFLAGS,    /* O_CLOEXEC... without an access mode (dup3, pipe2) */
  K_ACCESS,     /* F_OK or R_OK|W_OK|X_OK */
  K_ATFLAGS,    /* AT_* */
  K_FACCESSAT_FLAGS,
  K_STAT_OUT,   /* the arch's struct stat */
  K_STAT64_OUT, /* struct stat64 */
  K_STATX_FLAGS,
  K_STATX_MASK,
  K_STATX_OUT,
  K_IOV_IN,  /* struct iovec[next argument] in */
  K_IOV_OUT, /* out: data up to the return value */
  K_PROT,
  K_MMAP_FLAGS,
  K_MMAP_OFF,   /* off_t in hex */
  K_MMAP2_OFF,  /* offset in 4096-byte units, printed in bytes */
  K_OFF,        /* off_t (long) */
  K_OFF64,      /* a 64-bit value: one register, or a register pair on
                   32-bit arches (aligned to an even register on arm and
                   mips) */
  K_LLSEEK_OFF, /* _llseek's high and low words */
  K_LLSEEK_RES, /* _llseek's loff_t out */
  K_WHENCE,
  K_FCNTL_CMD, /* prints the command and its argument (consumes it) */
  K_IOCTL_REQ, /* request and argument */
  K_SIGNAL,
  K_SIGHOW,
  K_SIGSET_IN,
  K_SIGSET_OUT,
  K_SIGACTION_IN,
  K_SIGACTION_OUT,
  K_STACK_IN, /* stack_t (sigaltstack) */
  K_STACK_OUT,
  K_CLOCK,
  K_TIMER_FLAGS,
  K_TIMESPEC_IN,
  K_TIMESPEC_OUT,
  K_TIMESPEC64_IN,
  K_TIMESPEC64_OUT,
  K_UTIMENS_IN,   /* utimensat's times: NULL or two timespecs */
  K_LOFF_PTR,     /* NULL or a loff_t in: [N] */
  K_UTIMENS64_IN, /* the same, 64-bit (utimensat_time64) */
  K_TIMESPEC_REM, /* nanosleep's remainder: only meaningful (and decoded)
                     when a signal interrupted the sleep */
  K_TIMESPEC64_REM,
  K_TIMEVAL_OUT,
  K_ITIMER_WHICH,
  K_CLONE,        /* clone's flags and the arguments they use (consumes all) */
  K_WSTATUS_OUT,  /* wait4's int status, as strace's WIFEXITED(s)... */
  K_WAIT_OPTS,    /* WNOHANG|WUNTRACED|... */
  K_IDTYPE,       /* waitid's P_* */
  K_ITIMERVAL_IN, /* struct itimerval: two timevals */
  K_ITIMERVAL_OUT,
  K_TIME_OUT, /* time(2)'s time_t out */
  K_RLIMIT_RES,
  K_RLIMIT_IN, /* struct rlimit (longs) */
  K_RLIMIT_OUT,
  K_RLIMIT64_IN,
  K_RLIMIT64_OUT,
  K_PIPE_OUT,    /* int[2] */
  K_INT_OUT,     /* [int] */
  K_UINT_OUT,    /* [unsigned] */
  K_GIDS_OUT,    /* gid_t[return value] */
  K_GIDS16_OUT,  /* the 16-bit legacy getgroups */
  K_CPUMASK_OUT, /* a CPU set of return-value bytes */
  K_CPUMASK_IN,  /* a CPU set of (previous argument) bytes */
  K_FUTEX_OP,    /* op and the arguments it uses (consumes them) */
  K_ARCH_PRCTL,  /* code and address */
  K_PRCTL,       /* option and its arguments */
  K_GRND_FLAGS,
  K_MADVISE,
  K_MSYNC_FLAGS,
  K_MREMAP_FLAGS, /* flags, and the new address with MREMAP_FIXED */
  K_RENAME_FLAGS,
  K_UNAME_OUT,
  K_SYSINFO_OUT,
  K_DENTS_OUT, /* struct linux_dirent[] of return-value bytes */
  K_DENTS64_OUT,
  K_POLLFDS,     /* struct pollfd[next argument]; revents after the
                    return value */
  K_USER_DESC,   /* i386 set_thread_area */
  K_OLD_MMAP,    /* i386 old mmap: one pointer to the six arguments */
  K_SOCKADDR_IN, /* struct sockaddr of (next argument) bytes */
  K_FAMILY,
  K_SOCKTYPE,
  K_MSG_FLAGS,
  K_SHUTDOWN,
  K_ARGV, /* execve's argv: ["a", "b"] */
  K_ENVP  /* execve's envp: an address and its count, as strace */
} argk;

enum {
  R_DEC = 0, /* a long */
  R_HEX,     /* an address (mmap, brk) */
  R_OCT,     /* a mode (umask) */
  R_NONE,    /* does not return (exit): "?" */
  R_FCNTL,   /* depends on the command */
  R_TIME,    /* time(2): seconds and the date */
  R_POLL     /* poll: the revents after the count */
};

/* The arches an entry is limited to (0 = every arch): those whose
 * tc_arch_traits.sys says so. */
enum { A_GIDS16 = 1, A_USER_DESC, A_OLD_MMAP };

typedef struct sysdesc {
  const char *name;
  uint8_t ret;     /* R_* */
  uint8_t arches;  /* A_*, 0 = all */
  uint8_t args[7]; /* K_*, K_END-terminated */
} sysdesc;

static const sysdesc syscalls[] = {
    /* files */
    {"read", R_DEC, 0, {K_INT, K_BUF_OUT, K_ULONG}},
    {"write", R_DEC, 0, {K_INT, K_BUF_IN, K_ULONG}},
    {"pread64", R_DEC, 0, {K_INT, K_BUF_OUT, K_ULONG, K_OFF64}},
    {"pwrite64", R_DEC, 0, {K_INT, K_BUF_IN, K_ULONG, K_OFF64}},
    {"readv", R_DEC, 0, {K_INT, K_IOV_OUT, K_INT}},
    {"writev", R_DEC, 0, {K_INT, K_IOV_IN, K_INT}},
    {"open", R_DEC, 0, {K_PATH, K_OPEN_FLAGS, K_OPEN_MODE}},
    {"openat", R_DEC, 0, {K_DIRFD, K_PATH, K_OPEN_FLAGS, K_OPEN_MODE}},
    {"creat", R_DEC, 0, {K_PATH, K_MODE}},
    {"close", R_DEC, 0, {K_INT}},
    {"lseek", R_DEC, 0, {K_INT, K_OFF, K_WHENCE}},
    {"_llseek", R_DEC, 0, {K_INT, K_LLSEEK_OFF, K_LLSEEK_RES, K_WHENCE}},
    {"stat", R_DEC, 0, {K_PATH, K_STAT_OUT}},
    {"lstat", R_DEC, 0, {K_PATH, K_STAT_OUT}},
    {"fstat", R_DEC, 0, {K_INT, K_STAT_OUT}},
    /* the struct statfs itself is shown as its address */
    {"statfs", R_DEC, 0, {K_PATH, K_PTR}},
    {"fstatfs", R_DEC, 0, {K_INT, K_PTR}},
    {"statfs64", R_DEC, 0, {K_PATH, K_ULONG, K_PTR}},
    {"fstatfs64", R_DEC, 0, {K_INT, K_ULONG, K_PTR}},
    {"newfstatat", R_DEC, 0, {K_DIRFD, K_PATH, K_STAT_OUT, K_ATFLAGS}},
    {"stat64", R_DEC, 0, {K_PATH, K_STAT64_OUT}},
    {"lstat64", R_DEC, 0, {K_PATH, K_STAT64_OUT}},
    {"fstat64", R_DEC, 0, {K_INT, K_STAT64_OUT}},
    {"fstatat64", R_DEC, 0, {K_DIRFD, K_PATH, K_STAT64_OUT, K_ATFLAGS}},
    {"statx",
     R_DEC,
     0,
     {K_DIRFD, K_PATH, K_STATX_FLAGS, K_STATX_MASK, K_STATX_OUT}},
    {"access", R_DEC, 0, {K_PATH, K_ACCESS}},
    {"faccessat", R_DEC, 0, {K_DIRFD, K_PATH, K_ACCESS}},
    {"faccessat2", R_DEC, 0, {K_DIRFD, K_PATH, K_ACCESS, K_FACCESSAT_FLAGS}},
    {"readlink", R_DEC, 0, {K_PATH, K_BUF_OUT, K_ULONG}},
    {"readlinkat", R_DEC, 0, {K_DIRFD, K_PATH, K_BUF_OUT, K_ULONG}},
    {"getcwd", R_DEC, 0, {K_PATH_OUT, K_ULONG}},
    {"chdir", R_DEC, 0, {K_PATH}},
    {"fchdir", R_DEC, 0, {K_INT}},
    {"getdents", R_DEC, 0, {K_INT, K_DENTS_OUT, K_UINT}},
    {"getdents64", R_DEC, 0, {K_INT, K_DENTS64_OUT, K_UINT}},
    {"unlink", R_DEC, 0, {K_PATH}},
    {"unlinkat", R_DEC, 0, {K_DIRFD, K_PATH, K_ATFLAGS}},
    {"rmdir", R_DEC, 0, {K_PATH}},
    {"mkdir", R_DEC, 0, {K_PATH, K_MODE}},
    {"mkdirat", R_DEC, 0, {K_DIRFD, K_PATH, K_MODE}},
    {"rename", R_DEC, 0, {K_PATH, K_PATH}},
    {"renameat", R_DEC, 0, {K_DIRFD, K_PATH, K_DIRFD, K_PATH}},
    {"renameat2", R_DEC, 0, {K_DIRFD, K_PATH, K_DIRFD, K_PATH, K_RENAME_FLAGS}},
    {"ftruncate", R_DEC, 0, {K_INT, K_OFF}},
    {"ftruncate64", R_DEC, 0, {K_INT, K_OFF64}},
    {"truncate", R_DEC, 0, {K_PATH, K_OFF}},
    {"fsync", R_DEC, 0, {K_INT}},
    {"sync", R_DEC, 0, {K_END}},
    {"copy_file_range",
     R_DEC,
     0,
     {K_INT, K_LOFF_PTR, K_INT, K_LOFF_PTR, K_ULONG, K_UINT}},
    {"syncfs", R_DEC, 0, {K_INT}},
    {"chmod", R_DEC, 0, {K_PATH, K_MODE}},
    {"fchmod", R_DEC, 0, {K_INT, K_MODE}},
    {"fchmodat", R_DEC, 0, {K_DIRFD, K_PATH, K_MODE}},
    {"utimensat", R_DEC, 0, {K_DIRFD, K_PATH, K_UTIMENS_IN, K_ATFLAGS}},
    {"utimensat_time64",
     R_DEC,
     0,
     {K_DIRFD, K_PATH, K_UTIMENS64_IN, K_ATFLAGS}},
    {"fdatasync", R_DEC, 0, {K_INT}},
    {"dup", R_DEC, 0, {K_INT}},
    {"dup2", R_DEC, 0, {K_INT, K_INT}},
    {"dup3", R_DEC, 0, {K_INT, K_INT, K_FDFLAGS}},
    {"fcntl", R_FCNTL, 0, {K_INT, K_FCNTL_CMD}},
    {"fcntl64", R_FCNTL, 0, {K_INT, K_FCNTL_CMD}},
    {"ioctl", R_DEC, 0, {K_INT, K_IOCTL_REQ}},
    {"pipe", R_DEC, 0, {K_PIPE_OUT}},
    {"pipe2", R_DEC, 0, {K_PIPE_OUT, K_FDFLAGS}},
    {"poll", R_POLL, 0, {K_POLLFDS, K_UINT, K_INT}},
    {"ppoll",
     R_POLL,
     0,
     {K_POLLFDS, K_UINT, K_TIMESPEC_IN, K_SIGSET_IN, K_ULONG}},
    {"ppoll_time64",
     R_POLL,
     0,
     {K_POLLFDS, K_UINT, K_TIMESPEC64_IN, K_SIGSET_IN, K_ULONG}},
    /* processes and ids */
    {"getpid", R_DEC, 0, {K_END}},
    {"gettid", R_DEC, 0, {K_END}},
    {"getppid", R_DEC, 0, {K_END}},
    {"fork", R_DEC, 0, {K_END}},
    {"vfork", R_DEC, 0, {K_END}},
    {"getuid", R_DEC, 0, {K_END}},
    {"geteuid", R_DEC, 0, {K_END}},
    {"getgid", R_DEC, 0, {K_END}},
    {"getegid", R_DEC, 0, {K_END}},
    {"getuid32", R_DEC, 0, {K_END}},
    {"geteuid32", R_DEC, 0, {K_END}},
    {"getgid32", R_DEC, 0, {K_END}},
    {"getegid32", R_DEC, 0, {K_END}},
    {"getresuid", R_DEC, 0, {K_UINT_OUT, K_UINT_OUT, K_UINT_OUT}},
    {"getresgid", R_DEC, 0, {K_UINT_OUT, K_UINT_OUT, K_UINT_OUT}},
    {"getresuid32", R_DEC, 0, {K_UINT_OUT, K_UINT_OUT, K_UINT_OUT}},
    {"getresgid32", R_DEC, 0, {K_UINT_OUT, K_UINT_OUT, K_UINT_OUT}},
    {"getgroups", R_DEC, A_GIDS16, {K_INT, K_GIDS16_OUT}},
    {"getgroups", R_DEC, 0, {K_INT, K_GIDS_OUT}},
    {"getgroups32", R_DEC, 0, {K_INT, K_GIDS_OUT}},
    {"getpgrp", R_DEC, 0, {K_END}},
    {"getpgid", R_DEC, 0, {K_INT}},
    {"getsid", R_DEC, 0, {K_INT}},
    {"set_tid_address", R_DEC, 0, {K_PTR}},
    {"set_robust_list", R_DEC, 0, {K_PTR, K_ULONG}},
    {"rseq", R_DEC, 0, {K_PTR, K_HEX, K_INT, K_HEX}},
    {"umask", R_OCT, 0, {K_MODE}},
    {"exit", R_NONE, 0, {K_INT}},
    {"exit_group", R_NONE, 0, {K_INT}},
    {"execve", R_DEC, 0, {K_PATH, K_ARGV, K_ENVP}},
    {"execveat", R_DEC, 0, {K_DIRFD, K_PATH, K_ARGV, K_ENVP, K_ATFLAGS}},
    {"setuid", R_DEC, 0, {K_UINT}},
    {"setgid", R_DEC, 0, {K_UINT}},
    {"setuid32", R_DEC, 0, {K_UINT}},
    {"setgid32", R_DEC, 0, {K_UINT}},
    {"setfsuid", R_DEC, 0, {K_UINT}},
    {"setfsgid", R_DEC, 0, {K_UINT}},
    {"setfsuid32", R_DEC, 0, {K_UINT}},
    {"setfsgid32", R_DEC, 0, {K_UINT}},
    {"setreuid", R_DEC, 0, {K_INT, K_INT}},
    {"setregid", R_DEC, 0, {K_INT, K_INT}},
    {"setreuid32", R_DEC, 0, {K_INT, K_INT}},
    {"setregid32", R_DEC, 0, {K_INT, K_INT}},
    {"setresuid", R_DEC, 0, {K_INT, K_INT, K_INT}},
    {"setresgid", R_DEC, 0, {K_INT, K_INT, K_INT}},
    {"setresuid32", R_DEC, 0, {K_INT, K_INT, K_INT}},
    {"setresgid32", R_DEC, 0, {K_INT, K_INT, K_INT}},
    {"kill", R_DEC, 0, {K_INT, K_SIGNAL}},
    {"tkill", R_DEC, 0, {K_INT, K_SIGNAL}},
    {"tgkill", R_DEC, 0, {K_INT, K_INT, K_SIGNAL}},
    {"prctl", R_DEC, 0, {K_PRCTL}},
    {"arch_prctl", R_DEC, 0, {K_ARCH_PRCTL}},
    {"set_thread_area", R_DEC, A_USER_DESC, {K_USER_DESC}},
    {"set_thread_area", R_DEC, 0, {K_PTR}},
    {"set_tls", R_DEC, 0, {K_PTR}},
    {"get_tls", R_HEX, 0, {K_END}},
    {"cacheflush", R_DEC, 0, {K_PTR, K_PTR, K_INT}},
    {"futex", R_DEC, 0, {K_PTR, K_FUTEX_OP}},
    {"futex_time64", R_DEC, 0, {K_PTR, K_FUTEX_OP}},
    /* signals */
    {"rt_sigaction",
     R_DEC,
     0,
     {K_SIGNAL, K_SIGACTION_IN, K_SIGACTION_OUT, K_ULONG}},
    {"rt_sigprocmask",
     R_DEC,
     0,
     {K_SIGHOW, K_SIGSET_IN, K_SIGSET_OUT, K_ULONG}},
    {"sigaltstack", R_DEC, 0, {K_STACK_IN, K_STACK_OUT}},
    {"rt_sigsuspend", R_DEC, 0, {K_SIGSET_IN, K_ULONG}},
    {"rt_sigpending", R_DEC, 0, {K_SIGSET_OUT, K_ULONG}},
    {"rt_sigtimedwait", R_DEC, 0, {K_SIGSET_IN, K_PTR, K_TIMESPEC_IN, K_ULONG}},
    {"rt_sigtimedwait_time64",
     R_DEC,
     0,
     {K_SIGSET_IN, K_PTR, K_TIMESPEC64_IN, K_ULONG}},
    /* time */
    {"clock_gettime", R_DEC, 0, {K_CLOCK, K_TIMESPEC_OUT}},
    {"clock_gettime64", R_DEC, 0, {K_CLOCK, K_TIMESPEC64_OUT}},
    {"clock_getres", R_DEC, 0, {K_CLOCK, K_TIMESPEC_OUT}},
    {"clock_getres_time64", R_DEC, 0, {K_CLOCK, K_TIMESPEC64_OUT}},
    {"gettimeofday", R_DEC, 0, {K_TIMEVAL_OUT, K_PTR}},
    {"time", R_TIME, 0, {K_TIME_OUT}},
    {"nanosleep", R_DEC, 0, {K_TIMESPEC_IN, K_TIMESPEC_REM}},
    {"alarm", R_DEC, 0, {K_UINT}},
    {"clone", R_DEC, 0, {K_CLONE}},
    {"wait4", R_DEC, 0, {K_INT, K_WSTATUS_OUT, K_WAIT_OPTS, K_PTR}},
    {"waitpid", R_DEC, 0, {K_INT, K_WSTATUS_OUT, K_WAIT_OPTS}},
    {"waitid", R_DEC, 0, {K_IDTYPE, K_INT, K_PTR, K_WAIT_OPTS, K_PTR}},
    {"pause", R_DEC, 0, {K_END}},
    {"rt_sigsuspend", R_DEC, 0, {K_SIGSET_IN, K_ULONG}},
    {"setitimer", R_DEC, 0, {K_ITIMER_WHICH, K_ITIMERVAL_IN, K_ITIMERVAL_OUT}},
    {"getitimer", R_DEC, 0, {K_ITIMER_WHICH, K_ITIMERVAL_OUT}},
    {"clock_nanosleep",
     R_DEC,
     0,
     {K_CLOCK, K_TIMER_FLAGS, K_TIMESPEC_IN, K_TIMESPEC_REM}},
    {"clock_nanosleep_time64",
     R_DEC,
     0,
     {K_CLOCK, K_TIMER_FLAGS, K_TIMESPEC64_IN, K_TIMESPEC64_REM}},
    /* system */
    {"getrandom", R_DEC, 0, {K_HEXBUF_OUT, K_ULONG, K_GRND_FLAGS}},
    {"prlimit64",
     R_DEC,
     0,
     {K_INT, K_RLIMIT_RES, K_RLIMIT64_IN, K_RLIMIT64_OUT}},
    {"getrlimit", R_DEC, 0, {K_RLIMIT_RES, K_RLIMIT_OUT}},
    {"ugetrlimit", R_DEC, 0, {K_RLIMIT_RES, K_RLIMIT_OUT}},
    {"setrlimit", R_DEC, 0, {K_RLIMIT_RES, K_RLIMIT_IN}},
    {"uname", R_DEC, 0, {K_UNAME_OUT}},
    {"sysinfo", R_DEC, 0, {K_SYSINFO_OUT}},
    {"sched_getaffinity", R_DEC, 0, {K_INT, K_UINT, K_CPUMASK_OUT}},
    {"sched_setaffinity", R_DEC, 0, {K_INT, K_UINT, K_CPUMASK_IN}},
    {"sched_yield", R_DEC, 0, {K_END}},
    {"getcpu", R_DEC, 0, {K_UINT_OUT, K_UINT_OUT, K_PTR}},
    /* memory */
    {"brk", R_HEX, 0, {K_PTR}},
    {"mmap", R_HEX, A_OLD_MMAP, {K_OLD_MMAP}},
    {"mmap",
     R_HEX,
     0,
     {K_PTR, K_ULONG, K_PROT, K_MMAP_FLAGS, K_INT, K_MMAP_OFF}},
    {"mmap2",
     R_HEX,
     0,
     {K_PTR, K_ULONG, K_PROT, K_MMAP_FLAGS, K_INT, K_MMAP2_OFF}},
    {"munmap", R_DEC, 0, {K_PTR, K_ULONG}},
    {"mprotect", R_DEC, 0, {K_PTR, K_ULONG, K_PROT}},
    {"mremap", R_HEX, 0, {K_PTR, K_ULONG, K_ULONG, K_MREMAP_FLAGS}},
    {"madvise", R_DEC, 0, {K_PTR, K_ULONG, K_MADVISE}},
    {"msync", R_DEC, 0, {K_PTR, K_ULONG, K_MSYNC_FLAGS}},
    {"mlock", R_DEC, 0, {K_PTR, K_ULONG}},
    {"munlock", R_DEC, 0, {K_PTR, K_ULONG}},
    /* sockets (tracecorn creates none; their arguments still decode) */
    {"socket", R_DEC, 0, {K_FAMILY, K_SOCKTYPE, K_INT}},
    {"connect", R_DEC, 0, {K_INT, K_SOCKADDR_IN, K_UINT}},
    {"bind", R_DEC, 0, {K_INT, K_SOCKADDR_IN, K_UINT}},
    {"listen", R_DEC, 0, {K_INT, K_INT}},
    {"getsockname", R_DEC, 0, {K_INT, K_PTR, K_PTR}},
    {"getpeername", R_DEC, 0, {K_INT, K_PTR, K_PTR}},
    {"accept", R_DEC, 0, {K_INT, K_PTR, K_PTR}},
    {"shutdown", R_DEC, 0, {K_INT, K_SHUTDOWN}},
    {"sendto",
     R_DEC,
     0,
     {K_INT, K_BUF_IN, K_ULONG, K_MSG_FLAGS, K_SOCKADDR_IN, K_UINT}},
};

static bool desc_for(const tc_arch *a, unsigned arches) {
  switch (arches) {
  case A_GIDS16:
    return a->traits.sys.gids16;
  case A_USER_DESC:
    return a->traits.sys.user_desc;
  case A_OLD_MMAP:
    return a->traits.sys.old_mmap;
  default:
    return true;
  }
}

static const sysdesc *find_desc(const tc_arch *a, const char *name) {
  if (!name)
    return NULL;
  for (size_t i = 0; i < N(syscalls); i++)
    if (strcmp(syscalls[i].name, name) == 0 && desc_for(a, syscalls[i].arches))
      return &syscalls[i];
  return NULL;
}

/* ------------------------------------------------------------ formatting */

typedef struct call {
  tc_sysdecode *d;
  sbuf *b;
  const tc_arch *a;
  const tc_syscall_event *s;
  const sysdesc *desc;
  int nargs;
  uint64_t val[7]; /* each argument's (first) register value */
  int reg[7];      /* index of its first register */
  bool failed;     /* the call returned -errno */
  int64_t ret;     /* the return value at the guest's width */
  char suffix[64]; /* printed after the return value */
} call;

static uint64_t reg_at(const call *c, int r) {
  return r >= 0 && r < 6 ? c->s->args[r] : 0;
}

static int64_t sext(const call *c, uint64_t v) {
  return c->a->ptr_size == 4 ? (int64_t)(int32_t)(uint32_t)v : (int64_t)v;
}

/* Registers an argument kind takes. 64-bit values take a register pair
 * on 32-bit arches; arm EABI and mips o32 start a pair on an even
 * register. */
static int regs_of(const call *c, argk k, int *r) {
  switch (k) {
  case K_OFF64:
    if (c->a->ptr_size == 8)
      return 1;
    if (c->a->traits.sys.pair64_even && (*r & 1))
      (*r)++;
    return 2;
  case K_LLSEEK_OFF:
  case K_FCNTL_CMD:
  case K_IOCTL_REQ:
  case K_ARCH_PRCTL:
  case K_MREMAP_FLAGS:
    return 2;
  case K_FUTEX_OP:
  case K_PRCTL:
  case K_CLONE:
    return 5;
  default:
    return 1;
  }
}

static uint64_t off64_of(const call *c, int r) {
  if (c->a->ptr_size == 8)
    return reg_at(c, r);
  uint64_t first = reg_at(c, r) & 0xffffffffu,
           second = reg_at(c, r + 1) & 0xffffffffu;
  return c->a->big_endian ? first << 32 | second : second << 32 | first;
}

static uint64_t ulong_at(const call *c, const uint8_t *p) {
  return get_guest(c->a, p, c->a->ptr_size);
}

static int64_t long_at(const call *c, const uint8_t *p) {
  return get_int(c->a, p, c->a->ptr_size);
}

/* An output argument: its address if the call failed (or NULL). Returns
 * true when the caller should print the decoded contents. */
static bool out_ok(call *c, uint64_t addr) {
  if (!addr) {
    sb_puts(c->b, "NULL");
    return false;
  }
  if (c->failed) {
    put_addr(c->b, addr);
    return false;
  }
  return true;
}

/* Reads a struct for an argument: in = as on entry. Prints the address
 * and returns false when the memory is unknown. */
static bool read_struct(call *c, uint64_t addr, void *buf, size_t n, bool in) {
  if (in ? mem_in(c->d, addr, buf, n) : mem_out(c->d, addr, buf, n))
    return true;
  put_addr(c->b, addr);
  return false;
}

/* strace's print_symbolic_mode_t. */
static void put_mode_t(sbuf *b, uint64_t mode) {
  static const xlat types[] = {{0140000, "S_IFSOCK"}, {0120000, "S_IFLNK"},
                               {0100000, "S_IFREG"},  {060000, "S_IFBLK"},
                               {040000, "S_IFDIR"},   {020000, "S_IFCHR"},
                               {010000, "S_IFIFO"}};
  const char *t =
      (mode & 0170000) ? xlat_name(types, N(types), mode & 0170000) : "";
  if (!t) {
    sb_printf(b, "%#03" PRIo64, mode);
    return;
  }
  sb_printf(b, "%s%s%s%s%s%#03" PRIo64, t, t[0] ? "|" : "",
            (mode & 04000) ? "S_ISUID|" : "", (mode & 02000) ? "S_ISGID|" : "",
            (mode & 01000) ? "S_ISVTX|" : "", mode & 0777);
}

static void put_dev(sbuf *b, uint64_t dev) {
  sb_printf(b, "makedev(%#x, %#x)", (unsigned)major(dev), (unsigned)minor(dev));
}

static void put_stat(call *c, uint64_t addr, tc_stat_kind kind) {
  if (!out_ok(c, addr))
    return;
  int size = tc_abi_stat_size(c->a, kind);
  uint8_t buf[TC_ABI_STAT_MAX];
  struct stat st;
  if (size <= 0 || size > (int)sizeof buf) {
    put_addr(c->b, addr);
    return;
  }
  if (!read_struct(c, addr, buf, (size_t)size, false))
    return;
  tc_abi_decode_stat(c->a, kind, buf, &st);
  sb_puts(c->b, "{st_mode=");
  put_mode_t(c->b, st.st_mode);
  if (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode)) {
    sb_puts(c->b, ", st_rdev=");
    put_dev(c->b, st.st_rdev);
  } else {
    sb_printf(c->b, ", st_size=%" PRIu64, (uint64_t)st.st_size);
  }
  sb_puts(c->b, ", ...}");
}

static void put_statx(call *c, uint64_t addr) {
  if (!out_ok(c, addr))
    return;
  uint8_t x[256];
  if (!read_struct(c, addr, x, sizeof x, false))
    return;
  sb_puts(c->b, "{stx_mask=");
  put_flags(c->b, statx_masks, N(statx_masks), get_guest(c->a, x, 4),
            "STATX_???");
  sb_puts(c->b, ", stx_attributes=");
  put_flags(c->b, statx_attrs, N(statx_attrs), get_guest(c->a, x + 8, 8),
            "STATX_ATTR_???");
  sb_puts(c->b, ", stx_mode=");
  put_mode_t(c->b, get_guest(c->a, x + 28, 2));
  sb_printf(c->b, ", stx_size=%" PRIu64 ", ...}", get_guest(c->a, x + 40, 8));
}

/* struct iovec[count]. out: the data up to the return value, as strace
 * shows it at exit. */
static void put_iov(call *c, uint64_t addr, uint64_t count, bool in) {
  unsigned l = c->a->ptr_size;
  if (!in && !out_ok(c, addr))
    return;
  if (!addr) {
    sb_puts(c->b, "NULL");
    return;
  }
  if (count > 1024) { /* UIO_MAXIOV: the kernel refused it */
    put_addr(c->b, addr);
    return;
  }
  uint64_t left = in ? UINT64_MAX : (uint64_t)c->ret;
  sb_putc(c->b, '[');
  for (uint64_t i = 0; i < count; i++) {
    uint8_t e[16];
    if (i)
      sb_puts(c->b, ", ");
    if (i >= c->d->strsize) {
      sb_puts(c->b, "...");
      break;
    }
    if (!(in ? mem_in(c->d, addr + i * 2 * l, e, 2 * l)
             : mem_out(c->d, addr + i * 2 * l, e, 2 * l))) {
      if (i == 0) { /* nothing readable: the address alone */
        c->b->n--;
        c->b->p[c->b->n] = 0;
        put_addr(c->b, addr);
        return;
      }
      sb_puts(c->b, "...");
      break;
    }
    uint64_t base = ulong_at(c, e), len = ulong_at(c, e + l);
    uint64_t show = len < left ? len : left;
    if (!in)
      left -= show;
    sb_puts(c->b, "{iov_base=");
    put_buf(c->d, base, show, in, false);
    sb_printf(c->b, ", iov_len=%" PRIu64 "}", len);
  }
  sb_putc(c->b, ']');
}

/* A signal set of the guest's sigset size: [USR1 TERM], or ~[...] of the
 * signals not in it when more than half are (as strace). */
static void put_sigset(call *c, uint64_t addr, bool in) {
  if (!in && !out_ok(c, addr))
    return;
  if (!addr) {
    sb_puts(c->b, "NULL");
    return;
  }
  unsigned size = tc_xlat_sigset_size(c->a), w = c->a->ptr_size;
  uint8_t buf[16];
  if (!read_struct(c, addr, buf, size, in))
    return;
  int nsig = (int)size * 8, count = 0;
  bool set[129] = {false};
  for (int sig = 1; sig <= nsig; sig++) {
    unsigned bit = (unsigned)sig - 1;
    uint64_t word = get_guest(c->a, buf + (bit / (8 * w)) * w, w);
    set[sig] = (word >> (bit % (8 * w))) & 1;
    count += set[sig];
  }
  bool invert = count * 2 > nsig;
  sb_puts(c->b, invert ? "~[" : "[");
  int printed = 0;
  for (int sig = 1; sig <= nsig; sig++) {
    if (set[sig] == invert)
      continue;
    if (printed++)
      sb_putc(c->b, ' ');
    const char *n = tc_sysdecode_signame(c->a, sig);
    if (n)
      sb_puts(c->b, n + 3);
    else
      sb_printf(c->b, "%d", sig);
  }
  sb_putc(c->b, ']');
}

static void put_sigaction(call *c, uint64_t addr, bool in) {
  if (!in && !out_ok(c, addr))
    return;
  if (!addr) {
    sb_puts(c->b, "NULL");
    return;
  }
  unsigned l = c->a->ptr_size, ss = tc_xlat_sigset_size(c->a);
  bool mips = ss == 16;
  /* the emulator's layout: {handler, flags, restorer, mask}, mips
   * {unsigned flags, handler, mask} */
  unsigned handler = mips ? l : 0, flags = mips ? 0 : l,
           flags_size = mips ? 4 : l, restorer = 2 * l,
           mask = mips ? 2 * l : 3 * l, size = mask + ss;
  uint8_t buf[48];
  if (!read_struct(c, addr, buf, size, in))
    return;
  uint64_t h = ulong_at(c, buf + handler),
           f = get_guest(c->a, buf + flags, flags_size);
  sb_puts(c->b, "{sa_handler=");
  if (h == 0)
    sb_puts(c->b, "SIG_DFL");
  else if (h == 1)
    sb_puts(c->b, "SIG_IGN");
  else
    put_addr(c->b, h);
  sb_puts(c->b, ", sa_mask=");
  /* the mask lies inside the struct: decode it from the copy */
  {
    int nsig = (int)ss * 8, count = 0;
    bool set[129] = {false};
    for (int sig = 1; sig <= nsig; sig++) {
      unsigned bit = (unsigned)sig - 1;
      uint64_t word = get_guest(c->a, buf + mask + (bit / (8 * l)) * l, l);
      set[sig] = (word >> (bit % (8 * l))) & 1;
      count += set[sig];
    }
    bool invert = count * 2 > nsig;
    sb_puts(c->b, invert ? "~[" : "[");
    int printed = 0;
    for (int sig = 1; sig <= nsig; sig++) {
      if (set[sig] == invert)
        continue;
      if (printed++)
        sb_putc(c->b, ' ');
      const char *n = tc_sysdecode_signame(c->a, sig);
      if (n)
        sb_puts(c->b, n + 3);
      else
        sb_printf(c->b, "%d", sig);
    }
    sb_putc(c->b, ']');
  }
  sb_puts(c->b, ", sa_flags=");
  if (mips)
    put_flags(c->b, sigact_mips_flags, N(sigact_mips_flags), f, "SA_???");
  else
    put_flags(c->b, sigact_flags, N(sigact_flags), f, "SA_???");
  if (!mips && (f & 0x04000000)) {
    sb_puts(c->b, ", sa_restorer=");
    put_addr(c->b, ulong_at(c, buf + restorer));
  }
  sb_putc(c->b, '}');
}

static void put_stack(call *c, uint64_t addr, bool in) {
  if (!in && !out_ok(c, addr))
    return;
  if (!addr) {
    sb_puts(c->b, "NULL");
    return;
  }
  unsigned l = c->a->ptr_size;
  /* stack_t: {ss_sp, int ss_flags, ss_size}; mips {ss_sp, ss_size, int
   * ss_flags} */
  unsigned flags = is_mips(c->a) ? 2 * l : l, size = is_mips(c->a) ? l : 2 * l;
  uint8_t buf[24];
  if (!read_struct(c, addr, buf, 3 * l, in))
    return;
  sb_puts(c->b, "{ss_sp=");
  put_addr(c->b, ulong_at(c, buf));
  sb_puts(c->b, ", ss_flags=");
  put_flags(c->b, sigaltstack_flags, N(sigaltstack_flags),
            get_guest(c->a, buf + flags, 4), "SS_???");
  sb_printf(c->b, ", ss_size=%" PRIu64 "}", ulong_at(c, buf + size));
}

/* timespec / timeval: two longs, or two 64-bit values (time64). */
static void put_timespec(call *c, uint64_t addr, bool in, unsigned w,
                         const char *frac) {
  if (!in && !out_ok(c, addr))
    return;
  if (!addr) {
    sb_puts(c->b, "NULL");
    return;
  }
  uint8_t buf[16];
  if (!read_struct(c, addr, buf, 2 * w, in))
    return;
  sb_printf(c->b, "{tv_sec=%" PRId64 ", %s=%" PRId64 "}", get_int(c->a, buf, w),
            frac, get_int(c->a, buf + w, w));
}

/* utimensat's times as strace prints them: UTIME_NOW / UTIME_OMIT by
 * name, else the timespec and its date in UTC (strace uses the local time
 * zone: the same under TZ=UTC). */
static void put_utimens(call *c, uint64_t addr, unsigned w) {
  if (!addr) {
    sb_puts(c->b, "NULL");
    return;
  }
  uint8_t buf[32];
  if (!read_struct(c, addr, buf, 4 * w, true))
    return;
  sb_putc(c->b, '[');
  for (int k = 0; k < 2; k++) {
    int64_t sec = get_int(c->a, buf + 2 * k * w, w);
    int64_t nsec = get_int(c->a, buf + (2 * k + 1) * w, w);
    if (k)
      sb_puts(c->b, ", ");
    if (nsec == (1 << 30) - 1) {
      sb_puts(c->b, "UTIME_NOW");
      continue;
    }
    if (nsec == (1 << 30) - 2) {
      sb_puts(c->b, "UTIME_OMIT");
      continue;
    }
    sb_printf(c->b, "{tv_sec=%" PRId64 ", tv_nsec=%" PRId64 "}", sec, nsec);
    time_t t = (time_t)sec;
    struct tm tm;
    char date[64];
    if (gmtime_r(&t, &tm) &&
        strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%S", &tm)) {
      if (nsec)
        sb_printf(c->b, " /* %s.%09" PRId64 "+0000 */", date, nsec);
      else
        sb_printf(c->b, " /* %s+0000 */", date);
    }
  }
  sb_putc(c->b, ']');
}

static const xlat clone_flags[] = {{0x100, "CLONE_VM"},
                                   {0x200, "CLONE_FS"},
                                   {0x400, "CLONE_FILES"},
                                   {0x800, "CLONE_SIGHAND"},
                                   {0x1000, "CLONE_PIDFD"},
                                   {0x2000, "CLONE_PTRACE"},
                                   {0x4000, "CLONE_VFORK"},
                                   {0x8000, "CLONE_PARENT"},
                                   {0x10000, "CLONE_THREAD"},
                                   {0x20000, "CLONE_NEWNS"},
                                   {0x40000, "CLONE_SYSVSEM"},
                                   {0x80000, "CLONE_SETTLS"},
                                   {0x100000, "CLONE_PARENT_SETTID"},
                                   {0x200000, "CLONE_CHILD_CLEARTID"},
                                   {0x400000, "CLONE_DETACHED"},
                                   {0x800000, "CLONE_UNTRACED"},
                                   {0x1000000, "CLONE_CHILD_SETTID"},
                                   {0x2000000, "CLONE_NEWCGROUP"},
                                   {0x4000000, "CLONE_NEWUTS"},
                                   {0x8000000, "CLONE_NEWIPC"},
                                   {0x10000000, "CLONE_NEWUSER"},
                                   {0x20000000, "CLONE_NEWPID"},
                                   {0x40000000, "CLONE_NEWNET"},
                                   {0x80000000, "CLONE_IO"}};

/* clone(flags, stack, parent_tid, ...): x86-64 passes child_tid then tls;
 * i386, arm, arm64 and mips tls then child_tid. strace names only the
 * arguments the flags use. */
static void put_clone(call *c, int r) {
  sbuf *b = c->b;
  uint64_t flags = reg_at(c, r), stack = reg_at(c, r + 1),
           ptid = reg_at(c, r + 2);
  bool x64 = c->a->traits.sys.clone_ctid_first;
  uint64_t ctid = reg_at(c, r + (x64 ? 3 : 4)),
           tls = reg_at(c, r + (x64 ? 4 : 3));
  sb_puts(b, "child_stack=");
  put_addr(b, stack);
  sb_puts(b, ", flags=");
  uint64_t named =
      flags & ~0xffull & (c->a->ptr_size == 4 ? 0xffffffffull : ~0ull);
  if (named)
    put_flags(b, clone_flags, N(clone_flags), named, "CLONE_???");
  if (flags & 0xff) {
    if (named)
      sb_putc(b, '|');
    put_signal(b, c->a, (int32_t)(flags & 0xff));
  } else if (!named) {
    sb_putc(b, '0');
  }
  if (flags & 0x100000) {
    sb_puts(b, ", parent_tid=");
    put_addr(b, ptid);
  }
  if (flags & 0x80000) {
    sb_puts(b, ", tls=");
    put_addr(b, tls);
  }
  if (flags & (0x200000 | 0x1000000)) {
    sb_puts(b, ", child_tidptr=");
    put_addr(b, ctid);
  }
}

static const xlat wait_opts[] = {
    {1, "WNOHANG"},         {2, "WSTOPPED"},
    {4, "WEXITED"},         {8, "WCONTINUED"},
    {0x1000000, "WNOWAIT"}, {0x20000000, "__WNOTHREAD"},
    {0x40000000, "__WALL"}, {0x80000000u, "__WCLONE"}};

static const xlat idtypes[] = {
    {0, "P_ALL"}, {1, "P_PID"}, {2, "P_PGID"}, {3, "P_PIDFD"}};

/* wait4's status out, as strace prints it: [{WIFEXITED(s) && ...}] */
static void put_wstatus(call *c, uint64_t addr) {
  if (!out_ok(c, addr))
    return;
  if (c->ret <= 0) { /* nothing was written (WNOHANG and no child) */
    put_addr(c->b, addr);
    return;
  }
  uint8_t buf[4];
  if (!read_struct(c, addr, buf, 4, false))
    return;
  uint32_t st = (uint32_t)get_guest(c->a, buf, 4);
  sbuf *b = c->b;
  if ((st & 0x7f) == 0) {
    sb_printf(b, "[{WIFEXITED(s) && WEXITSTATUS(s) == %u}]", (st >> 8) & 0xff);
  } else if (st == 0xffff) {
    sb_puts(b, "[{WIFCONTINUED(s)}]");
  } else if ((st & 0xff) == 0x7f) {
    sb_puts(b, "[{WIFSTOPPED(s) && WSTOPSIG(s) == ");
    put_signal(b, c->a, (int32_t)((st >> 8) & 0xff));
    sb_puts(b, "}]");
  } else {
    sb_puts(b, "[{WIFSIGNALED(s) && WTERMSIG(s) == ");
    put_signal(b, c->a, (int32_t)(st & 0x7f));
    sb_puts(b, (st & 0x80) ? " && WCOREDUMP(s)}]" : "}]");
  }
}

static const xlat itimers[] = {
    {0, "ITIMER_REAL"}, {1, "ITIMER_VIRTUAL"}, {2, "ITIMER_PROF"}};

/* struct itimerval: {it_interval, it_value}, each a timeval of longs */
static void put_itimerval(call *c, uint64_t addr, bool in) {
  if (!in && !out_ok(c, addr))
    return;
  if (!addr) {
    sb_puts(c->b, "NULL");
    return;
  }
  unsigned w = c->a->ptr_size;
  uint8_t buf[32];
  if (!read_struct(c, addr, buf, 4 * w, in))
    return;
  sb_printf(c->b,
            "{it_interval={tv_sec=%" PRId64 ", tv_usec=%" PRId64
            "}, it_value={tv_sec=%" PRId64 ", tv_usec=%" PRId64 "}}",
            get_int(c->a, buf, w), get_int(c->a, buf + w, w),
            get_int(c->a, buf + 2 * w, w), get_int(c->a, buf + 3 * w, w));
}

static void put_rlim(sbuf *b, uint64_t v, bool is64, unsigned width,
                     bool mips) {
  /* mips o32 has its own RLIM_INFINITY (asm/resource.h) */
  uint64_t inf = width == 8 ? UINT64_MAX : mips ? 0x7fffffffu : 0xffffffffu;
  if (v == inf)
    sb_puts(b, is64 ? "RLIM64_INFINITY" : "RLIM_INFINITY");
  else if (v > 1024 && v % 1024 == 0)
    sb_printf(b, "%" PRIu64 "*1024", v / 1024);
  else
    sb_printf(b, "%" PRIu64, v);
}

static void put_rlimit(call *c, uint64_t addr, bool in, bool is64) {
  if (!in && !out_ok(c, addr))
    return;
  if (!addr) {
    sb_puts(c->b, "NULL");
    return;
  }
  /* 64-bit arches' struct rlimit is strace's rlimit64 */
  unsigned w = is64 ? 8 : c->a->ptr_size;
  uint8_t buf[16];
  if (!read_struct(c, addr, buf, 2 * w, in))
    return;
  sb_puts(c->b, "{rlim_cur=");
  put_rlim(c->b, get_guest(c->a, buf, w), w == 8, w, is_mips(c->a));
  sb_puts(c->b, ", rlim_max=");
  put_rlim(c->b, get_guest(c->a, buf + w, w), w == 8, w, is_mips(c->a));
  sb_putc(c->b, '}');
}

/* int[n] out: [3, 4]. */
static void put_ints_out(call *c, uint64_t addr, unsigned n, unsigned size,
                         bool is_signed) {
  if (!out_ok(c, addr))
    return;
  uint8_t buf[64];
  if (n * size > sizeof buf || !read_struct(c, addr, buf, n * size, false))
    return;
  sb_putc(c->b, '[');
  for (unsigned i = 0; i < n; i++) {
    if (i)
      sb_puts(c->b, ", ");
    if (is_signed)
      sb_printf(c->b, "%" PRId64, get_int(c->a, buf + i * size, size));
    else
      sb_printf(c->b, "%" PRIu64, get_guest(c->a, buf + i * size, size));
  }
  sb_putc(c->b, ']');
}

static void put_gids(call *c, uint64_t addr, uint64_t size, unsigned w) {
  if (!out_ok(c, addr))
    return;
  if (size == 0) {
    put_addr(c->b, addr);
    return;
  }
  uint64_t n = (uint64_t)c->ret;
  sb_putc(c->b, '[');
  for (uint64_t i = 0; i < n; i++) {
    uint8_t g[4];
    if (i)
      sb_puts(c->b, ", ");
    if (i >= c->d->strsize || !mem_out(c->d, addr + i * w, g, w)) {
      sb_puts(c->b, "...");
      break;
    }
    sb_printf(c->b, "%" PRIu64, get_guest(c->a, g, w));
  }
  sb_putc(c->b, ']');
}

static void put_cpumask(call *c, uint64_t addr, uint64_t bytes, bool in) {
  if (!in && !out_ok(c, addr))
    return;
  if (!addr) {
    sb_puts(c->b, "NULL");
    return;
  }
  if (bytes > 1024)
    bytes = 1024;
  uint8_t buf[1024];
  if (!read_struct(c, addr, buf, (size_t)bytes, in))
    return;
  unsigned w = c->a->ptr_size;
  sb_putc(c->b, '[');
  int printed = 0;
  for (uint64_t bit = 0; bit < bytes * 8; bit++) {
    uint64_t word = get_guest(c->a, buf + (bit / (8 * w)) * w, w);
    if ((bit / (8 * w)) * w + w > bytes)
      break;
    if ((word >> (bit % (8 * w))) & 1)
      sb_printf(c->b, printed++ ? " %" PRIu64 : "%" PRIu64, bit);
  }
  sb_putc(c->b, ']');
}

static void put_uname(call *c, uint64_t addr) {
  if (!out_ok(c, addr))
    return;
  uint8_t u[130];
  if (!read_struct(c, addr, u, sizeof u, false))
    return;
  sb_puts(c->b, "{sysname=");
  put_quoted(c->b, u, strnlen((const char *)u, 65), false);
  sb_puts(c->b, ", nodename=");
  put_quoted(c->b, u + 65, strnlen((const char *)u + 65, 65), false);
  sb_puts(c->b, ", ...}");
}

static void put_sysinfo(call *c, uint64_t addr) {
  if (!out_ok(c, addr))
    return;
  unsigned l = c->a->ptr_size;
  uint8_t s[14 * 8];
  if (!read_struct(c, addr, s, 14 * l, false))
    return;
  sb_printf(c->b,
            "{uptime=%" PRId64 ", loads=[%" PRIu64 ", %" PRIu64 ", %" PRIu64
            "]",
            long_at(c, s), ulong_at(c, s + l), ulong_at(c, s + 2 * l),
            ulong_at(c, s + 3 * l));
  static const char *const names[] = {"totalram",  "freeram",   "sharedram",
                                      "bufferram", "totalswap", "freeswap"};
  for (unsigned i = 0; i < 6; i++)
    sb_printf(c->b, ", %s=%" PRIu64, names[i], ulong_at(c, s + (4 + i) * l));
  sb_printf(c->b,
            ", procs=%" PRIu64 ", totalhigh=%" PRIu64 ", freehigh=%" PRIu64
            ", mem_unit=%" PRIu64 "}",
            get_guest(c->a, s + 10 * l, 2), ulong_at(c, s + 11 * l),
            ulong_at(c, s + 12 * l), get_guest(c->a, s + 13 * l, 4));
}

/* getdents: the buffer as an address with the number of entries. */
static void put_dents(call *c, uint64_t addr, bool is64) {
  if (!out_ok(c, addr))
    return;
  put_addr(c->b, addr);
  unsigned reclen_off = is64 ? 16 : 2 * c->a->ptr_size;
  uint64_t off = 0, n = 0, len = (uint64_t)c->ret;
  if (len > (1u << 24)) /* more than any getdents returns: no count */
    return;
  while (off < len) {
    uint8_t r[2];
    if (!mem_out(c->d, addr + off + reclen_off, r, 2))
      return; /* unknown bytes: no count */
    uint64_t reclen = get_guest(c->a, r, 2);
    if (reclen == 0)
      break;
    n++;
    off += reclen;
  }
  sb_printf(c->b, " /* %" PRIu64 " entries */", n);
}

static void put_sockaddr(call *c, uint64_t addr, uint64_t len) {
  sbuf *b = c->b;
  if (!addr) {
    sb_puts(b, "NULL");
    return;
  }
  uint8_t sa[128];
  size_t n = len > sizeof sa ? sizeof sa : (size_t)len;
  if (n < 2) {
    put_addr(b, addr);
    return;
  }
  if (!read_struct(c, addr, sa, n, true))
    return;
  unsigned family = (unsigned)get_guest(c->a, sa, 2);
  sb_puts(b, "{sa_family=");
  put_xval(b, address_families, N(address_families), family, "AF_???", true);
  char text[64];
  if (family == 1) { /* AF_UNIX */
    if (n > 2) {
      bool abstract = sa[2] == 0;
      size_t plen = abstract ? n - 3 : strnlen((const char *)sa + 2, n - 2);
      sb_puts(b, abstract ? ", sun_path=@" : ", sun_path=");
      put_quoted(b, sa + (abstract ? 3 : 2), plen, false);
    }
  } else if (family == 2 && n >= 8) { /* AF_INET */
    inet_ntop(AF_INET, sa + 4, text, sizeof text);
    sb_printf(b, ", sin_port=htons(%u), sin_addr=inet_addr(\"%s\")",
              (unsigned)sa[2] << 8 | sa[3], text);
  } else if (family == 10 && n >= 24) { /* AF_INET6 */
    inet_ntop(AF_INET6, sa + 8, text, sizeof text);
    sb_printf(b,
              ", sin6_port=htons(%u), sin6_flowinfo=htonl(%u), "
              "inet_pton(AF_INET6, \"%s\", &sin6_addr)",
              (unsigned)sa[2] << 8 | sa[3],
              (unsigned)sa[4] << 24 | (unsigned)sa[5] << 16 |
                  (unsigned)sa[6] << 8 | sa[7],
              text);
    if (n >= 28)
      sb_printf(b, ", sin6_scope_id=%" PRIu64, get_guest(c->a, sa + 24, 4));
  } else if (n > 2) {
    sb_puts(b, ", sa_data=");
    put_quoted(b, sa + 2, n - 2, false);
  }
  sb_putc(b, '}');
}

static void put_pollfds(call *c, uint64_t addr, uint64_t nfds, bool out) {
  sbuf *b = c->b;
  if (!addr) {
    sb_puts(b, "NULL");
    return;
  }
  sb_putc(b, '[');
  int printed = 0;
  if (nfds > 65536) /* the kernel refuses more than RLIMIT_NOFILE */
    nfds = 65536;
  for (uint64_t i = 0; i < nfds; i++) {
    uint8_t p[8];
    if (printed >= (int)c->d->strsize) {
      sb_puts(b, ", ...");
      break;
    }
    if (!(out ? mem_out(c->d, addr + 8 * i, p, 8)
              : mem_in(c->d, addr + 8 * i, p, 8))) {
      if (printed)
        sb_puts(b, ", ...");
      break;
    }
    uint64_t ev = get_guest(c->a, p + (out ? 6 : 4), 2);
    if (out && ev == 0)
      continue;
    sb_printf(b, "%s{fd=%" PRId64 ", %s=", printed++ ? ", " : "",
              get_int(c->a, p, 4), out ? "revents" : "events");
    put_flags(b, poll_events, N(poll_events), ev, "POLL???");
    sb_putc(b, '}');
  }
  sb_putc(b, ']');
}

/* i386 set_thread_area's struct user_desc: entry_number in -> out. */
static void put_user_desc(call *c, uint64_t addr) {
  uint8_t u[16], o[16];
  if (!addr) {
    sb_puts(c->b, "NULL");
    return;
  }
  if (!read_struct(c, addr, u, sizeof u, true))
    return;
  int32_t entry = (int32_t)get_guest(c->a, u, 4);
  sb_printf(c->b, "{entry_number=%d", entry);
  /* the entry the kernel chose follows the return value, as strace 6
   * prints it: "= 0 (entry_number=12)" */
  if (!c->failed && mem_out(c->d, addr, o, 4) &&
      (int32_t)get_guest(c->a, o, 4) != entry)
    snprintf(c->suffix, sizeof c->suffix, " (entry_number=%d)",
             (int32_t)get_guest(c->a, o, 4));
  uint32_t bits = (uint32_t)get_guest(c->a, u + 12, 4);
  sb_printf(c->b,
            ", base_addr=%#08x, limit=%#08x, seg_32bit=%u, contents=%u, "
            "read_exec_only=%u, limit_in_pages=%u, seg_not_present=%u, "
            "useable=%u}",
            (unsigned)get_guest(c->a, u + 4, 4),
            (unsigned)get_guest(c->a, u + 8, 4), bits & 1, (bits >> 1) & 3,
            (bits >> 3) & 1, (bits >> 4) & 1, (bits >> 5) & 1, (bits >> 6) & 1);
}

/* struct termios, abbreviated as strace shows it: what TCGETS returned
 * (in false) or what TCSETS* passed (in true). */
static void put_termios(call *c, uint64_t addr, bool in) {
  static const xlat bauds[] = {
      {0, "B0"},           {1, "B50"},         {2, "B75"},
      {3, "B110"},         {4, "B134"},        {5, "B150"},
      {6, "B200"},         {7, "B300"},        {8, "B600"},
      {9, "B1200"},        {10, "B1800"},      {11, "B2400"},
      {12, "B4800"},       {13, "B9600"},      {14, "B19200"},
      {15, "B38400"},      {010001, "B57600"}, {010002, "B115200"},
      {010003, "B230400"}, {010004, "B460800"}};
  if (!in && !out_ok(c, addr))
    return;
  uint8_t t[16];
  if (!read_struct(c, addr, t, sizeof t, in)) {
    if (in)
      put_addr(c->b, addr);
    return;
  }
  uint64_t oflag = get_guest(c->a, t + 4, 4), cflag = get_guest(c->a, t + 8, 4),
           lflag = get_guest(c->a, t + 12, 4);
  sb_putc(c->b, '{');
  put_xval(c->b, bauds, N(bauds), cflag & 010017, "B???", false);
  sb_printf(c->b, " %sopost %sisig %sicanon %secho ...}",
            (oflag & 1) ? "" : "-", (lflag & 1) ? "" : "-",
            (lflag & 2) ? "" : "-", (lflag & 8) ? "" : "-");
}

static void put_ioctl(call *c, int r) {
  sbuf *b = c->b;
  uint32_t req = (uint32_t)reg_at(c, r);
  uint64_t arg = reg_at(c, r + 1);
  const char *name = is_mips(c->a)
                         ? xlat_name(ioctl_mips_reqs, N(ioctl_mips_reqs), req)
                         : xlat_name(ioctl_reqs, N(ioctl_reqs), req);
  if (name)
    sb_puts(b, name);
  else
    sb_printf(b, "%#x", req);
  if (name && (!strcmp(name, "FIOCLEX") || !strcmp(name, "FIONCLEX")))
    return;
  sb_puts(b, ", ");
  if (name && !strcmp(name, "TCGETS")) {
    put_termios(c, arg, false);
  } else if (name && !strncmp(name, "TCSETS", 6)) {
    put_termios(c, arg, true);
  } else if (name && strstr(name, "FICLONE") && !strstr(name, "RANGE")) {
    sb_printf(b, "%d", (int)(int32_t)arg); /* the source fd */
  } else if (name && strstr(name, "FICLONERANGE")) {
    uint8_t fcr[32];
    if (arg && read_struct(c, arg, fcr, sizeof fcr, true))
      sb_printf(b,
                "{src_fd=%" PRId64 ", src_offset=%" PRIu64
                ", src_length=%" PRIu64 ", dest_offset=%" PRIu64 "}",
                get_int(c->a, fcr, 8), get_guest(c->a, fcr + 8, 8),
                get_guest(c->a, fcr + 16, 8), get_guest(c->a, fcr + 24, 8));
    else
      put_addr(b, arg);
  } else if (name && !strcmp(name, "TIOCGWINSZ")) {
    uint8_t w[8];
    if (out_ok(c, arg) && read_struct(c, arg, w, 8, false))
      sb_printf(b, "{ws_row=%u, ws_col=%u, ws_xpixel=%u, ws_ypixel=%u}",
                (unsigned)get_guest(c->a, w, 2),
                (unsigned)get_guest(c->a, w + 2, 2),
                (unsigned)get_guest(c->a, w + 4, 2),
                (unsigned)get_guest(c->a, w + 6, 2));
  } else if (name &&
             (!strcmp(name, "FIONREAD") || !strcmp(name, "TIOCGPGRP"))) {
    put_ints_out(c, arg, 1, 4, true);
  } else if (name && (!strcmp(name, "FIONBIO") || !strcmp(name, "TIOCSPGRP"))) {
    uint8_t v[4];
    if (arg && read_struct(c, arg, v, 4, true))
      sb_printf(b, "[%" PRId64 "]", get_int(c->a, v, 4));
    else if (!arg)
      sb_puts(b, "NULL");
  } else {
    put_addr(b, arg);
  }
}

static void put_fcntl(call *c, int r) {
  sbuf *b = c->b;
  int cmd = (int)(int32_t)reg_at(c, r);
  uint64_t arg = reg_at(c, r + 1);
  const char *name = NULL;
  if (is_mips(c->a))
    name = xlat_name(fcntl_mips_cmds, N(fcntl_mips_cmds), (uint64_t)cmd);
  if (!name && c->a->ptr_size == 4 && !is_mips(c->a))
    name = xlat_name(fcntl64_cmds, N(fcntl64_cmds), (uint64_t)cmd);
  if (!name)
    name = xlat_name(fcntl_cmds, N(fcntl_cmds), (uint64_t)cmd);
  if (!name) {
    sb_printf(b, "%#x /* F_??? */, %#" PRIx64, (unsigned)cmd, arg);
    return;
  }
  sb_puts(b, name);
  if (!strcmp(name, "F_GETFD") || !strcmp(name, "F_GETFL") ||
      !strcmp(name, "F_GETOWN") || !strcmp(name, "F_GETSIG") ||
      !strcmp(name, "F_GETLEASE") || !strcmp(name, "F_GETPIPE_SZ") ||
      !strcmp(name, "F_GET_SEALS"))
    return;
  sb_puts(b, ", ");
  if (!strcmp(name, "F_SETFD"))
    put_flags(b, fd_flags, N(fd_flags), arg, "FD_???");
  else if (!strcmp(name, "F_SETFL"))
    put_open_flags(b, c->a, arg);
  else if (!strcmp(name, "F_DUPFD") || !strcmp(name, "F_DUPFD_CLOEXEC") ||
           !strcmp(name, "F_SETOWN") || !strcmp(name, "F_SETPIPE_SZ"))
    sb_printf(b, "%" PRId64, sext(c, arg));
  else if (!strcmp(name, "F_SETSIG"))
    put_signal(b, c->a, sext(c, arg));
  else
    put_addr(b, arg);
}

static void put_futex(call *c, int r) {
  sbuf *b = c->b;
  unsigned op = (unsigned)reg_at(c, r), cmd = op & 127;
  unsigned val = (unsigned)reg_at(c, r + 1), val2 = (unsigned)reg_at(c, r + 2);
  uint64_t timeout = reg_at(c, r + 2), uaddr2 = reg_at(c, r + 3);
  unsigned val3 = (unsigned)reg_at(c, r + 4);
  bool t64 = strcmp(c->s->name, "futex_time64") == 0;
  unsigned tw = t64 ? 8 : c->a->ptr_size;
  const char *name = xlat_name(futex_cmds, N(futex_cmds), cmd);
  if (name && !(op & ~(127u | 128u | 256u)))
    sb_printf(b, "%s%s%s", name, (op & 128) ? "_PRIVATE" : "",
              (op & 256) ? "|FUTEX_CLOCK_REALTIME" : "");
  else
    sb_printf(b, "%#x /* FUTEX_??? */", op);
  switch (cmd) {
  case 0:  /* WAIT */
  case 11: /* WAIT_REQUEUE_PI */
    sb_printf(b, ", %u, ", val);
    put_timespec(c, timeout, true, tw, "tv_nsec");
    if (cmd == 11) {
      sb_puts(b, ", ");
      put_addr(b, uaddr2);
    }
    break;
  case 6:  /* LOCK_PI */
  case 13: /* LOCK_PI2 */
    sb_puts(b, ", ");
    put_timespec(c, timeout, true, tw, "tv_nsec");
    break;
  case 9: /* WAIT_BITSET */
    sb_printf(b, ", %u, ", val);
    put_timespec(c, timeout, true, tw, "tv_nsec");
    /* fall through */
  case 10: /* WAKE_BITSET */
    if (cmd == 10)
      sb_printf(b, ", %u", val);
    if (val3 == 0xffffffffu)
      sb_puts(b, ", FUTEX_BITSET_MATCH_ANY");
    else
      sb_printf(b, ", %#x", val3);
    break;
  case 3: /* REQUEUE */
    sb_printf(b, ", %u, %u, ", val, val2);
    put_addr(b, uaddr2);
    break;
  case 4:  /* CMP_REQUEUE */
  case 12: /* CMP_REQUEUE_PI */
    sb_printf(b, ", %u, %u, ", val, val2);
    put_addr(b, uaddr2);
    sb_printf(b, ", %u", val3);
    break;
  case 1: /* WAKE */
  case 2: /* FD */
    sb_printf(b, ", %u", val);
    break;
  case 7: /* UNLOCK_PI */
  case 8: /* TRYLOCK_PI */
    break;
  default:
    sb_printf(b, ", %u, ", val);
    put_addr(b, timeout);
    sb_puts(b, ", ");
    put_addr(b, uaddr2);
    sb_printf(b, ", %#x", val3);
  }
}

static void put_prctl(call *c, int r) {
  sbuf *b = c->b;
  int64_t opt = (int32_t)reg_at(c, r);
  uint64_t a2 = reg_at(c, r + 1);
  put_xval(b, prctl_options, N(prctl_options), (uint64_t)opt, "PR_???", false);
  switch (opt) {
  case 15: /* PR_SET_NAME */
    sb_puts(b, ", ");
    put_cstr(c->d, a2, 15, true);
    return;
  case 16: /* PR_GET_NAME */
    sb_puts(b, ", ");
    if (out_ok(c, a2))
      put_cstr(c->d, a2, 15, false);
    return;
  case 3:  /* PR_GET_DUMPABLE */
  case 39: /* PR_GET_NO_NEW_PRIVS */
  case 42: /* PR_GET_THP_DISABLE */
    return;
  case 1: /* PR_SET_PDEATHSIG */
    sb_puts(b, ", ");
    put_signal(b, c->a, sext(c, a2));
    return;
  case 4:  /* PR_SET_DUMPABLE */
  case 23: /* PR_CAPBSET_READ */
    sb_printf(b, ", %" PRIu64, a2);
    return;
  default:
    for (int i = 1; i < 5; i++)
      sb_printf(b, ", %#" PRIx64, reg_at(c, r + i));
  }
}

static void put_arch_prctl(call *c, int r) {
  sbuf *b = c->b;
  uint64_t code = (uint32_t)reg_at(c, r), addr = reg_at(c, r + 1);
  put_xval(b, arch_prctl_codes, N(arch_prctl_codes), code, "ARCH_???", false);
  sb_puts(b, ", ");
  if ((code == 0x1003 || code == 0x1004) && addr) { /* ARCH_GET_FS/GS */
    uint8_t v[8];
    if (out_ok(c, addr) && read_struct(c, addr, v, 8, false))
      sb_printf(b, "[%#" PRIx64 "]", get_guest(c->a, v, 8));
    return;
  }
  put_addr(b, addr);
}

/* One mmap argument list: addr, len, prot, flags, fd, offset in bytes. */
static void put_mmap_args(call *c, const uint64_t v[6]) {
  put_addr(c->b, v[0]);
  sb_printf(c->b, ", %" PRIu64 ", ", v[1]);
  put_prot(c->b, v[2]);
  sb_puts(c->b, ", ");
  put_mmap_flags(c->b, c->a, v[3]);
  sb_printf(c->b, ", %d, %#" PRIx64, (int32_t)v[4], v[5]);
}

/* Prints argument i; returns false if it prints nothing (open's mode
 * without O_CREAT), so no separator goes before it. */
static bool skip_arg(const call *c, int i) {
  if (c->desc->args[i] != K_OPEN_MODE || i == 0)
    return false;
  uint64_t f = open_to_host(c->a, c->val[i - 1]);
  return !(f & HOST_O_CREAT) && (f & HOST_O_TMPFILE) != HOST_O_TMPFILE;
}

/* execve's argv as strace prints it: the strings of the NULL-ended array
 * (32 at most, then "..."), or the address when the array is unknown. */
static void put_argv(call *c, uint64_t addr) {
  sbuf *b = c->b;
  tc_sysdecode *d = c->d;
  unsigned w = c->a->ptr_size;
  uint8_t word[8];
  if (!addr || !mem_in(d, addr, word, w)) {
    put_addr(b, addr);
    return;
  }
  sb_puts(b, "[");
  for (unsigned k = 0;; k++) {
    if (!mem_in(d, addr + (uint64_t)k * w, word, w)) {
      sb_puts(b, k ? ", ..." : "...");
      break;
    }
    uint64_t s = get_guest(c->a, word, w);
    if (!s)
      break;
    if (k == 32) {
      sb_puts(b, ", ...");
      break;
    }
    if (k)
      sb_puts(b, ", ");
    put_cstr(d, s, d->strsize, true);
  }
  sb_puts(b, "]");
}

/* execve's envp as strace prints it by default: the address and how many
 * variables it holds. */
static void put_envp(call *c, uint64_t addr) {
  sbuf *b = c->b;
  unsigned w = c->a->ptr_size;
  uint8_t word[8];
  put_addr(b, addr);
  if (!addr)
    return;
  unsigned n = 0;
  while (n < 100000 && mem_in(c->d, addr + (uint64_t)n * w, word, w) &&
         get_guest(c->a, word, w))
    n++;
  sb_printf(b, " /* %u var%s */", n, n == 1 ? "" : "s");
}

static void put_arg(call *c, int i) {
  sbuf *b = c->b;
  tc_sysdecode *d = c->d;
  uint64_t v = c->val[i];
  uint64_t next = i + 1 < c->nargs ? c->val[i + 1] : 0;
  uint64_t prev = i > 0 ? c->val[i - 1] : 0;
  int r = c->reg[i];
  if (c->ret == 0 && strncmp(c->desc->name, "execve", 6) == 0 &&
      c->desc->args[i] != K_DIRFD && c->desc->args[i] != K_ATFLAGS) {
    /* A successful execve's events come after the new image's maps: the
     * memory the arguments pointed to is gone from the trace's view. */
    put_addr(b, v);
    return;
  }
  switch ((argk)c->desc->args[i]) {
  case K_END:
    break;
  case K_ARGV:
    put_argv(c, v);
    break;
  case K_ENVP:
    put_envp(c, v);
    break;
  case K_INT:
    sb_printf(b, "%d", (int32_t)v);
    break;
  case K_UINT:
    sb_printf(b, "%u", (uint32_t)v);
    break;
  case K_LONG:
  case K_OFF:
    sb_printf(b, "%" PRId64, sext(c, v));
    break;
  case K_ULONG:
    sb_printf(b, "%" PRIu64, v);
    break;
  case K_HEX:
    sb_printf(b, "%#" PRIx64, v);
    break;
  case K_PTR:
    put_addr(b, v);
    break;
  case K_DIRFD:
    if ((int32_t)v == -100)
      sb_puts(b, "AT_FDCWD");
    else
      sb_printf(b, "%d", (int32_t)v);
    break;
  case K_PATH:
    put_path(d, v);
    break;
  case K_STR:
    put_cstr(d, v, d->strsize, true);
    break;
  case K_BUF_IN:
    put_buf(d, v, next, true, false);
    break;
  case K_BUF_OUT:
  case K_HEXBUF_OUT:
    if (out_ok(c, v))
      put_buf(d, v, (uint64_t)c->ret, false, c->desc->args[i] == K_HEXBUF_OUT);
    break;
  case K_PATH_OUT:
    if (out_ok(c, v))
      put_cstr(d, v, 4095, false);
    break;
  case K_NAME_OUT:
    if (out_ok(c, v))
      put_cstr(d, v, 15, false);
    break;
  case K_OPEN_FLAGS:
    put_open_flags(b, c->a, v);
    break;
  case K_OPEN_MODE:
  case K_MODE:
    sb_printf(b, "%#03" PRIo64, v);
    break;
  case K_FDFLAGS:
    put_flags(b, open_flags, N(open_flags), open_to_host(c->a, v), NULL);
    break;
  case K_ACCESS:
    if (v == 0)
      sb_puts(b, "F_OK");
    else
      put_flags(b, access_modes, N(access_modes), v, NULL);
    break;
  case K_ATFLAGS:
    put_flags(b, at_flags, N(at_flags), (uint32_t)v, "AT_???");
    break;
  case K_FACCESSAT_FLAGS:
    put_flags(b, faccessat_flags, N(faccessat_flags), (uint32_t)v, "AT_???");
    break;
  case K_STAT_OUT:
    put_stat(c, v, TC_STAT_NATIVE);
    break;
  case K_STAT64_OUT:
    put_stat(c, v, TC_STAT_64);
    break;
  case K_STATX_FLAGS: {
    uint32_t f = (uint32_t)v;
    if (f & 0x6000)
      put_flags(b, statx_sync, N(statx_sync), f & 0x6000, NULL);
    else
      sb_puts(b, "AT_STATX_SYNC_AS_STAT");
    if (f & ~0x6000u) {
      sb_putc(b, '|');
      put_flags(b, at_flags, N(at_flags), f & ~0x6000u, NULL);
    }
    break;
  }
  case K_STATX_MASK:
    put_flags(b, statx_masks, N(statx_masks), (uint32_t)v, "STATX_???");
    break;
  case K_STATX_OUT:
    put_statx(c, v);
    break;
  case K_IOV_IN:
  case K_IOV_OUT:
    put_iov(c, v, (uint32_t)next, c->desc->args[i] == K_IOV_IN);
    break;
  case K_PROT:
    put_prot(b, v);
    break;
  case K_MMAP_FLAGS:
    put_mmap_flags(b, c->a, v);
    break;
  case K_MMAP_OFF:
    sb_printf(b, "%#" PRIx64, v);
    break;
  case K_MMAP2_OFF:
    sb_printf(b, "%#" PRIx64, v * 4096);
    break;
  case K_OFF64:
    sb_printf(b, "%" PRId64, (int64_t)off64_of(c, r));
    break;
  case K_LLSEEK_OFF:
    sb_printf(b, "%" PRId64,
              (int64_t)((reg_at(c, r) & 0xffffffffu) << 32 |
                        (reg_at(c, r + 1) & 0xffffffffu)));
    break;
  case K_LLSEEK_RES:
    if (out_ok(c, v)) {
      uint8_t x[8];
      if (read_struct(c, v, x, 8, false))
        sb_printf(b, "[%" PRIu64 "]", get_guest(c->a, x, 8));
    }
    break;
  case K_WHENCE:
    put_xval(b, whence_codes, N(whence_codes), (uint32_t)v, "SEEK_???", false);
    break;
  case K_FCNTL_CMD:
    put_fcntl(c, r);
    break;
  case K_IOCTL_REQ:
    put_ioctl(c, r);
    break;
  case K_SIGNAL:
    put_signal(b, c->a, (int32_t)v);
    break;
  case K_SIGHOW:
    if (is_mips(c->a))
      put_xval(b, sigprocmask_mips_cmds, N(sigprocmask_mips_cmds), (uint32_t)v,
               "SIG_???", false);
    else
      put_xval(b, sigprocmask_cmds, N(sigprocmask_cmds), (uint32_t)v, "SIG_???",
               false);
    break;
  case K_SIGSET_IN:
  case K_SIGSET_OUT:
    put_sigset(c, v, c->desc->args[i] == K_SIGSET_IN);
    break;
  case K_SIGACTION_IN:
  case K_SIGACTION_OUT:
    put_sigaction(c, v, c->desc->args[i] == K_SIGACTION_IN);
    break;
  case K_STACK_IN:
  case K_STACK_OUT:
    put_stack(c, v, c->desc->args[i] == K_STACK_IN);
    break;
  case K_CLOCK:
    put_xval(b, clocks, N(clocks), (uint32_t)v, NULL, false);
    break;
  case K_TIMER_FLAGS:
    put_flags(b, timer_flags, N(timer_flags), (uint32_t)v, "TIMER_???");
    break;
  case K_TIMESPEC_IN:
  case K_TIMESPEC_OUT:
    put_timespec(c, v, c->desc->args[i] == K_TIMESPEC_IN, c->a->ptr_size,
                 "tv_nsec");
    break;
  case K_TIMESPEC64_IN:
  case K_TIMESPEC64_OUT:
    put_timespec(c, v, c->desc->args[i] == K_TIMESPEC64_IN, 8, "tv_nsec");
    break;
  case K_LOFF_PTR: {
    uint8_t lb[8];
    if (!v)
      sb_puts(b, "NULL");
    else if (read_struct(c, v, lb, 8, true))
      sb_printf(b, "[%" PRId64 "]", get_int(c->a, lb, 8));
    break;
  }
  case K_UTIMENS_IN:
  case K_UTIMENS64_IN:
    put_utimens(c, v, c->desc->args[i] == K_UTIMENS64_IN ? 8 : c->a->ptr_size);
    break;
  case K_TIMESPEC_REM:
  case K_TIMESPEC64_REM: {
    /* written only when a signal cut the sleep short (EINTR or a restart
     * code) and the sleep was relative; strace prints the address
     * otherwise */
    int e = c->failed ? tc_xlat_errno_to_host(c->a, (int)-c->ret) : 0;
    bool abs = c->desc->args[0] == K_CLOCK && (c->val[1] & 1);
    if (v && !abs && (e == 4 || (e >= 512 && e <= 516))) {
      bool was_failed = c->failed;
      c->failed = false;
      put_timespec(c, v, false,
                   c->desc->args[i] == K_TIMESPEC_REM ? c->a->ptr_size : 8,
                   "tv_nsec");
      c->failed = was_failed;
    } else {
      put_addr(b, v);
    }
    break;
  }
  case K_TIMEVAL_OUT:
    put_timespec(c, v, false, c->a->ptr_size, "tv_usec");
    break;
  case K_CLONE:
    put_clone(c, r);
    break;
  case K_WSTATUS_OUT:
    put_wstatus(c, v);
    break;
  case K_WAIT_OPTS:
    put_flags(b, wait_opts, N(wait_opts), (uint32_t)v, NULL);
    break;
  case K_IDTYPE:
    put_xval(b, idtypes, N(idtypes), (uint32_t)v, "P_???", false);
    break;
  case K_ITIMER_WHICH:
    put_xval(b, itimers, N(itimers), (uint32_t)v, "ITIMER_???", false);
    break;
  case K_ITIMERVAL_IN:
  case K_ITIMERVAL_OUT:
    put_itimerval(c, v, c->desc->args[i] == K_ITIMERVAL_IN);
    break;
  case K_TIME_OUT:
    if (!v)
      sb_puts(b, "NULL");
    else
      put_ints_out(c, v, 1, c->a->ptr_size, true);
    break;
  case K_RLIMIT_RES:
    if (is_mips(c->a))
      put_xval(b, rlimits_mips, N(rlimits_mips), (uint32_t)v, "RLIMIT_???",
               false);
    else
      put_xval(b, rlimits, N(rlimits), (uint32_t)v, "RLIMIT_???", false);
    break;
  case K_RLIMIT_IN:
  case K_RLIMIT_OUT:
    put_rlimit(c, v, c->desc->args[i] == K_RLIMIT_IN, c->a->ptr_size == 8);
    break;
  case K_RLIMIT64_IN:
  case K_RLIMIT64_OUT:
    put_rlimit(c, v, c->desc->args[i] == K_RLIMIT64_IN, true);
    break;
  case K_PIPE_OUT:
    put_ints_out(c, v, 2, 4, true);
    break;
  case K_INT_OUT:
    put_ints_out(c, v, 1, 4, true);
    break;
  case K_UINT_OUT:
    put_ints_out(c, v, 1, 4, false);
    break;
  case K_GIDS_OUT:
    put_gids(c, v, (uint32_t)prev, 4);
    break;
  case K_GIDS16_OUT:
    put_gids(c, v, (uint32_t)prev, 2);
    break;
  case K_CPUMASK_OUT:
    put_cpumask(c, v, c->failed ? 0 : (uint64_t)c->ret, false);
    break;
  case K_CPUMASK_IN:
    put_cpumask(c, v, (uint32_t)prev, true);
    break;
  case K_FUTEX_OP:
    put_futex(c, r);
    break;
  case K_ARCH_PRCTL:
    put_arch_prctl(c, r);
    break;
  case K_PRCTL:
    put_prctl(c, r);
    break;
  case K_GRND_FLAGS:
    put_flags(b, grnd_flags, N(grnd_flags), (uint32_t)v, "GRND_???");
    break;
  case K_MADVISE:
    put_xval(b, madvise_cmds, N(madvise_cmds), (uint32_t)v, "MADV_???", false);
    break;
  case K_MSYNC_FLAGS:
    put_flags(b, msync_flags, N(msync_flags), (uint32_t)v, "MS_???");
    break;
  case K_MREMAP_FLAGS:
    put_flags(b, mremap_flags, N(mremap_flags), (uint32_t)v, "MREMAP_???");
    if (v & 2) { /* MREMAP_FIXED: the new address */
      sb_puts(b, ", ");
      put_addr(b, reg_at(c, r + 1));
    }
    break;
  case K_RENAME_FLAGS:
    put_flags(b, rename_flags, N(rename_flags), (uint32_t)v, "RENAME_???");
    break;
  case K_UNAME_OUT:
    put_uname(c, v);
    break;
  case K_SYSINFO_OUT:
    put_sysinfo(c, v);
    break;
  case K_DENTS_OUT:
  case K_DENTS64_OUT:
    put_dents(c, v, c->desc->args[i] == K_DENTS64_OUT);
    break;
  case K_POLLFDS:
    put_pollfds(c, v, (uint32_t)next, false);
    break;
  case K_USER_DESC:
    put_user_desc(c, v);
    break;
  case K_OLD_MMAP: {
    uint8_t w[24];
    if (v && read_struct(c, v, w, 24, true)) {
      uint64_t m[6];
      for (int k = 0; k < 6; k++)
        m[k] = get_guest(c->a, w + 4 * k, 4);
      put_mmap_args(c, m);
    } else if (!v) {
      sb_puts(b, "NULL");
    }
    break;
  }
  case K_SOCKADDR_IN:
    put_sockaddr(c, v, (uint32_t)next);
    break;
  case K_FAMILY:
    put_xval(b, address_families, N(address_families), (uint32_t)v, "AF_???",
             true);
    break;
  case K_SOCKTYPE: {
    uint32_t t = (uint32_t)v;
    if (is_mips(c->a))
      put_xval(b, socket_mips_types, N(socket_mips_types), t & 0xf, "SOCK_???",
               false);
    else
      put_xval(b, socket_types, N(socket_types), t & 0xf, "SOCK_???", false);
    uint32_t nonblock = is_mips(c->a) ? 0x80 : 04000;
    if (t & 02000000)
      sb_puts(b, "|SOCK_CLOEXEC");
    if (t & nonblock)
      sb_puts(b, "|SOCK_NONBLOCK");
    if (t & ~(0xfu | 02000000u | nonblock))
      sb_printf(b, "|%#x", t & ~(0xfu | 02000000u | nonblock));
    break;
  }
  case K_MSG_FLAGS:
    put_flags(b, msg_flags, N(msg_flags), (uint32_t)v, "MSG_???");
    break;
  case K_SHUTDOWN:
    put_xval(b, shutdown_modes, N(shutdown_modes), (uint32_t)v, "SHUT_???",
             false);
    break;
  }
}

static void put_errno(sbuf *b, const tc_arch *a, int guest_errno) {
  const char *name = tc_sysdecode_errname(a, guest_errno);
  int host = tc_xlat_errno_to_host(a, guest_errno);
  for (size_t i = 0; i < N(restart_errnos); i++)
    if (restart_errnos[i].nr == host) {
      sb_printf(b, "? %s (%s)", name, restart_errnos[i].msg);
      return;
    }
  if (name)
    sb_printf(b, "-1 %s (%s)", name, strerror(host));
  else
    sb_printf(b, "-1 ERRNO_%d (Unknown error %d)", guest_errno, guest_errno);
}

static void put_return(call *c) {
  sbuf *b = c->b;
  const tc_arch *a = c->a;
  uint8_t kind = c->desc ? c->desc->ret : R_DEC;
  if (kind == R_NONE) {
    sb_putc(b, '?');
    return;
  }
  if (c->failed) {
    put_errno(b, a, (int)-c->ret);
    return;
  }
  uint64_t u = a->ptr_size == 4 ? (uint32_t)c->ret : (uint64_t)c->ret;
  switch (kind) {
  case R_HEX:
    sb_printf(b, "%#" PRIx64, u);
    return;
  case R_OCT:
    sb_printf(b, "%#" PRIo64, u);
    return;
  case R_TIME: {
    time_t t = (time_t)c->ret;
    struct tm tm;
    char when[64];
    if (gmtime_r(&t, &tm) &&
        strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%S+0000", &tm))
      sb_printf(b, "%" PRId64 " (%s)", c->ret, when);
    else
      sb_printf(b, "%" PRId64, c->ret);
    return;
  }
  case R_POLL:
    if (c->ret == 0) {
      sb_puts(b, "0 (Timeout)");
    } else {
      sb_printf(b, "%" PRId64 " (", c->ret);
      put_pollfds(c, c->val[0], (uint32_t)c->val[1], true);
      sb_putc(b, ')');
    }
    return;
  case R_FCNTL: {
    int cmd = (int)(int32_t)reg_at(c, c->reg[1]);
    if (cmd == 1 && c->ret) { /* F_GETFD */
      sb_printf(b, "%#" PRIx64 " (flags ", u);
      put_flags(b, fd_flags, N(fd_flags), u, NULL);
      sb_putc(b, ')');
      return;
    }
    if (cmd == 3) { /* F_GETFL */
      sb_printf(b, "%#" PRIx64 " (flags ", u);
      put_open_flags(b, a, u);
      sb_putc(b, ')');
      return;
    }
    break;
  }
  default:
    break;
  }
  sb_printf(b, "%" PRId64, a->ptr_size == 4 ? (int64_t)(int32_t)u : c->ret);
}

static const char *const socketcall_names[] = {
    NULL,         "socket",      "bind",        "connect",    "listen",
    "accept",     "getsockname", "getpeername", "socketpair", "send",
    "recv",       "sendto",      "recvfrom",    "shutdown",   "setsockopt",
    "getsockopt", "sendmsg",     "recvmsg",     "accept4",    "recvmmsg",
    "sendmmsg"};

const char *tc_sysdecode_name(const tc_syscall_event *s) {
  if (s->name && strcmp(s->name, "socketcall") == 0 && s->args[0] >= 1 &&
      s->args[0] < N(socketcall_names))
    return socketcall_names[s->args[0]];
  return s->name;
}

/* i386 socketcall(call, args): strace shows the call it stands for, with
 * the arguments from the array. Fills *sub and returns true if it can. */
static bool socketcall_sub(tc_sysdecode *d, const tc_syscall_event *s,
                           tc_syscall_event *sub) {
  static const uint8_t nargs[] = {0, 3, 3, 3, 2, 3, 3, 3, 4, 4, 4,
                                  6, 6, 2, 5, 5, 3, 3, 4, 5, 4};
  const char *name = tc_sysdecode_name(s);
  if (name == s->name)
    return false;
  unsigned w = d->arch->ptr_size, n = nargs[s->args[0]];
  uint8_t buf[6 * 8];
  if (!mem_in(d, s->args[1], buf, n * w))
    return false;
  *sub = *s;
  sub->name = name;
  memset(sub->args, 0, sizeof sub->args);
  for (unsigned i = 0; i < n; i++)
    sub->args[i] = get_guest(d->arch, buf + i * w, w);
  return true;
}

const char *tc_sysdecode_syscall(tc_sysdecode *d, const tc_syscall_event *s,
                                 unsigned flags) {
  tc_syscall_event sub;
  if (socketcall_sub(d, s, &sub))
    s = &sub;
  sbuf *b = &d->out;
  b->n = 0;
  b->oom = false;
  sb_puts(b, "");
  call c = {.d = d, .b = b, .a = d->arch, .s = s};
  /* A compat call (x86-64's int $0x80) has i386's name; one tracecorn did
   * not emulate shows its raw arguments, its structures being i386's. */
  c.desc = s->compat && s->unknown
               ? NULL
               : find_desc(s->compat ? tc_arch_compat_table(d->arch) : d->arch,
                           s->name);
  c.ret = d->arch->ptr_size == 4 ? (int64_t)(int32_t)s->ret : s->ret;
  c.failed = c.ret < 0 && c.ret >= -4095;
  d->cur = s;
  if (s->name)
    sb_puts(b, s->name);
  else
    sb_printf(b, "syscall_%#x", s->nr);
  sb_putc(b, '(');
  if (!c.desc) {
    /* not in the table: six raw arguments, as strace does for calls it
     * does not know */
    for (int i = 0; i < 6; i++)
      sb_printf(b, "%s%#" PRIx64, i ? ", " : "", s->args[i]);
  } else {
    int r = 0;
    for (c.nargs = 0; c.nargs < 7 && c.desc->args[c.nargs] != K_END;
         c.nargs++) {
      int n = regs_of(&c, (argk)c.desc->args[c.nargs], &r);
      c.reg[c.nargs] = r;
      c.val[c.nargs] = reg_at(&c, r);
      r += n;
    }
    bool first = true;
    for (int i = 0; i < c.nargs; i++) {
      if (skip_arg(&c, i))
        continue;
      if (!first)
        sb_puts(b, ", ");
      first = false;
      put_arg(&c, i);
    }
  }
  sb_putc(b, ')');
  if ((flags & TC_SYSDECODE_ALIGN) && b->n < 39) {
    char pad[40];
    memset(pad, ' ', sizeof pad);
    sb_putn(b, pad, 39 - b->n);
  }
  sb_puts(b, " = ");
  put_return(&c);
  sb_puts(b, c.suffix);
  d->cur = NULL;
  return b->oom ? "(out of memory)" : b->p;
}

const char *tc_sysdecode_fault(tc_sysdecode *d, const tc_fault_event *f) {
  sbuf *b = &d->out;
  b->n = 0;
  b->oom = false;
  sb_puts(b, "");
  const char *sig = host_signame(f->signal);
  const char *code = "SI_KERNEL";
  uint64_t addr = 0;
  switch (f->kind) {
  case TC_FAULT_UNMAPPED_READ:
  case TC_FAULT_UNMAPPED_WRITE:
  case TC_FAULT_UNMAPPED_FETCH:
    code = "SEGV_MAPERR";
    addr = f->addr;
    break;
  case TC_FAULT_PROT_READ:
  case TC_FAULT_PROT_WRITE:
  case TC_FAULT_PROT_FETCH:
    code = "SEGV_ACCERR";
    addr = f->addr;
    break;
  case TC_FAULT_INVALID_INSN: /* as each arch's kernel reports it */
    code = d->arch->traits.sys.ill_code ? d->arch->traits.sys.ill_code
                                        : "ILL_ILLOPN";
    if (strcmp(code, "SI_KERNEL") == 0) {
      sb_printf(b, "--- %s {si_signo=%s, si_code=SI_KERNEL} ---",
                sig ? sig : "?", sig ? sig : "?");
      return b->oom ? "(out of memory)" : b->p;
    }
    addr = f->pc;
    break;
  case TC_FAULT_DIVIDE:
    code = "FPE_INTDIV";
    addr = f->pc;
    break;
  default:
    /* a debug trap (x86's icebp): TRAP_BRKPT, si_addr the instruction
     * after it, which the FAULT carries; int3's FAULT has its own pc there
     * and Linux sends it as SI_KERNEL with no address */
    if (f->signal == 5 /* SIGTRAP on every arch */ && f->addr != f->pc) {
      code = "TRAP_BRKPT";
      addr = f->addr;
    }
    break;
  }
  sb_printf(b, "--- %s {si_signo=%s, si_code=%s, si_addr=", sig ? sig : "?",
            sig ? sig : "?", code);
  put_addr(b, addr);
  sb_puts(b, "} ---");
  return b->oom ? "(out of memory)" : b->p;
}

const char *tc_sysdecode_signal(tc_sysdecode *d, const tc_signal_event *g) {
  sbuf *b = &d->out;
  b->n = 0;
  b->oom = false;
  sb_puts(b, "");
  const char *sig = host_signame(g->signal);
  const char *code = g->code == 0      ? "SI_USER"
                     : g->code == -6   ? "SI_TKILL"
                     : g->code == -1   ? "SI_QUEUE"
                     : g->code == 0x80 ? "SI_KERNEL"
                                       : NULL;
  if (sig)
    sb_printf(b, "--- %s {si_signo=%s, si_code=", sig, sig);
  else
    sb_printf(b, "--- %d {si_signo=%d, si_code=", g->signal, g->signal);
  if (code)
    sb_puts(b, code);
  else
    sb_printf(b, "%d", g->code);
  if (g->code <= 0) {
    sb_printf(b, ", si_pid=%u, si_uid=%u} ---", g->pid, g->uid);
  } else if (g->code == 0x80) {
    sb_puts(b, "} ---");
  } else {
    sb_puts(b, ", si_addr=");
    put_addr(b, g->addr);
    sb_puts(b, "} ---");
  }
  return b->oom ? "(out of memory)" : b->p;
}

const char *tc_sysdecode_exit(tc_sysdecode *d, const tc_exit_event *x) {
  sbuf *b = &d->out;
  b->n = 0;
  b->oom = false;
  sb_puts(b, "");
  if (x->reason == TC_EXIT_EXITED) {
    sb_printf(b, "+++ exited with %d +++", x->status);
  } else if (x->reason == TC_EXIT_SIGNALED) {
    const char *sig = host_signame(x->signal);
    if (sig)
      sb_printf(b, "+++ killed by %s +++", sig);
    else
      sb_printf(b, "+++ killed by signal %d +++", x->signal);
  } else if (x->reason == TC_EXIT_INTERRUPTED) {
    /* the recording stopped (Ctrl-C, SIGTERM) with the program running */
    sb_puts(b, "+++ interrupted +++");
  } else if (x->reason == TC_EXIT_MAX_INSNS) {
    sb_printf(b, "+++ stopped after %" PRIu64 " instructions (--max-insns) +++",
              x->insn_count);
  } else if (x->reason == TC_EXIT_ERROR) {
    sb_printf(b, "+++ recording failed: %s +++",
              x->message ? x->message : "error");
  } else {
    return NULL;
  }
  return b->oom ? "(out of memory)" : b->p;
}
