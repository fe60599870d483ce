"""PAPI's counters around each kernel call of a profile's box (POST /profile, tool papi), and the
judge's look-up of the event names a request gives.

In the box, `python -I -m hb.execution.papibox --library L --events A,B --header H --out C -- <runner argv>`
opens the events in this process before anything else runs, with inheritance where the kernel
allows it (so that the threads the kernel starts count too), then runs the box runner
(hb.execution.boxrunner, or hb.execution.pybox for a python delivery) in the same interpreter with its kernel
wrapped: counters read just before each call and just after it. H gets PAPI's version,
which events opened and PAPI's words for those that did not, and whether threads inherit; C one
line per call with the values in the order of the opened events. The submission runs in this
process, so the files only inform; nothing in them decides a grade.

Outside the box (trusted, in a process of its own), `python -I -m hb.execution.papibox --library L --names
A B` prints PAPI's version and the names PAPI does not know on this machine, as JSON.

Only the standard library is imported, as in hb.execution.boxrunner.
"""

from __future__ import annotations

import ctypes
import importlib
import json
import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

# papi.h's (PAPI 7.0) codes, option numbers and flags.
_OK, _ENOEVNT, _NULL, _LIB_VERSION, _INHERIT, _INHERIT_ALL = 0, -7, -1, 21, 28, 1
# The box runners papibox may wrap, by the module name the runner's argv gives.
RUNNERS = ("hb.execution.boxrunner", "hb.execution.pybox")
# PAPI_option_t is a union of small structs; PAPI_set_opt reads only the member it is told.
_OPTION_BYTES = 4096


class PapiError(Exception):
    """PAPI could not be loaded or initialised, in PAPI's words."""


def version_text(number: int) -> str:
    """PAPI_VERSION_NUMBER's four parts as PAPI prints them (7.0.0.0)."""
    return ".".join(str((number >> shift) & 0xFF) for shift in (24, 16, 8, 0))


class Papi:
    """libpapi through ctypes, initialised: event look-up and one event set."""

    def __init__(self, library: str) -> None:
        try:
            lib = ctypes.CDLL(library)
        except OSError as error:
            raise PapiError(f"libpapi ({library}) could not be loaded: {error}") from None
        lib.PAPI_strerror.restype = ctypes.c_char_p
        lib.PAPI_strerror.argtypes = [ctypes.c_int]
        lib.PAPI_get_opt.argtypes = [ctypes.c_int, ctypes.c_void_p]
        lib.PAPI_set_opt.argtypes = [ctypes.c_int, ctypes.c_void_p]
        lib.PAPI_event_name_to_code.argtypes = [ctypes.c_char_p, ctypes.POINTER(ctypes.c_int)]
        lib.PAPI_get_component_index.argtypes = [ctypes.c_char_p]
        lib.PAPI_read.argtypes = [ctypes.c_int, ctypes.POINTER(ctypes.c_longlong)]
        self.lib = lib
        # The library's own version, so that the check PAPI_library_init makes is against it.
        self.version = int(lib.PAPI_get_opt(_LIB_VERSION, None))
        wanted = self.version & ~0xFFFF
        started = int(lib.PAPI_library_init(wanted))
        if started != wanted:
            raise PapiError(f"PAPI_library_init failed: {self.words(started)}")
        self.eventset = _NULL

    def words(self, code: int) -> str:
        text = self.lib.PAPI_strerror(code)
        return text.decode("utf-8", "replace") if text else f"PAPI error {code}"

    def code(self, name: str) -> int | None:
        """The event code of `name`, or None where PAPI does not know it on this machine."""
        code = ctypes.c_int(0)
        found = self.lib.PAPI_event_name_to_code(name.encode(), ctypes.byref(code))
        return code.value if found == _OK else None

    def open(self, names: list[str]) -> tuple[list[str], dict[str, str], str | None]:
        """An event set of `names` on the CPU component, inherited by threads where the kernel
        allows it: the names that opened, PAPI's words for each that did not, and why threads
        do not inherit (None where they do)."""
        eventset = ctypes.c_int(_NULL)
        made = self.lib.PAPI_create_eventset(ctypes.byref(eventset))
        if made != _OK:
            raise PapiError(f"PAPI_create_eventset failed: {self.words(made)}")
        self.eventset = eventset.value
        component = max(int(self.lib.PAPI_get_component_index(b"perf_event")), 0)
        assigned = self.lib.PAPI_assign_eventset_component(self.eventset, component)
        if assigned != _OK:
            raise PapiError(f"PAPI_assign_eventset_component failed: {self.words(assigned)}")
        option = (ctypes.c_int * (_OPTION_BYTES // 4))()
        option[0], option[1] = self.eventset, _INHERIT_ALL
        inherited = self.lib.PAPI_set_opt(_INHERIT, option)
        no_inherit = None if inherited == _OK else self.words(inherited)
        opened: list[str] = []
        refused: dict[str, str] = {}
        for name in names:
            code = self.code(name)
            added = self.lib.PAPI_add_event(self.eventset, code) if code is not None else _ENOEVNT
            if added == _OK:
                opened.append(name)
            else:
                refused[name] = self.words(added)
        if opened:
            begun = self.lib.PAPI_start(self.eventset)
            if begun != _OK:
                raise PapiError(f"PAPI_start failed: {self.words(begun)}")
        return opened, refused, no_inherit


class _Counted:
    """A kernel whose every call is counted: the counters read just before it and just after it
    (a difference, not a reset: an inherited counter keeps what threads that ended counted), and
    the call's counts written as one line."""

    def __init__(self, kernel: Any, papi: Papi, count: int, out: int) -> None:
        self.kernel, self.papi, self.out = kernel, papi, out
        self.before = (ctypes.c_longlong * count)()
        self.after = (ctypes.c_longlong * count)()
        self.read = papi.lib.PAPI_read
        self.eventset = papi.eventset

    def __call__(self, *arguments: Any) -> Any:
        began = self.read(self.eventset, self.before)
        answer = self.kernel(*arguments)
        ended = self.read(self.eventset, self.after)
        line: object = [
            after - before for before, after in zip(self.before, self.after, strict=True)
        ]
        if began != _OK or ended != _OK:
            line = f"PAPI_read failed: {self.papi.words(began if began != _OK else ended)}"
        os.write(self.out, (json.dumps(line) + "\n").encode())
        return answer


def _option(argv: list[str], flag: str) -> str:
    if flag not in argv or argv.index(flag) + 1 >= len(argv):
        raise SystemExit(f"hb box: papi: {flag} is missing")
    return argv[argv.index(flag) + 1]


def _names(argv: list[str]) -> int:
    """The trusted look-up: PAPI's version and the unknown names, as JSON on stdout."""
    names = argv[argv.index("--names") + 1 :]
    try:
        papi = Papi(_option(argv, "--library"))
    except PapiError as error:
        sys.stdout.write(json.dumps({"error": str(error)}))
        return 0
    unknown = [name for name in names if papi.code(name) is None]
    sys.stdout.write(json.dumps({"version": version_text(papi.version), "unknown": unknown}))
    return 0


def _run(argv: list[str]) -> int:
    """The box: the events opened, then the runner of the argv after `--`, its kernel counted."""
    mine, runner_argv = argv[: argv.index("--")], argv[argv.index("--") + 1 :]
    names = [name for name in _option(mine, "--events").split(",") if name]
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC
    out = os.open(_option(mine, "--out"), flags, 0o644)
    header: dict[str, Any] = {}
    papi: Papi | None = None
    try:
        papi = Papi(_option(mine, "--library"))
        opened, refused, no_inherit = papi.open(names)
        header = {"version": version_text(papi.version), "opened": opened, "refused": refused,
                  "no_inherit": no_inherit}  # fmt: skip
    except PapiError as error:
        header = {"error": str(error)}
        opened = []
    with open(_option(mine, "--header"), "w") as written:
        json.dump(header, written)
    if "-m" not in runner_argv or runner_argv.index("-m") + 1 >= len(runner_argv):
        sys.stderr.write("hb box: papi: the runner's argv names no module\n")
        return 2
    at = runner_argv.index("-m") + 1
    name, rest = runner_argv[at], runner_argv[at + 1 :]
    if name not in RUNNERS:
        sys.stderr.write(f"hb box: papi: {name} is not a box runner ({', '.join(RUNNERS)})\n")
        return 2
    runner: Any = importlib.import_module(name)
    if papi is not None and opened:
        load = runner._load
        counting = papi

        def counted_load(*arguments: Any) -> Any:
            loaded = load(*arguments)
            return _Counted(loaded, counting, len(opened), out) if callable(loaded) else loaded

        runner._load = counted_load
    code: int = runner.main([name, *rest])
    return code


def main(argv: list[str]) -> int:
    if "--names" in argv:
        return _names(argv)
    if "--" not in argv:
        sys.stderr.write("hb box: papi: no runner after --\n")
        return 2
    return _run(argv)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
