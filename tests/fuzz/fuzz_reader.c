/* SPDX-License-Identifier: GPL-2.0-or-later */
/* libFuzzer harness for one format reader, chosen at build time with
 * -DFZ_FORMAT="name": the input is written to a file under /dev/shm (rvn:
 * a P.rvn directory, split as fz_pack_rvn describes), opened with the
 * format's reader, and every event is read and every byte it points at is
 * touched, so ASan sees any pointer past what the reader owns. Readers
 * with seek are then sought to an instruction the input chooses, and
 * again to another; readers with an index (tct's footer) give their
 * summary.
 *
 * With -DFZ_TCT_RAW (the tctraw harness, format tct) the input is a tct
 * file with its record stream decompressed: the 8-byte magic, then the
 * records. The harness writes the magic and the records wrapped in a zstd
 * frame of raw (stored) blocks, so every mutation reaches the record
 * parser instead of breaking the compressed stream, at the cost of a copy;
 * the reader and the file format are the ones the tct harness fuzzes. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <tracecorn/tracecorn.h>

#include "common/arch.h"
#include "tests/fuzz/fuzz_common.h"
#include "writers/format.h"

#ifndef FZ_FORMAT
#error "build with -DFZ_FORMAT=\"name\""
#endif

static char dir[256], path[512];
static volatile uint8_t sink;

static void touch(const void *p, size_t n) {
  const uint8_t *b = p;
  uint8_t x = 0;
  if (!p)
    return;
  if (n > (1u << 20))
    n = 1u << 20; /* a map's data may be large; its start is enough */
  for (size_t i = 0; i < n; i++)
    x ^= b[i];
  sink ^= x;
}

static void touch_mem(const tc_mem_access *m, uint32_t n) {
  if (n && !m)
    abort();
  for (uint32_t i = 0; i < n; i++) {
    touch(m[i].before, m[i].size);
    touch(m[i].after, m[i].size);
  }
}

/* Everything an event points at must be readable; register indices must
 * name registers of the trace's arch (every consumer indexes with them). */
static void check_event(const tc_arch *arch, const tc_event *ev) {
  switch (ev->kind) {
  case TC_EV_INSN:
    if (ev->u.insn.size > sizeof ev->u.insn.bytes)
      abort();
    for (uint16_t i = 0; i < ev->u.insn.nregs; i++)
      if (!arch || ev->u.insn.regs[i] >= arch->nregs)
        abort();
    if (arch) {
      touch(ev->u.insn.state_before, arch->state_size);
      touch(ev->u.insn.state_after, arch->state_size);
    }
    touch_mem(ev->u.insn.mem, ev->u.insn.nmem);
    break;
  case TC_EV_SYSCALL:
    if (ev->u.sys.name)
      touch(ev->u.sys.name, strlen(ev->u.sys.name));
    touch_mem(ev->u.sys.mem, ev->u.sys.nmem);
    break;
  case TC_EV_MAP:
  case TC_EV_UNMAP:
  case TC_EV_PROTECT:
    if (ev->u.map.name)
      touch(ev->u.map.name, strlen(ev->u.map.name));
    if (ev->kind == TC_EV_MAP)
      touch(ev->u.map.data, ev->u.map.size);
    break;
  case TC_EV_KEYFRAME:
    if (arch)
      touch(ev->u.key.state, arch->state_size);
    break;
  case TC_EV_EXIT:
    if (ev->u.exit.message)
      touch(ev->u.exit.message, strlen(ev->u.exit.message));
    break;
  default:
    break;
  }
}

static void check_info(const tc_trace_info *info) {
  if (!info)
    return;
  if (info->exe_path)
    touch(info->exe_path, strlen(info->exe_path));
  touch(info->exe_data, info->exe_size);
  for (int i = 0; info->argv && i < info->argc; i++)
    touch(info->argv[i], strlen(info->argv[i]));
  if (info->arch)
    touch(info->initial_state, info->arch->state_size);
}

#ifdef FZ_TCT_RAW
/* A zstd frame (RFC 8878) holding n bytes as raw blocks: no window
 * descriptor flags, a 128 KiB window, blocks of at most 128 KiB, the last
 * one marked (an empty body is one empty last block). */
static uint8_t *raw_frame(const uint8_t *body, size_t n, size_t *out_len) {
  const size_t max_block = 128 * 1024;
  size_t nblocks = n ? (n + max_block - 1) / max_block : 1;
  uint8_t *f = malloc(6 + 3 * nblocks + n);
  if (!f)
    return NULL;
  static const uint8_t head[6] = {0x28,  0xb5, 0x2f, 0xfd, /* magic */
                                  0x00, /* descriptor: no size, no flags */
                                  7 << 3 /* window 2^(10+7) */};
  memcpy(f, head, sizeof head);
  size_t at = sizeof head, done = 0;
  do {
    size_t k = n - done < max_block ? n - done : max_block;
    uint32_t bh = (uint32_t)k << 3 | (done + k == n); /* type 0: raw */
    f[at++] = (uint8_t)bh;
    f[at++] = (uint8_t)(bh >> 8);
    f[at++] = (uint8_t)(bh >> 16);
    memcpy(f + at, body + done, k);
    at += k;
    done += k;
  } while (done < n);
  *out_len = at;
  return f;
}
#endif

static int write_input(const uint8_t *data, size_t size) {
#ifdef FZ_TCT_RAW
  if (size < 8)
    return fz_write_file(path, data, size);
  size_t flen;
  uint8_t *frame = raw_frame(data + 8, size - 8, &flen);
  FILE *f = frame ? fopen(path, "wb") : NULL;
  int ok = f && fwrite(data, 1, 8, f) == 8 && fwrite(frame, 1, flen, f) == flen;
  if (f && fclose(f) != 0)
    ok = 0;
  free(frame);
  return ok ? 0 : -1;
#else
  if (strcmp(FZ_FORMAT, "rvn") != 0)
    return fz_write_file(path, data, size);
  if (size < 4)
    return -1;
  size_t nc = (size_t)data[0] | (size_t)data[1] << 8 | (size_t)data[2] << 16 |
              (size_t)data[3] << 24;
  if (nc > size - 4)
    nc = size - 4;
  char p[600];
  mkdir(path, 0700);
  snprintf(p, sizeof p, "%s/trace.cache", path);
  if (fz_write_file(p, data + 4, nc) < 0)
    return -1;
  snprintf(p, sizeof p, "%s/trace.bin", path);
  return fz_write_file(p, data + 4 + nc, size - 4 - nc);
#endif
}

static void cleanup(void) { fz_rmtree(dir); }

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const tc_format *fmt;
  if (!fmt) {
    fmt = tc_format_by_name(FZ_FORMAT);
    if (!fmt || !fmt->open_reader)
      abort();
    snprintf(dir, sizeof dir, "/dev/shm/tcfuzz-%s-%d", FZ_FORMAT,
             (int)getpid());
    if (mkdir(dir, 0700) < 0 && access(dir, W_OK) < 0) {
      snprintf(dir, sizeof dir, "/tmp/tcfuzz-%s-%d", FZ_FORMAT, (int)getpid());
      mkdir(dir, 0700);
    }
    snprintf(path, sizeof path, "%s/t%s", dir, fz_extension(FZ_FORMAT));
    atexit(cleanup);
  }
  if (write_input(data, size) < 0)
    return 0;
  if (fmt->probe)
    fmt->probe(data, size < 64 ? size : 64, path);
  tc_error err;
  tc_reader *r = fmt->open_reader(path, &err);
  if (!r)
    return 0;
  const tc_trace_info *info = fmt->reader_info(r);
  check_info(info);
  const tc_arch *arch = info ? info->arch : NULL;
  tc_event ev;
  uint64_t insns = 0;
  int rc;
  while ((rc = fmt->next_event(r, &ev, &err)) == 1) {
    check_event(arch, &ev);
    if (ev.kind == TC_EV_INSN)
      insns++;
  }
  if (fmt->summary) {
    tc_trace_summary sum;
    tc_trace_summary_init(&sum);
    if (fmt->summary(r, &sum, &err) == 1 &&
        (sum.nmodules < 0 || sum.nmodules > 8))
      abort();
  }
  if (fmt->seek && size >= 2) {
    uint64_t to =
        ((uint64_t)data[size - 1] << 8 | data[size - 2]) % (insns + 2);
    for (int k = 0; k < 2; k++, to = to / 2 + 1)
      if (fmt->seek(r, to, &err) == 0)
        for (int i = 0; i < 64 && fmt->next_event(r, &ev, &err) == 1; i++)
          check_event(arch, &ev);
  }
  fmt->close_reader(r);
  return 0;
}
