"""The one family of errors a decision or a change can end in. Each says that nothing was written
(or exactly what was) in its message."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from app.core.reading.sqlite_ro import DbReadError
from app.core.storage import ConflictError, StorageError


class ChangeError(Exception):
    """A decision or change that was not made. Nothing was written and nothing recorded."""


class Conflict(ChangeError):
    """The file or row changed since it was read (or since the change being undone); nothing was
    written. `storage` carries the storage layer's ConflictError (base, disk, mine) when there is
    one."""

    def __init__(
        self, message: str, *, path: str | None = None, storage: ConflictError | None = None
    ) -> None:
        super().__init__(message)
        self.path = path
        self.storage = storage


class Unsupported(ChangeError):
    """The memory's system cannot do this; the message says why, in the system's own terms."""


class NothingToChange(ChangeError):
    """The memory is already as asked (already hot, already pinned...); nothing was written."""


class NothingToUndo(ChangeError):
    """No change in the ledger is left to undo."""


class NothingToRestore(ChangeError):
    """A restore of a memory the ledger holds no standing quarantine for."""


@contextmanager
def translated(doing: str) -> Iterator[None]:
    """The storage and database layers' errors as change errors, each saying nothing was written."""
    try:
        yield
    except ChangeError:
        raise
    except ConflictError as exc:
        raise Conflict(_tail(str(exc), doing), path=str(exc.path), storage=exc) from exc
    except (StorageError, DbReadError, OSError) as exc:
        raise ChangeError(_tail(str(exc), doing)) from exc


def _tail(message: str, doing: str) -> str:
    if "nothing was written" in message or "not applied" in message:
        return f"{doing}: {message}"
    return f"{doing}: {message}; nothing was written"
