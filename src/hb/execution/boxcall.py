"""The box runner's loop in C (`libhbcall.so`, written into a timed run's box beside the
submission): it reads the supervisor's commands, answers "p" with "d", and on "g" calls the
kernel through libffi (the call ctypes itself makes, prepared once per layout) and answers "d",
without going back to the interpreter; any other command goes back to the runner
(hb.execution.boxrunner), which handles it and enters the loop again.

What it spares an honest kernel is the interpreter on both sides of its call: after a kernel's
own traffic has flushed the caches, the runner's way back to its answer is one of the costs the
calibrating pings cannot see (docs/hb.md, "Timing"), and from C it is a handful of instructions
and one system call. It decides nothing: the supervisor's clock and the box's freezer are outside
the box, and the submission could rewrite this loop as it could rewrite the Python one.

The judge compiles it once per process (hb.execution.native) and writes it into the box at
binding; the runner loads it when the supervisor says "c", before the first pings, so that every
ping of a grade and every call are answered the same way. Without a compiler or libffi's header,
`library()` answers None, the job says so, and the runner stays in Python.
"""

from __future__ import annotations

from hb.execution import native

FILE = "libhbcall.so"

_BODY = r"""
#include <errno.h>
#include <ffi.h>
#include <unistd.h>

/* The most arguments a prepared call holds (the catalog's widest signature has about a dozen). */
#define HB_MAX_ARGUMENTS 64

static struct {
    void (*kernel)(void);
    ffi_cif cif;
    ffi_type *types[HB_MAX_ARGUMENTS];
    void *values[HB_MAX_ARGUMENTS];
    union { int64_t integer; double real; float single; void *pointer; } slots[HB_MAX_ARGUMENTS];
    int ready;
} hb_call;

/* The next call: `kernel` with `count` arguments, kinds[i] 'p' (a pointer), 'i' (int64), 'd'
   (double) or 'f' (float), the value in integers[i] (p, i) or reals[i] (d, f). 0 when prepared;
   a negative code (and no call prepared) otherwise. */
int hb_prepare(void *kernel, int count, const char *kinds, const int64_t *integers,
               const double *reals) {
    hb_call.ready = 0;
    if (kernel == NULL || count < 0 || count > HB_MAX_ARGUMENTS) return -1;
    for (int i = 0; i < count; ++i) {
        switch (kinds[i]) {
        case 'p': hb_call.types[i] = &ffi_type_pointer;
                  hb_call.slots[i].pointer = (void *)(intptr_t)integers[i]; break;
        case 'i': hb_call.types[i] = &ffi_type_sint64; hb_call.slots[i].integer = integers[i]; break;
        case 'd': hb_call.types[i] = &ffi_type_double; hb_call.slots[i].real = reals[i]; break;
        case 'f': hb_call.types[i] = &ffi_type_float; hb_call.slots[i].single = (float)reals[i]; break;
        default: return -2;
        }
        hb_call.values[i] = &hb_call.slots[i];
    }
    if (ffi_prep_cif(&hb_call.cif, FFI_DEFAULT_ABI, (unsigned)count, &ffi_type_void,
                     hb_call.types) != FFI_OK)
        return -3;
    hb_call.kernel = (void (*)(void))kernel;
    hb_call.ready = 1;
    return 0;
}

/* Answer "p", and "g" once a call is prepared, on the pipes; the first other command byte goes
   back (a "g" before any call is prepared, too), or -1 at the end of the input or on an error.
   With `clock` >= 0 (a benchmark's, never the judge's) each call's own nanoseconds, read around
   the call alone, are written there after the answer. */
int hb_serve(int go, int done, int clock) {
    for (;;) {
        unsigned char command;
        int64_t own = 0;
        ssize_t got = read(go, &command, 1);
        if (got < 0 && errno == EINTR) continue;
        if (got != 1) return -1;
        if (command == 'g' && hb_call.ready) {
            ffi_arg unused;
            int64_t start = clock >= 0 ? hb_now() : 0;
            ffi_call(&hb_call.cif, hb_call.kernel, &unused, hb_call.values);
            if (clock >= 0) own = hb_now() - start;
        } else if (command != 'p') {
            return command;
        }
        while (write(done, "d", 1) != 1)
            if (errno != EINTR) return -1;
        if (command == 'g' && clock >= 0 && write(clock, &own, sizeof own) != sizeof own)
            return -1;
    }
}
"""
# The helper's source: the shared clock, then the body.
SOURCE = native.CLOCK + _BODY


def library() -> bytes | None:
    """The loop's shared library, built (once per process) where libffi's header is, or None."""
    return native.compiled(SOURCE, ("-lffi",))
