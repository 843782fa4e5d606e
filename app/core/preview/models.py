"""The preview of what a system injects, as pieces of text in the order they are written.

Each piece says what happens to it: `injected` is memory text the agent sees, `added` is text the
system (or its host) writes around it (headings, cut markers, framing), `cut` is memory text a cap
removes from inside an injected block, `dropped` is a whole memory or file left out. Only `injected`
and `added` pieces, joined, are the text the agent sees; the others sit where they would have been.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from pydantic import BaseModel, ConfigDict

State = Literal["injected", "added", "cut", "dropped"]
SHOWN: frozenset[str] = frozenset({"injected", "added"})


@dataclass(frozen=True)
class Piece:
    """A run of text of one state; `memory_id` when it is (part of) one memory."""

    text: str
    state: State
    memory_id: str | None = None
    note: str = ""

    @property
    def shown(self) -> bool:
        return self.state in SHOWN


@dataclass(frozen=True)
class DraftBlock:
    """One thing injected as a unit: a bootstrap file, a hot cache, a context block."""

    name: str
    pieces: tuple[Piece, ...]
    # The memories whose text the block holds besides those its pieces name (a whole file's).
    memory_ids: tuple[str, ...] = ()

    @property
    def text(self) -> str:
        return "".join(p.text for p in self.pieces if p.shown)


@dataclass(frozen=True)
class Draft:
    """A system's own rendering of one plan (`scope` as in its `BudgetPlan`), raw text."""

    scope: str
    how: str  # how and when it reaches the agent
    blocks: tuple[DraftBlock, ...]
    notes: tuple[str, ...] = ()
    differs: str = ""  # where this rendering differs from the system's on purpose
    plans: tuple[str, ...] = field(default=())  # other plan scopes this preview stands for


def clip(pieces: Sequence[Piece], injected: str, note: str) -> list[Piece]:
    """`pieces` as far as `injected` (their shown text, cut again by a later cap) keeps them: the
    shown text past the common prefix becomes `cut`, and what `injected` adds after it (an
    ellipsis) is `added`."""
    shown = "".join(p.text for p in pieces if p.shown)
    if shown == injected:
        return list(pieces)
    keep = _common_prefix(shown, injected)
    out: list[Piece] = []
    at = 0
    for piece in pieces:
        if not piece.shown:
            out.append(piece)
            continue
        end = at + len(piece.text)
        head = piece.text[: max(0, keep - at)]
        tail = piece.text[len(head) :]
        if head:
            out.append(Piece(head, piece.state, piece.memory_id, piece.note))
        if tail:
            out.append(Piece(tail, "cut", piece.memory_id, note))
        at = end
    extra = injected[keep:]
    if extra:
        first_cut = next((i for i, p in enumerate(out) if p.state == "cut"), len(out))
        out.insert(first_cut, Piece(extra, "added", None, note))
    return out


def _common_prefix(a: str, b: str) -> int:
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i


def joined(pieces: Iterable[Piece]) -> str:
    return "".join(p.text for p in pieces if p.shown)


# ---- what the faces get -----------------------------------------------------------------------


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class PreviewPiece(_Frozen):
    text: str  # inert, secrets masked
    state: State
    memory_id: str | None = None
    note: str = ""


class PreviewBlock(_Frozen):
    name: str
    text: str  # what the agent sees of this block: inert, secrets masked
    chars: int  # characters the agent sees, before making them inert
    pieces: tuple[PreviewPiece, ...]
    memory_ids: tuple[str, ...] = ()  # every memory whose text the block holds


class Preview(_Frozen):
    """What one plan injects: per block the exact text, and the pieces with cuts marked in place."""

    portfolio: str
    system: str
    scope: str
    how: str
    blocks: tuple[PreviewBlock, ...]
    notes: tuple[str, ...] = ()
    differs: str = ""
    plans: tuple[str, ...] = ()

    @property
    def text(self) -> str:
        return "\n".join(b.text for b in self.blocks)
