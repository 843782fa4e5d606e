"""What a memory system provides to the rest of the workbench.

A system is one package under `app/core/systems/<name>/` holding everything that knows it: its
reader, the edits its trust decisions and curation moves make, its budget order and unit, its
salience inputs and suggestion rules, and what it can and cannot do (`Capabilities`). The rest of
the core asks the registry for a `System` by name and never branches on which one it got.

`BaseSystem` gives the defaults: every change a system does not implement is refused with the reason
its capabilities give, so a new system that forgets a hook gets a clear "unsupported", never
another system's rules.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, runtime_checkable

from app.core.reading.base import Adapter, Capabilities

if TYPE_CHECKING:
    from app.core.curate.apply_common import Job, Reverse
    from app.core.locations import Locations
    from app.core.model import Memory, Portfolio
    from app.core.review.actions import Prepared, Target
    from app.core.storage import Saved

UndoStep = Callable[["Reverse", dict[str, Any]], "Prepared"]


@runtime_checkable
class System(Protocol):
    """The contract between one memory system and the workbench."""

    name: str  # as in ids, config and the command line ("dollhouse")
    label: str  # as people know it ("DollhouseMCP")

    @property
    def reader(self) -> type[Adapter]: ...

    @property
    def capabilities(self) -> Capabilities: ...

    # -- trust decisions: quarantine, restore, approve, flag ---------------------------------------
    def trust_effect(self, target: Target) -> Prepared: ...

    # -- curation ----------------------------------------------------------------------------------
    def promote(self, job: Job) -> Prepared: ...
    def demote(self, job: Job) -> Prepared: ...
    def pin(self, job: Job, on: bool) -> Prepared: ...
    def set_priority(self, job: Job, priority: int) -> Prepared: ...
    def merge_out(self, job: Job, kept: Memory) -> Prepared: ...
    def restore_part(self, rv: Reverse, part: dict[str, Any]) -> Prepared: ...
    def set_budget(self, after_save: Callable[[Saved], None] | None, locations: Locations, portfolio: Portfolio, max_tokens: int) -> Prepared: ...

    @property
    def undo_steps(self) -> Mapping[str, UndoStep]: ...

    @property
    def pins_natively(self) -> bool: ...

    @property
    def keeps_budget(self) -> bool: ...

    @property
    def no_budget(self) -> str: ...


class BaseSystem:
    """Defaults for a system: reads through `reader`, refuses every change it does not define."""

    name: ClassVar[str]
    label: ClassVar[str]
    reader: ClassVar[type[Adapter]]
    undo_steps: ClassVar[Mapping[str, UndoStep]] = {}
    pins_natively: ClassVar[bool] = False  # False: a pin is kept in the workbench's ledger
    keeps_budget: ClassVar[bool] = False  # True: `set_budget` writes the system's own budget setting
    no_budget: ClassVar[str] = "this system keeps no startup budget the workbench can set"

    @property
    def capabilities(self) -> Capabilities:
        return self.reader.capabilities

    def _unsupported(self, what: str) -> Exception:
        from app.core.curate.apply_common import Unsupported

        return Unsupported(f"{self.label} cannot {what}")

    def trust_effect(self, target: Target) -> Prepared:
        raise self._unsupported(f"{target.action} a memory")

    def promote(self, job: Job) -> Prepared:
        raise self._unsupported("promote a memory")

    def demote(self, job: Job) -> Prepared:
        raise self._unsupported("demote a memory")

    def pin(self, job: Job, on: bool) -> Prepared:
        raise self._unsupported("pin a memory")

    def set_priority(self, job: Job, priority: int) -> Prepared:
        raise self._unsupported("set a priority")

    def merge_out(self, job: Job, kept: Memory) -> Prepared:
        raise self._unsupported("merge memories")

    def restore_part(self, rv: Reverse, part: dict[str, Any]) -> Prepared:
        raise self._unsupported("undo a merge")

    def set_budget(self, after_save: Callable[[Saved], None] | None, locations: Locations, portfolio: Portfolio, max_tokens: int) -> Prepared:
        raise self._unsupported(f"set a budget: {self.no_budget}")
