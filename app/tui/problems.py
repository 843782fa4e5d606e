"""What the Problems screen lists: every problem of the read (a file, its line, what was kept), and
the workbench's own warnings (the settings file, themes, the keymap, a portfolio that could not be
opened, a load that failed). Each row says where it came from."""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from textual.binding import Binding
from textual.dom import DOMNode

if TYPE_CHECKING:
    from app.core.model import Problem
    from app.core.workbench import Workbench


@dataclass(frozen=True)
class ProblemRow:
    # the portfolio ("dollhouse · dollhouse"), or "settings", "theme", "keymap", "open", "load"
    source: str
    path: str
    line: int | None
    message: str
    kept: str = ""

    @property
    def where(self) -> str:
        return f"{self.path}:{self.line}" if self.line else self.path

    @classmethod
    def of(cls, source: str, problem: Problem) -> ProblemRow:
        return cls(source, problem.path, problem.line, problem.message, problem.kept)


def read_problems(workbench: Workbench) -> list[ProblemRow]:
    """`Workbench.problems()`, each named by the portfolio it belongs to ("scan": the paths
    given)."""
    owner: dict[int, str] = {}
    for portfolio in workbench.portfolios:
        for problem in portfolio.problems:
            owner[id(problem)] = f"{portfolio.system} · {portfolio.name}"
    return [
        ProblemRow.of(owner.get(id(problem), "scan"), problem) for problem in workbench.problems()
    ]


def binding_ids() -> set[str]:
    """Every binding id a keymap may name: those of every widget and screen class loaded."""
    ids: set[str] = set()
    seen: set[type] = set()
    stack: list[type] = [DOMNode]
    while stack:
        cls = stack.pop()
        subclasses: list[type] = cls.__subclasses__()
        for sub in subclasses:
            if sub in seen:
                continue
            seen.add(sub)
            stack.append(sub)
            for binding in sub.__dict__.get("BINDINGS", ()):
                if isinstance(binding, Binding) and binding.id:
                    ids.add(binding.id)
    return ids


def keymap_problems(
    keymap: Mapping[str, str], known: Iterable[str], where: str
) -> list[ProblemRow]:
    """A keymap entry that names no binding does nothing: said, with the nearest id."""
    choices = sorted(known)
    rows = []
    for binding_id in keymap:
        if binding_id in choices:
            continue
        near = difflib.get_close_matches(binding_id, choices, n=1, cutoff=0.6)
        hint = f"; did you mean {near[0]!r}?" if near else " (F1 lists every id)"
        rows.append(
            ProblemRow(
                "keymap",
                where,
                None,
                f"no key has the id {binding_id!r}{hint}",
                "that entry is ignored",
            )
        )
    return rows
