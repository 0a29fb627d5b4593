/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The emulated Linux kernel: syscall dispatch.
 *
 * The arch's syscall ABI (arch->sys) gives the number and argument
 * registers. Handlers live in linux_sys_fs.c / _mm.c / _misc.c and are
 * bound to numbers BY NAME through arch->sys.names, once per arch, so an
 * arch only contributes its name table. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/linux/linux_xlat.h"
#include "common/notice.h"
#include "emu/linux/linux_arch.h"
#include "emu/linux/linux_sys.h"

/* ------------------------------------------------------ per-emu kernel state
 * Kernel-private state (signal handlers, mask, rlimits, umask, comm) hangs
 * off emu->linux_state, created on first use and freed by tc_emu_free. */

static void state_init(tc_linux_state *st, tc_emu *emu) {
  memset(st, 0, sizeof *st);
  st->emu = emu;
  st->uc = emu->uc;
  st->altstack_flags = 2; /* SS_DISABLE */
  for (int i = 0; i < TC_RLIM_NLIMITS; i++)
    st->rlim_cur[i] = st->rlim_max[i] = UINT64_MAX; /* RLIM_INFINITY */
  st->rlim_cur[3] = 8u << 20;                       /* RLIMIT_STACK */
  st->rlim_cur[7] = st->rlim_max[7] = 1024;         /* RLIMIT_NOFILE */
  st->umask = 022;
  /* comm: the program's base name, 15 characters at most. */
  const char *exe = emu->exe_guest_path;
  const char *slash = strrchr(exe, '/');
  const char *base = slash ? slash + 1 : exe;
  size_t n = strnlen(base, sizeof st->comm - 1);
  memcpy(st->comm, base, n);
  st->comm[n] = 0;
}

tc_linux_state *tc_linux_state_of(tc_emu *emu) {
  if (!emu->linux_state) {
    tc_linux_state *st = malloc(sizeof *st);
    if (!st)
      abort(); /* a few hundred bytes: out of memory is fatal */
    state_init(st, emu);
    emu->linux_state = st;
  }
  return emu->linux_state;
}

void tc_linux_forget(tc_emu *emu) {
  free(emu->linux_state);
  emu->linux_state = NULL;
}

static void linux_release(tc_emu *emu) {
  tc_linux_forget(emu);
  tc_linux_threads_free(emu);
  tc_procs_release(emu);
}

static const tc_os_ops linux_os = {
    .syscall = tc_linux_syscall,
    .release = linux_release,
    .others_mapped = tc_procs_others_mapped,
};

tc_emu *tc_linux_emu_new(const tc_arch *arch, const tc_options *opt,
                         tc_error *err) {
  tc_emu *emu = tc_emu_new(arch, opt, err);
  if (emu)
    emu->os = &linux_os;
  return emu;
}

int tc_linux_process_init(tc_emu *emu) {
  const tc_linux_arch_ops *ops = tc_linux_arch_of(emu->arch);
  return ops->process_init ? ops->process_init(emu) : 0;
}

/* ------------------------------------------------------- guest integers */

bool tc_sys_range_ok(tc_emu *emu, uint64_t addr, uint64_t len, uint32_t prot) {
  if (len == 0)
    return true;
  uint64_t end = addr + len;
  if (end < addr)
    return false;
  if (emu->arch->ptr_size == 4 && end > 0x100000000ull)
    return false;
  for (uint64_t a = addr; a < end;) {
    const tc_region *r = tc_emu_region_at(emu, a);
    if (!r || (r->prot & prot) != prot || r->end <= a)
      return false;
    a = r->end;
  }
  return true;
}

int tc_sys_read(tc_emu *emu, uint64_t addr, void *buf, size_t n) {
  if (!tc_sys_range_ok(emu, addr, n, TC_PROT_READ))
    return -EFAULT;
  return tc_emu_read(emu, addr, buf, n) < 0 ? -EFAULT : 0;
}

int tc_sys_write(tc_emu *emu, uint64_t addr, const void *buf, size_t n) {
  if (!tc_sys_range_ok(emu, addr, n, TC_PROT_WRITE))
    return -EFAULT;
  return tc_emu_write(emu, addr, buf, n) < 0 ? -EFAULT : 0;
}

int tc_sys_read_path(tc_emu *emu, uint64_t addr, char *buf, size_t max) {
  if (!tc_sys_range_ok(emu, addr, 1, TC_PROT_READ))
    return -EFAULT;
  int r = tc_emu_read_str(emu, addr, buf, max);
  if (r < 0)
    return r;
  return (int)strlen(buf);
}

int tc_sys_get_uint(tc_emu *emu, uint64_t addr, unsigned size, uint64_t *v) {
  uint8_t b[8];
  if (size > 8)
    return -EINVAL;
  int r = tc_sys_read(emu, addr, b, size);
  if (r < 0)
    return r;
  *v = tc_abi_get(emu->arch, b, size);
  return 0;
}

int tc_sys_put_uint(tc_emu *emu, uint64_t addr, unsigned size, uint64_t v) {
  uint8_t b[8];
  if (size > 8)
    return -EINVAL;
  tc_abi_put(emu->arch, b, size, v);
  return tc_sys_write(emu, addr, b, size);
}

/* -------------------------------------------------------- dispatch table */

/* Dense below TC_SYS_DENSE_MAX; the few arch-private calls far above it
 * (ARM's 0xf0000+n) go in a short list. */
#define TC_SYS_DENSE_MAX 0x10000u
typedef struct sys_table {
  tc_sys_fn *fn; /* indexed by syscall number */
  uint32_t n;
  struct {
    uint32_t nr;
    tc_sys_fn fn;
  } high[16];
  int nhigh;
} sys_table;

static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static sys_table tables[32]; /* by tc_arch_id */

static const tc_sys_entry *const handler_tables[] = {
    tc_sys_fs_table,     tc_sys_mm_table,      tc_sys_misc_table,
    tc_sys_thread_table, tc_sys_process_table, tc_sys_exec_table};

static const sys_table *table_for(const tc_arch *arch) {
  if ((unsigned)arch->id >= sizeof tables / sizeof tables[0])
    return NULL;
  pthread_mutex_lock(&table_lock);
  sys_table *t = &tables[arch->id];
  if (!t->fn && arch->sys.nnames > 0) {
    uint32_t n = 0;
    for (size_t i = 0; i < arch->sys.nnames; i++)
      if (arch->sys.names[i].nr < TC_SYS_DENSE_MAX &&
          arch->sys.names[i].nr + 1 > n)
        n = arch->sys.names[i].nr + 1;
    tc_sys_fn *fn = calloc(n, sizeof *fn);
    if (fn) {
      const size_t ngeneric = sizeof handler_tables / sizeof *handler_tables;
      const tc_sys_entry *own = tc_linux_arch_of(arch)->syscalls;
      /* the generic tables, then the arch's own: its entries win */
      for (size_t h = 0; h <= ngeneric; h++)
        for (const tc_sys_entry *e = h < ngeneric ? handler_tables[h] : own;
             e && e->name; e++)
          for (size_t i = 0; i < arch->sys.nnames; i++) {
            uint32_t nr = arch->sys.names[i].nr;
            if (strcmp(arch->sys.names[i].name, e->name) != 0)
              continue;
            if (nr < n) {
              fn[nr] = e->fn;
              continue;
            }
            /* far above: the entry for nr replaced, else one added */
            int k = 0;
            while (k < t->nhigh && t->high[k].nr != nr)
              k++;
            if (k == (int)(sizeof t->high / sizeof t->high[0]))
              continue;
            t->high[k].nr = nr;
            t->high[k].fn = e->fn;
            if (k == t->nhigh)
              t->nhigh++;
          }
      t->n = n;
      t->fn = fn;
    }
  }
  pthread_mutex_unlock(&table_lock);
  return t->fn ? t : NULL;
}

static void report_unknown(tc_sys_call *c, uint64_t nr) {
  tc_emu *emu = c->emu;
  if (nr < sizeof emu->unknown_reported * 8) {
    uint8_t bit = (uint8_t)(1u << (nr & 7));
    if (emu->unknown_reported[nr >> 3] & bit)
      return;
    emu->unknown_reported[nr >> 3] |= bit;
  } else {
    if (c->st->high_unknown_reported)
      return;
    c->st->high_unknown_reported = true;
  }
  if (emu->opt.quiet)
    return;
  uint64_t pc = tc_emu_reg(emu, emu->arch->pc_reg);
  tc_notice("unimplemented syscall %llu (%s) at pc 0x%llx; "
            "returning -ENOSYS",
            (unsigned long long)nr, c->name ? c->name : "?",
            (unsigned long long)pc);
}

/* The handler of the call named `name` in arch's table, or NULL. */
static tc_sys_fn handler_by_name(const tc_arch *arch, const char *name) {
  const sys_table *t = table_for(arch);
  for (size_t i = 0; t && name && i < arch->sys.nnames; i++)
    if (strcmp(arch->sys.names[i].name, name) == 0)
      return arch->sys.names[i].nr < t->n ? t->fn[arch->sys.names[i].nr] : NULL;
  return NULL;
}

/* A call through the compat table (x86-64's int $0x80): the number and
 * name are of the compat arch (i386); calls whose arguments need no
 * translation run the native handler, the rest answer -ENOSYS with a
 * notice, once per number. */
static tc_sys_fn compat_call(tc_sys_call *c, const tc_linux_compat *cp,
                             bool *unknown) {
  tc_emu *emu = c->emu;
  const tc_arch *names = tc_arch_by_id(cp->names_of);
  uint64_t nr = tc_linux_reg(emu, cp->nr_reg) & 0xffffffffull;
  for (int i = 0; i < 6; i++)
    c->a[i] = tc_linux_reg(emu, cp->arg_regs[i]) & 0xffffffffull;
  c->nr = (uint32_t)nr;
  c->name = names ? tc_arch_syscall_name(names, c->nr) : NULL;
  const char *native = c->name ? cp->native(c->name) : NULL;
  tc_sys_fn fn = native ? handler_by_name(emu->arch, native) : NULL;
  if (fn)
    return fn;
  *unknown = true;
  uint8_t *seen = c->st->compat_unknown_reported;
  if (nr < 8 * sizeof c->st->compat_unknown_reported) {
    if (seen[nr >> 3] & (1u << (nr & 7)))
      return NULL;
    seen[nr >> 3] |= (uint8_t)(1u << (nr & 7));
  }
  if (!emu->opt.quiet)
    tc_notice("int $0x80 in 64-bit code: i386 syscall %llu (%s) "
              "at pc 0x%llx is not emulated; returning -ENOSYS",
              (unsigned long long)nr, c->name ? c->name : "?",
              (unsigned long long)emu->cur_pc);
  return NULL;
}

/* The call in the arch's ABI registers: c->nr, c->a, c->name, *fn (NULL:
 * not implemented); returns the full number. */
static uint64_t read_call(tc_sys_call *c, tc_sys_fn *fn_out) {
  tc_emu *emu = c->emu;
  const tc_arch *arch = emu->arch;
  const tc_syscall_abi *abi = &arch->sys;
  uint64_t mask = arch->ptr_size == 4 ? 0xffffffffull : ~0ull;
  uint64_t nr = tc_emu_reg(emu, abi->nr_reg) & mask;
  for (int i = 0; i < 6; i++)
    c->a[i] = tc_emu_reg(emu, abi->arg_regs[i]) & mask;
  if (abi->first_stack_arg > 0) {
    /* mips o32: arguments 5 and 6 are words on the caller's stack (a bad
     * stack reads as 0; the handler then fails as the kernel would). */
    uint64_t sp = tc_emu_reg(emu, arch->sp_reg) & mask;
    for (int i = abi->first_stack_arg; i < 6; i++) {
      uint64_t v = 0;
      if (tc_sys_get_uint(emu,
                          sp + abi->stack_arg_offset +
                              4u * (unsigned)(i - abi->first_stack_arg),
                          4, &v) < 0)
        v = 0;
      c->a[i] = v;
    }
  }
  c->nr = (uint32_t)nr;
  c->name = nr <= UINT32_MAX ? tc_arch_syscall_name(arch, c->nr) : NULL;

  const sys_table *t = table_for(arch);
  tc_sys_fn fn = (t && nr < t->n) ? t->fn[nr] : NULL;
  for (int i = 0; t && !fn && i < t->nhigh; i++)
    if (t->high[i].nr == nr)
      fn = t->high[i].fn;
  *fn_out = fn;
  return nr;
}

void tc_linux_syscall(tc_emu *emu) {
  const tc_arch *arch = emu->arch;
  const tc_syscall_abi *abi = &arch->sys;
  uint64_t mask = arch->ptr_size == 4 ? 0xffffffffull : ~0ull;
  const tc_linux_compat *compat =
      emu->sys_compat ? tc_linux_arch_of(arch)->compat : NULL;

  tc_sys_call c;
  memset(&c, 0, sizeof c);
  c.emu = emu;
  c.st = tc_linux_state_of(emu);
  uint64_t nr;
  tc_sys_fn fn = NULL;
  bool unknown = false;
  if (compat) {
    fn = compat_call(&c, compat, &unknown);
    nr = c.nr;
  } else {
    nr = read_call(&c, &fn);
  }
  int64_t ret;
  /* Test hook (tests/test_limits.c, through the session's debug
   * switches): syscall NAME never returns, as a stall inside the engine
   * would, so the watchdog that abandons such an engine can be tested for
   * real. */
  const char *stall = emu->debug.stall_syscall;
  if (stall && c.name && strcmp(stall, c.name) == 0) {
    static const char said[] = "tracecorn: test stall\n";
    if (write(2, said, sizeof said - 1) < 0)
      abort();
    for (;;)
      pause();
  }
  if (tc_thread_take_eintr(emu)) {
    ret = -EINTR; /* its wait was interrupted by a signal: the handler runs */
  } else if (fn) {
    ret = fn(&c);
  } else {
    ret = -ENOSYS;
    if (!unknown) /* a compat call has had its notice */
      report_unknown(&c, nr);
    unknown = true;
  }
  if (c.restart) {
    /* The thread blocked (emu/linux/linux_thread.c): it goes back to the trap
     * instruction, which runs again once the thread is woken; the call is
     * reported then, with its result. The PC is moved once the engine has
     * stopped (tc_emu_schedule): a PC write inside a hook makes Unicorn
     * 2.0.1 resume at once, dropping the stop request. */
    emu->restart_pc = emu->cur_pc | (tc_emu_thumb(emu) ? 1 : 0);
    emu->restart_pending = true;
    return;
  }
  emu->syscall_count++;
  /* Handlers speak host errno; the guest may number them otherwise. */
  if (ret < 0 && ret > -4096)
    ret = -(int64_t)tc_xlat_errno_to_guest(arch, (int)-ret);

  if (compat) {
    tc_linux_set_reg(emu, compat->ret_reg, (uint64_t)ret); /* the full rax */
  } else if (!c.no_return) {
    if (abi->err_reg >= 0) {
      /* Error-flag ABIs (mips a3): positive errno plus a flag register. */
      bool failed = ret < 0 && ret > -4096;
      tc_emu_set_reg(emu, abi->err_reg, failed ? 1 : 0);
      tc_emu_set_reg(emu, abi->ret_reg, (uint64_t)(failed ? -ret : ret) & mask);
    } else {
      tc_emu_set_reg(emu, abi->ret_reg, (uint64_t)ret & mask);
    }
  }

  if (emu->obs.on_syscall) {
    tc_syscall_record rec;
    memset(&rec, 0, sizeof rec);
    rec.nr = c.nr;
    rec.name = c.name;
    memcpy(rec.args, c.a, sizeof rec.args);
    rec.ret = c.no_return ? 0 : ret;
    if (c.no_return && c.action == TC_SYS_ACT_NONE) {
      /* sigreturn: what the guest sees in the return register is the
       * interrupted code's value, restored from the frame */
      uint64_t v = tc_emu_reg(emu, abi->ret_reg) & mask;
      rec.ret = arch->ptr_size == 4 ? (int64_t)(int32_t)v : (int64_t)v;
      if (abi->err_reg >= 0 && tc_emu_reg(emu, abi->err_reg) != 0)
        rec.ret = -(int64_t)v; /* mips: a3 set, v0 the errno */
    }
    rec.unknown = unknown;
    rec.compat = compat != NULL;
    emu->obs.on_syscall(emu->obs.ctx, &rec);
  }

  /* A signal the call sent to the process itself, with a handler: the
   * handler runs now, as the kernel delivers on the way back to user mode
   * (its frame is a kernel write of this syscall). */
  tc_signal_syscall_end(&c);
  if (c.action == TC_SYS_ACT_EXIT)
    tc_emu_exit(emu, c.action_arg);
  else if (c.action == TC_SYS_ACT_KILL)
    tc_emu_kill(emu, c.action_arg);
  else if (c.action == TC_SYS_ACT_EXEC_STOP) {
    emu->exec_stopped = true;
    emu->exited = true;
    uc_emu_stop(emu->uc);
  }
}
