/* SPDX-License-Identifier: GPL-2.0-or-later */
/* zstd-compressed outputs and inputs (see zst.h). */
#include "writers/io/zst.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include "writers/io/outfile.h"

int tc_zst_magic(const uint8_t *p, size_t n) {
  return n >= 4 && p[0] == 0x28 && p[1] == 0xB5 && p[2] == 0x2F && p[3] == 0xFD;
}

int tc_zst_name(const char *path) {
  size_t n = strlen(path);
  const char *slash = strrchr(path, '/');
  const char *base = slash ? slash + 1 : path;
  return n > 4 && strcmp(path + n - 4, ".zst") == 0 &&
         (size_t)(path + n - base) > 4;
}

/* ------------------------------------------------------------ compression */

int tc_zst_compress_file(const char *src, const char *dst, tc_error *err) {
  FILE *in = fopen(src, "rb");
  if (!in) {
    tc_error_set(err, "%s: cannot open: %s", src, strerror(errno));
    return -1;
  }
  /* A stream (a FIFO, /dev/stdout) given as the output is written
   * directly and never removed. */
  bool stream = tc_output_is_stream(dst);
  FILE *out = tc_outfile_fopen(dst, "wb");
  if (!out) {
    tc_error_set(err, "%s: cannot create: %s", dst, strerror(errno));
    fclose(in);
    return -1;
  }
  struct stat st;
  ZSTD_CCtx *cc = ZSTD_createCCtx();
  size_t in_cap = ZSTD_CStreamInSize(), out_cap = ZSTD_CStreamOutSize();
  uint8_t *ibuf = malloc(in_cap), *obuf = malloc(out_cap);
  int rc = -1;
  if (!cc || !ibuf || !obuf) {
    tc_error_set(err, "%s: out of memory", dst);
    goto done;
  }
  /* Fixed parameters, one thread: the same input always gives the same
   * frame. The size is known, so the frame header records it (zstd -l). */
  ZSTD_CCtx_setParameter(cc, ZSTD_c_compressionLevel, TC_ZST_LEVEL);
  ZSTD_CCtx_setParameter(cc, ZSTD_c_checksumFlag, 1);
  if (fstat(fileno(in), &st) == 0 && S_ISREG(st.st_mode))
    ZSTD_CCtx_setPledgedSrcSize(cc, (unsigned long long)st.st_size);
  bool last = false;
  while (!last) {
    size_t got = fread(ibuf, 1, in_cap, in);
    if (got < in_cap) {
      if (ferror(in)) {
        tc_error_set(err, "%s: read error: %s", src, strerror(errno));
        goto done;
      }
      last = true;
    }
    ZSTD_inBuffer ib = {ibuf, got, 0};
    size_t left;
    do {
      ZSTD_outBuffer ob = {obuf, out_cap, 0};
      left = ZSTD_compressStream2(cc, &ob, &ib,
                                  last ? ZSTD_e_end : ZSTD_e_continue);
      if (ZSTD_isError(left)) {
        tc_error_set(err, "%s: zstd: %s", dst, ZSTD_getErrorName(left));
        goto done;
      }
      if (fwrite(obuf, 1, ob.pos, out) != ob.pos) {
        tc_error_set(err, "%s: cannot write: %s", dst, strerror(errno));
        goto done;
      }
    } while (last ? left != 0 : ib.pos < ib.size);
  }
  rc = 0;
done:;
  if (fflush(out) != 0 && rc == 0) {
    tc_error_set(err, "%s: cannot write: %s", dst, strerror(errno));
    rc = -1;
  }
  if (fclose(out) != 0 && rc == 0) {
    tc_error_set(err, "%s: cannot write: %s", dst, strerror(errno));
    rc = -1;
  }
  if (rc < 0 && !stream)
    unlink(dst);
  fclose(in);
  ZSTD_freeCCtx(cc);
  free(ibuf);
  free(obuf);
  return rc;
}

/* ---------------------------------------------------------- decompression */

/* How much a compressed input may decompress to (see zst.h). */
static uint64_t g_max_decompressed; /* 0: the default rule */

void tc_set_max_decompressed(uint64_t bytes) { g_max_decompressed = bytes; }

uint64_t tc_zst_limit(uint64_t compressed) {
  if (g_max_decompressed)
    return g_max_decompressed;
  uint64_t rel = compressed > UINT64_MAX / TC_ZST_MAX_RATIO
                     ? UINT64_MAX
                     : compressed * TC_ZST_MAX_RATIO;
  if (rel < TC_ZST_MIN_LIMIT)
    rel = TC_ZST_MIN_LIMIT;
  return rel < TC_ZST_MAX_LIMIT ? rel : TC_ZST_MAX_LIMIT;
}

/* One zstd input being decompressed: frames one after another (as zstd
 * -d takes them), any trailing bytes that are not a frame are an error. */
typedef struct zin {
  FILE *src;
  uint64_t out, limit; /* bytes given so far, and at most */
  ZSTD_DCtx *dc;
  uint8_t *buf;
  size_t cap;
  ZSTD_inBuffer in;
  size_t last; /* ZSTD_decompressStream's last hint: 0 = frame complete */
  bool eof;
  char why[160];    /* what was wrong, once it failed */
  uint8_t head[64]; /* decompressed at open (bad data is found there) */
  size_t head_len, head_pos;
} zin;

static int zin_init(zin *z, FILE *src) {
  memset(z, 0, sizeof *z);
  z->src = src;
  z->cap = ZSTD_DStreamInSize();
  z->buf = malloc(z->cap);
  z->dc = ZSTD_createDCtx();
  z->in = (ZSTD_inBuffer){z->buf, 0, 0};
  z->last = 1; /* no frame yet */
  struct stat st;
  z->limit = tc_zst_limit(fstat(fileno(src), &st) == 0 && st.st_size > 0
                              ? (uint64_t)st.st_size
                              : 0);
  return z->buf && z->dc ? 0 : -1;
}

static void zin_free(zin *z) {
  ZSTD_freeDCtx(z->dc);
  free(z->buf);
  if (z->src)
    fclose(z->src);
  z->src = NULL;
}

/* Decompresses up to cap bytes into out: the count, 0 at a clean end, -1
 * with z->why (errno EBADMSG) or errno (a read error). */
static ssize_t zin_read(zin *z, uint8_t *out, size_t cap) {
  if (z->why[0]) {
    errno = EBADMSG;
    return -1;
  }
  ZSTD_outBuffer ob = {out, cap, 0};
  for (;;) {
    if (z->in.pos == z->in.size && !z->eof) {
      size_t got = fread(z->buf, 1, z->cap, z->src);
      if (got == 0 && ferror(z->src))
        return -1;
      z->eof = got == 0;
      z->in = (ZSTD_inBuffer){z->buf, got, 0};
    }
    /* All read and the last frame complete and flushed: the end. */
    if (z->eof && z->in.pos == z->in.size && z->last == 0)
      return 0;
    size_t ret = ZSTD_decompressStream(z->dc, &ob, &z->in);
    if (ZSTD_isError(ret)) {
      snprintf(z->why, sizeof z->why, "corrupt zstd data: %s",
               ZSTD_getErrorName(ret));
      errno = EBADMSG;
      return -1;
    }
    z->last = ret;
    if (ob.pos > z->limit - z->out) {
      char lim[32];
      uint64_t l = z->limit;
      if (l % (1u << 30) == 0)
        snprintf(lim, sizeof lim, "%" PRIu64 " GiB", l >> 30);
      else if (l % (1u << 20) == 0)
        snprintf(lim, sizeof lim, "%" PRIu64 " MiB", l >> 20);
      else if (l >= (1u << 20))
        snprintf(lim, sizeof lim, "%.1f MiB", (double)l / (1 << 20));
      else
        snprintf(lim, sizeof lim, "%" PRIu64 " bytes", l);
      snprintf(z->why, sizeof z->why,
               "decompresses to more than %s, the limit for this input "
               "(TRACECORN_MAX_DECOMPRESSED=SIZE raises it)",
               lim);
      errno = EBADMSG;
      return -1;
    }
    z->out += ob.pos;
    if (ob.pos > 0)
      return (ssize_t)ob.pos;
    if (z->eof && z->in.pos == z->in.size && ret != 0) {
      snprintf(z->why, sizeof z->why,
               "truncated zstd data (the compressed stream ends early)");
      errno = EBADMSG;
      return -1;
    }
  }
}

static _Thread_local char last_why[160];

const char *tc_infile_strerror(int errnum) {
  if (errnum == EBADMSG && last_why[0])
    return last_why;
  return strerror(errnum);
}

static ssize_t cookie_read(void *c, char *buf, size_t size) {
  zin *z = c;
  if (z->head_pos < z->head_len) {
    size_t k =
        z->head_len - z->head_pos < size ? z->head_len - z->head_pos : size;
    memcpy(buf, z->head + z->head_pos, k);
    z->head_pos += k;
    return (ssize_t)k;
  }
  ssize_t n = zin_read(z, (uint8_t *)buf, size);
  if (n < 0 && z->why[0])
    snprintf(last_why, sizeof last_why, "%s", z->why);
  return n;
}

static int cookie_close(void *c) {
  zin_free(c);
  free(c);
  return 0;
}

/* 1 if f's content starts with the zstd magic (f is left at its start),
 * 0 if not, -1 on a read error. */
static int starts_zstd(FILE *f) {
  uint8_t m[4];
  size_t n = fread(m, 1, sizeof m, f);
  if (n < sizeof m && ferror(f))
    return -1;
  if (fseeko(f, 0, SEEK_SET) != 0) {
    /* A pipe: what was read cannot be put back; only regular files and
     * devices that seek are read here. */
    return -1;
  }
  return tc_zst_magic(m, n);
}

static FILE *temp_file(char *name, size_t max) {
  const char *dir = getenv("TMPDIR");
  if (!dir || !*dir)
    dir = "/tmp";
  snprintf(name, max, "%s/tracecorn-zst-XXXXXX", dir);
  int fd = mkstemp(name);
  if (fd < 0)
    return NULL;
  unlink(name); /* gone when closed, whatever happens */
  FILE *f = fdopen(fd, "w+b");
  if (!f)
    close(fd);
  return f;
}

FILE *tc_infile_open(const char *path, int mode, const char *who,
                     tc_error *err) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    tc_error_set(err, "%s: %s: cannot open: %s", who, path, strerror(errno));
    return NULL;
  }
  struct stat st;
  if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode))
    return f; /* a FIFO or device: read as it is */
  int z = starts_zstd(f);
  if (z <= 0) {
    if (z < 0) {
      tc_error_set(err, "%s: %s: read error: %s", who, path, strerror(errno));
      fclose(f);
      return NULL;
    }
    return f;
  }
  zin *zi = malloc(sizeof *zi);
  if (!zi || zin_init(zi, f) < 0) {
    tc_error_set(err, "%s: %s: out of memory", who, path);
    if (zi)
      zin_free(zi);
    else
      fclose(f);
    free(zi);
    return NULL;
  }
  if (mode == TC_INFILE_STREAM) {
    /* The first bytes now: data corrupt from the start is reported here,
     * not as whatever the reader makes of a short read. */
    ssize_t k = 1;
    while (zi->head_len < sizeof zi->head &&
           (k = zin_read(zi, zi->head + zi->head_len,
                         sizeof zi->head - zi->head_len)) > 0)
      zi->head_len += (size_t)k;
    if (k < 0) {
      tc_error_set(err, "%s: %s: %s", who, path,
                   zi->why[0] ? zi->why : strerror(errno));
      cookie_close(zi);
      return NULL;
    }
    cookie_io_functions_t io = {cookie_read, NULL, NULL, cookie_close};
    FILE *s = fopencookie(zi, "rb", io);
    if (!s) {
      tc_error_set(err, "%s: %s: out of memory", who, path);
      cookie_close(zi);
    }
    return s;
  }
  char tname[4096];
  FILE *t = temp_file(tname, sizeof tname);
  if (!t) {
    tc_error_set(err, "%s: %s: cannot create a temporary file %s: %s", who,
                 path, tname, strerror(errno));
    cookie_close(zi);
    return NULL;
  }
  uint8_t *chunk = malloc(ZSTD_DStreamOutSize());
  bool oom = !chunk;
  ssize_t n = oom ? -1 : 0;
  while (chunk && (n = zin_read(zi, chunk, ZSTD_DStreamOutSize())) > 0)
    if (fwrite(chunk, 1, (size_t)n, t) != (size_t)n) {
      tc_error_set(err, "%s: %s: cannot decompress into %s: %s", who, path,
                   tname, strerror(errno));
      n = -2;
      break;
    }
  free(chunk);
  if (n == 0 && (fflush(t) != 0 || fseeko(t, 0, SEEK_SET) != 0)) {
    tc_error_set(err, "%s: %s: cannot decompress into %s: %s", who, path, tname,
                 strerror(errno));
    n = -2;
  }
  if (n == -1)
    tc_error_set(err, "%s: %s: %s", who, path,
                 zi->why[0] ? zi->why
                 : oom      ? "out of memory"
                            : strerror(errno));
  cookie_close(zi);
  if (n < 0) {
    fclose(t);
    return NULL;
  }
  return t;
}

long tc_infile_head(const char *path, uint8_t *head, size_t max,
                    tc_error *err) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    tc_error_set(err, "%s: cannot open: %s", path, strerror(errno));
    return -1;
  }
  size_t n = fread(head, 1, max, f);
  if (!tc_zst_magic(head, n)) {
    fclose(f);
    return (long)n;
  }
  rewind(f);
  zin z;
  if (zin_init(&z, f) < 0) {
    zin_free(&z);
    tc_error_set(err, "%s: out of memory", path);
    return -1;
  }
  size_t have = 0;
  ssize_t k = 1;
  while (have < max && (k = zin_read(&z, head + have, max - have)) > 0)
    have += (size_t)k;
  if (k < 0)
    tc_error_set(err, "%s: %s", path, z.why[0] ? z.why : strerror(errno));
  zin_free(&z);
  return k < 0 ? -1 : (long)have;
}
