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

from collections.abc import Callable, Mapping, Sequence
from types import ModuleType
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, runtime_checkable

from app.core.change.errors import Unsupported
from app.core.reading.base import Adapter, Capabilities

if TYPE_CHECKING:
    from pathlib import Path

    from app.core.change.plan import Prepared
    from app.core.change.target import Reverse, Target
    from app.core.locations import Locations
    from app.core.model import Memory, Portfolio
    from app.core.storage import Saved

UndoStep = Callable[["Reverse", dict[str, Any]], "Prepared"]

# -- planning: budgets, salience, suggestions --
if TYPE_CHECKING:
    from collections.abc import Sequence
    from datetime import date

    from app.core.budget.plans import BudgetContext, BudgetPlan, BudgetWhatIf
    from app.core.curate.salience import KeptValues, Observed, SalienceInputs, TextOf
    from app.core.curate.suggestions import Promotion, Suggestion, SuggestionContext
    from app.core.model import Relation
    from app.core.preview.models import Draft
    from app.core.systems.info import SystemInfo


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
    def trust_effects(self, targets: Sequence[Target]) -> Prepared | None: ...

    # -- curation ----------------------------------------------------------------------------------
    def promote(self, target: Target) -> Prepared: ...
    def demote(self, target: Target) -> Prepared: ...
    def pin(self, target: Target, on: bool) -> Prepared: ...
    def set_priority(self, target: Target, priority: int) -> Prepared: ...
    def merge_out(self, target: Target, kept: Memory) -> Prepared: ...
    def restore_part(self, rv: Reverse, part: dict[str, Any]) -> Prepared: ...
    def set_budget(
        self,
        after_save: Callable[[Saved], None] | None,
        locations: Locations,
        portfolio: Portfolio,
        max_tokens: int,
    ) -> Prepared: ...

    @property
    def undo_steps(self) -> Mapping[str, UndoStep]: ...

    @property
    def pins_natively(self) -> bool: ...

    @property
    def keeps_budget(self) -> bool: ...

    @property
    def mentions_memories(self) -> bool: ...

    @property
    def no_budget(self) -> str: ...

    # -- planning: budgets, salience, suggestions --
    @property
    def budget_what_if(self) -> BudgetWhatIf | None: ...
    @property
    def info(self) -> SystemInfo: ...
    def budget_plans(
        self, memories: Sequence[Memory], portfolio: Portfolio, context: BudgetContext
    ) -> list[BudgetPlan]: ...
    def preview(
        self,
        memories: Sequence[Memory],
        portfolio: Portfolio,
        context: BudgetContext,
        plans: Sequence[BudgetPlan],
    ) -> list[Draft]: ...
    def salience_inputs(self, memory: Memory, observed: Observed) -> SalienceInputs: ...
    def wants_text(self, memory: Memory) -> bool: ...
    def salience_text(self, memory: Memory, text: str) -> dict[str, Any]: ...
    def mentions(
        self, memories: Sequence[Memory], text_of: TextOf, kept: KeptValues | None = None
    ) -> dict[str, list[date]]: ...
    def mentions_depend_on(self, memory: Memory, content: str) -> Any: ...
    def suggestions(
        self, memories: Sequence[Memory], ctx: SuggestionContext
    ) -> list[Suggestion]: ...
    def budget_suggestions(self, plan: BudgetPlan, ctx: SuggestionContext) -> list[Suggestion]: ...
    def promotion(self, memory: Memory, ctx: SuggestionContext) -> Promotion | None: ...
    def supersedes_reason(
        self, memory: Memory, relation: Relation, target: Memory | None
    ) -> str: ...
    def is_record(self, memory: Memory) -> bool: ...
    def kept_apart(self, a: Memory, b: Memory) -> bool: ...

    # -- copies ------------------------------------------------------------------------------------
    def follow_copy(self, staged: Path, final: Path) -> None: ...


class BaseSystem:
    """Defaults for a system: reads through `reader`, makes its changes through its own effect
    modules, and refuses every change they do not define."""

    name: ClassVar[str]
    label: ClassVar[str]
    reader: ClassVar[type[Adapter]]
    undo_steps: ClassVar[Mapping[str, UndoStep]] = {}
    pins_natively: ClassVar[bool] = False  # False: a pin is kept in the workbench's ledger
    keeps_budget: ClassVar[bool] = (
        False  # True: `set_budget` writes the system's own budget setting
    )
    # True: the system keeps records that mention its memories (`mentions`); False: there is
    # nothing to look for, and a salience pass does not even work out what the mentions depend on.
    mentions_memories: ClassVar[bool] = False
    no_budget: ClassVar[str] = "this system keeps no startup budget the workbench can set"
    # The system's own modules of effects: `trust_module.prepare(target)` for decisions, and
    # `curation_module.promote / demote / pin / set_priority / merge_out / restore_part`. A function
    # a module lacks (or a missing module) is a change the system refuses.
    trust_module: ClassVar[ModuleType | None] = None
    curation_module: ClassVar[ModuleType | None] = None

    @property
    def capabilities(self) -> Capabilities:
        return self.reader.capabilities

    def _unsupported(self, what: str) -> Exception:
        return Unsupported(f"{self.label} cannot {what}")

    def _hook(self, module: ModuleType | None, name: str, what: str) -> Callable[..., Prepared]:
        function = getattr(module, name, None)
        if function is None:
            raise self._unsupported(what)
        return function

    def trust_effect(self, target: Target) -> Prepared:
        return self._hook(self.trust_module, "prepare", f"{target.action} a memory")(target)

    def trust_effects(self, targets: Sequence[Target]) -> Prepared | None:
        """Several trust decisions on memories of one file made by one write of it, as each would
        be made after the ones before it, when the system can (its trust module's `prepare_many`,
        whose effect is `{EACH: [the effect of each]}`); None: each is made alone."""
        many = getattr(self.trust_module, "prepare_many", None)
        return None if many is None else many(targets)

    def promote(self, target: Target) -> Prepared:
        return self._hook(self.curation_module, "promote", "promote a memory")(target)

    def demote(self, target: Target) -> Prepared:
        return self._hook(self.curation_module, "demote", "demote a memory")(target)

    def pin(self, target: Target, on: bool) -> Prepared:
        return self._hook(self.curation_module, "pin", "pin a memory")(target, on)

    def set_priority(self, target: Target, priority: int) -> Prepared:
        return self._hook(self.curation_module, "set_priority", "set a priority")(target, priority)

    def merge_out(self, target: Target, kept: Memory) -> Prepared:
        return self._hook(self.curation_module, "merge_out", "merge memories")(target, kept)

    def restore_part(self, rv: Reverse, part: dict[str, Any]) -> Prepared:
        return self._hook(self.curation_module, "restore_part", "undo a merge")(rv, part)

    def set_budget(
        self,
        after_save: Callable[[Saved], None] | None,
        locations: Locations,
        portfolio: Portfolio,
        max_tokens: int,
    ) -> Prepared:
        raise self._unsupported(f"set a budget: {self.no_budget}")

    # -- planning: budgets, salience, suggestions --
    # The defaults plan nothing and suggest nothing: a system that forgets a hook gets no plan and
    # no rule, never another system's. The shared modules are imported here, on use, because they
    # find systems through the registry, which imports this module.
    budget_what_if: ClassVar[BudgetWhatIf | None] = None  # None: no budget or priority to try
    fortress_scores: ClassVar[bool] = False  # Memory Fortress's 0-3 scores on four axes apply

    @property
    def info(self) -> SystemInfo:
        from app.core.systems.info import SystemInfo

        return SystemInfo(
            name=self.name,
            label=self.label,
            budget_what_if=self.budget_what_if,
            fortress_scores=self.fortress_scores,
        )

    def budget_plans(
        self, memories: Sequence[Memory], portfolio: Portfolio, context: BudgetContext
    ) -> list[BudgetPlan]:
        """What the agent loads at startup, in the system's order, unit and limits."""
        return []

    def preview(
        self,
        memories: Sequence[Memory],
        portfolio: Portfolio,
        context: BudgetContext,
        plans: Sequence[BudgetPlan],
    ) -> list[Draft]:
        """The exact text its plans inject at the agent's next start or turn, as the system renders
        it, with what the caps cut or drop in place (`plans` are this portfolio's own)."""
        return []

    def salience_inputs(self, memory: Memory, observed: Observed) -> SalienceInputs:
        """Importance, trust and use for the shared formula; by default what a system that keeps
        none of them has: importance 0.5, the trust its source claims,
        the workbench's access log."""
        from app.core.curate.salience import default_inputs

        return default_inputs(memory, observed, self.label)

    def wants_text(self, memory: Memory) -> bool:
        """True: `salience_inputs` reads the memory's text (`observed.text`) when it can be had."""
        return False

    def salience_text(self, memory: Memory, text: str) -> dict[str, Any]:
        """What `salience_inputs` takes from a memory's text (JSON values), a function of the text
        alone: kept by content, so that a memory whose content is unchanged is not read again. It
        reaches `salience_inputs` as `observed.facts`."""
        return {}

    def mentions(
        self, memories: Sequence[Memory], text_of: TextOf, kept: KeptValues | None = None
    ) -> dict[str, list[date]]:
        """Per memory id, the dates of the system's own records that mention it (a use of it).
        `kept` may keep what was found in each record by its content, so that a record unchanged
        is not read again when only another changed."""
        return {}

    def mentions_depend_on(self, memory: Memory, content: str) -> Any:
        """What of `memory` (whose content key is `content`) `mentions` may depend on, as a JSON
        value: the mentions found are kept under a digest of it over the system's memories. By
        default everything: its id, content, name, kind, place and fields."""
        span = memory.span
        where = (
            memory.portfolio,
            memory.source.path,
            span.start if span is not None else None,
            span.end if span is not None else None,
        )
        return [memory.id, content, memory.name, memory.kind, where, memory.fields]

    def suggestions(self, memories: Sequence[Memory], ctx: SuggestionContext) -> list[Suggestion]:
        """The system's own rules over its memories (in load order); they
        may add to `ctx.superseded`."""
        return []

    def budget_suggestions(self, plan: BudgetPlan, ctx: SuggestionContext) -> list[Suggestion]:
        """What to do about one of its plans: what falls past the cut, what is truncated."""
        return []

    def promotion(self, memory: Memory, ctx: SuggestionContext) -> Promotion | None:
        """Whether a cold memory may be promoted on its salience and what that means here; None: the
        system names no way to promote it."""
        return None

    def supersedes_reason(self, memory: Memory, relation: Relation, target: Memory | None) -> str:
        """Why `memory` superseding `target` makes the older one stale, in the system's words."""
        from app.core.curate.suggestions import quoted

        return (
            f"{self.label} records that {quoted(memory)} supersedes "
            f"{quoted(target, relation.target)}; the older memory is stale"
        )

    def is_record(self, memory: Memory) -> bool:
        """An append-only record kept on purpose: never a merge candidate."""
        return False

    def kept_apart(self, a: Memory, b: Memory) -> bool:
        """Two of its memories that say the same on purpose (a summary
        and its detail): never a merge."""
        return False

    def follow_copy(self, staged: Path, final: Path) -> None:
        """A portfolio copied to `staged`, which will be renamed to `final` (the workbench's copy of
        the sample): records the system keys to a folder's place are made to follow the copy. Most
        systems key nothing to a place."""
        return None
