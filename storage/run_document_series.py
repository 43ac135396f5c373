"""A long series in a run document, read without holding it as Python objects: its numbers are parsed a
slice at a time (json, in C) and kept as packed float64, in a temporary file once past a few megabytes.
Memory stays at the slice, whatever the series' length (a month of 1 s telemetry is millions of points).
"""
from __future__ import annotations

import re
import sys
import tempfile
from array import array
from collections.abc import Iterator

SPOOL_IN_MEMORY = 1 << 20      # bytes of packed floats kept in memory before they go to a temporary file
WRITE_CHUNK = 1 << 20          # bytes per write into the store's blob
# Anything but a JSON number's characters: a string, true/false/null, a nested list or object.
_NOT_NUMBERS = re.compile(r"[^0-9eE.+\-,\s]")


class SeriesNumbers:
    """Packed float64 (little-endian, as the store keeps them) of one series' t or values."""

    def __init__(self) -> None:
        self.count = 0
        self._file = tempfile.SpooledTemporaryFile(max_size=SPOOL_IN_MEMORY)  # noqa: SIM115 - closed by close()

    def add(self, numbers: list[float | int]) -> None:
        packed = array("d", numbers)   # OverflowError for an integer no float holds
        if sys.byteorder == "big":
            packed.byteswap()
        self._file.write(packed.tobytes())
        self.count += len(packed)

    @property
    def nbytes(self) -> int:
        return self.count * 8

    def chunks(self, size: int = 0) -> Iterator[bytes]:
        size = size or WRITE_CHUNK
        self._file.seek(0)
        while True:
            chunk = self._file.read(size)
            if not chunk:
                return
            yield chunk

    def to_bytes(self) -> bytes:
        return b"".join(self.chunks())

    def close(self) -> None:
        self._file.close()


def numbers_problem(segment: str) -> str:
    """Why a slice of a number list holds something that is not a number ("" when it holds only numbers)."""
    found = _NOT_NUMBERS.search(segment)
    if found is None:
        return ""
    shown = segment[found.start():found.start() + 20].split(",")[0].strip()
    return f"expected a finite number, got {shown!r}"
