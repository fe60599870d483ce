"""The supervisor's clock (hb.execution.exchange, hb.execution.supervisor): the exchange timed in C
answers a round trip's nanoseconds and names each way a box can break it (a wrong answer, an
answer nobody asked for, an ended runner, silence, a freezer it cannot thaw); and the pings that calibrate the round trip
each follow a staging of as many bytes as a rep stages, up to the largest cache. The exchange
asks for the freeze itself as soon as the last answer is in, and returns only once the box is
frozen."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator

import numpy as np
import pytest

from hb.execution import exchange, supervisor

pytestmark = pytest.mark.skipif(not exchange.available(), reason="no C compiler to build it with")

# A stand-in for the box's runner: reads a command from each go pipe it is given, answers each
# with argv[1] on the done pipe (nothing for "-", ending at once for "!").
RESPONDER = """
import os, sys
answer, done, gos = sys.argv[1], int(sys.argv[2]), [int(fd) for fd in sys.argv[3:]]
while True:
    for fd in gos:
        if not os.read(fd, 1):
            sys.exit(0)
    if answer == "!":
        sys.exit(0)
    if answer != "-":
        for _ in gos:
            os.write(done, answer.encode())
"""


class Runner:
    def __init__(self, answer: str, callers: int = 1) -> None:
        self.go_pipes = [os.pipe() for _ in range(callers)]
        self.done_read, done_write = os.pipe()
        passed = [r for r, _ in self.go_pipes] + [done_write]
        self.process = subprocess.Popen(
            [sys.executable, "-c", RESPONDER, answer, str(done_write),
             *(str(r) for r, _ in self.go_pipes)],
            pass_fds=passed,
        )  # fmt: skip
        for fd in passed:
            os.close(fd)
        self.go = [w for _, w in self.go_pipes]

    def close(self) -> None:
        for fd in [*self.go, self.done_read]:
            os.close(fd)
        self.process.kill()
        self.process.wait()


@pytest.fixture
def runner() -> Iterator[type[Runner]]:
    made: list[Runner] = []

    class Made(Runner):
        def __init__(self, answer: str, callers: int = 1) -> None:
            super().__init__(answer, callers)
            made.append(self)

    yield Made
    for one in made:
        one.close()


def test_a_round_trip_is_timed_in_nanoseconds_for_every_caller(runner) -> None:
    for callers in (1, 3):
        box = runner("d", callers)
        exchanged = exchange.Exchange(None, box.go, box.done_read)
        start = time.perf_counter_ns()
        elapsed, _ = exchanged(b"p", 5_000_000_000)
        outside = time.perf_counter_ns() - start
        assert 0 < elapsed <= outside
        # Every caller answered once: nothing is left on the done pipe.
        again, _ = exchanged(b"p", 5_000_000_000)
        assert again > 0


def test_an_answer_nobody_asked_for_fails_the_next_exchange(runner) -> None:
    # Two answers to one command: the second, waiting when the next exchange starts, would end
    # that exchange at once, before its command was even read.
    box = runner("dd")
    exchanged = exchange.Exchange(None, box.go, box.done_read)
    assert exchanged(b"p", 5_000_000_000)[0] > 0
    time.sleep(0.2)
    assert exchanged(b"g", 5_000_000_000) == (exchange.UNASKED, b"d")


def test_the_channel_refuses_what_was_not_asked_and_names_an_ended_box() -> None:
    done_read, done = os.pipe()
    go_read, go = os.pipe()

    def answer(line: bytes) -> None:
        # The runner's side: one command read, its answer written.
        assert os.read(go_read, 1)
        os.write(done, line)

    try:
        channel = supervisor._Channel([go], done_read, None, time.monotonic() + 5)
        answering = threading.Thread(target=answer, args=(b"r12 345\n",))
        answering.start()
        channel.ask(b"a", b"r")
        answering.join()
        assert channel.line() == b"12 345"
        # An answer sent in the same write as a line (left over once the line is read), and one
        # sent on its own between two commands: neither was asked for.
        answering = threading.Thread(target=answer, args=(b"r1 2\nd",))
        answering.start()
        channel.ask(b"a", b"r")
        answering.join()
        assert channel.line() == b"1 2"
        with pytest.raises(supervisor.RunFailure, match="an answer came before the call"):
            channel.ask(b"g", b"d")
        os.write(done, b"d")
        with pytest.raises(supervisor.RunFailure, match="an answer came before the call"):
            channel.ask(b"g", b"d")
        os.close(done)
        done = -1
        with pytest.raises(supervisor.RunFailure, match="ended"):
            channel.ask(b"g", b"d")
    finally:
        for fd in (done_read, done, go_read, go):
            if fd >= 0:
                os.close(fd)


def _freezer(tmp_path, events: str) -> tuple[int, int]:
    """Stand-ins for cgroup.freeze (written in place) and cgroup.events (saying `events`)."""
    (tmp_path / "cgroup.freeze").write_text("1")
    (tmp_path / "cgroup.events").write_text(events)
    return (os.open(tmp_path / "cgroup.freeze", os.O_WRONLY),
            os.open(tmp_path / "cgroup.events", os.O_RDONLY))  # fmt: skip


def test_the_freeze_is_asked_for_at_the_last_answer_and_awaited(runner, tmp_path) -> None:
    box = runner("d", 2)
    freezer = _freezer(tmp_path, "populated 1\nfrozen 1\n")
    writes = []
    try:
        exchanged = exchange.Exchange(freezer, box.go, box.done_read)
        for _ in range(3):
            elapsed, _ = exchanged(b"p", 5_000_000_000)
            assert elapsed > 0
            # Frozen again on return: the last write in place is "1".
            writes.append((tmp_path / "cgroup.freeze").read_text())
    finally:
        for fd in freezer:
            os.close(fd)
    assert writes == ["1", "1", "1"]


def test_a_box_that_never_freezes_is_named_within_the_timeout(runner, tmp_path) -> None:
    box = runner("d")
    freezer = _freezer(tmp_path, "populated 1\nfrozen 0\n")
    try:
        start = time.monotonic()
        assert exchange.Exchange(freezer, box.go, box.done_read)(b"g", 300_000_000)[0] == (
            exchange.FREEZE
        )
        assert time.monotonic() - start < 5
    finally:
        for fd in freezer:
            os.close(fd)


def test_a_wrong_answer_an_ended_runner_and_silence_are_named(runner) -> None:
    wrong = runner("x")
    assert exchange.Exchange(None, wrong.go, wrong.done_read)(b"g", 5_000_000_000) == (
        exchange.PROTOCOL,
        b"x",
    )
    ended = runner("!")
    assert exchange.Exchange(None, ended.go, ended.done_read)(b"g", 5_000_000_000)[0] in (
        exchange.ENDED, exchange.WRITE
    )  # fmt: skip
    silent = runner("-")
    start = time.monotonic()
    assert exchange.Exchange(None, silent.go, silent.done_read)(b"g", 200_000_000)[0] == (
        exchange.TIMEOUT
    )
    assert time.monotonic() - start < 5


def test_a_freezer_that_cannot_be_thawed_fails_before_anything_is_sent(runner, tmp_path) -> None:
    box = runner("d")
    (tmp_path / "cgroup.freeze").write_text("1")
    read_only = os.open(tmp_path / "cgroup.freeze", os.O_RDONLY)
    try:
        assert exchange.Exchange((read_only, read_only), box.go, box.done_read)(
            b"p", 5_000_000_000
        )[0] == (exchange.THAW)
    finally:
        os.close(read_only)


def test_the_pings_follow_a_staging_as_large_as_a_reps_up_to_the_largest_cache() -> None:
    largest = supervisor._last_level_cache_bytes()
    assert largest >= 1 << 20
    small = supervisor._Stir(12345)
    small.stage()
    assert small.target.nbytes == 12345 and bool(np.all(small.target == 1))
    capped = supervisor._Stir(largest * 4)
    assert capped.target.nbytes == largest
