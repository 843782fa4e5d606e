"""The rows the browse table showed last time, kept per set of opened paths, so that the first
screen lists memories in one read while the load that brings them up to date runs.

They are a picture of the last session, never a source: nothing is decided from them, and the
load replaces them as soon as it is done. Like every cache here they are disposable: a missing,
damaged or older file reads as no rows.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import astuple, dataclass, fields
from pathlib import Path

FORMAT = "R1"  # bump when ListedRow changes shape


@dataclass(frozen=True, slots=True)
class ListedRow:
    """One row of the memory table as it was shown (already one-line text, the trust shown)."""

    id: str
    name: str
    system: str
    portfolio: str
    tier: str
    trust: str
    priority: int | None
    salience: float | None
    tokens: int
    updated: str
    pinned: bool = False


_FIELDS = len(fields(ListedRow))
_TYPES: tuple[tuple[type, ...], ...] = ((str,),) * 6 + ((int, type(None)), (float, int, type(None)), (int,), (str,), (bool,))


def rows_key(paths: Iterable[Path | str]) -> str:
    """One key per set of opened paths, whatever their order or spelling."""
    real = sorted(os.path.realpath(os.fspath(p)) for p in paths)
    return hashlib.sha256("\0".join(real).encode("utf-8", "surrogateescape")).hexdigest()[:16]


class RowStore:
    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def _path(self, paths: Iterable[Path | str]) -> Path:
        return self.folder / f"{rows_key(paths)}.json"

    def load(self, paths: Iterable[Path | str]) -> list[ListedRow]:
        try:
            data = json.loads(self._path(paths).read_bytes())
        except (OSError, ValueError):
            return []
        if not isinstance(data, dict) or data.get("format") != FORMAT or not isinstance(data.get("rows"), list):
            return []
        rows = []
        for raw in data["rows"]:
            if not (isinstance(raw, list) and len(raw) == _FIELDS and all(isinstance(v, t) for v, t in zip(raw, _TYPES, strict=True))):
                return []  # not a file this version wrote: no rows rather than wrong ones
            rows.append(ListedRow(*raw))
        return rows

    def save(self, paths: Sequence[Path | str], rows: Iterable[ListedRow]) -> None:
        """Written whole then renamed into place; a cache that cannot be written only costs a
        slower first screen next time."""
        body = json.dumps({"format": FORMAT, "rows": [astuple(row) for row in rows]}, separators=(",", ":"))
        try:
            self.folder.mkdir(parents=True, exist_ok=True, mode=0o700)
            handle, temp = tempfile.mkstemp(dir=self.folder, prefix=".rows-", suffix=".tmp")
            try:
                with os.fdopen(handle, "w", encoding="utf-8") as out:
                    out.write(body)
                os.replace(temp, self._path(paths))
            except BaseException:
                os.unlink(temp)
                raise
        except OSError:
            pass
