"""Passage sets kept on disk while a large duplicate search runs: a first run over a large portfolio
splits hundreds of thousands of passages, and their word-pair sets, held in memory beside the
texts' digests and the join, are the bulk of what the search costs. Here they are written to an
unnamed temporary file in the duplicates cache's folder as they are made (readable by this process
alone, gone when it is closed or the process ends), and read back one at a time: by the join, which
streams them to its own process, and by the duplicates cache, which keeps them."""

from __future__ import annotations

import os
import tempfile
import weakref
from array import array
from collections.abc import Collection, Iterator, Mapping
from itertools import chain
from pathlib import Path

ITEM = array("Q").itemsize


class SetSpool(Mapping[bytes, "array[int]"]):
    """Word-pair sets (ascending 64-bit numbers) by digest, in a temporary file; a set added under
    a digest it holds already is the same set and is not written again. Once a write fails (a full
    disk), the sets that follow are held in memory: a search that costs more, never a failed
    one."""

    def __init__(self, folder: Path) -> None:
        file = tempfile.TemporaryFile(prefix="memwb-sets-", dir=folder)
        self._fd = file.fileno()
        # closed once nothing holds the spool (the duplicates cache reads it after the search)
        self._closed = weakref.finalize(self, file.close)
        self._number: dict[bytes, int] = {}
        self._starts = array("Q")  # each set's first byte in the file, by number
        self._counts = array("Q")  # its count of items
        self._end = 0
        self._held: dict[bytes, array[int]] | None = None  # the sets a failed write left here

    def update(self, found: Mapping[bytes, array[int]]) -> None:
        """Add the sets of one text in one write."""
        fresh = {key: grams for key, grams in found.items() if key not in self}
        if self._held is not None:
            self._held.update(fresh)
            return
        chunk = b"".join(grams.tobytes() for grams in fresh.values())
        try:
            written = 0
            while written < len(chunk):
                written += os.pwrite(self._fd, memoryview(chunk)[written:], self._end + written)
        except OSError:
            self._held = fresh
            return
        at = self._end
        for key, grams in fresh.items():
            self._number[key] = len(self._starts)
            self._starts.append(at)
            self._counts.append(len(grams))
            at += len(grams) * ITEM
        self._end += len(chunk)

    def raw(self, key: bytes) -> bytes:
        """The set's items as stored (native 64-bit numbers, ascending)."""
        if self._held is not None and key in self._held:
            return self._held[key].tobytes()
        number = self._number[key]
        size, start = self._counts[number] * ITEM, self._starts[number]
        data = os.pread(self._fd, size, start)
        while len(data) < size:  # a short read: what is left of it
            more = os.pread(self._fd, size - len(data), start + len(data))
            if not more:
                raise OSError(f"the passage sets' file ends {size - len(data)} bytes short")
            data += more
        return data

    def __getitem__(self, key: bytes) -> array[int]:
        if self._held is not None and key in self._held:
            return self._held[key]
        grams = array("Q")
        grams.frombytes(self.raw(key))
        return grams

    def __contains__(self, key: object) -> bool:
        return key in self._number or (self._held is not None and key in self._held)

    def __iter__(self) -> Iterator[bytes]:
        return chain(self._number, self._held or ())

    def __len__(self) -> int:
        return len(self._number) + len(self._held or ())

    def close(self) -> None:
        self._closed()


def raw_set(grams: Collection[int]) -> bytes:
    """A set's items as a spool stores them."""
    if isinstance(grams, array) and grams.typecode == "Q":
        return grams.tobytes()
    return array("Q", sorted(grams)).tobytes()
