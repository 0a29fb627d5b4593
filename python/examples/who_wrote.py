"""Who wrote a byte: the last instruction (or the kernel, for a syscall)
that wrote ADDR before instruction BEFORE (default: the end).

    python3 who_wrote.py TRACE ADDR [BEFORE]
"""
import sys

import tracecorn


def who_wrote(path, addr, before=None):
    """(instruction index, by the kernel?) of the last write of addr, or None."""
    with tracecorn.open(path) as t:
        cols = t.events(fields=("mem_index", "mem_addr", "mem_size", "mem_kind"))
    last = None
    for i, a, n, k in zip(cols["mem_index"], cols["mem_addr"], cols["mem_size"],
                          cols["mem_kind"]):
        if before is not None and i >= before:
            break
        if k & tracecorn.MEM_WRITE and a <= addr < a + n:
            last = (i, bool(k & tracecorn.MEM_KERNEL))
    return last


def main(path, addr, before=None):
    found = who_wrote(path, addr, before)
    if found is None:
        print(f"nothing wrote {addr:#x}")
        return 1
    index, kernel = found
    with tracecorn.open(path) as t:
        t.seek(index)
        insn = next(e for e in t if e.kind == "insn")
        old = t.memory(index, addr, 1)
        new = t.memory(index + 1, addr, 1)
        if kernel:
            call = next(e for e in t if e.kind == "syscall")
            who = f"the kernel, in {call.name} called by"
        else:
            who = "instruction"
    print(f"{who} {index} at {insn.pc:#x} ({insn.disasm()}) wrote "
          f"{new.hex() or '?'} at {addr:#x} (was {old.hex() or 'unknown'})")
    return 0


if __name__ == "__main__":
    args = sys.argv[1:]
    sys.exit(main(args[0], int(args[1], 16),
                  int(args[2]) if len(args) > 2 else None))
