"""The only way the workbench changes a file or a database (docs/security.md section 5).

- containment: `Roots` (the portfolio root plus the workbench's own folders) and `check_name`;
  every target is resolved inside them, symlinks leaving them, FIFOs, devices and folders refused.
- base: `Base.capture` keeps what an edit started from; a save re-checks it (stat, then sha256) and
  raises `ConflictError` (base, disk, mine) instead of overwriting another writer.
- atomic: `atomic_write`, temp file + fsync + replace + folder fsync, with explicit permission
  checks and the MEMWB_FAULT crash points; leftovers: `sweep` and `clear_litter` of what a crashed
  write left.
- edits: byte-preserving `set_key`, `replace_span`, `cut_span`, `insert_span`.
- durable: `save` (an atomic write), `create` (new files in a new folder, `atomic.create_new`)
  and `later` (a removal's folder), whose syncs, inside `together`, wait for `settle`, so a
  change's vault items and files are synced at once where a crash would complete the change.
- watch: `watch_for_revert`, which notices another process undoing a save.
- sqlite_write: `write_transaction`, one short BEGIN IMMEDIATE transaction with busy_timeout, whose
  rows (`expect_row`) are read back before and after its COMMIT.
- moves: `move_file` (a copy that refuses to clobber, then a checked removal of the source),
  `remove_file` (removal only while the file still holds the bytes it was read with) and
  `remove_empty_folder`; links: `remove_link` and `make_link`, which take out and put back a
  symbolic link itself, never its target.

The write path (containment, base, atomic, leftovers, watch, sqlite_write, moves, links) needs
only the standard library, so crash-test subprocesses start without the model and the permission
tests can run it as an unprivileged user under the system python. Edits need the YAML primitives
and the model, so they are not imported here: import them from `app.core.storage.edits`.
"""

from __future__ import annotations

from . import durable
from .atomic import FAULT_ENV, FAULT_POINTS, Saved, atomic_write
from .base import Base
from .containment import Roots, check_name
from .errors import (
    ConflictError,
    ContainmentError,
    EditError,
    NotWritableError,
    ReadBackError,
    StorageError,
    WriteError,
)
from .leftovers import LITTER_PATTERN, clear_litter, sweep
from .links import make_link, remove_link
from .moves import move_file, remove_empty_folder, remove_file
from .sqlite_write import expect_row, write_transaction
from .watch import RevertWatch, watch_for_revert

__all__ = [
    "FAULT_ENV",
    "FAULT_POINTS",
    "LITTER_PATTERN",
    "Base",
    "ConflictError",
    "ContainmentError",
    "EditError",
    "NotWritableError",
    "ReadBackError",
    "RevertWatch",
    "Roots",
    "Saved",
    "StorageError",
    "WriteError",
    "atomic_write",
    "check_name",
    "clear_litter",
    "durable",
    "expect_row",
    "make_link",
    "move_file",
    "remove_empty_folder",
    "remove_file",
    "remove_link",
    "sweep",
    "watch_for_revert",
    "write_transaction",
]
