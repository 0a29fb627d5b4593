/* libFuzzer harness for one format reader, chosen at build time with
 * -DFZ_FORMAT="name": the input is written to a file under /dev/shm (rvn:
 * a P.rvn directory, split as fz_pack_rvn describes), opened with the
 * format's reader, and every event is read and every byte it points at is
 * touched, so ASan sees any pointer past what the reader owns. Readers
 * with seek are then sought to an instruction the input chooses. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <tracecorn/tracecorn.h>

#include "tests/fuzz/fuzz_common.h"

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

static int write_input(const uint8_t *data, size_t size) {
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
  if (fmt->seek && size >= 2) {
    uint64_t to =
        ((uint64_t)data[size - 1] << 8 | data[size - 2]) % (insns + 2);
    if (fmt->seek(r, to, &err) == 0)
      for (int i = 0; i < 64 && fmt->next_event(r, &ev, &err) == 1; i++)
        check_event(arch, &ev);
  }
  fmt->close_reader(r);
  return 0;
}
