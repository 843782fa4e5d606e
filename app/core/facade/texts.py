"""Memories' texts, read from their sources now, one by one or a portfolio's batch at a time."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import lru_cache
from itertools import takewhile
from pathlib import Path

from app.core.facade.state import Bench
from app.core.model import Memory, Portfolio, TrustLevel
from app.core.systems.registry import adapter as adapter_for

# Rows of a database read together when a pass over the memories asks for one of them.
READ_AHEAD = 500


def text_of(portfolios: Mapping[tuple[str, str], Portfolio], memory: Memory) -> str:
    """A memory's text, read from its source in one of `portfolios`."""
    root = portfolios[(memory.system, memory.portfolio)].root
    return adapter_for(memory.system).text(root_path(root), memory)


def texts_of(
    portfolios: Mapping[tuple[str, str], Portfolio], memories: list[Memory]
) -> list[str | Exception]:
    """`text_of` of many memories, each portfolio's read together (a database: one query per
    batch of rows, not one connection per row)."""
    out: list[str | Exception] = [KeyError("unread")] * len(memories)
    groups: dict[tuple[str, str], list[int]] = {}
    for index, memory in enumerate(memories):
        groups.setdefault((memory.system, memory.portfolio), []).append(index)
    for (system, name), indexes in groups.items():
        portfolio = portfolios.get((system, name))
        if portfolio is None:
            for i in indexes:
                out[i] = KeyError(f"no portfolio {system}:{name} is open")
            continue
        for i, text in zip(
            indexes,
            adapter_for(system).texts(root_path(portfolio.root), [memories[i] for i in indexes]),
            strict=True,
        ):
            out[i] = text
    return out


def read_ahead(wb: Bench) -> Callable[[str], str]:
    """`text` by memory id for a pass over many memories (suggestions, saliences, budgets): a
    memory of a system that reads in batches is read with the memories that follow it from the
    same source (a database, a domain file), so that a pass costs one query per batch of database
    rows instead of one connection per row, and one read of a domain file instead of one per
    section, and a pass that needs one section's text reads no other file."""
    with wb._lock:
        loaded, order = wb._loaded, wb.memories
    vaulted, portfolios = loaded.vaulted, loaded.portfolios
    # made when such a memory is first asked for: a pass over a few files needs none
    position: dict[str, int] = {}
    ahead: dict[str, str | Exception] = {}

    def text_of(memory_id: str) -> str:
        if memory_id in ahead:
            found = ahead.pop(memory_id)
            if isinstance(found, Exception):
                raise found
            return found
        memory = wb.memory(memory_id)
        if memory_id in vaulted or not adapter_for(memory.system).reads_in_batches:
            return wb.text(memory_id)
        if not position:
            position.update((m.id, i) for i, m in enumerate(order))
        at = position.get(memory_id)
        if at is None:
            return wb.text(memory_id)
        key = (memory.system, memory.portfolio, memory.source.path)
        batch = [
            m
            for m in takewhile(
                lambda m: (m.system, m.portfolio, m.source.path) == key,
                order[at : at + READ_AHEAD],
            )
            if m.id not in vaulted
        ]
        ahead.update(zip((m.id for m in batch), texts_of(portfolios, batch), strict=True))
        return text_of(memory_id)

    return text_of


def text(wb: Bench, memory_id: str) -> str:
    """A memory's content, read from its source now (or from the vault when quarantined there)."""
    memory = wb.memory(memory_id)
    root = wb.portfolio_of(memory).root
    if memory.id in wb._loaded.vaulted:
        return wb._applier.quarantined_text(memory, root)
    return adapter_for(memory.system).text(root_path(root), memory)


def entry_texts(wb: Bench, memory: Memory) -> list[tuple[str | None, str]]:
    if memory.id in wb._loaded.vaulted:
        return [(None, wb.text(memory.id))]
    return adapter_for(memory.system).entry_texts(root_path(wb.portfolio_of(memory).root), memory)


def text_key(wb: Bench) -> Callable[[Memory], str | None]:
    """What names the text `text()` gives a memory: its content and which of its entries are
    quarantined (a quarantined entry is marked in it); none for one kept in the vault."""
    vaulted = set(wb._loaded.vaulted)

    def key(memory: Memory) -> str | None:
        if not memory.sha256 or memory.id in vaulted:
            return None
        marks = "".join(
            "q" if entry.trust is TrustLevel.QUARANTINED else "-" for entry in memory.entries
        )
        return f"{memory.sha256}:{marks}"

    return key


@lru_cache(maxsize=64)
def root_path(root: str) -> Path:
    """A portfolio's root as the Path its adapter reads under, made once: a pass re-reads every
    memory's text, a hundred thousand at the largest."""
    return Path(root)
