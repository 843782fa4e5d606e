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
import os
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path
from typing import Any

from app.core.budget.estimators import CHARS_PER_TOKEN
from app.core.budget.plans import BudgetContext, BudgetItem, BudgetPlan, FileBytes
from app.core.model import Memory, Portfolio
from app.core.parsing import safefs
from app.core.systems.openclaw import NAME, config, injection, provenance

# Bootstrap injection, in the order OpenClaw lists the files; MEMORY.md comes last
BOOTSTRAP_ORDER = (
    "AGENTS.md",
    "SOUL.md",
    "TOOLS.md",
    "IDENTITY.md",
    "USER.md",
    "HEARTBEAT.md",
    "BOOTSTRAP.md",
    "MEMORY.md",
)
OPENCLAW_FILE_CHARS = 20000
OPENCLAW_TOTAL_CHARS = 150000
MEMORY_MD = "MEMORY.md"
MEMORY_MD_BYTES = 10 * 1024


@dataclass(frozen=True)
class _Placed:
    memory: Memory
    start: int  # character offsets in the file
    end: int


def _file_layout(
    members: list[Memory],
    file_bytes: FileBytes | None,
) -> tuple[int, int, list[_Placed], bool]:
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
            end = start + (
                len(data[span.start : span.end].decode("utf-8", "replace")) if span else m.chars
            )
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


def openclaw_plans(
    memories: Sequence[Memory],
    portfolio: Portfolio,
    *,
    file_bytes: FileBytes | None = None,
) -> list[BudgetPlan]:
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
            cap = (
                "the 20,000-character file cap"
                if allowed == min(chars, OPENCLAW_FILE_CHARS)
                else "the 150,000-character total cap"
            )
            truncations.append(
                f"{name}: {chars:,} characters, {chars - allowed:,} cut silently at {cap}"
            )
        for p in placed:
            order += 1
            cost = p.end - p.start
            kept = max(0, min(p.end, allowed) - p.start)
            cut = cost - kept
            note = f"{name}, characters {p.start:,}-{p.end:,}"
            if cut:
                note += (
                    f"; {cut:,} characters past character {allowed:,} of the file are cut silently"
                )
            items.append(
                BudgetItem(
                    id=p.memory.id,
                    cost=cost,
                    order=order,
                    fits=cut == 0,
                    truncated=cut > 0,
                    cut=cut,
                    note=note,
                )
            )
    notes = [
        "Bootstrap files are injected on every turn, in the order "
        f"{', '.join(BOOTSTRAP_ORDER)} (MEMORY.md only in main "
        f"or private sessions): {demanded:,} characters, {injected_total:,} after the caps (about "
        f"{math.ceil(injected_total / CHARS_PER_TOKEN):,} tokens at chars/4).",
        f"OpenClaw caps each file at {OPENCLAW_FILE_CHARS:,} characters "
        "(bootstrapMaxChars; 12,000 in some 2026.4-5 builds) and all of them at "
        f"{OPENCLAW_TOTAL_CHARS:,} (bootstrapTotalMaxChars; later 60,000); USER.md is "
        "capped at 4,000 in 2026.8.2. Text past a cap is cut without telling the agent.",
        *truncations,
    ]
    if not exact_all:
        notes.append(
            "Text between sections (headings, blank lines) "
            "is counted in bytes: the file was not re-read."
        )
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
        items.append(
            BudgetItem(id=p.memory.id, cost=end - start, order=order, fits=fits, note=note)
        )
    verdict = (
        "over the limit: split it into memory/domains/ files"
        if size > MEMORY_MD_BYTES
        else "within the limit"
    )
    notes = (
        (
            f"MEMORY.md is {size:,} bytes against Memory "
            f"Fortress's {MEMORY_MD_BYTES:,} (10 KB): {verdict}."
        ),
    )
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


def plans(
    memories: Sequence[Memory],
    portfolio: Portfolio,
    context: BudgetContext,
) -> list[BudgetPlan]:
    if "openclaw_state" in portfolio.settings:
        return plans_2026(memories, portfolio, context)
    return openclaw_plans(memories, portfolio, file_bytes=context.file_bytes)


# -- OpenClaw 2026.9 (a workspace with a state database) -------------------------------------------


def plans_2026(
    memories: Sequence[Memory],
    portfolio: Portfolio,
    context: BudgetContext,
) -> list[BudgetPlan]:
    """The bootstrap injection and a new session's daily logs as OpenClaw 2026.9.6 computes them
    (injection.py), each constant from the workspace's OpenClaw config or its default, said."""
    settings = portfolio.settings
    root = Path(portfolio.root)
    files = _openclaw_files(memories)
    plans = [
        _bootstrap_2026(root, settings, files, context),
        _startup_2026(root, settings, memories, context),
    ]
    if MEMORY_MD in files and (root / "state").is_dir():  # a Memory Fortress workspace
        size, _, placed, _ = _file_layout(files[MEMORY_MD], context.file_bytes)
        plans.append(_memory_md_plan(portfolio, size, placed))
    return [p.model_copy(update={"portfolio": portfolio.name}) for p in plans]


NOT_IN = "OpenClaw does not inject it"


def _said(settings: dict[str, Any], name: str) -> str:
    value = config.value(settings, name)
    shown = f"{value:,}" if isinstance(value, int) else str(value)
    return f"{name} {shown} ({config.source(settings, name)})"


def _text(root: Path, rel: str, members: list[Memory], context: BudgetContext) -> str | None:
    """The file's text as OpenClaw reads it (UTF-8, invalid bytes replaced), or None when absent."""
    data = None
    if members and context.file_bytes is not None:
        try:
            data = context.file_bytes(members[0])
        except Exception:  # noqa: BLE001 - read it from disk instead
            data = None
    if data is None:
        try:
            data = safefs.read_file(safefs.under(root, rel))
        except Exception:  # noqa: BLE001 - a file that cannot be read is missing to OpenClaw too
            return None
    return data.decode("utf-8", "replace")


def _offsets16(text: str, members: list[Memory]) -> list[tuple[Memory, int, int]]:
    """Each memory's UTF-16 offsets in its file's text."""
    data = text.encode("utf-8")
    out = []
    for m in sorted(members, key=lambda m: m.span.start if m.span else 0):
        start, end = (m.span.start, m.span.end) if m.span else (0, len(data))
        a = len(injection.to16(data[:start].decode("utf-8", "replace")))
        b = a + len(injection.to16(data[start:end].decode("utf-8", "replace")))
        out.append((m, a, b))
    return out


def _bootstrap_2026(
    root: Path,
    settings: dict[str, Any],
    files: dict[str, list[Memory]],
    context: BudgetContext,
) -> BudgetPlan:
    max_chars = config.value(settings, "bootstrapMaxChars")
    total_max = config.value(settings, "bootstrapTotalMaxChars")
    mode = config.value(settings, "contextInjection")
    candidates, texts, withheld = bootstrap_candidates(root, settings, files, context)
    notes: list[str] = []
    injected = [] if mode == "never" else injection.build_context(candidates, max_chars, total_max)
    got = {i.name: i for i in injected}
    items: list[BudgetItem] = []
    order = 0
    for name in (
        *injection.BOOTSTRAP_ORDER,
        *sorted(n for n in files if n not in injection.BOOTSTRAP_ORDER),
    ):
        members = files.get(name, [])
        if not members:
            continue
        text = texts.get(name) or _text(root, name, members, context) or ""
        whole = len(injection.trim_end(injection.to16(text)))
        for m, start, end in _offsets16(text, members):
            order += 1
            cost = end - start
            kept, why = _kept(name, start, end, got.get(name), withheld.get(name), mode)
            # OpenClaw drops the file's trailing whitespace first: that is no loss of memory.
            shown = max(start, min(end, whole))
            lost = max(0, (shown - start) - kept)
            note = f"{name}, characters {start:,}-{end:,}"
            if lost or not kept:
                note += f"; {why}"
            items.append(
                BudgetItem(
                    id=m.id,
                    cost=cost,
                    order=order,
                    fits=lost == 0 and kept > 0,
                    truncated=0 < kept and lost > 0,
                    cut=lost,
                    note=note,
                )
            )
    demanded = sum(len(injection.to16(t)) for t in texts.values())
    loaded = sum(len(i.content) for i in injected)
    for i in injected:
        t = i.trimmed
        if t is None:
            size = f"{len(i.content):,} characters"
            notes.append(f"{i.name} is missing: OpenClaw injects `[MISSING] Expected at…` ({size})")
        elif t.truncated or i.clamped:
            notes.append(
                f"{i.name}: {t.original:,} characters, {len(i.content):,} injected: OpenClaw keeps "
                f"its first {t.head:,} and last "
                f"{t.tail:,} around a truncation marker (limit {t.max_chars:,})"
            )
    notes.extend(withheld.values())
    for name in files:
        if name not in injection.BOOTSTRAP_ORDER:
            notes.append(f"{name}: OpenClaw 2026.9 no longer injects it at bootstrap")
    head = (
        f"OpenClaw 2026.9.6 injects {', '.join(injection.BOOTSTRAP_ORDER)} in that order "
        f"(MEMORY.md only in main or private sessions): {loaded:,} characters "
        f"(about {math.ceil(loaded / CHARS_PER_TOKEN):,} tokens at chars/4)."
    )
    constants = (
        f"Its limits: {_said(settings, 'bootstrapMaxChars')} per file, USER.md at most "
        f"{injection.USER_MAX_CHARS:,} (fixed), {_said(settings, 'bootstrapTotalMaxChars')} "
        f"in total; {_said(settings, 'contextInjection')}."
    )
    if mode == "never":
        notes.insert(0, "contextInjection is never: OpenClaw injects no bootstrap file.")
    elif mode == "continuation-skip":
        notes.insert(
            0,
            "contextInjection is continuation-skip: injected on a session's first turn only.",
        )
    return BudgetPlan(
        portfolio="",
        system=NAME,
        scope="bootstrap",
        unit="characters",
        limit=total_max,
        used=demanded,
        loaded=loaded,
        items=tuple(items),
        notes=(head, constants, *notes),
    )


def bootstrap_candidates(
    root: Path,
    settings: dict[str, Any],
    files: dict[str, list[Memory]],
    context: BudgetContext,
) -> tuple[list[injection.BootstrapFile], dict[str, str], dict[str, str]]:
    """The files OpenClaw 2026.9 hands its context builder, in its order (a missing one as a
    `[MISSING]` candidate), their texts, and the files it withholds with the reason."""
    claims: dict[str, list[Any]] = settings.get("provenance", {})
    setup_done = bool(settings.get("openclaw_state", {}).get("setup_completed"))
    readable = bool(settings.get("openclaw_state", {}).get("readable"))
    candidates: list[injection.BootstrapFile] = []
    texts: dict[str, str] = {}
    withheld: dict[str, str] = {}
    for name in injection.BOOTSTRAP_ORDER:
        text = _text(root, name, files.get(name, []), context)
        if name == "BOOTSTRAP.md" and setup_done:
            continue  # OpenClaw drops BOOTSTRAP.md once the workspace's setup is completed
        if text is None:
            if name not in (MEMORY_MD, "USER.md"):
                candidates.append(injection.BootstrapFile(name, str(root / name), None))
            continue
        claim = claims.get(name)
        origin = claim[0] if claim else provenance.origin_class(name, {})
        if name in provenance.BOOTSTRAP_MEMORY and not readable:
            # OpenClaw's classifier fails on it, and OpenClaw then leaves both files out
            withheld[name] = f"{name} cannot be classified (state database unreadable), so {NOT_IN}"
            continue
        if name in provenance.BOOTSTRAP_MEMORY and origin not in provenance.INJECTED:
            withheld[name] = f"{name} is recorded {origin} in OpenClaw's provenance, so {NOT_IN}"
            continue
        texts[name] = text
        candidates.append(injection.BootstrapFile(name, str(root / name), injection.to16(text)))
    return candidates, texts, withheld


def _kept(
    name: str,
    start: int,
    end: int,
    got: injection.Injected | None,
    withheld: str | None,
    mode: str,
) -> tuple[int, str]:
    """How many of a memory's characters OpenClaw injects, and why not all."""
    if name not in injection.BOOTSTRAP_ORDER:
        return 0, "not injected by OpenClaw 2026.9"
    if withheld is not None:
        return 0, "not injected: " + withheld.split(", so ", 1)[0]
    if mode == "never":
        return 0, "not injected: contextInjection is never"
    if got is None or got.trimmed is None:
        return 0, "not injected: the total bootstrap budget ran out before it"
    t = got.trimmed
    allowed = len(got.content) - (1 if got.clamped else 0)
    if not t.truncated:
        keep_to = min(t.original, allowed)
        kept = max(0, min(end, keep_to) - start)
        return kept, "" if kept == end - start else f"cut past character {keep_to:,} of the file"
    head_to = min(t.head, allowed)
    tail_from = t.original - t.tail
    tail_kept = max(0, allowed - (len(t.content) - t.tail)) if got.clamped else t.tail
    tail_to = tail_from + tail_kept
    kept = max(0, min(end, head_to) - start) + max(0, min(end, tail_to) - max(start, tail_from))
    return (
        kept,
        "" if kept == end - start else f"kept: characters 0-{head_to:,}, {tail_from:,}-{tail_to:,}",
    )


def startup_logs(root: Path, settings: dict[str, Any], today: date) -> list[str]:
    """The daily logs OpenClaw loads at a new session, in its order: per day (today first), the
    plain log then up to four slugged ones, newest first by modification time."""
    days = config.value(settings, "startupContext.dailyMemoryDays")
    stamps = [(today - timedelta(days=n)).isoformat() for n in range(days)]
    try:
        entries = [e for e in os.scandir(root / "memory") if e.is_file() and e.name.endswith(".md")]
    except OSError:
        entries = []
    out: list[str] = []
    for stamp in stamps:
        slugged = [e for e in entries if e.name.startswith(f"{stamp}-")]
        slugged.sort(key=lambda e: (e.stat().st_mtime_ns, e.name), reverse=True)
        out += [
            f"memory/{stamp}.md",
            *(f"memory/{e.name}" for e in slugged[: injection.SLUGGED_PER_DAY]),
        ]
    return out


def _startup_2026(
    root: Path,
    settings: dict[str, Any],
    memories: Sequence[Memory],
    context: BudgetContext,
) -> BudgetPlan:
    max_total = config.value(settings, "startupContext.maxTotalChars")
    max_file = config.value(settings, "startupContext.maxFileChars")
    enabled = config.value(settings, "startupContext.enabled")
    by_rel = {m.source.path: m for m in memories if m.kind == "log"}
    rels = startup_logs(root, settings, context.now.date()) if enabled else []
    read = [(rel, _text(root, rel, [], context)) for rel in rels]
    logs = [(rel, injection.to16(text)) for rel, text in read if text is not None]
    got = injection.startup_context(logs, max_file, max_total)
    items: list[BudgetItem] = []
    for order, (rel, text) in enumerate(logs, start=1):
        memory = by_rel.get(rel)
        if memory is None or not injection.trim(text):
            continue
        block = got.blocks.get(rel, 0)
        cut = got.truncated.get(rel, 0)
        note = rel + (f"; {cut:,} characters past maxFileChars cut" if cut else "")
        if not block:
            note += "; left out: the total cap ran out"
        items.append(
            BudgetItem(
                id=memory.id,
                cost=len(injection.trim(text)),
                order=order,
                fits=block > 0 and not cut,
                truncated=cut > 0,
                cut=cut,
                note=note,
            )
        )
    loaded = len(got.prelude) if got.prelude is not None else 0
    notes = [
        f"A new session (/new, /reset) gets the last days' logs in one block: {loaded:,} chars.",
        (
            f"Its limits: {_said(settings, 'startupContext.dailyMemoryDays')}, "
            f"{_said(settings, 'startupContext.maxFileChars')} per log, "
            f"{_said(settings, 'startupContext.maxTotalChars')} in total, at most "
            f"{injection.SLUGGED_PER_DAY} slugged logs a day; days counted from "
            f"{context.now.date().isoformat()} ({_said(settings, 'userTimezone')})."
        ),
    ]
    if not enabled:
        notes.insert(0, "startupContext.enabled is false: no daily log is loaded at a new session.")
    return BudgetPlan(
        portfolio="",
        system=NAME,
        scope="startup context",
        unit="characters",
        limit=max_total,
        used=sum(len(injection.trim(t)) for _, t in logs),
        loaded=loaded,
        items=tuple(items),
        notes=tuple(notes),
    )
