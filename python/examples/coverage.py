"""Coverage of a function: which of its instructions ran, and how often.

    python3 coverage.py TRACE FUNCTION
"""
import collections
import sys

import tracecorn


def coverage(path, func):
    """[(address, text, times run)] of every instruction of func, and how
    many times it was entered."""
    with tracecorn.open(path) as t:
        start, size = tracecorn.symbols(t.exe)[func]
        start += t.load_base
        pcs = t.events(fields=("pc",))["pc"]
        hits = collections.Counter(pc for pc in pcs if start <= pc < start + size)
        code = t.memory(0, start, size)  # the function's bytes, as mapped
        rows, pc = [], start
        while pc < start + size:
            n, text = t.arch.decode(pc, code[pc - start:])
            if n == 0:
                break
            rows.append((pc, text, hits[pc]))
            pc += n
    return rows, hits[start]


def main(path, func):
    rows, calls = coverage(path, func)
    ran = sum(1 for r in rows if r[2])
    print(f"{func}: {ran} of {len(rows)} instructions ran "
          f"({100 * ran // max(1, len(rows))}%), entered {calls} times")
    for pc, text, times in rows:
        print(f"  {times:8} {pc:#x}  {text}" if times else f"  {'-':>8} {pc:#x}  {text}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
