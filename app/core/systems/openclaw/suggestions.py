"""OpenClaw's suggestions, from Memory Fortress's conventions: CLOSED.md lines that reverse a
DECISIONS.md line, `[STALE]` items, daily logs past 14 days still outside the archive, domain items
unreferenced for 30 days, decisions older than 48 hours, learnings Pattern-Keys seen 3+ times in 2+
entries, a person's Fortress scores, MEMORY.md over 10 KB and bootstrap files past their cap."""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Sequence

from app.core.budget.plans import BudgetPlan
from app.core.curate.salience import parse_time
from app.core.curate.suggestions import (
    Promotion,
    Suggestion,
    SuggestionContext,
    as_int,
    quoted,
    short,
)
from app.core.model import Memory, Tier, TrustLevel
from app.core.systems.openclaw import NAME
from app.core.systems.openclaw.budget import MEMORY_MD, MEMORY_MD_BYTES, OPENCLAW_FILE_CHARS

LOG_ARCHIVE_DAYS = 14
UNREFERENCED_DAYS = 30
DECISIONS_WINDOW_HOURS = 48
PATTERN_PROMOTE_COUNT = 3
PATTERN_PROMOTE_ENTRIES = 2

_STALE_LINE = re.compile(r"^\s{0,3}(?:[-*+]\s+)?\[STALE\]\s*(.*)$")
_DISTINCT_TOKEN = re.compile(r"[\w][\w.\-/]*[\w]")


def suggestions(memories: Sequence[Memory], ctx: SuggestionContext) -> list[Suggestion]:
    """Stale findings first: they fill ctx.superseded, which the shared promotions then skip."""
    found: list[Suggestion] = []
    found += _closed_reversals(memories, ctx)
    found += _stale_markers(memories, ctx)
    found += _old_logs(memories, ctx)
    found += _unreferenced(memories, ctx)
    found += _old_decisions(memories, ctx)
    found += _pattern_keys(memories, ctx)
    found += _fortress(ctx)
    return found


def promotion(memory: Memory, ctx: SuggestionContext) -> Promotion | None:
    """A domain section may move its summary into MEMORY.md; what is in MEMORY.md already is hot."""
    if memory.kind != "note" or memory.source.path == MEMORY_MD:
        return None
    over = any(p.scope == MEMORY_MD and p.used > MEMORY_MD_BYTES for p in ctx.plans)
    return Promotion(
        action="move its summary into MEMORY.md",
        note="MEMORY.md is already over 10 KB: make room there first." if over else "",
    )


def kept_apart(a: Memory, b: Memory) -> bool:
    """A MEMORY.md section and a section of the domain file it points to (`→ Details:`): Memory
    Fortress keeps the summary and its detail apart on purpose."""
    for summary, detail in ((a, b), (b, a)):
        if summary.system == detail.system == NAME and summary.source.path == MEMORY_MD:
            if summary.fields.get("details") == detail.source.path:
                return True
    return False


def _closed_reversals(memories: Sequence[Memory], ctx: SuggestionContext) -> list[Suggestion]:
    """A CLOSED.md line that names a DECISIONS.md line's timestamp settles (reverses) it."""
    out = []
    openclaw = list(memories)
    decisions = [
        m for m in openclaw if m.kind == "decision" and isinstance(m.fields.get("date"), str)
    ]
    for closed in (m for m in openclaw if m.kind == "closed"):
        text = f"{closed.name} {closed.fields.get('decision', '')}"
        for decision in decisions:
            if decision.portfolio != closed.portfolio or decision.fields.get("stale"):
                continue
            stamp = decision.fields["date"]
            if stamp and stamp in text:
                ctx.superseded.add(decision.id)
                verb = "reverses" if "revers" in text.lower() else "settles"
                reason = (
                    f"state/CLOSED.md ({closed.fields.get('date')}, "
                    f"{closed.fields.get('decider', '?')}) {verb} the {stamp} "
                    f"decision in state/DECISIONS.md, {quoted(decision)}: that "
                    "line is superseded; mark it [STALE] and log why in the "
                    "daily log (Memory Fortress keeps it for the record)."
                )
                out.append(Suggestion(kind="stale", ids=(decision.id, closed.id), reason=reason))
    return out


def _stale_reason_log(
    memories: Sequence[Memory], ctx: SuggestionContext, memory: Memory, item: str
) -> str:
    """The daily log that gives the reason: it says "stale" and names a distinctive token of the
    item (one with a digit or a dot, like `db.t3.medium`)."""
    tokens = {
        t.lower()
        for t in _DISTINCT_TOKEN.findall(item)
        if len(t) >= 6 and any(c.isdigit() or c == "." for c in t)
    }
    if not tokens:
        return ""
    logs = sorted(
        (m for m in memories if m.portfolio == memory.portfolio and m.kind == "log"),
        key=lambda m: m.source.path,
    )
    for log in logs:
        text = (ctx.text(log) or "").lower()
        if "stale" in text and any(token in text for token in tokens):
            return f"; the reason is logged in {log.source.path}"
    return "; no daily log gives its reason, which Memory Fortress asks for"


class _SectionTexts:
    """Sections' texts with each file read once for the sections that follow each other in it (a
    domain file holds dozens): the span of the file's bytes, as `text()` reads it. A section kept in
    the vault, one without a span or without file bytes is read the workbench's way."""

    def __init__(self, ctx: SuggestionContext) -> None:
        self.ctx = ctx
        self.path: str | None = None
        self.data: bytes | None = None

    def __call__(self, memory: Memory) -> str | None:
        if memory.span is None or memory.trust == TrustLevel.QUARANTINED:
            return self.ctx.text(memory)
        if memory.source.path != self.path:
            self.path, self.data = memory.source.path, self.ctx.data(memory)
        if self.data is None:  # no file reader given, or the file is unreadable: as text() says
            return self.ctx.text(memory)
        if memory.span.end > len(self.data):
            return None  # changed since the load: nothing to say of it now
        try:
            return memory.span.slice(self.data).decode("utf-8")
        except UnicodeDecodeError:
            return None


def _stale_markers(memories: Sequence[Memory], ctx: SuggestionContext) -> list[Suggestion]:
    out = []
    text_of = _SectionTexts(ctx)
    for memory in memories:
        if memory.fields.get("stale"):
            ctx.superseded.add(memory.id)
            reason = (
                f"{memory.source.path}: {quoted(memory)} is marked "
                "[STALE]; it is kept for the record, so move it out of "
                "what is loaded (to the daily log or the archive) once its reason is logged."
            )
            out.append(Suggestion(kind="stale", ids=(memory.id,), reason=reason))
            continue
        if memory.kind != "note":
            continue
        text = text_of(memory)
        if not text or "[STALE]" not in text:
            continue
        first = _first_line(ctx, memory)
        found = []
        for offset, line in enumerate(text.split("\n")):
            match = _STALE_LINE.match(line)
            if match:
                item = match[1].strip()
                where = f"line {first + offset}" if first else f"line {offset + 1} of the section"
                found.append(
                    f'{where}, "{short(item, 80)}"{_stale_reason_log(memories, ctx, memory, item)}'
                )
        if not found:
            continue
        hot = " It is still loaded on every turn." if memory.tier == Tier.HOT else ""
        reason = (
            f"{memory.source.path}, section {quoted(memory)}: {len(found)} item(s) "
            f"marked [STALE] ({'; '.join(found)}). Superseded items stay for the record; "
            f"move them out of the section to memory/domains/ or the archive.{hot}"
        )
        out.append(Suggestion(kind="stale", ids=(memory.id,), reason=reason))
    return out


def _first_line(ctx: SuggestionContext, memory: Memory) -> int | None:
    """The 1-based file line where the memory's span starts, when the file can be read."""
    data = ctx.data(memory)
    if data is None or memory.span is None or memory.span.start > len(data):
        return None
    return data[: memory.span.start].count(b"\n") + 1


def _old_logs(memories: Sequence[Memory], ctx: SuggestionContext) -> list[Suggestion]:
    out = []
    today = ctx.now.date()
    for memory in memories:
        if memory.kind != "log" or memory.tier == Tier.ARCHIVE:
            continue
        day = parse_time(memory.fields.get("date"))
        if day is None:
            continue
        age = (today - day.date()).days
        if age > LOG_ARCHIVE_DAYS:
            reason = (
                f"Daily log {memory.source.path} is {age} days old, "
                f"past Memory Fortress's {LOG_ARCHIVE_DAYS} days, and "
                f"still outside the archive: move it to memory/archive/{day.strftime('%Y-%m')}/."
            )
            out.append(Suggestion(kind="archive", ids=(memory.id,), reason=reason))
    return out


def _unreferenced(memories: Sequence[Memory], ctx: SuggestionContext) -> list[Suggestion]:
    """Domain items whose last mention in a daily log is more than 30 days old. MEMORY.md sections
    are left out: a section summarises many items, and a log rarely names a section."""
    out = []
    today = ctx.now.date()
    for memory in memories:
        if memory.kind != "note" or memory.source.path == MEMORY_MD:
            continue
        if ctx.is_pinned(memory):
            continue
        days = ctx.mentions.get(memory.id)
        if not days:
            continue
        age = (today - max(days)).days
        if age > UNREFERENCED_DAYS:
            reason = (
                f"{memory.source.path}, section {quoted(memory)}: last "
                f"mentioned in a daily log on {max(days).isoformat()}, {age} "
                "days ago; Memory Fortress demotes items unreferenced for more "
                f"than {UNREFERENCED_DAYS} days (domain file to the archive)."
            )
            out.append(Suggestion(kind="demote", ids=(memory.id,), reason=reason))
    return out


def _old_decisions(memories: Sequence[Memory], ctx: SuggestionContext) -> list[Suggestion]:
    out = []
    for memory in memories:
        if memory.kind != "decision" or memory.fields.get("stale"):
            continue
        stamp = memory.fields.get("date")
        when = parse_time(stamp)
        if when is None:
            continue
        hours = (ctx.now - when).total_seconds() / 3600
        if hours > DECISIONS_WINDOW_HOURS:
            reason = (
                f"state/DECISIONS.md keeps the last {DECISIONS_WINDOW_HOURS} "
                f"hours; {quoted(memory)} is from {stamp}, "
                f"{hours:.1f} hours ago: move it to the daily log or MEMORY.md."
            )
            out.append(Suggestion(kind="demote", ids=(memory.id,), reason=reason))
    return out


def _pattern_keys(memories: Sequence[Memory], ctx: SuggestionContext) -> list[Suggestion]:
    groups: dict[tuple[str, str], list[Memory]] = defaultdict(list)
    for memory in memories:
        key = memory.fields.get("Pattern-Key")
        if memory.kind == "learning" and isinstance(key, str) and key:
            groups[(memory.portfolio, key)].append(memory)
    out = []
    for (_portfolio, key), members in sorted(groups.items()):
        count = sum(as_int(m.fields.get("Recurrence-Count")) or 1 for m in members)
        done = any(str(m.fields.get("Status", "")).startswith("promoted") for m in members)
        if count >= PATTERN_PROMOTE_COUNT and len(members) >= PATTERN_PROMOTE_ENTRIES and not done:
            reason = (
                f"Pattern-Key {key} recurs {count} times across {len(members)} "
                "learnings entries (Memory Fortress promotes at "
                f"{PATTERN_PROMOTE_COUNT}+ in {PATTERN_PROMOTE_ENTRIES}+ contexts) "
                "and none is promoted yet: write it into MEMORY.md or a skill."
            )
            out.append(Suggestion(kind="promote", ids=tuple(m.id for m in members), reason=reason))
    return out


def _fortress(ctx: SuggestionContext) -> list[Suggestion]:
    out = []
    for memory_id, score in ctx.fortress_scores.items():
        memory = ctx.by_id.get(memory_id)
        if memory is None or memory.system != NAME:
            continue
        axes = (
            f"durability {score.durability}, reuse {score.reuse}, "
            f"impact {score.impact}, uniqueness {score.uniqueness}"
        )
        in_memory_md = memory.source.path == MEMORY_MD
        if score.candidate and not in_memory_md:
            reason = (
                f"Fortress score {axes}: a MEMORY.md candidate "
                f"({score.reason}); move its summary into MEMORY.md."
            )
            out.append(Suggestion(kind="promote", ids=(memory.id,), reason=reason))
        elif not score.candidate and in_memory_md and not ctx.is_pinned(memory):
            reason = (
                f"Fortress score {axes}: not a MEMORY.md candidate "
                f"({score.reason}); move it to memory/domains/."
            )
            out.append(Suggestion(kind="demote", ids=(memory.id,), reason=reason))
    return out


# ---- budgets -----------------------------------------------------------------------------------


def budget_suggestions(plan: BudgetPlan, ctx: SuggestionContext) -> list[Suggestion]:
    if plan.scope == "MEMORY.md":
        if plan.used <= MEMORY_MD_BYTES:
            return []
        past = [ctx.by_id[item.id] for item in plan.past_cut]
        tail = (
            f"; sections past byte {MEMORY_MD_BYTES:,}: {', '.join(quoted(m) for m in past)}"
            if past
            else ""
        )
        reason = (
            f"MEMORY.md is {plan.used:,} bytes, over Memory Fortress's "
            f"{MEMORY_MD_BYTES:,}-byte (10 KB) limit: split it into memory/domains/ files, "
            f"keeping one-line summaries and `→ Details:` pointers in MEMORY.md{tail}."
        )
        return [Suggestion(kind="split", ids=tuple(item.id for item in plan.items), reason=reason)]
    if plan.scope != "bootstrap":
        return []  # a new session's daily logs are records of their days: nothing to split
    if any(note.startswith("OpenClaw 2026.9") for note in plan.notes):
        return _split_2026(plan, ctx)
    by_file: dict[str, list[str]] = defaultdict(list)
    lost: dict[str, int] = defaultdict(int)
    for item in plan.items:
        if item.truncated:
            path = ctx.by_id[item.id].source.path
            by_file[path].append(item.id)
            lost[path] += item.cut
    return [
        Suggestion(
            kind="split",
            ids=tuple(ids),
            reason=(
                f"OpenClaw injects {path} on every turn but cuts it at its bootstrap cap "
                f"({OPENCLAW_FILE_CHARS:,} characters per file, 150,000 "
                f"in total): {lost[path]:,} characters are dropped "
                "without a word to the agent. Split it or move detail out of the bootstrap files."
            ),
        )
        for path, ids in by_file.items()
    ]


def _split_2026(plan: BudgetPlan, ctx: SuggestionContext) -> list[Suggestion]:
    """OpenClaw 2026.9 keeps a long file's head and tail around a marker: the middle is lost."""
    by_file: dict[str, list[str]] = defaultdict(list)
    lost: dict[str, int] = defaultdict(int)
    for item in plan.items:
        if item.truncated:
            path = ctx.by_id[item.id].source.path
            by_file[path].append(item.id)
            lost[path] += item.cut
    caps = "its bootstrapMaxChars per file (USER.md 4,000) and bootstrapTotalMaxChars"
    return [
        Suggestion(
            kind="split",
            ids=tuple(ids),
            reason=(
                f"OpenClaw 2026.9 injects {path} on every turn but over {caps} it keeps only "
                f"the head and the tail: {lost[path]:,} characters in the middle are not "
                "injected. Split it or move detail out of the bootstrap files."
            ),
        )
        for path, ids in by_file.items()
    ]
