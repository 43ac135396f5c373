"""Reading a run document (see storage.run_export) from a file piece by piece: the top-level object's
members one at a time and the "runs" list one run at a time, so a large export never sits in memory whole.

The stdlib has no streaming JSON parser; the document's shape makes one unnecessary: the scanner here walks
only the outer object and list, and json.JSONDecoder.raw_decode parses each member value (one run) from a
buffer refilled from the file.
"""
from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator
from typing import Any, TextIO

from storage.run_document_series import SeriesNumbers, numbers_problem

READ_CHUNK = 1 << 20
MAX_VALUE_CHARS = 1 << 30     # one run of a gigabyte of text is no export; an endless stream must stop
CUT_OFF_MARGIN = 12           # a decode error this near the buffer's end may be a token cut in two ("\u12", "tru")
_WHITESPACE = " \t\n\r"
# A \u escape of a UTF-16 surrogate: the only way a JSON text can hold a lone one (UTF-8 text cannot).
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


class DocumentSyntaxError(ValueError):
    """The text is not JSON (or JSON this reader refuses); the message is one line for the user."""


class DocumentValueError(ValueError):
    """JSON, but a value no run may hold (where: the path in the document, as runs[0].series[1].t)."""

    def __init__(self, where: str, what: str):
        super().__init__(f"{where}: {what}")
        self.where, self.what = where, what


SERIES_SLICE = 1 << 20        # characters of a number list parsed at a time
SERIES_ARRAYS = ("t", "values")


def _lone_surrogate(value: Any) -> bool:
    """True when a string anywhere in value (keys too) holds a lone surrogate, which no store can keep."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            try:
                item.encode("utf-8")
            except UnicodeEncodeError:
                return True
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return False


class DocumentReader:
    """Pull parser for `{"key": value, ..., "runs": [run, ...], ...}` over a text handle."""

    def __init__(self, handle: TextIO):
        self._handle = handle
        self._buffer = ""
        self._pos = 0
        self._eof = False
        self._consumed = 0          # characters dropped from the buffer's front, for error positions
        self._decoder = json.JSONDecoder()

    # -- buffer ---------------------------------------------------------------------------------

    def _fill(self, size: int = READ_CHUNK) -> bool:
        if self._eof:
            return False
        chunk = self._handle.read(size)
        if not chunk:
            self._eof = True
            return False
        self._consumed += self._pos
        self._buffer = self._buffer[self._pos:] + chunk
        self._pos = 0
        return True

    def _peek(self) -> str:
        """The next character that is not whitespace ("" at the end of the text)."""
        while True:
            while self._pos < len(self._buffer) and self._buffer[self._pos] in _WHITESPACE:
                self._pos += 1
            if self._pos < len(self._buffer):
                return self._buffer[self._pos]
            if not self._fill():
                return ""

    def _fail(self, what: str) -> DocumentSyntaxError:
        return DocumentSyntaxError(f"not JSON: {what} at character {self._consumed + self._pos + 1}")

    def _expect(self, char: str) -> None:
        found = self._peek()
        if found != char:
            raise self._fail(f"expected {char!r}, found {found!r}" if found else f"expected {char!r}, found the end")
        self._pos += 1

    def _value(self) -> Any:
        """One JSON value from the buffer, reading more of the file while it is cut off."""
        self._peek()
        size = READ_CHUNK
        while True:
            try:
                value, end = self._decoder.raw_decode(self._buffer, self._pos)
            except json.JSONDecodeError as exc:
                # Cut off by the end of the buffer (read on), or broken before it (stop: a device such as
                # /dev/zero would never end).
                cut_off = exc.pos >= len(self._buffer) - CUT_OFF_MARGIN or exc.msg.startswith("Unterminated")
                if cut_off and len(self._buffer) - self._pos > MAX_VALUE_CHARS:
                    raise self._fail(f"one value longer than {MAX_VALUE_CHARS:,} characters") from None
                if cut_off and self._fill(size):
                    size *= 2
                    continue
                raise DocumentSyntaxError(
                    f"not JSON: {exc.msg} at character {self._consumed + exc.pos + 1}"
                ) from None
            except RecursionError:
                raise self._fail("nested too deeply") from None
            except ValueError as exc:   # an integer of more digits than Python converts
                raise self._fail(" ".join(str(exc).split(";")[0].split())) from None
            if end == len(self._buffer) and self._fill(size):
                continue   # a number at the very end may go on in the next chunk
            start, self._pos = self._pos, end
            if _SURROGATE_ESCAPE.search(self._buffer, start, end) and _lone_surrogate(value):
                raise self._fail("text with a lone UTF-16 surrogate (\\ud800-\\udfff), which is not a character")
            return value

    def _string(self) -> str:
        if self._peek() != '"':
            raise self._fail("expected a member name in double quotes")
        key = self._value()
        assert isinstance(key, str)
        return key

    # -- document -------------------------------------------------------------------------------

    def members(self) -> Iterator[tuple[str, Any]]:
        """The document's members in order; the value of "runs" is itself an iterator over the runs,
        which must be used up before the next member is asked for."""
        if self._peek() != "{":
            found = self._peek()
            if found in ("", "["):
                raise DocumentSyntaxError("not a JSON object" if found else "empty file")
            self._value()   # a bare value: raises its own syntax error, or is simply not an object
            raise DocumentSyntaxError("not a JSON object")
        self._pos += 1
        if self._peek() == "}":
            self._pos += 1
        else:
            while True:
                key = self._string()
                self._expect(":")
                if key == "runs" and self._peek() == "[":
                    yield key, self._runs()
                else:
                    yield key, self._value()
                if self._peek() == ",":
                    self._pos += 1
                    continue
                self._expect("}")
                break
        if self._peek() != "":
            raise self._fail("extra data after the document")

    def _runs(self) -> Iterator[Any]:
        self._expect("[")
        if self._peek() == "]":
            self._pos += 1
            return
        index = 0
        while True:
            yield self._object(f"runs[{index}]", self._run_member)
            index += 1
            if self._peek() == ",":
                self._pos += 1
                continue
            self._expect("]")
            return

    def _object(self, where: str, member: Any) -> Any:
        """An object read member by member (member(where, key) reads each value); a value that is not an
        object is read whole, for the importer to refuse. A repeated key takes the last value, as JSON does."""
        if self._peek() != "{":
            return self._value()
        self._pos += 1
        out: dict[str, Any] = {}
        if self._peek() == "}":
            self._pos += 1
            return out
        while True:
            key = self._string()
            self._expect(":")
            out[key] = member(where, key)
            if self._peek() == ",":
                self._pos += 1
                continue
            self._expect("}")
            return out

    def _run_member(self, where: str, key: str) -> Any:
        if key != "series" or self._peek() != "[":
            return self._value()
        self._pos += 1
        curves: list[Any] = []
        if self._peek() == "]":
            self._pos += 1
            return curves
        while True:
            curves.append(self._object(f"{where}.series[{len(curves)}]", self._curve_member))
            if self._peek() == ",":
                self._pos += 1
                continue
            self._expect("]")
            return curves

    def _curve_member(self, where: str, key: str) -> Any:
        if key in SERIES_ARRAYS and self._peek() == "[":
            return self._numbers(f"{where}.{key}")
        return self._value()

    def _numbers(self, where: str) -> SeriesNumbers:
        """A list of finite numbers, parsed a slice at a time into packed floats."""
        self._pos += 1   # the "["
        out = SeriesNumbers()
        try:
            while True:
                self._peek()
                end = self._buffer.find("]", self._pos, self._pos + SERIES_SLICE)
                if end < 0:
                    if len(self._buffer) - self._pos < SERIES_SLICE and self._fill():
                        continue   # read on until a whole slice (or the list's end) is in the buffer
                    cut = self._buffer.rfind(",", self._pos, self._pos + SERIES_SLICE)
                    if cut < 0:
                        raise self._fail(f"a list of numbers with an item longer than {SERIES_SLICE:,} characters"
                                         if len(self._buffer) - self._pos >= SERIES_SLICE else "unterminated list")
                    self._slice(out, self._buffer[self._pos:cut], where, last=False)
                    self._pos = cut + 1
                    continue
                self._slice(out, self._buffer[self._pos:end], where, last=True)
                self._pos = end + 1
                return out
        except BaseException:
            out.close()
            raise

    def _slice(self, out: SeriesNumbers, segment: str, where: str, last: bool) -> None:
        problem = numbers_problem(segment)
        if problem:
            raise DocumentValueError(where, problem)
        if not segment.strip():
            if last and not out.count:
                return   # []
            raise self._fail("a list with an empty item")
        try:
            numbers = json.loads("[" + segment + "]")
        except json.JSONDecodeError as exc:
            raise self._fail(f"{exc.msg} in a list of numbers") from None
        except ValueError as exc:   # an integer of more digits than Python converts
            raise self._fail(" ".join(str(exc).split(";")[0].split())) from None
        try:
            out.add(numbers)
        except OverflowError:
            raise DocumentValueError(where, "a number too large for a float") from None
        if numbers and not (math.isfinite(min(numbers)) and math.isfinite(max(numbers))):
            raise DocumentValueError(where, "a number too large for a float (it reads as infinity)")
