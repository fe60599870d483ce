"""The supervisor's timed exchange with a box, in C: read the clock, thaw the box (cgroup v2), send
the command on every go pipe, wait for every "d" on the done pipe, read the clock, ask for the
freeze at once and return once the kernel says every task of the box is frozen. Between the two
readings there are only the box's work and a handful of system calls, not the interpreter: after
a rep's staging has flushed the caches, the same steps in Python took tens of microseconds more
than on warm caches, and that much more than the calibrating pings could see (docs/hb.md,
"Timing").

The freeze is asked for by the code that read the last answer, not after the return to Python: a
kernel that answers early and leaves work to a running thread of its own gains only what that
thread does before the freezer's interrupt reaches it (docs/hb.md, "Timing" and "Threat model").
An answer already waiting when an exchange starts, with the box frozen, is one nobody asked for (a
thread of the box that answered for its runner, or twice): it fails the exchange, so that no
exchange can end on an answer sent before its command.
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
#include <sched.h>
#include <string.h>
#include <unistd.h>

enum { HB_THAW = -1, HB_WRITE = -2, HB_TIMEOUT = -3, HB_ENDED = -4, HB_PROTOCOL = -5,
       HB_FREEZE = -6, HB_UNASKED = -7 };

/* Wait until the box's cgroup.events (`events`) says every task is frozen: for 10 ms checking
   between yields of the core (a task of the box may be waiting for it to reach its freezing
   point), then every millisecond (cgroup v2 announces a change of cgroup.events to poll() at
   most once per 10 ms; a task inside a long system call freezes only as the call ends). */
static int hb_settle(int events, int64_t start, int64_t timeout_ns) {
    int64_t asked = hb_now();
    for (;;) {
        char state[256];
        ssize_t n = pread(events, state, sizeof state - 1, 0);
        if (n < 0) return HB_FREEZE;
        state[n] = 0;
        if (strstr(state, "frozen 1")) return 0;
        int64_t now = hb_now();
        if (now - start > timeout_ns) return HB_FREEZE;
        if (now - asked < 10000000) {
            sched_yield();
        } else {
            struct pollfd changed = {.fd = events, .events = POLLPRI};
            poll(&changed, 1, 1);
        }
    }
}

/* The nanoseconds from before the thaw (freeze_fd < 0: no freezer) to the last of `count`
   answers "d" on `done`, after `command` on each of the `count` go pipes, with the box frozen on
   return; or a negative HB_ code, with the answer that broke the protocol in *got. `timeout_ns`
   bounds the wait from the start. Anything waiting on `done` before the command is an answer
   nobody asked for (HB_UNASKED). */
int64_t hb_exchange(int freeze_fd, int events, const int *go, int count, int done, char command,
                    int64_t timeout_ns, char *got) {
    struct pollfd waiting = {.fd = done, .events = POLLIN};
    if (poll(&waiting, 1, 0) > 0) return read(done, got, 1) == 1 ? HB_UNASKED : HB_ENDED;
    int64_t start = hb_now();
    if (freeze_fd >= 0 && pwrite(freeze_fd, "0", 1, 0) != 1) return HB_THAW;
    for (int i = 0; i < count; ++i)
        if (write(go[i], &command, 1) != 1) return HB_WRITE;
    for (int answered = 0; answered < count;) {
        int64_t left = timeout_ns - (hb_now() - start);
        if (left <= 0) return HB_TIMEOUT;
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
    int64_t elapsed = hb_now() - start;
    if (freeze_fd < 0) return elapsed;
    /* The freeze is asked for at once, from here: a thread of the box that works on after the
       answer works only until the freezer's interrupt reaches it. */
    if (pwrite(freeze_fd, "1", 1, 0) != 1) return HB_FREEZE;
    int settled = hb_settle(events, start, timeout_ns);
    return settled < 0 ? settled : elapsed;
}
"""
# The helper's source: the shared clock, then the body.
SOURCE = native.CLOCK + _BODY

THAW, WRITE, TIMEOUT, ENDED, PROTOCOL, FREEZE, UNASKED = -1, -2, -3, -4, -5, -6, -7


@functools.cache
def _library() -> ctypes.CDLL | None:
    library = native.loaded(SOURCE)
    if library is None:
        return None
    function = library.hb_exchange
    function.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.POINTER(ctypes.c_int), ctypes.c_int,
                         ctypes.c_int, ctypes.c_char, ctypes.c_int64, ctypes.c_char_p]  # fmt: skip
    function.restype = ctypes.c_int64
    return library


def available() -> bool:
    """Whether the C exchange could be built here (built now, once per process, if not yet)."""
    return _library() is not None


class Exchange:
    """One box's exchange: its freezer's cgroup.freeze and cgroup.events (cgroup v2; None: no
    freezer), its go pipes and its done pipe, with the argument buffers made once so that a call
    allocates nothing."""

    def __init__(self, freezer: tuple[int, int] | None, go: list[int], done: int) -> None:
        library = _library()
        if library is None:
            raise RuntimeError("the C exchange is not available here")
        self._call = library.hb_exchange
        self._freeze, self._events = freezer or (-1, -1)
        self._go = (ctypes.c_int * len(go))(*go)
        self._count = len(go)
        self._done = done
        self._got = ctypes.create_string_buffer(1)

    def __call__(self, command: bytes, timeout_ns: int) -> tuple[int, bytes]:
        """(nanoseconds, or a negative code; the answer byte behind a PROTOCOL or UNASKED
        code); the box is left frozen."""
        elapsed = self._call(
            self._freeze, self._events, self._go, self._count, self._done, command, timeout_ns,
            self._got,
        )  # fmt: skip
        return int(elapsed), self._got.raw
