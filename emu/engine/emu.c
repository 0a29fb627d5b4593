/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The emulated process: Unicorn engine, guest memory map, CPU start state,
 * and the hooks that turn traps into syscalls and faults. */
#include "emu/engine/emu.h"

#include "common/arch.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

/* --------------------------------------------------------------- traps */

/* A syscall trap goes to the OS; a bare engine (no OS installed) has
 * none to answer it. An arch that adds to the ABI around the call (SPARC's
 * carry flag) wraps it (tc_engine_arch_ops.syscall). */
void tc_emu_os_syscall(tc_emu *emu) {
  if (!emu->os) {
    tc_emu_kill(emu, SIGSYS);
    return;
  }
  if (emu->engine_ops->syscall)
    emu->engine_ops->syscall(emu);
  else
    emu->os->syscall(emu);
}

static void hook_intr(uc_engine *uc, uint32_t intno, void *user) {
  tc_emu *emu = user;
  if (emu->engine_ops->intr_defect && emu->engine_ops->intr_defect(emu, intno))
    return;
  const tc_trap *t = emu->arch->sys.traps;
  for (int i = 0; i < 3 && t[i].kind != TC_TRAP_NONE; i++) {
    if (t[i].kind == TC_TRAP_INTR && t[i].intno == intno) {
      if (t[i].pc_advance) {
        uint64_t pc = tc_emu_reg(emu, emu->arch->pc_reg);
        tc_emu_set_reg(emu, emu->arch->pc_reg, pc + t[i].pc_advance);
      }
      emu->sys_compat = t[i].compat;
      tc_emu_os_syscall(emu);
      emu->sys_compat = 0;
      return;
    }
  }
  (void)uc;
  tc_fault_kind kind = TC_FAULT_OTHER;
  int sig = SIGSEGV;
  if (emu->engine_ops->intr_signal) {
    sig = emu->engine_ops->intr_signal(emu, intno, &kind);
    if (sig == 0)
      return; /* the arch handled it (a SPARC window trap) */
  }
  tc_emu_fault(emu, kind, emu->cur_pc, sig);
}

static bool hook_mem_invalid(uc_engine *uc, uc_mem_type type, uint64_t addr,
                             int size, int64_t value, void *user) {
  tc_emu *emu = user;
  (void)uc;
  (void)size;
  (void)value;
  tc_fault_kind kind;
  int sig = SIGSEGV;
  switch (type) {
  case UC_MEM_READ_UNMAPPED:
    kind = TC_FAULT_UNMAPPED_READ;
    break;
  case UC_MEM_WRITE_UNMAPPED:
    kind = TC_FAULT_UNMAPPED_WRITE;
    break;
  case UC_MEM_FETCH_UNMAPPED:
    kind = TC_FAULT_UNMAPPED_FETCH;
    break;
  case UC_MEM_READ_PROT:
    kind = TC_FAULT_PROT_READ;
    break;
  case UC_MEM_WRITE_PROT:
    kind = TC_FAULT_PROT_WRITE;
    break;
  case UC_MEM_FETCH_PROT:
    kind = TC_FAULT_PROT_FETCH;
    break;
  default:
    kind = TC_FAULT_OTHER;
    break;
  }
  if (kind == TC_FAULT_UNMAPPED_FETCH || kind == TC_FAULT_PROT_FETCH)
    emu->cur_pc = addr; /* the fetch never reached a code hook */
  tc_emu_fault(emu, kind, addr, sig);
  return false;
}

static bool hook_insn_invalid(uc_engine *uc, void *user) {
  tc_emu *emu = user;
  (void)uc;
  /* No code hook ran for an undecodable instruction: take Unicorn's PC. */
  emu->cur_pc = tc_emu_reg(emu, emu->arch->pc_reg);
  if (emu->engine_ops->insn_invalid && emu->engine_ops->insn_invalid(emu))
    return false; /* the arch made it a trap (x86's icebp) */
  tc_emu_fault(emu, TC_FAULT_INVALID_INSN, emu->cur_pc, SIGILL);
  return false;
}

static int install_hooks(tc_emu *emu, tc_error *err) {
  uc_hook h;
  uc_err e = UC_ERR_OK;
  if (emu->engine_ops->install && emu->engine_ops->install(emu, err) < 0)
    return -1;
  e = uc_hook_add(emu->uc, &h, UC_HOOK_INTR, (void *)hook_intr, emu, 1, 0);
  if (e)
    goto fail;
  e = uc_hook_add(emu->uc, &h, UC_HOOK_MEM_INVALID, (void *)hook_mem_invalid,
                  emu, 1, 0);
  if (e)
    goto fail;
  e = uc_hook_add(emu->uc, &h, UC_HOOK_INSN_INVALID, (void *)hook_insn_invalid,
                  emu, 1, 0);
  if (e)
    goto fail;
  return 0;
fail:
  tc_error_set(err, "unicorn: cannot install hooks: %s", uc_strerror(e));
  return -1;
}

/* ------------------------------------------------------------ lifecycle */

tc_emu *tc_emu_new(const tc_arch *arch, const tc_options *opt, tc_error *err) {
  tc_emu *emu = calloc(1, sizeof *emu);
  if (!emu) {
    tc_error_set(err, "out of memory");
    return NULL;
  }
  emu->arch = arch;
  emu->engine_ops = tc_engine_arch_ops_of(arch);
  emu->exe_fd = -1;
  if (opt)
    emu->opt = *opt;
  else
    tc_options_init(&emu->opt);
  /* An engine with a defect that would make this arch's recording wrong
   * is refused before anything runs (probes.c). */
  char why[sizeof err->msg];
  if (tc_engine_refusal(arch, emu->opt.record_memory != 0, why, sizeof why)) {
    tc_error_set(err, "%s", why);
    free(emu);
    return NULL;
  }
  emu->mips_fads_pc = UINT64_MAX; /* mips64el's guards: mips.c */
  /* mips and mipsel carry their FPU registers where the engine reads them
   * (probes.c); elsewhere the arch's own table, as before. */
  const tc_arch *with_fpu = tc_arch_with_fpu(arch);
  if (!arch->base && with_fpu && tc_engine_mips_fpu_readable())
    emu->arch = arch = with_fpu;
  int uc_arch_id, mode;
  uc_err e = UC_ERR_ARCH;
  if (tc_uc_arch_mode(arch, &uc_arch_id, &mode))
    e = uc_open((uc_arch)uc_arch_id, (uc_mode)mode, &emu->uc);
  if (e) {
    tc_error_set(err, "unicorn: cannot create a %s CPU: %s", arch->name,
                 uc_strerror(e));
    free(emu);
    return NULL;
  }
  if (emu->engine_ops->cpu_model)
    emu->engine_ops->cpu_model(emu);
  if (emu->engine_ops->start_state)
    emu->engine_ops->start_state(emu);
  if (install_hooks(emu, err) < 0) {
    tc_emu_free(emu);
    return NULL;
  }
  if (!(emu->start_state = calloc(1, arch->state_size))) {
    tc_error_set(err, "out of memory");
    tc_emu_free(emu);
    return NULL;
  }
  for (int i = 0; i < arch->nregs; i++)
    tc_emu_read_reg_bytes(emu, i, emu->start_state + arch->regs[i].offset,
                          arch->regs[i].size);
  emu->pid = emu->tid = emu->pgid = TC_GUEST_PID;
  emu->rng_state = emu->opt.seed ^ 0x9e3779b97f4a7c15ull;
  emu->clock_ns = TC_EPOCH_NS;
  clock_gettime(CLOCK_REALTIME, &emu->host_start);
  emu->mmap_top = arch->ptr_size == 8 ? 0x7ffff7fff000ull : 0xf7fff000ull;
  int host_std[3] = {emu->opt.stdin_fd, emu->opt.stdout_fd, emu->opt.stderr_fd};
  for (int i = 0; i < 3; i++) {
    emu->fds[i].kind = TC_FD_HOST;
    emu->fds[i].host_fd = host_std[i];
    emu->fds[i].owned = false;
    emu->fds[i].flags = i == 0 ? 0 : 1; /* O_RDONLY / O_WRONLY */
  }
  if (emu->opt.cwd)
    snprintf(emu->cwd, sizeof emu->cwd, "%s", emu->opt.cwd);
  else if (emu->opt.fs_root)
    snprintf(emu->cwd, sizeof emu->cwd, "/");
  else if (!getcwd(emu->cwd, sizeof emu->cwd))
    snprintf(emu->cwd, sizeof emu->cwd, "/");
  return emu;
}

tc_regfile *tc_emu_regfile(tc_emu *emu) {
  if (emu->regfile_tried)
    return emu->regfile;
  emu->regfile_tried = true;
  /* guest RAM is never the CPU state: not scanned */
  tc_regfile_skip *skip = calloc(emu->nhostmem + 1, sizeof *skip);
  for (size_t i = 0; skip && i < emu->nhostmem; i++)
    skip[i] = (tc_regfile_skip){
        (uintptr_t)emu->hostmem[i].host,
        (uintptr_t)emu->hostmem[i].host +
            (uintptr_t)(emu->hostmem[i].end - emu->hostmem[i].start)};
  /* the mode comes with the debug switches (the session gives every
   * process its own) */
  emu->regfile =
      tc_regfile_open(emu->uc, emu->arch, skip, skip ? emu->nhostmem : 0,
                      emu->debug.regfile, emu->debug.regfile_debug != 0);
  free(skip);
  return emu->regfile;
}

void tc_emu_free(tc_emu *emu) {
  if (!emu)
    return;
  for (int i = 0; i < TC_MAX_FDS; i++)
    if (emu->fds[i].kind != TC_FD_CLOSED && emu->fds[i].owned)
      close(emu->fds[i].host_fd);
  if (emu->exe_fd >= 0)
    close(emu->exe_fd);
  if (emu->os)
    emu->os->release(emu);
  if (emu->uc)
    uc_close(emu->uc);
  /* Unicorn does not own the guest memory it was given */
  for (size_t i = 0; i < emu->nhostmem; i++)
    munmap(emu->hostmem[i].host, emu->hostmem[i].end - emu->hostmem[i].start);
  free(emu->hostmem);
  free(emu->written_files);
  tc_regfile_free(emu->regfile);
  free(emu->regions);
  free(emu->start_state);
  free(emu);
}

int tc_emu_set_exe(tc_emu *emu, int fd, const char *host_path) {
  int own = fcntl(fd, F_DUPFD_CLOEXEC, 3);
  if (own < 0)
    return -errno;
  if (emu->exe_fd >= 0)
    close(emu->exe_fd);
  emu->exe_fd = own;
  snprintf(emu->exe_host_path, sizeof emu->exe_host_path, "%s", host_path);
  return 0;
}

int tc_emu_exe_open(const tc_emu *emu, int flags) {
  if (emu->exe_fd < 0) {
    errno = ENOENT;
    return -1;
  }
  /* The kernel's link to the open file itself: no path is walked. */
  char self[64];
  snprintf(self, sizeof self, "/proc/self/fd/%d", emu->exe_fd);
  return open(self, flags | O_CLOEXEC);
}

void tc_emu_drop_code(tc_emu *emu) {
  /* Translated code of the old image must not run again where the new
   * one maps other code: dropped before the unmaps, while the addresses
   * still translate (Unicorn finds a block's page through the mapping).
   * A whole TB flush instead clears Unicorn's 1 GiB code buffer: ~1 s per
   * exec. Every executable region, and the small others (code may have
   * run there before an mprotect took PROT_EXEC away). */
  for (size_t i = 0; i < emu->nregions; i++) {
    const tc_region *r = &emu->regions[i];
    if ((r->prot & TC_PROT_EXEC) || r->end - r->start <= (64u << 20))
      uc_ctl_remove_cache(emu->uc, r->start, r->end);
  }
}

void tc_emu_exec_done(tc_emu *emu) {
  /* Nothing left to do here: the old image's translated blocks were
   * dropped before it was unmapped (emu/linux/linux_exec.c). */
  emu->execed = false;
}

void tc_emu_reset_regs(tc_emu *emu) {
  const tc_arch *a = emu->arch;
  const char *const *keep = emu->engine_ops->reset_keeps;
  for (int i = 0; i < a->nregs; i++) {
    const tc_reg_info *ri = &a->regs[i];
    if (i == a->pc_reg || i == a->sp_reg)
      continue;
    bool kept = false;
    for (size_t k = 0; keep && keep[k]; k++)
      kept |= strcmp(ri->name, keep[k]) == 0;
    if (kept)
      continue;
    uint8_t now[64];
    size_t n = ri->size < sizeof now ? ri->size : sizeof now;
    tc_emu_read_reg_bytes(emu, i, now, n);
    if (memcmp(now, emu->start_state + ri->offset, n) != 0)
      tc_emu_write_reg_bytes(emu, i, emu->start_state + ri->offset, n);
  }
}

void tc_options_defaults(tc_options *o, size_t size) {
  /* The defaults of this library's fields; a caller's struct of another
   * size (docs/api.md, "Structs that grow") gets those it has, and zeros
   * past them. */
  tc_options d;
  memset(&d, 0, sizeof d);
  d.size = size;
  d.stdin_fd = 0;
  d.stdout_fd = 1;
  d.stderr_fd = 2;
  d.record_memory = 1;
  d.keyframe_interval = 4096;
  d.stack_size = 8u << 20;
  memset(o, 0, size);
  memcpy(o, &d, size < sizeof d ? size : sizeof d);
}

/* --------------------------------------------------------------- memory */

static uint64_t page_down(const tc_emu *emu, uint64_t a) {
  return a & ~(uint64_t)(emu->arch->page_size - 1);
}

static int page_up(const tc_emu *emu, uint64_t a, uint64_t *out) {
  uint64_t ps = emu->arch->page_size;
  if (a > UINT64_MAX - (ps - 1))
    return -1;
  *out = (a + ps - 1) & ~(ps - 1);
  return 0;
}

/* Rounds [addr, addr+size) out to pages; -EINVAL on overflow/empty. */
static int page_range(const tc_emu *emu, uint64_t addr, uint64_t size,
                      uint64_t *start, uint64_t *end) {
  if (size == 0 || addr > UINT64_MAX - size)
    return -EINVAL;
  *start = page_down(emu, addr);
  if (page_up(emu, addr + size, end) < 0 || *end <= *start)
    return -EINVAL;
  if (emu->arch->ptr_size == 4 && *end > 0x100000000ull)
    return -ENOMEM;
  /* Unicorn's sparc64 reads and writes the wrong memory (zeros) at 2^41
   * and above, silently: no guest mapping goes there (addr_limit). */
  if (emu->engine_ops->addr_limit && *end > emu->engine_ops->addr_limit)
    return -ENOMEM;
  return 0;
}

static int regions_reserve(tc_emu *emu, size_t more) {
  if (emu->nregions + more <= emu->cap_regions)
    return 0;
  size_t cap = emu->cap_regions ? emu->cap_regions * 2 : 32;
  while (cap < emu->nregions + more)
    cap *= 2;
  tc_region *r = realloc(emu->regions, cap * sizeof *r);
  if (!r)
    return -ENOMEM;
  emu->regions = r;
  emu->cap_regions = cap;
  return 0;
}

/* Cuts [start, end) out of the region list (splitting as needed). */
/* How many regions an operation on [start, end) adds by cutting the ones
 * it partly covers (0 to 2). */
static size_t regions_cut(const tc_emu *emu, uint64_t start, uint64_t end) {
  size_t more = 0;
  for (size_t i = 0; i < emu->nregions; i++) {
    const tc_region *r = &emu->regions[i];
    more += r->start < start && r->end > start;
    more += r->start < end && r->end > end;
  }
  return more;
}

/* Linux's vm.max_map_count, lower: each region is a Unicorn memory region,
 * whose count QEMU bounds with an assertion (phys_section_add) that
 * aborts the process, and whose splits cost time quadratic in their
 * number. Past it, map, mprotect and munmap fail with ENOMEM as on Linux. */
static bool regions_full(const tc_emu *emu, size_t more) {
  return emu->nregions + more > TC_MAX_REGIONS;
}

static int regions_carve(tc_emu *emu, uint64_t start, uint64_t end) {
  if (regions_reserve(emu, 1) < 0)
    return -ENOMEM;
  for (size_t i = 0; i < emu->nregions; i++) {
    tc_region *r = &emu->regions[i];
    if (r->end <= start || r->start >= end)
      continue;
    if (r->start < start && r->end > end) { /* split in two */
      memmove(r + 2, r + 1, (emu->nregions - i - 1) * sizeof *r);
      r[1] = r[0];
      r[1].file_offset += end - r->start;
      r[1].start = end;
      r->end = start; /* r[1] keeps the original end */
      emu->nregions++;
      return 0;
    }
    if (r->start < start) {
      r->end = start;
    } else if (r->end > end) {
      r->file_offset += end - r->start;
      r->start = end;
    } else {
      memmove(r, r + 1, (emu->nregions - i - 1) * sizeof *r);
      emu->nregions--;
      i--;
    }
  }
  return 0;
}

static int regions_insert(tc_emu *emu, const tc_region *nr) {
  if (regions_reserve(emu, 1) < 0)
    return -ENOMEM;
  size_t i = 0;
  while (i < emu->nregions && emu->regions[i].start < nr->start)
    i++;
  memmove(&emu->regions[i + 1], &emu->regions[i],
          (emu->nregions - i) * sizeof *nr);
  emu->regions[i] = *nr;
  emu->nregions++;
  return 0;
}

static bool range_overlaps(const tc_emu *emu, uint64_t start, uint64_t end) {
  for (size_t i = 0; i < emu->nregions; i++)
    if (emu->regions[i].start < end && emu->regions[i].end > start)
      return true;
  return false;
}

/* Unicorn 2.0.1 copies a whole block (calloc + write back, page by
 * page) when a protect or unmap covers part of it, so one 1 GiB guest map
 * turned into 2 GiB of host memory and seconds at the first mprotect
 * inside it. Guest maps are therefore given to Unicorn as blocks aligned
 * to their size, 4 MiB under the default 4 GiB address-space cap: a split
 * copies at most one block. QEMU's physical map holds at most 4096
 * sections in all, so blocks grow with the cap: at most 1024 of them fill
 * the guest's whole address space. */
#define UC_BLOCK_MIN (4ull << 20)
#define UC_BLOCKS_PER_CAP 1024

/* ---------------------------------------------------- host memory */

static int hostmem_insert(tc_emu *emu, tc_hostmem m) {
  if (emu->nhostmem == emu->caphostmem) {
    size_t cap = emu->caphostmem ? 2 * emu->caphostmem : 16;
    tc_hostmem *n = realloc(emu->hostmem, cap * sizeof *n);
    if (!n)
      return -1;
    emu->hostmem = n;
    emu->caphostmem = cap;
  }
  size_t i = emu->nhostmem;
  while (i > 0 && emu->hostmem[i - 1].start > m.start)
    i--;
  memmove(&emu->hostmem[i + 1], &emu->hostmem[i],
          (emu->nhostmem - i) * sizeof m);
  emu->hostmem[i] = m;
  emu->nhostmem++;
  emu->hostmem_hint = 0;
  return 0;
}

/* Guest [start, end) is gone from Unicorn: its host pages are returned;
 * the pieces around it keep theirs. */
static void hostmem_release(tc_emu *emu, uint64_t start, uint64_t end) {
  for (size_t i = 0; i < emu->nhostmem; i++) {
    tc_hostmem m = emu->hostmem[i];
    if (m.end <= start || m.start >= end)
      continue;
    uint64_t a = m.start > start ? m.start : start;
    uint64_t b = m.end < end ? m.end : end;
    munmap(m.host + (a - m.start), b - a);
    memmove(&emu->hostmem[i], &emu->hostmem[i + 1],
            (emu->nhostmem - i - 1) * sizeof m);
    emu->nhostmem--;
    if (m.start < a)
      hostmem_insert(emu, (tc_hostmem){m.start, a, m.host});
    if (b < m.end)
      hostmem_insert(emu, (tc_hostmem){b, m.end, m.host + (b - m.start)});
    i = (size_t)-1; /* restart: the list changed */
  }
  emu->hostmem_hint = 0;
}

const uint8_t *tc_emu_host_lookup(tc_emu *emu, uint64_t addr, uint64_t size) {
  size_t lo = 0, hi = emu->nhostmem;
  while (lo < hi) { /* the last piece starting at or below addr */
    size_t mid = (lo + hi) / 2;
    if (emu->hostmem[mid].start <= addr)
      lo = mid + 1;
    else
      hi = mid;
  }
  if (!lo)
    return NULL;
  const tc_hostmem *h = &emu->hostmem[lo - 1];
  if (addr - h->start + size > h->end - h->start)
    return NULL;
  emu->hostmem_hint = lo - 1;
  return h->host + (addr - h->start);
}

/* Unicorn 2.0.1 copies a whole block (calloc + write back, page by
 * page) when a protect or unmap covers part of a block it allocated
 * itself; blocks given to it with uc_mem_map_ptr are split in place.
 * Guest maps are given to it as host memory tracecorn maps, in blocks
 * aligned to their size, 4 MiB under the default 4 GiB address-space cap:
 * QEMU's physical map holds at most 4096 sections in all, so blocks grow
 * with the cap (at most 1024 of them fill the guest's address space). */
#define UC_BLOCK_MIN (4ull << 20)
#define UC_BLOCKS_PER_CAP 1024

static int uc_map_blocks(tc_emu *emu, uint64_t cap, uint64_t start,
                         uint64_t end, uint32_t prot) {
  uint64_t block = UC_BLOCK_MIN;
  while (block < (1ull << 62) && cap / block > UC_BLOCKS_PER_CAP)
    block <<= 1;
  for (uint64_t at = start; at < end;) {
    uint64_t next = (at & ~(block - 1)) + block;
    if (next > end || next < at)
      next = end;
    void *host = mmap(NULL, next - at, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (host == MAP_FAILED ||
        uc_mem_map_ptr(emu->uc, at, next - at, prot, host) != UC_ERR_OK ||
        hostmem_insert(emu, (tc_hostmem){at, next, host}) < 0) {
      if (host != MAP_FAILED) {
        uc_mem_unmap(emu->uc, at, next - at); /* if it was mapped */
        munmap(host, next - at);
      }
      if (at > start) {
        uc_mem_unmap(emu->uc, start, at - start);
        hostmem_release(emu, start, at);
      }
      return -1;
    }
    at = next;
  }
  return 0;
}

uint64_t tc_emu_mapped(const tc_emu *emu) {
  uint64_t used = 0;
  for (size_t i = 0; i < emu->nregions; i++)
    used += emu->regions[i].end - emu->regions[i].start;
  return used;
}

int tc_emu_map(tc_emu *emu, uint64_t addr, uint64_t size, uint32_t prot,
               const char *name, uint64_t file_offset) {
  uint64_t start, end;
  int rc = page_range(emu, addr, size, &start, &end);
  if (rc)
    return rc;
  if (range_overlaps(emu, start, end))
    return -EEXIST;
  uint64_t cap =
      emu->opt.max_memory ? emu->opt.max_memory : TC_DEFAULT_MAX_MEMORY;
  uint64_t used = tc_emu_mapped(emu);
  if (emu->os)
    used += emu->os->others_mapped(emu);
  if (end - start > cap || used > cap - (end - start) || regions_full(emu, 1))
    return -ENOMEM;
  if (uc_map_blocks(emu, cap, start, end, prot & 7) < 0)
    return -ENOMEM;
  tc_region r = {
      .start = start, .end = end, .prot = prot & 7, .file_offset = file_offset};
  snprintf(r.name, sizeof r.name, "%s", name ? name : "");
  if (regions_insert(emu, &r) < 0) {
    uc_mem_unmap(emu->uc, start, end - start);
    hostmem_release(emu, start, end);
    return -ENOMEM;
  }
  if (emu->obs.on_map)
    emu->obs.on_map(emu->obs.ctx, &r, NULL);
  return 0;
}

int tc_emu_unmap(tc_emu *emu, uint64_t addr, uint64_t size) {
  uint64_t start, end;
  int rc = page_range(emu, addr, size, &start, &end);
  if (rc)
    return rc;
  if (regions_full(emu, regions_cut(emu, start, end) / 2))
    return -ENOMEM; /* a hole in one region splits it in two */
  /* Unicorn wants fully mapped ranges: unmap piece by piece. */
  for (size_t i = 0; i < emu->nregions; i++) {
    tc_region *r = &emu->regions[i];
    uint64_t a = r->start > start ? r->start : start;
    uint64_t b = r->end < end ? r->end : end;
    if (a < b && uc_mem_unmap(emu->uc, a, b - a) != UC_ERR_OK)
      return -ENOMEM;
    if (a < b)
      hostmem_release(emu, a, b);
  }
  if (regions_carve(emu, start, end) < 0)
    return -ENOMEM;
  if (emu->obs.on_unmap)
    emu->obs.on_unmap(emu->obs.ctx, start, end - start);
  return 0;
}

int tc_emu_protect(tc_emu *emu, uint64_t addr, uint64_t size, uint32_t prot) {
  uint64_t start, end;
  int rc = page_range(emu, addr, size, &start, &end);
  if (rc)
    return rc;
  /* Linux: -ENOMEM if any page in the range is unmapped. */
  uint64_t cover = start;
  for (size_t i = 0; i < emu->nregions && cover < end; i++) {
    tc_region *r = &emu->regions[i];
    if (r->end <= cover)
      continue;
    if (r->start > cover)
      return -ENOMEM;
    cover = r->end;
  }
  if (cover < end || regions_full(emu, regions_cut(emu, start, end)))
    return -ENOMEM;
  if (uc_mem_protect(emu->uc, start, end - start, prot & 7) != UC_ERR_OK)
    return -ENOMEM;
  /* Split the regions at start/end, then set prot inside. */
  for (size_t i = 0; i < emu->nregions; i++) {
    tc_region *r = &emu->regions[i];
    if (r->end <= start || r->start >= end)
      continue;
    if (r->start < start || r->end > end) {
      tc_region orig = *r;
      regions_carve(emu, orig.start, orig.end);
      uint64_t cuts[4] = {orig.start, start > orig.start ? start : orig.start,
                          end < orig.end ? end : orig.end, orig.end};
      for (int k = 0; k < 3; k++) {
        if (cuts[k] >= cuts[k + 1])
          continue;
        tc_region piece = orig;
        piece.start = cuts[k];
        piece.end = cuts[k + 1];
        piece.file_offset = orig.file_offset + (cuts[k] - orig.start);
        if (cuts[k] >= start && cuts[k + 1] <= end)
          piece.prot = prot & 7;
        if (regions_insert(emu, &piece) < 0)
          return -ENOMEM;
      }
      i = (size_t)-1; /* restart: the list changed */
      continue;
    }
    r->prot = prot & 7;
  }
  if (emu->obs.on_protect)
    emu->obs.on_protect(emu->obs.ctx, start, end - start, prot & 7);
  return 0;
}

uint64_t tc_emu_find_free(tc_emu *emu, uint64_t size) {
  uint64_t len;
  if (size == 0 || page_up(emu, size, &len) < 0)
    return 0;
  uint64_t hi = emu->mmap_top;
  /* Walk regions from the top: the highest gap below mmap_top wins. */
  for (size_t k = emu->nregions; k-- > 0;) {
    tc_region *r = &emu->regions[k];
    if (r->start >= hi)
      continue;
    if (r->end <= hi && hi - r->end >= len)
      return hi - len;
    if (r->start < hi)
      hi = r->start;
  }
  uint64_t floor = 0x10000; /* keep page zero and friends unmapped */
  if (hi >= floor + len)
    return hi - len;
  return 0;
}

bool tc_emu_is_mapped(tc_emu *emu, uint64_t addr, uint64_t size) {
  if (size == 0)
    return true;
  if (addr > UINT64_MAX - size)
    return false;
  uint64_t cover = addr, end = addr + size;
  for (size_t i = 0; i < emu->nregions && cover < end; i++) {
    tc_region *r = &emu->regions[i];
    if (r->end <= cover)
      continue;
    if (r->start > cover)
      return false;
    cover = r->end;
  }
  return cover >= end;
}

const tc_region *tc_emu_region_at(tc_emu *emu, uint64_t addr) {
  for (size_t i = 0; i < emu->nregions; i++)
    if (addr >= emu->regions[i].start && addr < emu->regions[i].end)
      return &emu->regions[i];
  return NULL;
}

int tc_emu_read(tc_emu *emu, uint64_t addr, void *buf, size_t n) {
  if (n == 0)
    return 0;
  const uint8_t *host = tc_emu_host(emu, addr, n);
  if (host) { /* one piece of guest memory: mapped */
    memcpy(buf, host, n);
    return 0;
  }
  if (!tc_emu_is_mapped(emu, addr, n))
    return -EFAULT;
  return uc_mem_read(emu->uc, addr, buf, n) == UC_ERR_OK ? 0 : -EFAULT;
}

int tc_emu_write(tc_emu *emu, uint64_t addr, const void *buf, size_t n) {
  if (n == 0)
    return 0;
  if (!tc_emu_is_mapped(emu, addr, n))
    return -EFAULT;
  uint8_t *old = NULL;
  if (emu->obs.on_kernel_write) {
    old = malloc(n);
    if (!old || uc_mem_read(emu->uc, addr, old, n) != UC_ERR_OK) {
      free(old);
      return -EFAULT;
    }
  }
  if (uc_mem_write(emu->uc, addr, buf, n) != UC_ERR_OK) {
    free(old);
    return -EFAULT;
  }
  if (old) {
    emu->obs.on_kernel_write(emu->obs.ctx, addr, old, buf, n);
    free(old);
  }
  return 0;
}

int tc_emu_read_str(tc_emu *emu, uint64_t addr, char *buf, size_t max) {
  if (max == 0)
    return -ENAMETOOLONG;
  for (size_t i = 0; i < max; i++) {
    if (tc_emu_read(emu, addr + i, &buf[i], 1) < 0)
      return -EFAULT;
    if (buf[i] == 0)
      return 0;
  }
  buf[max - 1] = 0;
  return -ENAMETOOLONG;
}

/* ------------------------------------------------------------ registers */

void tc_emu_fix_state(tc_emu *emu, uint8_t *state) {
  if (emu->engine_ops->fix_state)
    emu->engine_ops->fix_state(emu, state);
}

bool tc_emu_thumb(tc_emu *emu) {
  return emu->engine_ops->thumb && emu->engine_ops->thumb(emu);
}

uint64_t tc_emu_resume_pc(tc_emu *emu) {
  if (emu->engine_ops->before_run)
    emu->engine_ops->before_run(emu);
  if (emu->has_resume_override) {
    emu->has_resume_override = false;
    tc_emu_set_reg(emu, emu->arch->pc_reg, emu->resume_override);
  }
  uint64_t pc = tc_emu_reg(emu, emu->arch->pc_reg);
  return tc_emu_thumb(emu) ? pc | 1 : pc;
}

bool tc_emu_virtual_tlb(uc_engine *uc) {
#ifdef uc_ctl_tlb_mode
  return uc_ctl_tlb_mode(uc, UC_TLB_VIRTUAL) == UC_ERR_OK;
#else
  (void)uc;
  return false;
#endif
}

bool tc_emu_reg_absent(const tc_arch *arch, int reg) {
  const tc_engine_arch_ops *ops = tc_engine_arch_ops_of(arch);
  return ops->reg_absent && ops->reg_absent(arch, reg);
}

/* uc_reg_read and uc_reg_write of a register the mode has. */
static void reg_read(tc_emu *emu, int reg, void *buf) {
  if (!tc_emu_reg_absent(emu->arch, reg))
    uc_reg_read(emu->uc, emu->arch->regs[reg].uc_id, buf);
}

static void reg_write(tc_emu *emu, int reg, const void *buf) {
  if (!tc_emu_reg_absent(emu->arch, reg))
    uc_reg_write(emu->uc, emu->arch->regs[reg].uc_id, buf);
}

uint64_t tc_emu_reg(tc_emu *emu, int reg) {
  /* Unicorn may write more than the register's nominal size; read into
   * a generous scratch buffer. */
  uint8_t scratch[64] = {0};
  reg_read(emu, reg, scratch);
  uint64_t v = 0;
  unsigned sz = emu->arch->regs[reg].size;
  memcpy(&v, scratch, sz < 8 ? sz : 8);
  return v;
}

void tc_emu_set_reg(tc_emu *emu, int reg, uint64_t value) {
  uint8_t scratch[64] = {0};
  unsigned sz = emu->arch->regs[reg].size;
  memcpy(scratch, &value, sz < 8 ? sz : 8);
  reg_write(emu, reg, scratch);
}

void tc_emu_read_state(tc_emu *emu, uint8_t *state) {
  const tc_arch *a = emu->arch;
  for (int i = 0; i < a->nregs; i++) {
    uint8_t scratch[64] = {0};
    reg_read(emu, i, scratch);
    memcpy(state + a->regs[i].offset, scratch, a->regs[i].size);
  }
  tc_emu_fix_state(emu, state);
}

/* --------------------------------------------------------------- misc */

static uint64_t splitmix64(uint64_t *s) {
  uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

void tc_emu_random(tc_emu *emu, void *buf, size_t n) {
  uint8_t *p = buf;
  while (n) {
    uint64_t v = splitmix64(&emu->rng_state);
    size_t k = n < 8 ? n : 8;
    memcpy(p, &v, k);
    p += k;
    n -= k;
  }
}

void tc_emu_exit(tc_emu *emu, int code) {
  emu->exited = true;
  emu->exit_code = code & 0xff;
  emu->exit_signal = 0;
  uc_emu_stop(emu->uc);
}

void tc_emu_kill(tc_emu *emu, int sig) {
  emu->exited = true;
  emu->exit_signal = sig;
  emu->exit_code = 128 + sig;
  uc_emu_stop(emu->uc);
}

void tc_emu_fault(tc_emu *emu, tc_fault_kind kind, uint64_t addr, int sig) {
  if (emu->faulted)
    return; /* keep the first cause */
  emu->faulted = true;
  if (sig != SIGTRAP) {
    emu->fault_resume = 0;
    emu->fault_debug = false;
  }
  emu->fault.kind = kind;
  emu->fault.addr = addr;
  emu->fault.pc = emu->cur_pc;
  emu->fault.signal = sig;
  tc_emu_kill(emu, sig);
}

void tc_emu_read_reg_bytes(tc_emu *emu, int reg, uint8_t *out, size_t n) {
  uint8_t scratch[64] = {0};
  if (reg >= 0)
    reg_read(emu, reg, scratch);
  memcpy(out, scratch, n < sizeof scratch ? n : sizeof scratch);
}

void tc_emu_write_reg_bytes(tc_emu *emu, int reg, const uint8_t *in, size_t n) {
  uint8_t scratch[64] = {0};
  if (reg < 0)
    return;
  reg_read(emu, reg, scratch);
  memcpy(scratch, in, n < sizeof scratch ? n : sizeof scratch);
  reg_write(emu, reg, scratch);
}
