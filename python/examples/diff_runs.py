"""Diff two runs: record a program twice with different arguments and say
where their control flow parts, what differs there, and how each ends.

    python3 diff_runs.py PROGRAM "ARGS OF RUN A" "ARGS OF RUN B"
"""
import os
import sys
import tempfile

import tracecorn


def first_difference(a, b):
    """The first index where two sequences differ (or the shorter length)."""
    n = min(len(a), len(b))
    lo, step = 0, 1 << 16
    while lo < n and a[lo:lo + step] == b[lo:lo + step]:  # whole chunks at C speed
        lo += step
    while lo < n and a[lo] == b[lo]:
        lo += 1
    return lo


def diff_runs(program, args_a, args_b, workdir):
    traces = []
    with open(os.devnull, "w") as quiet:
        for name, args in (("a", args_a), ("b", args_b)):
            rec = tracecorn.record([program, *args], output=os.path.join(workdir, name),
                                   stdout=quiet)
            traces.append((rec, tracecorn.open(rec.files[0])))
    (ra, ta), (rb, tb) = traces
    pcs_a = ta.events(fields=("pc",))["pc"]
    pcs_b = tb.events(fields=("pc",))["pc"]
    split = first_difference(pcs_a, pcs_b)
    report = {"split": split, "status": (ra.status, rb.status),
              "insns": (len(pcs_a), len(pcs_b))}
    if 0 < split < min(len(pcs_a), len(pcs_b)):
        branch = split - 1  # the last instruction both ran: it chose differently
        sa, sb = ta.state(branch), tb.state(branch)
        report["branch"] = branch
        report["branch_pc"] = pcs_a[branch]
        report["next"] = (pcs_a[split], pcs_b[split])
        report["regs"] = {r: (sa[r], sb[r]) for r in ta.arch.registers if sa[r] != sb[r]}
        ta.seek(branch)
        report["text"] = next(e for e in ta if e.kind == "insn").disasm()
    ta.close()
    tb.close()
    return report


def main(program, args_a, args_b):
    with tempfile.TemporaryDirectory() as d:
        r = diff_runs(program, args_a.split(), args_b.split(), d)
    print(f"run a: {r['insns'][0]} instructions, status {r['status'][0]}; "
          f"run b: {r['insns'][1]} instructions, status {r['status'][1]}")
    if "branch" not in r:
        print(f"same path for the first {r['split']} instructions")
        return 0
    print(f"the runs part after instruction {r['branch']}: {r['branch_pc']:#x} "
          f"({r['text']}) goes on at {r['next'][0]:#x} in run a, {r['next'][1]:#x} in run b")
    for reg, (va, vb) in sorted(r["regs"].items()):
        print(f"  {reg}: {va:#x} in run a, {vb:#x} in run b")
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:4]))
