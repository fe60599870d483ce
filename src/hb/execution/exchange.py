"""The supervisor's timed exchange with a box, in C: read the clock, thaw the box (cgroup v2), send
the command on every go pipe, wait for every "d" on the done pipe, read the clock. Between the two
readings there are only the box's work and a handful of system calls, not the interpreter: after
a rep's staging has flushed the caches, the same steps in Python took tens of microseconds more
than on warm caches, and that much more than the calibrating pings could see (docs/hb.md,
"Timing").

The library is compiled once per supervisor process (hb.execution.native). Where it cannot be
built (no C compiler), `available()` says so and the supervisor keeps its Python exchange, which
times the same steps a little later.
"""

from __future__ import annotations

import ctypes
import functools

from hb.execution import native

_BODY = r"""
#include <errno.h>
#include <poll.h>
#include <unistd.h>

enum { HB_THAW = -1, HB_WRITE = -2, HB_TIMEOUT = -3, HB_ENDED = -4, HB_PROTOCOL = -5 };

/* The nanoseconds from before the thaw (freeze_fd < 0: none) to the last of `count` answers
   "d" on `done`, after `command` on each of the `count` go pipes; or a negative HB_ code, with
   the answer that broke the protocol in *got. `timeout_ns` bounds the wait from the start. */
int64_t hb_exchange(int freeze_fd, const int *go, int count, int done, char command,
                    int64_t timeout_ns, char *got) {
    int64_t start = hb_now();
    if (freeze_fd >= 0 && pwrite(freeze_fd, "0", 1, 0) != 1) return HB_THAW;
    for (int i = 0; i < count; ++i)
        if (write(go[i], &command, 1) != 1) return HB_WRITE;
    for (int answered = 0; answered < count;) {
        int64_t left = timeout_ns - (hb_now() - start);
        if (left <= 0) return HB_TIMEOUT;
        struct pollfd waiting = {.fd = done, .events = POLLIN};
        int ready = poll(&waiting, 1, (int)((left + 999999) / 1000000));
        if (ready < 0 && errno == EINTR) continue;
        if (ready <= 0) return HB_TIMEOUT;
        ssize_t n = read(done, got, 1);
        if (n == 0) return HB_ENDED;
        if (n < 0) {
            if (errno == EINTR || errno == EAGAIN) continue;
            return HB_ENDED;
        }
        if (*got != 'd') return HB_PROTOCOL;
        ++answered;
    }
    return hb_now() - start;
}
"""
# The helper's source: the shared clock, then the body.
SOURCE = native.CLOCK + _BODY

THAW, WRITE, TIMEOUT, ENDED, PROTOCOL = -1, -2, -3, -4, -5


@functools.cache
def _library() -> ctypes.CDLL | None:
    library = native.loaded(SOURCE)
    if library is None:
        return None
    function = library.hb_exchange
    function.argtypes = [ctypes.c_int, ctypes.POINTER(ctypes.c_int), ctypes.c_int, ctypes.c_int,
                         ctypes.c_char, ctypes.c_int64, ctypes.c_char_p]  # fmt: skip
    function.restype = ctypes.c_int64
    return library


def available() -> bool:
    """Whether the C exchange could be built here (built now, once per process, if not yet)."""
    return _library() is not None


class Exchange:
    """One box's exchange: its freeze file (cgroup v2's cgroup.freeze, or -1), its go pipes and
    its done pipe, with the argument buffers made once so that a call allocates nothing."""

    def __init__(self, freeze_fd: int, go: list[int], done: int) -> None:
        library = _library()
        if library is None:
            raise RuntimeError("the C exchange is not available here")
        self._call = library.hb_exchange
        self._freeze = freeze_fd
        self._go = (ctypes.c_int * len(go))(*go)
        self._count = len(go)
        self._done = done
        self._got = ctypes.create_string_buffer(1)

    def __call__(self, command: bytes, timeout_ns: int) -> tuple[int, bytes]:
        """(nanoseconds, or a negative code; the answer byte behind a PROTOCOL code)."""
        elapsed = self._call(
            self._freeze, self._go, self._count, self._done, command, timeout_ns, self._got
        )
        return int(elapsed), self._got.raw
