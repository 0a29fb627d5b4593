# SPDX-License-Identifier: GPL-2.0-or-later
"""ctypes declarations of libtracecorn's public API (include/tracecorn/tracecorn.h).

Only what the binding calls is declared. Events never cross as C structs: the
library packs them into records of little-endian fields, many per call
(tc_trace_read_packed, docs/python.md). The structs mirrored here are those the
API makes the caller allocate: they start with ``size``, which the library reads
to know how much of them the caller knows, so a mirror of the first fields is
valid by the API's own rules (docs/api.md, "Structs that grow"); and
tc_trace_info, read-only through a pointer, whose fields are only ever added at
its end. _check_mirrors() tests the mirrors' layout against the library's
defaults the first time the library is loaded.
"""

import ctypes
import os

__all__ = ["Error", "lib", "load", "library_path"]


class Error(Exception):
    """An error libtracecorn reported: ``message`` is its one-line message."""

    def __init__(self, message):
        super().__init__(message)
        self.message = message


class ReadError(Error):
    """A trace that cannot be read: missing, of no known format, corrupt or
    truncated."""


class RecordError(Error):
    """A recording that could not be made (bad program, options or output)."""


c_char_p = ctypes.c_char_p
c_void_p = ctypes.c_void_p
c_size_t = ctypes.c_size_t
c_u8 = ctypes.c_uint8
c_u16 = ctypes.c_uint16
c_u32 = ctypes.c_uint32
c_u64 = ctypes.c_uint64
c_int = ctypes.c_int
c_strv = ctypes.POINTER(ctypes.c_char_p)  # const char *const * (NULL-terminated)


class tc_error(ctypes.Structure):
    _fields_ = [("msg", ctypes.c_char * 512)]

    def text(self):
        return self.msg.decode("utf-8", "replace")


class tc_trace_info(ctypes.Structure):
    # read through the library's pointer; only its first fields are used
    _fields_ = [
        ("arch", c_void_p),
        ("entry", c_u64),
        ("load_base", c_u64),
        ("pid", c_u32),
        ("exe_path", c_char_p),
        ("exe_data", c_void_p),
        ("exe_size", c_size_t),
        ("argc", c_int),
        ("argv", c_strv),
        ("seed", c_u64),
        ("keyframe_interval", c_u32),
        ("has_memory", c_u8),
        ("continuous", c_u8),
    ]


class tc_options(ctypes.Structure):
    _fields_ = [
        ("size", c_size_t),
        ("arch", c_char_p),
        ("seed", c_u64),
        ("env", c_strv),
        ("fs_root", c_char_p),
        ("cwd", c_char_p),
        ("stack_size", c_u64),
        ("max_memory", c_u64),
        ("stdin_fd", c_int),
        ("stdout_fd", c_int),
        ("stderr_fd", c_int),
        ("max_insns", c_u64),
        ("max_procs", c_u64),
        ("keyframe_interval", c_u32),
        ("record_memory", c_int),
        ("exact", c_int),
        ("quiet", c_int),
        ("host_stat", c_int),
        ("writer_options", c_strv),
        ("trace_ranges", c_strv),
        ("trace_funcs", c_strv),
        ("sched_quantum", c_u64),
        ("no_follow_exec", c_int),
        ("writer_threads", c_int),
        ("force", c_int),
        ("tty", c_int),
    ]


class tc_run_result(ctypes.Structure):
    _fields_ = [
        ("size", c_size_t),
        ("reason", c_int),
        ("status", c_int),
        ("signal", c_int),
        ("insns", c_u64),
        ("syscalls", c_u64),
        ("mem_accesses", c_u64),
    ]


class tc_trace_summary(ctypes.Structure):
    _fields_ = [
        ("size", c_size_t),
        ("format", c_void_p),
        ("arch", c_void_p),
        ("exe_path", ctypes.c_char * 512),
        ("entry", c_u64),
        ("insns", c_u64),
        ("syscalls", c_u64),
        ("maps", c_u64),
        ("faults", c_u64),
        ("keyframes", c_u64),
        ("first_pc", c_u64),
        ("last_pc", c_u64),
        ("have_exit", c_int),
        ("exit_status", c_int),
        ("exit_message", ctypes.c_char * 256),
        ("modules", (ctypes.c_char * 160) * 8),
        ("nmodules", c_int),
        ("more_modules", c_int),
    ]


class tc_verify_result(ctypes.Structure):
    _fields_ = [
        ("held", c_u8),
        ("mismatches", c_u64),
        ("insn", c_u64),
        ("field", ctypes.c_char * 64),
        ("expected", ctypes.c_char * 96),
        ("found", ctypes.c_char * 96),
    ]


VCHK_COUNT = 11  # TC_VCHK_COUNT


class tc_verify_table(ctypes.Structure):
    _fields_ = [
        ("size", c_size_t),
        ("insns", c_u64),
        ("regs_held", c_u16),
        ("regs_total", c_u16),
        ("coverage", c_int),
        ("checks", tc_verify_result * VCHK_COUNT),
    ]


class tc_filter(ctypes.Structure):
    # the first fields only: the library takes the others as their defaults
    _fields_ = [
        ("size", c_size_t),
        ("ranges", c_strv),
        ("pcs", c_void_p),
        ("npcs", c_size_t),
        ("syscalls", c_strv),
        ("syscalls_only", c_int),
        ("from_", c_u64),
    ]


class tc_convert_report(ctypes.Structure):
    _fields_ = [
        ("size", c_size_t),
        ("dropped_kinds", c_int),
        ("dropped", ctypes.c_char * 1024),
        ("rebuilt", ctypes.c_char * 256),
    ]


E = ctypes.POINTER(tc_error)
_P = c_void_p

# name: (restype, argtypes)
_SIGS = {
    "tc_version": (c_char_p, []),
    "tc_arch_by_name": (_P, [c_char_p]),
    "tc_arch_name": (c_char_p, [_P]),
    "tc_arch_ptr_size": (c_int, [_P]),
    "tc_arch_big_endian": (c_int, [_P]),
    "tc_arch_state_size": (c_size_t, [_P]),
    "tc_arch_reg_count": (c_int, [_P]),
    "tc_arch_reg_name": (c_char_p, [_P, c_int]),
    "tc_arch_reg_size": (ctypes.c_uint, [_P, c_int]),
    "tc_arch_reg_flags": (ctypes.c_uint, [_P, c_int]),
    "tc_arch_reg_offset": (c_size_t, [_P, c_int]),
    "tc_arch_pc_reg": (c_int, [_P]),
    "tc_arch_sp_reg": (c_int, [_P]),
    "tc_arch_syscall_name": (c_char_p, [_P, c_u32]),
    "tc_disasm": (c_int, [_P, c_u64, c_char_p, c_size_t, c_char_p, c_size_t]),
    "tc_formats": (ctypes.POINTER(_P), []),
    "tc_format_by_name": (_P, [c_char_p]),
    "tc_format_by_extension": (_P, [c_char_p]),
    "tc_format_detect": (_P, [c_char_p, E]),
    "tc_format_name": (c_char_p, [_P]),
    "tc_format_description": (c_char_p, [_P]),
    "tc_format_extension": (c_char_p, [_P, _P]),
    "tc_format_caps": (c_u32, [_P]),
    "tc_format_can_read": (c_int, [_P]),
    "tc_format_can_write": (c_int, [_P]),
    "tc_trace_open": (_P, [c_char_p, _P, E]),
    "tc_trace_close": (None, [_P]),
    "tc_trace_get_info": (ctypes.POINTER(tc_trace_info), [_P]),
    "tc_trace_format": (_P, [_P]),
    "tc_trace_seek": (c_int, [_P, c_u64, E]),
    "tc_trace_read_packed": (
        c_int,
        [_P, _P, c_size_t, c_size_t, ctypes.POINTER(c_size_t), ctypes.POINTER(c_size_t), E],
    ),
    "tc_trace_columns": (
        c_int,
        [_P, ctypes.POINTER(_P), c_int, c_size_t, c_size_t,
         ctypes.POINTER(c_size_t), ctypes.POINTER(c_size_t), E],
    ),
    "tc_timeline_open": (_P, [c_char_p, _P, E]),
    "tc_timeline_free": (None, [_P]),
    "tc_timeline_insns": (c_u64, [_P]),
    "tc_timeline_truncated": (c_char_p, [_P]),
    "tc_timeline_state": (_P, [_P, c_u64, ctypes.POINTER(c_u32), E]),
    "tc_timeline_read": (ctypes.c_int64, [_P, c_u64, c_u64, c_size_t, c_char_p, E]),
    "tc_options_defaults": (None, [ctypes.POINTER(tc_options), c_size_t]),
    "tc_session_new": (_P, [ctypes.POINTER(tc_options), E]),
    "tc_session_free": (None, [_P]),
    "tc_session_load_elf": (c_int, [_P, c_char_p, c_strv, E]),
    "tc_session_load_raw": (c_int, [_P, c_char_p, c_size_t, c_u64, c_u64, E]),
    "tc_session_info": (ctypes.POINTER(tc_trace_info), [_P]),
    "tc_session_add_writer": (c_int, [_P, _P, c_char_p, E]),
    "tc_session_run": (c_int, [_P, ctypes.POINTER(tc_run_result), E]),
    "tc_session_stop": (None, [_P]),
    "tc_session_output_ok": (c_int, [_P, c_char_p]),
    "tc_session_pids": (c_size_t, [_P, ctypes.POINTER(c_u32), c_size_t]),
    "tc_output_is_stream": (c_int, [c_char_p]),
    "tc_output_clobbers": (c_int, [c_char_p, _P]),
    "tc_trace_summarize": (c_int, [c_char_p, ctypes.POINTER(tc_trace_summary), E]),
    "tc_verify_checks": (c_int, [c_char_p, c_char_p, _P, ctypes.POINTER(tc_verify_table), E]),
    "tc_verify_check_name": (c_char_p, [c_int]),
    "tc_convert_checked": (
        c_int,
        [c_char_p, _P, _P, c_char_p, ctypes.POINTER(tc_filter), c_strv, c_int,
         ctypes.POINTER(tc_convert_report), E],
    ),
}

lib = None
library_path = None


def _candidates():
    env = os.environ.get("TRACECORN_LIBRARY")
    if env:
        yield os.path.join(env, "libtracecorn.so.1") if os.path.isdir(env) else env
        return
    try:
        from . import _config  # written by `cmake --install`

        yield _config.LIBRARY
    except ImportError:
        pass
    yield "libtracecorn.so.1"  # the dynamic loader's search (ldconfig)


def load(path=None):
    """Loads libtracecorn (once). ``path``: the library file or its folder;
    else $TRACECORN_LIBRARY, else the installed library this package was
    installed with, else ``libtracecorn.so.1`` from the loader's path."""
    global lib, library_path
    if lib is not None and path is None:
        return lib
    paths = [os.path.join(path, "libtracecorn.so.1") if path and os.path.isdir(path) else path] \
        if path else list(_candidates())
    errors = []
    for p in paths:
        try:
            handle = ctypes.CDLL(p)
        except OSError as e:
            errors.append(str(e))
            continue
        for name, (res, args) in _SIGS.items():
            try:
                fn = getattr(handle, name)
            except AttributeError:
                raise Error(f"{p}: no {name}: libtracecorn is older than this "
                            "Python package") from None
            fn.restype = res
            fn.argtypes = args
        lib, library_path = handle, p
        _check_mirrors()
        return lib
    raise Error("cannot load libtracecorn (" + "; ".join(errors) + "); set "
                "TRACECORN_LIBRARY to the library file or call tracecorn.load(path)")


def _check_mirrors():
    """The size-tagged struct whose layout matters most (tc_options: many
    fields, written by the library's defaults) is checked against what the
    library says its defaults are: a mirror out of step with the header
    fails here, not in a recording."""
    o = tc_options()
    lib.tc_options_defaults(ctypes.byref(o), ctypes.sizeof(o))
    ok = (o.size == ctypes.sizeof(o) and o.record_memory == 1
          and o.keyframe_interval == 4096 and o.stack_size == 8 << 20
          and (o.stdin_fd, o.stdout_fd, o.stderr_fd) == (0, 1, 2)
          and o.max_insns == 0 and o.force == 0 and o.tty == 0)
    if not ok:
        raise Error("tracecorn: the Python package's tc_options does not match "
                    f"the library {library_path}")


def strv(items):
    """A NULL-terminated char* array (kept alive by the caller)."""
    if items is None:
        return None
    enc = [s.encode() if isinstance(s, str) else bytes(s) for s in items]
    arr = (c_char_p * (len(enc) + 1))(*enc, None)
    return ctypes.cast(arr, c_strv), arr
