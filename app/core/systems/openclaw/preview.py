"""What OpenClaw puts in front of the agent, as its code renders it (injection.py): per bootstrap
file the content its context builder injects, with a long file's cut middle and the marker OpenClaw
writes in its place, a file cut again by the total budget, a `[MISSING]` line, and a file it
withholds (provenance) or never reaches shown whole as dropped; and a new session's daily logs."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from app.core.budget.plans import BudgetContext, BudgetPlan
from app.core.model import Memory, Portfolio
from app.core.preview.models import Draft, DraftBlock, Piece, State, clip
from app.core.systems.openclaw import budget, config, injection

BOOTSTRAP_HOW = " ".join(
    (
        "OpenClaw 2026.9.6's bootstrap context: each file's content, in this order, in the system",
        "prompt of every turn (MEMORY.md only in main or private sessions)",
    ),
)
STARTUP_HOW = "OpenClaw 2026.9.6's startup context: before a new session's first turn"
OLD_HOW = "OpenClaw's bootstrap files, in this order, in the system prompt of every turn"
_TOTAL = "cut by the total bootstrap budget (bootstrapTotalMaxChars)"
NEVER = "contextInjection is never"
RAN_OUT = "the total bootstrap budget ran out before it"


def previews(
    memories: Sequence[Memory],
    portfolio: Portfolio,
    context: BudgetContext,
    plans: Sequence[BudgetPlan],
) -> list[Draft]:
    files = budget._openclaw_files(memories)
    if "openclaw_state" not in portfolio.settings:
        return [_old(files, context)] if files else []
    root, settings = Path(portfolio.root), portfolio.settings
    memory_md = ("MEMORY.md",) if any(p.scope == "MEMORY.md" for p in plans) else ()
    return [
        Draft(
            scope="bootstrap",
            how=BOOTSTRAP_HOW,
            blocks=tuple(_bootstrap(root, settings, files, context)),
            plans=memory_md,
        ),
        _startup(root, settings, memories, context),
    ]


def _ids(files: dict[str, list[Memory]], name: str) -> tuple[str, ...]:
    return tuple(m.id for m in files.get(name, []))


def _bootstrap(
    root: Path,
    settings: dict,
    files: dict[str, list[Memory]],
    context: BudgetContext,
) -> list[DraftBlock]:
    max_chars = config.value(settings, "bootstrapMaxChars")
    total_max = config.value(settings, "bootstrapTotalMaxChars")
    mode = config.value(settings, "contextInjection")
    candidates, texts, withheld = budget.bootstrap_candidates(root, settings, files, context)
    injected = [] if mode == "never" else injection.build_context(candidates, max_chars, total_max)
    got = {i.name: i for i in injected}
    blocks: list[DraftBlock] = []
    for name in injection.BOOTSTRAP_ORDER:
        ids = _ids(files, name)
        single = ids[0] if len(ids) == 1 else None
        if name in got:
            plain = texts.get(name)
            placed = budget._offsets16(plain, files.get(name, [])) if plain else []
            spans = [(m.id, a, b) for m, a, b in placed]
            source = injection.to16(plain) if plain is not None else None
            blocks.append(DraftBlock(name, tuple(_file_pieces(got[name], source, spans)), ids))
            continue
        text = texts.get(name)
        if text is None and name in withheld:
            text = budget._text(root, name, files.get(name, []), context)
        if text is None:
            continue
        why = withheld.get(name) or (NEVER if mode == "never" else RAN_OUT)
        blocks.append(DraftBlock(name, (Piece(text, "dropped", single, why),), ids))
    return blocks


Spans = Sequence[tuple[str, int, int]]  # memory id, UTF-16 start and end in the file


def _by_memory(
    text16: str,
    start: int,
    end: int,
    state: State,
    spans: Spans,
    note: str = "",
) -> list[Piece]:
    """The file's characters start..end as pieces of one state, split where its memories begin
    and end (the text between them, headings and blank lines, belongs to none)."""
    cuts = sorted({start, end, *(x for _, a, b in spans for x in (a, b) if start < x < end)})
    out: list[Piece] = []
    for a, b in zip(cuts, cuts[1:], strict=False):
        owner = next((memory_id for memory_id, s, e in spans if s <= a and b <= e), None)
        out.append(Piece(injection.from16(text16[a:b]), state, owner, note))
    return out


def _file_pieces(got: injection.Injected, source: str | None, spans: Spans) -> list[Piece]:
    """The file's pieces: `source` is its text as OpenClaw read it (UTF-16 units)."""
    content = injection.from16(got.content)
    t = got.trimmed
    if t is None:  # a missing file: OpenClaw writes where it expected it
        return [Piece(content, "added", None, "the file is missing")]
    trimmed = injection.trim_end(source) if source is not None else t.content
    if not t.truncated:
        return clip(_by_memory(t.content, 0, len(t.content), "injected", spans), content, _TOTAL)
    full = t.content  # the trimmed file's head, OpenClaw's marker, its tail
    n = len(trimmed)
    marker = full[t.head : len(full) - t.tail]
    cut_note = f"cut by bootstrapMaxChars {t.max_chars:,}: OpenClaw keeps the first {t.head:,}"
    cut_note += f" and last {t.tail:,} characters"
    pieces = [
        *_by_memory(trimmed, 0, t.head, "injected", spans),
        *_by_memory(trimmed, t.head, n - t.tail, "cut", spans, cut_note),
        Piece(injection.from16(marker), "added", None, "OpenClaw's truncation marker"),
        *_by_memory(trimmed, n - t.tail, n, "injected", spans),
    ]
    return clip(pieces, content, _TOTAL)


def _startup(
    root: Path,
    settings: dict,
    memories: Sequence[Memory],
    context: BudgetContext,
) -> Draft:
    max_total = config.value(settings, "startupContext.maxTotalChars")
    max_file = config.value(settings, "startupContext.maxFileChars")
    enabled = config.value(settings, "startupContext.enabled")
    by_rel = {m.source.path: m.id for m in memories if m.kind == "log"}
    rels = budget.startup_logs(root, settings, context.now.date()) if enabled else []
    read = [(rel, budget._text(root, rel, [], context)) for rel in rels]
    logs = [(rel, injection.to16(text)) for rel, text in read if text is not None]
    got = injection.startup_context(logs, max_file, max_total)
    pieces: list[Piece] = []
    if got.prelude is not None:
        pieces.append(Piece(injection.from16(got.prelude), "injected", None))
    for rel, text in logs:
        trimmed = injection.trim(text)
        if trimmed and not got.blocks.get(rel):
            why = f"{rel}: the total cap ran out"
            pieces.append(Piece(injection.from16(trimmed), "dropped", by_rel.get(rel), why))
    ids = tuple(by_rel.get(rel, "") for rel, _ in logs if by_rel.get(rel))
    block = DraftBlock("startup context", tuple(pieces), ids)
    return Draft(scope="startup context", how=STARTUP_HOW, blocks=(block,) if pieces else ())


def _old(files: dict[str, list[Memory]], context: BudgetContext) -> Draft:
    """Before 2026.9: each file cut silently at 20,000 characters, all of them at 150,000."""
    blocks: list[DraftBlock] = []
    remaining = budget.OPENCLAW_TOTAL_CHARS
    for name in budget.BOOTSTRAP_ORDER:
        members = files.get(name)
        if not members:
            continue
        data = _bytes(members[0], context)
        if data is None:
            continue
        text = data.decode("utf-8", "replace")
        allowed = min(len(text), budget.OPENCLAW_FILE_CHARS, remaining)
        remaining -= allowed
        ids = tuple(m.id for m in members)
        single = ids[0] if len(ids) == 1 else None
        by_file = allowed == min(len(text), budget.OPENCLAW_FILE_CHARS)
        cap = "the 20,000-character file cap" if by_file else "the total cap"
        kept = Piece(text[:allowed], "injected", single)
        pieces = (kept, Piece(text[allowed:], "cut", single, f"cut silently at {cap}"))
        blocks.append(DraftBlock(name, pieces, ids))
    return Draft(scope="bootstrap", how=OLD_HOW, blocks=tuple(blocks), plans=("MEMORY.md",))


def _bytes(memory: Memory, context: BudgetContext) -> bytes | None:
    if context.file_bytes is None:
        return None
    try:
        return context.file_bytes(memory)
    except Exception:  # noqa: BLE001 - an unreadable file shows nothing
        return None
