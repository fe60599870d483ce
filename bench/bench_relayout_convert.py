"""relayout's conversion kernels against the memory-copy bound and the numpy / ml_dtypes peers.

Each row times one conversion of a 64 MiB fp64 input (a few MiB in the short form) and prints GB/s
counted as bytes in + bytes out, the copy bound measured in the same run (an OpenMP memcpy of the
same bytes, built like the kernels), the ratio to it, the peers and the issue's target. The short
form only shows that every row runs; its figures mean nothing.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass

import ml_dtypes
import numpy as np

from relayout import Requests
from relayout.convert import aligned_empty, compile_program, copy_bytes

FULL_BYTES = 64 << 20
SHORT_BYTES = 2 << 20


@dataclass
class Row:
    conversion: str
    bytes_moved: int
    ours_ns: int
    copy_gbs: float
    peers: dict[str, float]
    target_ratio: float
    target_peer: tuple[str, float] | None = None

    @property
    def gbs(self) -> float:
        return self.bytes_moved / self.ours_ns

    @property
    def ratio(self) -> float:
        return self.gbs / self.copy_gbs

    def verdict(self) -> str:
        fine = self.ratio >= self.target_ratio
        if self.target_peer is not None:
            peer, factor = self.target_peer
            fine = fine and self.gbs >= factor * self.peers[peer]
        return "met" if fine else "MISSED"


def best_ns(action: Callable[[], object], repeats: int) -> int:
    """The fastest of `repeats` runs (after one warm-up): the least disturbed by other load."""
    action()
    times = []
    for _ in range(repeats):
        start = time.perf_counter_ns()
        action()
        times.append(time.perf_counter_ns() - start)
    return min(times)


def copy_bound_gbs(nbytes: int, repeats: int) -> float:
    source = np.random.default_rng(1).integers(0, 255, nbytes, dtype=np.uint8)
    target = aligned_empty(nbytes, np.uint8)
    return 2 * nbytes / best_ns(lambda: copy_bytes(source, target), repeats)


def cast_program(to: str, shape: tuple[int, ...]) -> object:
    request = Requests.validate({"operations": [{"action": "cast", "array": "A", "to": to}]})
    extents = ",".join(str(n) for n in shape)
    return compile_program(request, {"A": f"fp64[{extents}]:inout"})


def measure(full: bool) -> tuple[list[Row], float, dict[str, str]]:
    nbytes = FULL_BYTES if full else SHORT_BYTES
    repeats = 7 if full else 2
    count = nbytes // 8
    rng = np.random.default_rng(0)
    values = rng.standard_normal(count) * 3
    rows: list[Row] = []
    bounds: list[float] = []

    def bound(moved: int) -> float:
        measured = copy_bound_gbs(moved // 2, repeats)
        bounds.append(measured)
        return measured

    narrow = {
        "fp32": (np.float32, 0.85, None),
        "bf16": (ml_dtypes.bfloat16, 0.7, None),
        "fp16": (np.float16, 0.4, None),
        "fp8_e4m3": (ml_dtypes.float8_e4m3fn, 0.35, ("ml_dtypes astype", 5.0)),
        "fp8_e5m2": (ml_dtypes.float8_e5m2, 0.35, ("ml_dtypes astype", 5.0)),
    }
    for name, (dtype, target, peer_target) in narrow.items():
        program = cast_program(name, (count,))
        item = np.dtype(dtype).itemsize
        moved = count * (8 + item)
        ours = best_ns(lambda program=program: program.convert_in({"A": values}), repeats)  # type: ignore[attr-defined]
        peers: dict[str, float] = {}
        peer_out = np.empty(count, dtype=dtype)
        peer_name = "ml_dtypes astype" if name in ("bf16", "fp8_e4m3", "fp8_e5m2") else "numpy astype"
        peers[peer_name] = moved / best_ns(lambda dtype=dtype: values.astype(dtype), repeats)
        if peer_name == "numpy astype":
            peers["numpy copyto"] = moved / best_ns(
                lambda peer_out=peer_out: np.copyto(peer_out, values, casting="unsafe"), repeats
            )
        rows.append(Row(f"cast fp64->{name}", moved, ours, bound(moved), peers, target, peer_target))

    side = 4096 if full else 512
    matrix = rng.standard_normal((side, side))
    moved = matrix.nbytes * 2
    permute = compile_program(
        Requests.validate(
            {"operations": [{"action": "permute", "array": "A", "order": ["i1", "i0"]}]}
        ),
        {"A": "fp64[N,N]:inout"},
    )
    ours = best_ns(lambda: permute.convert_in({"A": matrix}), repeats)
    peers = {"np.ascontiguousarray(a.T)": moved / best_ns(lambda: np.ascontiguousarray(matrix.T), repeats)}
    rows.append(
        Row(f"permute [i1, i0] {side}x{side} fp64", moved, ours, bound(moved), peers, 0.4,
            ("np.ascontiguousarray(a.T)", 4.0))
    )

    blocked = compile_program(
        Requests.validate(
            {
                "operations": [
                    {"action": "block", "array": "A", "digit": "i1", "factor": 32, "into": ["b", "f"]},
                    {"action": "cast", "array": "A", "to": "fp32"},
                ]
            }
        ),
        {"A": "fp64[N,N]:inout"},
    )
    moved = matrix.nbytes + matrix.size * 4
    ours = best_ns(lambda: blocked.convert_in({"A": matrix}), repeats)
    peers = {"numpy astype": moved / best_ns(lambda: matrix.astype(np.float32), repeats)}
    rows.append(Row(f"block by 32 + cast fp32 {side}x{side}", moved, ours, bound(moved), peers, 0.5))

    program = cast_program("fp32", (count,))
    buffers = program.convert_in({"A": values})  # type: ignore[attr-defined]
    restored = np.empty_like(values)
    moved = count * 12
    ours = best_ns(lambda: program.convert_out(buffers, {"A": restored}), repeats)  # type: ignore[attr-defined]
    singles = buffers["A"]
    peers = {
        "numpy astype": moved / best_ns(lambda: singles.astype(np.float64), repeats),
        "numpy copyto": moved / best_ns(lambda: np.copyto(restored, singles), repeats),
    }
    rows.append(Row("convert-out fp32->fp64", moved, ours, bound(moved), peers, 0.85))

    context = {
        "input": f"{nbytes >> 20} MiB fp64" if full else f"{nbytes >> 20} MiB fp64 (short form)",
        "threads": os.environ.get("OMP_NUM_THREADS", str(os.cpu_count())),
        "load average": " ".join(f"{x:.2f}" for x in os.getloadavg()),
    }
    return rows, float(np.median(bounds)), context


def render(rows: list[Row], context: dict[str, str]) -> str:
    header = "| conversion | GB/s | copy bound GB/s | ratio | peers GB/s | target | verdict |"
    lines = [
        "; ".join(f"{k}: {v}" for k, v in context.items()),
        header,
        "|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        peers = ", ".join(f"{name} {value:.2f}" for name, value in row.peers.items())
        target = f">= {row.target_ratio} of copy"
        if row.target_peer:
            target += f", >= {row.target_peer[1]}x {row.target_peer[0]}"
        lines.append(
            f"| {row.conversion} | {row.gbs:.2f} | {row.copy_gbs:.2f} | {row.ratio:.2f} | {peers} "
            f"| {target} | {row.verdict()} |"
        )
    return "\n".join(lines)


def main(full: bool) -> int:
    rows, _, context = measure(full)
    print(render(rows, context), flush=True)
    return 0
