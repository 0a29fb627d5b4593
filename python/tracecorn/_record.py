# SPDX-License-Identifier: GPL-2.0-or-later
"""tracecorn.record: `tracecorn record` as a function (tools/cmd_record.c)."""

import ctypes
import os
import threading
import sys

from . import _lib
from ._lib import RecordError

_REASONS = {1: "exited", 2: "killed", 3: "max-insns", 4: "interrupted", 5: "error"}


class Recording:
    """What a recording gave: ``status`` (what the CLI exits with: the
    guest's code, 128+signal, 124 at max_insns...), ``reason``,
    ``signal``, ``insns``, ``syscalls``, ``mem_accesses``; ``files``: the
    traces written (the first process's, then each forked child's
    PREFIX.PID.EXT), ``pids``, ``incomplete`` (files whose writing failed)
    and ``refused`` (format name -> why it wrote nothing)."""

    def __repr__(self):
        return f"<Recording status={self.status} insns={self.insns} files={self.files}>"


def _fd(x, default):
    if x is None:
        return default
    if isinstance(x, int):
        return x
    return x.fileno()


def _b(s):
    return s if isinstance(s, bytes) else os.fsencode(s)


def record(argv, formats="tct", output=None, root=None, env=None,
           inherit_env=False, cwd=None, seed=0, max_insns=0, max_memory=0,
           max_procs=0, memory=True, exact=False, keyframe=0,
           sched_quantum=0, no_follow=False, host_stat=False,
           writer_options=(), trace_ranges=(), trace_funcs=(), zst=False,
           force=False, quiet=False, stdin=None, stdout=None, stderr=None,
           raw=None, arch=None, base=None, entry=None, tty=False):
    """Records a program as ``tracecorn record`` does, with the same
    options under their long names: ``argv`` (the program then its
    arguments; a string is one program without arguments), ``formats``
    ("tct,trac", a list, "all" or "readable"), ``output`` (-o: a prefix,
    or a name with a format's extension, ".zst" compressing; default: the
    program's base name here), ``env`` (a dict or "K=V" list; the guest's
    whole environment unless ``inherit_env``), ``root``, ``cwd``,
    ``max_insns``... The guest's stdin/stdout/stderr are this process's
    unless given (a file or fd); ``tty=True`` lets those that are terminals
    answer as terminals (--tty; their modes are restored after the run).
    ``raw`` (bytes or a path) records raw code
    of ``arch`` at ``base`` instead. Returns a Recording; raises
    RecordError when nothing could be recorded."""
    from . import _L
    L = _L()
    if isinstance(argv, (str, bytes, os.PathLike)):
        argv = [argv]
    argv = [os.fspath(a) for a in argv]
    if raw is None and not argv:
        raise RecordError("record: missing PROGRAM")
    if raw is not None and (arch is None or base is None):
        raise RecordError("raw code needs arch and base")
    if root is not None and not os.path.isdir(root):
        raise RecordError(f"--root {root}: not a directory")
    if cwd is not None:
        where = os.path.join(root, cwd.lstrip("/")) if root else cwd
        if not os.path.isdir(where):
            raise RecordError(f"--cwd {cwd}: no such directory"
                              + (f" in --root {root}" if root else ""))

    # the guest's environment: empty, or ours, then env's K=V replacing
    given = [f"{k}={v}" for k, v in env.items()] if isinstance(env, dict) else list(env or [])
    for e in given:
        if "=" not in e:
            raise RecordError(f"--env takes K=V: {e}")
    envl = []
    if inherit_env:
        keys = {e.split("=", 1)[0] for e in given}
        envl = [f"{k}={v}" for k, v in os.environ.items() if k not in keys]
    envl += given
    keep = []  # what the C strings' pointers need alive

    def sv(items):
        r = _lib.strv(items)
        if r is None:
            return None
        keep.append(r)
        return r[0]

    o = _lib.tc_options()
    L.tc_options_defaults(ctypes.byref(o), ctypes.sizeof(o))
    if arch is not None:
        o.arch = arch.encode()
    o.seed = seed
    o.env = sv(envl)
    o.fs_root = _b(root) if root is not None else None
    o.cwd = _b(cwd) if cwd is not None else None
    o.max_memory = max_memory
    o.stdin_fd = _fd(stdin, 0)
    o.stdout_fd = _fd(stdout, 1)
    o.stderr_fd = _fd(stderr, 2)
    o.max_insns = max_insns
    o.max_procs = max_procs
    if keyframe:
        o.keyframe_interval = keyframe
    o.record_memory = int(bool(memory))
    o.exact = int(bool(exact))
    o.quiet = int(bool(quiet))
    o.host_stat = int(bool(host_stat))
    o.writer_options = sv(list(writer_options))
    o.trace_ranges = sv(list(trace_ranges) or None)
    o.trace_funcs = sv(list(trace_funcs) or None)
    o.sched_quantum = sched_quantum
    o.no_follow_exec = int(bool(no_follow))
    o.force = int(bool(force))
    o.tty = int(bool(tty))

    err = _lib.tc_error()
    s = L.tc_session_new(ctypes.byref(o), ctypes.byref(err))
    if not s:
        raise RecordError(err.text())
    try:
        return _run(L, s, o, argv, formats, output, zst, force, quiet, raw,
                    base, entry, sv, err)
    finally:
        L.tc_session_free(s)


def _run(L, s, o, argv, formats, output, zst, force, quiet, raw, base, entry,
         sv, err):
    from . import Arch, formats as all_formats
    if raw is not None:
        code = raw if isinstance(raw, (bytes, bytearray)) else open(raw, "rb").read()
        rc = L.tc_session_load_raw(s, bytes(code), len(code), base,
                                   base if entry is None else entry, ctypes.byref(err))
        prog = "raw" if isinstance(raw, (bytes, bytearray)) else os.fspath(raw)
    else:
        rc = L.tc_session_load_elf(s, _b(argv[0]), sv(argv), ctypes.byref(err))
        prog = argv[0]
    if rc < 0:
        raise RecordError(err.text())
    arch = Arch._of(L.tc_session_info(s).contents.arch)

    # the formats, as -f takes them
    names = formats.split(",") if isinstance(formats, str) else list(formats)
    chosen, every = [], False
    known = None
    for n in names:
        if n in ("all", "readable"):
            every = True
            known = known or all_formats()
            for f in known:
                if f.can_write and (n == "all" or f.can_read) and f.name not in [c.name for c in chosen]:
                    chosen.append(f)
            continue
        p = L.tc_format_by_name(n.encode())
        if not p or not L.tc_format_can_write(p):
            raise RecordError(f"unknown format '{n}' (see tracecorn.formats())")
        from . import Format
        if n not in [c.name for c in chosen]:
            chosen.append(Format(p))

    prefix = output if output is not None else os.path.basename(prog)
    prefix = os.fspath(prefix)
    stream = bool(L.tc_output_is_stream(_b(prefix)))
    if stream and (every or len(chosen) != 1 or zst):
        raise RecordError(f"-o {prefix}: a stream output holds one format, uncompressed")
    if not stream and prefix.endswith(".zst") and len(prefix) > 4:
        zst, prefix = True, prefix[:-4]
    if not stream:
        for f in chosen:
            ext = f.extension(arch) or ""
            if ext and len(prefix) > len(ext) and prefix.endswith(ext):
                prefix = prefix[:-len(ext)]
                break
    z = ".zst" if zst else ""

    def path_of(f):
        return prefix if stream else prefix + (f.extension(arch) or "") + z

    if not force:
        for f in chosen:
            if L.tc_output_clobbers(_b(path_of(f)), f._ptr):
                raise RecordError(f"{path_of(f)} exists and is not a trace: "
                                  "not replaced (force=True replaces it)")
    res = Recording()
    res.refused, opened = {}, []
    for f in chosen:
        p = path_of(f)
        if L.tc_session_add_writer(s, f._ptr, _b(p), ctypes.byref(err)) < 0:
            res.refused[f.name] = err.text()
            if not every and not quiet:
                print(f"tracecorn: {err.text()}", file=sys.stderr)
            continue
        opened.append((f, p))
    if not opened:
        raise RecordError("no output can be written" + "".join(
            f"; {k}: {v}" for k, v in res.refused.items()))

    for fobj in (sys.stdout, sys.stderr):
        try:
            fobj.flush()
        except (AttributeError, ValueError):
            pass
    r = _lib.tc_run_result()
    r.size = ctypes.sizeof(r)
    saved = {}
    if o.tty:  # the program may change its terminals' modes: put them back
        import termios
        for fd in (o.stdin_fd, o.stdout_fd, o.stderr_fd):
            try:
                saved[fd] = termios.tcgetattr(fd)
            except (termios.error, OSError):
                pass
    interrupted = False
    try:
        if threading.current_thread() is threading.main_thread():
            # Python runs its SIGINT handler only between bytecodes of the
            # main thread, never during a ctypes call: the recording runs on
            # a thread of its own (ctypes lets go of the GIL) while this one
            # waits, and Ctrl-C stops it as the CLI's does (tc_session_stop:
            # every trace closed validly, reason "interrupted").
            # (An Event, not Thread.join: a join that KeyboardInterrupt cuts
            # short can leave the thread looking finished while it runs.)
            box, done = [], threading.Event()

            def run():
                try:
                    box.append(L.tc_session_run(s, ctypes.byref(r),
                                                ctypes.byref(err)))
                finally:
                    done.set()
            t = threading.Thread(target=run)
            t.start()
            while not done.is_set():
                try:
                    done.wait(0.05)
                except KeyboardInterrupt:
                    interrupted = True
                    L.tc_session_stop(s)
            t.join()
            rc = box[0]
        else:
            rc = L.tc_session_run(s, ctypes.byref(r), ctypes.byref(err))
    finally:
        for fd, mode in saved.items():
            termios.tcsetattr(fd, termios.TCSANOW, mode)
    if interrupted:
        # the traces are complete (reason "interrupted"); the script stops
        # as Ctrl-C asks
        raise KeyboardInterrupt
    if rc < 0 and r.reason == 0:
        raise RecordError(err.text())
    res.error = err.text() if rc < 0 else None
    res.reason = _REASONS.get(r.reason, r.reason)
    res.status = 125 if rc < 0 else r.status
    res.signal, res.insns = r.signal, r.insns
    res.syscalls, res.mem_accesses = r.syscalls, r.mem_accesses
    pids = (ctypes.c_uint32 * 4096)()
    n = L.tc_session_pids(s, pids, 4096)
    res.pids = list(pids[:min(n, 4096)])
    res.files, res.incomplete = [], []
    for f, p in opened:
        res.files.append(p)
        if not L.tc_session_output_ok(s, _b(p)):
            res.incomplete.append(p)
    if not stream:
        for pid in res.pids[1:]:
            for f, _ in opened:
                p = f"{prefix}.{pid}{f.extension(arch) or ''}{z}"
                if L.tc_session_output_ok(s, _b(p)):
                    res.files.append(p)
                elif os.path.exists(p):
                    res.files.append(p)
                    res.incomplete.append(p)
    return res
