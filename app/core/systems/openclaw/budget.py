"""OpenClaw's startup cost: the bootstrap files injected on every turn, in characters, against a
per-file and a total cap (text past a cap is cut without a word), and MEMORY.md in bytes against
Memory Fortress's 10 KB. Pure functions; a file's bytes come from a callable when it is given.

| what loads                      | unit       | limit                             |
|---------------------------------|------------|-----------------------------------|
| bootstrap files, MEMORY.md last | characters | 20,000 per file, 150,000 in total |
| MEMORY.md                       | bytes      | 10,240 (Memory Fortress)          |
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from app.core.budget.estimators import CHARS_PER_TOKEN
from app.core.budget.plans import BudgetContext, BudgetItem, BudgetPlan, FileBytes
from app.core.model import Memory, Portfolio
from app.core.systems.openclaw import NAME

# Bootstrap injection, in the order OpenClaw lists the files; MEMORY.md comes last
BOOTSTRAP_ORDER = ("AGENTS.md", "SOUL.md", "TOOLS.md", "IDENTITY.md", "USER.md", "HEARTBEAT.md", "BOOTSTRAP.md", "MEMORY.md")
OPENCLAW_FILE_CHARS = 20000
OPENCLAW_TOTAL_CHARS = 150000
MEMORY_MD = "MEMORY.md"
MEMORY_MD_BYTES = 10 * 1024


@dataclass(frozen=True)
class _Placed:
    memory: Memory
    start: int  # character offsets in the file
    end: int


def _file_layout(members: list[Memory], file_bytes: FileBytes | None) -> tuple[int, int, list[_Placed], bool]:
    """(file bytes, file characters, memories with character offsets, exact?) of one file."""
    members = sorted(members, key=lambda m: m.span.start if m.span else 0)
    data = None
    if file_bytes is not None:
        try:
            data = file_bytes(members[0])
        except Exception:  # noqa: BLE001 - fall back to the counts in the model
            data = None
    if data is not None:
        placed = []
        for m in members:
            span = m.span
            start = len(data[: span.start].decode("utf-8", "replace")) if span else 0
            end = start + (len(data[span.start : span.end].decode("utf-8", "replace")) if span else m.chars)
            placed.append(_Placed(m, start, end))
        return len(data), len(data.decode("utf-8", "replace")), placed, True
    # Without the file: memory characters are known, the glue between them is counted in bytes
    # (exact for ASCII glue such as headings and blank lines, an upper bound otherwise).
    placed = []
    shrink = 0
    for m in members:
        span = m.span
        start = (span.start if span else 0) - shrink
        placed.append(_Placed(m, start, start + m.chars))
        if span:
            shrink += (span.end - span.start) - m.chars
    size = max((m.span.end for m in members if m.span), default=0)
    return size, size - shrink, placed, False


def _openclaw_files(memories: Sequence[Memory]) -> dict[str, list[Memory]]:
    files: dict[str, list[Memory]] = defaultdict(list)
    for m in memories:
        if m.source.path in BOOTSTRAP_ORDER:
            files[m.source.path].append(m)
    return files


def openclaw_plans(memories: Sequence[Memory], portfolio: Portfolio, *, file_bytes: FileBytes | None = None) -> list[BudgetPlan]:
    """The bootstrap injection in characters (per-file and total caps; past a cap the text is cut
    without a word) and MEMORY.md in bytes against Memory Fortress's 10 KB."""
    files = _openclaw_files(memories)
    items: list[BudgetItem] = []
    demanded = injected_total = 0
    exact_all = True
    truncations: list[str] = []
    order = 0
    memory_md: tuple[int, list[_Placed]] | None = None
    for name in BOOTSTRAP_ORDER:
        if name not in files:
            continue
        size, chars, placed, exact = _file_layout(files[name], file_bytes)
        exact_all = exact_all and exact
        if name == MEMORY_MD:
            memory_md = (size, placed)
        remaining = max(0, OPENCLAW_TOTAL_CHARS - injected_total)
        allowed = min(chars, OPENCLAW_FILE_CHARS, remaining)
        demanded += chars
        injected_total += allowed
        if allowed < chars:
            cap = "the 20,000-character file cap" if allowed == min(chars, OPENCLAW_FILE_CHARS) else "the 150,000-character total cap"
            truncations.append(f"{name}: {chars:,} characters, {chars - allowed:,} cut silently at {cap}")
        for p in placed:
            order += 1
            cost = p.end - p.start
            kept = max(0, min(p.end, allowed) - p.start)
            cut = cost - kept
            note = f"{name}, characters {p.start:,}-{p.end:,}"
            if cut:
                note += f"; {cut:,} characters past character {allowed:,} of the file are cut silently"
            items.append(BudgetItem(id=p.memory.id, cost=cost, order=order, fits=cut == 0, truncated=cut > 0, cut=cut, note=note))
    notes = [
        f"Bootstrap files are injected on every turn, in the order {', '.join(BOOTSTRAP_ORDER)} (MEMORY.md only in main "
        f"or private sessions): {demanded:,} characters, {injected_total:,} after the caps (about "
        f"{math.ceil(injected_total / CHARS_PER_TOKEN):,} tokens at chars/4).",
        f"OpenClaw caps each file at {OPENCLAW_FILE_CHARS:,} characters (bootstrapMaxChars; 12,000 in some 2026.4-5 builds) "
        f"and all of them at {OPENCLAW_TOTAL_CHARS:,} (bootstrapTotalMaxChars; later 60,000); USER.md is capped at 4,000 "
        "in 2026.8.2. Text past a cap is cut without telling the agent.",
        *truncations,
    ]
    if not exact_all:
        notes.append("Text between sections (headings, blank lines) is counted in bytes: the file was not re-read.")
    plans = [
        BudgetPlan(
            portfolio=portfolio.name,
            system=NAME,
            scope="bootstrap",
            unit="characters",
            limit=OPENCLAW_TOTAL_CHARS,
            used=demanded,
            loaded=injected_total,
            items=tuple(items),
            notes=tuple(notes),
        )
    ]
    if memory_md is not None:
        plans.append(_memory_md_plan(portfolio, *memory_md))
    return plans


def _memory_md_plan(portfolio: Portfolio, size: int, placed: list[_Placed]) -> BudgetPlan:
    items = []
    for order, p in enumerate(placed, start=1):
        span = p.memory.span
        start, end = (span.start, span.end) if span else (0, 0)
        fits = end <= MEMORY_MD_BYTES
        note = f"bytes {start:,}-{end:,}" + ("" if fits else f"; past byte {MEMORY_MD_BYTES:,}")
        items.append(BudgetItem(id=p.memory.id, cost=end - start, order=order, fits=fits, note=note))
    verdict = "over the limit: split it into memory/domains/ files" if size > MEMORY_MD_BYTES else "within the limit"
    notes = (f"MEMORY.md is {size:,} bytes against Memory Fortress's {MEMORY_MD_BYTES:,} (10 KB): {verdict}.",)
    return BudgetPlan(
        portfolio=portfolio.name,
        system=NAME,
        scope="MEMORY.md",
        unit="bytes",
        limit=MEMORY_MD_BYTES,
        used=size,
        loaded=min(size, MEMORY_MD_BYTES),
        items=tuple(items),
        notes=notes,
    )


def plans(memories: Sequence[Memory], portfolio: Portfolio, context: BudgetContext) -> list[BudgetPlan]:
    return openclaw_plans(memories, portfolio, file_bytes=context.file_bytes)
