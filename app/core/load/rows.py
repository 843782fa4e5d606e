"""The rows the browse table showed last time, kept per set of opened paths, so that the first
screen lists memories in one read while the load that brings them up to date runs.

They are a picture of the last session, never a source: nothing is decided from them, and the
load replaces them as soon as it is done. Like every cache here they are disposable: a missing,
damaged or older file reads as no rows. They are kept by column (one list per column), which
reads about ten times faster than a list per row, in marshal, in the workbench's private cache
folder like the warm-start snapshot: a column's short strings (a system, a tier, a trust, a date)
are written once and read back as one object each. 100,000 rows read in about 50 ms, against 150 ms
as JSON. They are kept in the order the face showed them, which it names (`order`), so that it need
not sort them again.
"""

from __future__ import annotations

import hashlib
import marshal
import os
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from app.core.locations import Locations

FORMAT = "R4"  # bump when the columns or the file's shape change
SUFFIX = ".rows"
_SHARED_CHARS = 64  # a value this short is likely repeated (a system, a date): kept once

# Each column and the JSON types its values may have.
COLUMNS: dict[str, tuple[type, ...]] = {
    "id": (str,),
    "name": (str,),
    "system": (str,),
    "portfolio": (str,),
    "tier": (str,),
    "trust": (str,),
    "priority": (int, type(None)),
    "salience": (float, int, type(None)),
    "tokens": (int,),
    "updated": (str,),
    "pinned": (bool,),
    "trust_source": (str,),  # where the trust shown comes from ("ledger", "detector: high")
    "native": (str,),  # the system's own score as shown
    "over": (
        bool,
    ),  # left out by a startup plan that is over its budget (the first screen's order)
}

Columns = dict[str, list[Any]]  # column name -> one value per row, every column as long


@dataclass(frozen=True)
class ListedRows:
    """The rows by column, and the face's own name for the order they are in ("" for none)."""

    columns: Columns = field(default_factory=dict)
    order: str = ""


def rows_key(paths: Iterable[Path | str]) -> str:
    """One key per set of opened paths, whatever their order or spelling."""
    real = sorted(os.path.realpath(os.fspath(p)) for p in paths)
    return hashlib.sha256("\0".join(real).encode("utf-8", "surrogateescape")).hexdigest()[:16]


def _valid(columns: object) -> bool:
    if not isinstance(columns, dict) or list(columns) != list(COLUMNS):
        return False
    lengths = {len(values) if isinstance(values, list) else -1 for values in columns.values()}
    if len(lengths) != 1 or -1 in lengths:
        return False
    # By exact type, not isinstance: a JSON true is no count of tokens. A set of each column's
    # types is made in C: checking value by value took longer than reading the file.
    return all(set(map(type, columns[name])) <= set(kinds) for name, kinds in COLUMNS.items())


class RowStore:
    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def _path(self, paths: Iterable[Path | str]) -> Path:
        return self.folder / f"{rows_key(paths)}{SUFFIX}"

    def load(self, paths: Iterable[Path | str]) -> ListedRows:
        """The rows kept for these paths; no columns when there are none to trust."""
        try:
            data = marshal.loads(self._path(paths).read_bytes())
        except (OSError, ValueError, EOFError, TypeError):  # what marshal raises on a damaged file
            return ListedRows()
        if (
            not isinstance(data, dict)
            or data.get("format") != FORMAT
            or not _valid(data.get("columns"))
            or type(data.get("order")) is not str
        ):
            return ListedRows()  # not a file this version wrote: no rows rather than wrong ones
        return ListedRows(data["columns"], data["order"])

    def save(self, paths: Sequence[Path | str], rows: ListedRows) -> None:
        """Written whole then renamed into place; a cache that cannot be written only costs a
        slower first screen next time."""
        if not _valid(rows.columns):
            raise ValueError("listed rows need every column, as long as each other, of its type")
        common: dict[str, str] = {}
        one = common.setdefault
        columns = {
            name: [one(v, v) if type(v) is str and len(v) <= _SHARED_CHARS else v for v in values]
            for name, values in rows.columns.items()
        }
        body = marshal.dumps({"format": FORMAT, "order": rows.order, "columns": columns})
        try:
            self.folder.mkdir(parents=True, exist_ok=True, mode=0o700)
            handle, temp = tempfile.mkstemp(dir=self.folder, prefix=".rows-", suffix=".tmp")
            try:
                with os.fdopen(handle, "wb") as out:
                    out.write(body)
                os.replace(temp, self._path(paths))
            except BaseException:
                os.unlink(temp)
                raise
            self._path(paths).with_suffix(".json").unlink(
                missing_ok=True
            )  # what versions before R4 kept
        except OSError:
            pass


def listed_rows(locations: Locations, paths: Iterable[Path | str]) -> ListedRows:
    """The rows a face listed for these paths last time, from the workbench's cache; no columns
    when there are none. Light to import: a face shows them before the facade is made."""
    return RowStore(locations.cache / "rows").load(paths)
