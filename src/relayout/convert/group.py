"""Group: the regrouping kernels of zip and unzip, as the requests spec names them.

A zip's whole and an unzip's parts are pointers like any other, so Group is a conversion program
seen from the regrouping side: `fill` builds the zipped whole (or the unzipped parts) from the
problem's arrays, `drain` writes them back to the outputs.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy.typing as npt

from relayout.convert.compile import compile_program
from relayout.convert.program import ConversionProgram
from relayout.models import Requests


class Group:
    """The zip / unzip kernels of a request over its arrays (every pointer, regrouped or not)."""

    def __init__(
        self,
        requests: Requests | Any,
        arrays: Mapping[str, Any],
        *,
        target: str = "host",
        **options: Any,
    ) -> None:
        self.program: ConversionProgram = compile_program(
            requests, arrays, target=target, **options
        )

    @property
    def regrouped(self) -> tuple[str, ...]:
        """The pointers a zip or an unzip made (the whole of a zip, the parts of an unzip)."""
        names = []
        for pointer in self.program.pointers:
            if len(pointer.sources) > 1 or pointer.sources != (pointer.name,):
                names.append(pointer.name)
        return tuple(names)

    @property
    def timings(self) -> Any:
        return self.program.timings

    def fill(
        self, arrays: Mapping[str, npt.NDArray[Any]], sizes: Mapping[str, int] | None = None
    ) -> dict[str, Any]:
        """The kernel's pointers (zipped wholes, unzipped parts, and the rest) from the arrays."""
        return self.program.convert_in(arrays, sizes)

    def drain(
        self,
        pointers: Mapping[str, Any],
        outputs: Mapping[str, npt.NDArray[Any]],
        sizes: Mapping[str, int] | None = None,
    ) -> None:
        """Write the output arrays back from the kernel's pointers."""
        self.program.convert_out(pointers, outputs, sizes)
