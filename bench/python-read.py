#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The Python binding's speeds (docs/python.md, "Speed"): per event, reading
a trace by iteration (fields only; then registers and memory decoded too),
the bulk columns, seek, state and memory at random instructions.

    bench/python-read.py [BUILD_DIR] [N]    (N: fib64's argument, default 22)

Records fib64 N (0.4 M instructions at 22) into tct and trac in a temporary
directory with the build's CLI, and reads them with the build's library."""

import os
import random
import subprocess
import sys
import tempfile
import time

root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
build = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(root, "build"))
n_arg = sys.argv[2] if len(sys.argv) > 2 else "22"
sys.path.insert(0, os.path.join(root, "python"))
import tracecorn  # noqa: E402

tracecorn.load(os.path.join(build, "libtracecorn.so.1"))


def best(fn, rounds=3):
    times = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        r = fn()
        times.append(time.perf_counter() - t0)
    return min(times), r


with tempfile.TemporaryDirectory() as d:
    prefix = os.path.join(d, "fib")
    subprocess.run([os.path.join(build, "tracecorn"), "record", "-q", "-f", "tct,trac", "-o",
                    prefix, "--", os.path.join(build, "examples/guests/fib64"), n_arg],
                   check=True, stdout=subprocess.DEVNULL)
    print(f"tracecorn {tracecorn.version()}, Python {sys.version.split()[0]}, "
          f"{os.cpu_count()} cores, load {os.getloadavg()[0]:.2f}")
    for path in (prefix + ".tct", prefix + ".trace64"):
        fmt = tracecorn.info(path).format
        insns = tracecorn.info(path).insns

        def events_only():
            with tracecorn.open(path) as t:
                return sum(1 for _ in t)

        def with_regs_mem():
            k = 0
            with tracecorn.open(path) as t:
                for e in t:
                    if e.kind == "insn":
                        k += len(e.regs) + len(e.mem)
            return k

        def columns_none():
            with tracecorn.open(path) as t:
                return len(t.events(fields=("index",))["index"])

        def columns_all():
            with tracecorn.open(path) as t:
                return len(t.events(fields=list(tracecorn.COLUMNS))["pc"])

        s1, nev = best(events_only)
        s2, _ = best(with_regs_mem)
        s3, _ = best(columns_none)
        s4, _ = best(columns_all)
        print(f"{fmt:5} {insns} instructions, {nev} events:")
        print(f"  iterate events              {s1 / nev * 1e6:6.2f} us/event "
              f"({nev / s1 / 1e6:.2f} M events/s)")
        print(f"  + regs and mem of each insn {s2 / insns * 1e6:6.2f} us/insn")
        print(f"  events(fields=('index',))   {s3 / insns * 1e9:6.0f} ns/insn "
              f"({insns / s3 / 1e6:.1f} M insns/s: the reader alone)")
        print(f"  events(every field)         {s4 / insns * 1e9:6.0f} ns/insn")
        with tracecorn.open(path) as t:
            t0 = time.perf_counter()
            count = t.insn_count
            s5 = time.perf_counter() - t0
            rnd = random.Random(1)
            picks = [rnd.randrange(count) for _ in range(200)]
            sp = t.state(0)[t.arch.sp]
            t0 = time.perf_counter()
            for p in picks:
                t.state(p)
                t.memory(p, sp - 64, 64)
            s6 = (time.perf_counter() - t0) / len(picks)
            t0 = time.perf_counter()
            for p in picks[:20]:
                t.seek(p)
                next(t)
            s7 = (time.perf_counter() - t0) / 20
        print(f"  timeline (first state())    {s5:6.2f} s to index")
        print(f"  state(n) + memory(n, 64 B)  {s6 * 1e6:6.0f} us at a random n")
        print(f"  seek(n) + next()            {s7 * 1e3:6.2f} ms at a random n")
