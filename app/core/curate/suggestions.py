"""Suggestions: what a person might promote, demote, archive, merge, split or mark stale.

Nothing here changes anything: `suggest()` is a pure function of the memories, the portfolios, an
injected `now` and optional callables (texts, file bytes, the workbench's access log and pins), and
each suggestion carries a readable reason with its numbers. The rules are the systems' own:

- promote (memory-mcp's check_auto_promote): salience >= 0.5 (0.3 for antipattern, landmine,
  constraint) OR access >= 3; never `command` or `snippet`; not already hot; memory-mcp's
  helpfulness gate; never a superseded, flagged or quarantined memory. OpenClaw: a learnings
  Pattern-Key seen 3+ times in 2+ entries; a person's Fortress score (`fortress_scores`).
- demote (memory-mcp's maintenance): hot and unused for int(14 x m) days, m = 2 durable, 1 stable
  (and uncategorized), 0.5 transient; pinned memories are exempt (a pinned one that would qualify
  is reported as stale instead). OpenClaw: domain items unreferenced for more than 30 days,
  DECISIONS.md lines older than 48 hours. Budgets: what falls past a cut.
- archive: OpenClaw daily logs older than 14 days still outside memory/archive/.
- split: MEMORY.md over 10 KB; a MassGen short-term memory over 1,000 tokens; a bootstrap file
  past OpenClaw's cap.
- merge: exact and near duplicates (duplicates.py).
- stale: `[STALE]` items, memory-mcp `supersedes` / `contradicts` relationships, Engram topic-key
  revisions, a CLOSED.md line that reverses a DECISIONS.md line, DollhouseMCP entries about to
  expire (retentionDays).
"""

from __future__ import annotations

import os
import re
from collections import defaultdict
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from app.core.budget.estimators import DEFAULT_ESTIMATOR, TokenEstimator
from app.core.budget.plans import (
    MASSGEN_ITEM_TOKENS,
    MEMORY_MD,
    MEMORY_MD_BYTES,
    OPENCLAW_FILE_CHARS,
    BudgetPlan,
    FileBytes,
    plan_budgets,
)
from app.core.curate.duplicates import NEAR_THRESHOLD, find_duplicates, preview
from app.core.curate.salience import (
    AccessLog,
    Salience,
    TextOf,
    aware,
    log_mentions,
    parse_time,
    salience_all,
)
from app.core.model import Memory, Portfolio, System, Tier, TrustLevel
from app.core.parsing.safefs import read_file

Kind = Literal["promote", "demote", "archive", "merge", "split", "stale"]
KIND_ORDER: tuple[Kind, ...] = ("stale", "merge", "split", "archive", "demote", "promote")

# memory-mcp: check_auto_promote and demote_stale_hot_memories
PROMOTE_SALIENCE = 0.5
HIGH_VALUE_CATEGORIES = frozenset({"antipattern", "landmine", "constraint"})
HIGH_VALUE_MULTIPLIER = 0.6
PROMOTE_ACCESS = 3
NEVER_PROMOTE = frozenset({"command", "snippet"})
HELPFULNESS_MIN_RETRIEVED = 3
HELPFULNESS_FLOOR = 0.20
DEMOTION_BASE_DAYS = 14
DURABLE = frozenset({"antipattern", "landmine", "convention", "architecture"})
STABLE = frozenset({"decision", "preference", "lesson", "constraint", "workflow", "reference"})
TRANSIENT = frozenset({"context", "bug", "todo", "snippet", "observation", "command"})
SCOPE_MULTIPLIER = {"durable": 2.0, "stable": 1.0, "transient": 0.5}
# Memory Fortress
LOG_ARCHIVE_DAYS = 14
UNREFERENCED_DAYS = 30
DECISIONS_WINDOW_HOURS = 48
PATTERN_PROMOTE_COUNT = 3
PATTERN_PROMOTE_ENTRIES = 2
FORTRESS_AXIS_MAX = 3
FORTRESS_CANDIDATE_SUM = 8
FORTRESS_STRONG_SUM = 6
# DollhouseMCP retention: warn this many days before entries expire.
EXPIRY_WINDOW_DAYS = 14
PERMANENT_DAYS = 999999
NAME_CHARS = 60

_STALE_LINE = re.compile(r"^\s{0,3}(?:[-*+]\s+)?\[STALE\]\s*(.*)$")
_RETENTION_DAYS = re.compile(r"^\s*(\d+)\s*(?:days?)?\s*$", re.IGNORECASE)
_DISTINCT_TOKEN = re.compile(r"[\w][\w.\-/]*[\w]")
CONTRADICTION_TYPES = frozenset({"contradicts", "conflicts", "conflicts_with", "conflict"})


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Suggestion(_Frozen):
    kind: Kind
    ids: tuple[str, ...]
    reason: str


class FortressScore(_Frozen):
    """Memory Fortress's four axes (0-3 each): a MEMORY.md candidate when the sum is at least 8,
    or any axis is 3 and the sum is at least 6."""

    durability: int
    reuse: int
    impact: int
    uniqueness: int
    total: int
    candidate: bool
    reason: str


def fortress_score(durability: int, reuse: int, impact: int, uniqueness: int) -> FortressScore:
    axes = {"durability": durability, "reuse": reuse, "impact": impact, "uniqueness": uniqueness}
    for name, value in axes.items():
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= FORTRESS_AXIS_MAX:
            raise ValueError(f"{name} must be an integer from 0 to {FORTRESS_AXIS_MAX}, not {value!r}")
    total = sum(axes.values())
    strong = [name for name, value in axes.items() if value == FORTRESS_AXIS_MAX]
    if total >= FORTRESS_CANDIDATE_SUM:
        reason = f"sum {total} >= {FORTRESS_CANDIDATE_SUM}"
    elif strong and total >= FORTRESS_STRONG_SUM:
        reason = f"{strong[0]} is {FORTRESS_AXIS_MAX} and the sum {total} >= {FORTRESS_STRONG_SUM}"
    else:
        reason = f"sum {total} < {FORTRESS_CANDIDATE_SUM}" + (
            f" and {strong[0]} at {FORTRESS_AXIS_MAX} needs a sum of {FORTRESS_STRONG_SUM}" if strong else ", no axis at 3"
        )
    candidate = total >= FORTRESS_CANDIDATE_SUM or (bool(strong) and total >= FORTRESS_STRONG_SUM)
    return FortressScore(**axes, total=total, candidate=candidate, reason=reason)


def category_scope(category: str | None) -> str:
    """memory-mcp's temporal scope of a category; anything uncategorized counts as stable."""
    if category in DURABLE:
        return "durable"
    if category in TRANSIENT:
        return "transient"
    return "stable"


def demotion_days(category: str | None) -> int:
    return int(DEMOTION_BASE_DAYS * SCOPE_MULTIPLIER[category_scope(category)])


def promotion_threshold(category: str | None) -> float:
    multiplier = HIGH_VALUE_MULTIPLIER if category in HIGH_VALUE_CATEGORIES else 1.0
    return max(0.1, min(0.95, PROMOTE_SALIENCE * multiplier))


# ---- context --------------------------------------------------------------------------------------


@dataclass
class _Context:
    memories: Sequence[Memory]
    by_id: dict[str, Memory]
    now: datetime
    saliences: Mapping[str, Salience]
    plans: list[BudgetPlan]
    mentions: Mapping[str, Sequence[date]]
    text_of: TextOf | None
    file_bytes: FileBytes | None
    access_log: AccessLog | None
    pinned: frozenset[str]
    superseded: set[str]

    def text(self, memory: Memory) -> str | None:
        if self.text_of is None:
            return None
        try:
            return self.text_of(memory.id)
        except Exception:  # noqa: BLE001 - an unreadable memory gives no text-based suggestion
            return None

    def data(self, memory: Memory) -> bytes | None:
        if self.file_bytes is None:
            return None
        try:
            return self.file_bytes(memory)
        except Exception:  # noqa: BLE001 - fall back to what the model holds
            return None

    def is_pinned(self, memory: Memory) -> bool:
        return memory.pinned or memory.id in self.pinned


def _short(text: str, limit: int = NAME_CHARS) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def _name(memory: Memory | None, fallback: str = "") -> str:
    return f'"{_short(memory.name)}"' if memory is not None else fallback


def _category(memory: Memory) -> str | None:
    value = memory.fields.get("category") if memory.system == System.MEMORY_MCP else None
    return value if isinstance(value, str) and value else None


def _int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    return None


def _day(value: datetime) -> str:
    return value.date().isoformat()


# ---- superseded and contradicting -----------------------------------------------------------------


def _trust_note(memory: Memory | None) -> str:
    history = memory.fields.get("trust_history") if memory is not None else None
    for row in history if isinstance(history, list) else []:
        if isinstance(row, dict) and row.get("reason") == "superseded":
            return f" (its trust_history records `superseded`: {row.get('old_trust')} -> {row.get('new_trust')})"
    return ""


def _relations(ctx: _Context) -> list[Suggestion]:
    out: list[Suggestion] = []
    seen: set[frozenset[str]] = set()
    for memory in ctx.memories:
        for rel in memory.relations:
            target = ctx.by_id.get(rel.target)
            if rel.type == "supersedes":
                ctx.superseded.add(rel.target)
                if memory.system == System.ENGRAM:
                    why = (
                        f"Engram observations {_name(target, rel.target)} and {_name(memory)} share {rel.note or 'a topic_key'}; "
                        f"Engram only ever updates the newest ({memory.updated}), so the older one is superseded"
                    )
                else:
                    why = (
                        f"memory-mcp records that {_name(memory)} supersedes {_name(target, rel.target)} "
                        f"(memory_relationships){_trust_note(target)}; the older memory is stale"
                    )
                if target is not None and target.tier == Tier.HOT:
                    why += " and still hot"
                out.append(Suggestion(kind="stale", ids=(rel.target, memory.id), reason=why + ": demote or archive it."))
            elif rel.type in CONTRADICTION_TYPES:
                pair = frozenset((memory.id, rel.target))
                if pair in seen:
                    continue
                seen.add(pair)
                why = (
                    f"{_name(memory)} {rel.type} {_name(target, rel.target)} ({memory.system} relationship"
                    f"{'; ' + rel.note if rel.note else ''}): one of them is stale; decide which holds."
                )
                out.append(Suggestion(kind="stale", ids=(memory.id, rel.target), reason=why))
    return out


def _engram_revisions(ctx: _Context) -> list[Suggestion]:
    out = []
    for memory in ctx.memories:
        if memory.system != System.ENGRAM:
            continue
        revisions = _int(memory.fields.get("revision_count")) or 1
        if revisions < 2:
            continue
        topic = memory.fields.get("topic_key")
        where = f"topic_key {topic}" if topic else "mem_update"
        reason = (
            f"Engram observation {memory.source.row} {_name(memory)} ({where}) was saved {revisions} times "
            f"(revision_count {revisions}, created {memory.created}, last updated {memory.updated}): each save "
            "overwrote the one before, so every earlier version is superseded; copies of an earlier version "
            "kept elsewhere may be stale."
        )
        out.append(Suggestion(kind="stale", ids=(memory.id,), reason=reason))
    return out


def _closed_reversals(ctx: _Context) -> list[Suggestion]:
    """A CLOSED.md line that names a DECISIONS.md line's timestamp settles (reverses) it."""
    out = []
    openclaw = [m for m in ctx.memories if m.system == System.OPENCLAW]
    decisions = [m for m in openclaw if m.kind == "decision" and isinstance(m.fields.get("date"), str)]
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
                    f"state/CLOSED.md ({closed.fields.get('date')}, {closed.fields.get('decider', '?')}) {verb} the "
                    f"{stamp} decision in state/DECISIONS.md, {_name(decision)}: that line is superseded; mark it "
                    "[STALE] and log why in the daily log (Memory Fortress keeps it for the record)."
                )
                out.append(Suggestion(kind="stale", ids=(decision.id, closed.id), reason=reason))
    return out


# ---- [STALE] markers (OpenClaw) -------------------------------------------------------------------


def _stale_reason_log(ctx: _Context, memory: Memory, item: str) -> str:
    """The daily log that gives the reason: it says "stale" and names a distinctive token of the
    item (one with a digit or a dot, like `db.t3.medium`)."""
    tokens = {t.lower() for t in _DISTINCT_TOKEN.findall(item) if len(t) >= 6 and any(c.isdigit() or c == "." for c in t)}
    if not tokens:
        return ""
    logs = sorted(
        (m for m in ctx.memories if m.system == System.OPENCLAW and m.portfolio == memory.portfolio and m.kind == "log"),
        key=lambda m: m.source.path,
    )
    for log in logs:
        text = (ctx.text(log) or "").lower()
        if "stale" in text and any(token in text for token in tokens):
            return f"; the reason is logged in {log.source.path}"
    return "; no daily log gives its reason, which Memory Fortress asks for"


def _stale_markers(ctx: _Context) -> list[Suggestion]:
    out = []
    for memory in ctx.memories:
        if memory.system != System.OPENCLAW:
            continue
        if memory.fields.get("stale"):
            ctx.superseded.add(memory.id)
            reason = (
                f"{memory.source.path}: {_name(memory)} is marked [STALE]; it is kept for the record, so move it out of "
                "what is loaded (to the daily log or the archive) once its reason is logged."
            )
            out.append(Suggestion(kind="stale", ids=(memory.id,), reason=reason))
            continue
        if memory.kind != "note":
            continue
        text = ctx.text(memory)
        if not text or "[STALE]" not in text:
            continue
        first = _first_line(ctx, memory)
        found = []
        for offset, line in enumerate(text.split("\n")):
            match = _STALE_LINE.match(line)
            if match:
                item = match[1].strip()
                where = f"line {first + offset}" if first else f"line {offset + 1} of the section"
                found.append(f'{where}, "{_short(item, 80)}"{_stale_reason_log(ctx, memory, item)}')
        if not found:
            continue
        hot = " It is still loaded on every turn." if memory.tier == Tier.HOT else ""
        reason = (
            f"{memory.source.path}, section {_name(memory)}: {len(found)} item(s) marked [STALE] ({'; '.join(found)}). "
            f"Superseded items stay for the record; move them out of the section to memory/domains/ or the archive.{hot}"
        )
        out.append(Suggestion(kind="stale", ids=(memory.id,), reason=reason))
    return out


def _first_line(ctx: _Context, memory: Memory) -> int | None:
    """The 1-based file line where the memory's span starts, when the file can be read."""
    data = ctx.data(memory)
    if data is None or memory.span is None or memory.span.start > len(data):
        return None
    return data[: memory.span.start].count(b"\n") + 1


# ---- DollhouseMCP retention -----------------------------------------------------------------------


def retention_days(fields: Mapping[str, Any]) -> int | None:
    """Days an entry is kept (`retentionDays`, else `retention_policy.default`); None = permanent."""
    value = fields.get("retentionDays")
    if value is None and isinstance(fields.get("retention_policy"), dict):
        value = fields["retention_policy"].get("default")
    days: int | None = None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        days = int(value)
    elif isinstance(value, str):
        match = _RETENTION_DAYS.match(value)
        days = int(match[1]) if match else None
    if days is None or days <= 0 or days >= PERMANENT_DAYS:
        return None
    return days


def _expiring(ctx: _Context) -> list[Suggestion]:
    out = []
    horizon = ctx.now + timedelta(days=EXPIRY_WINDOW_DAYS)
    for memory in ctx.memories:
        if memory.system != System.DOLLHOUSE:
            continue
        days = retention_days(memory.fields)
        if days is None:
            continue
        stamps = [t for t in (parse_time(e.timestamp) for e in memory.entries) if t is not None]
        expiries = sorted(t + timedelta(days=days) for t in stamps)
        soon = [t for t in expiries if t <= horizon]
        if not soon:
            continue
        expired = [t for t in soon if t <= ctx.now]
        first = soon[0]
        left = (first - ctx.now).total_seconds() / 86400
        when = f"expired on {_day(first)}" if expired else f"expire from {_day(first)}, in {left:.1f} days"
        reason = (
            f"DollhouseMCP memory {_name(memory)} keeps entries for retentionDays {days}: {len(soon)} of "
            f"{len(memory.entries)} entries {when} (timestamp + {days} days): renew what still holds or let it go."
        )
        out.append(Suggestion(kind="stale", ids=(memory.id,), reason=reason))
    return out


# ---- duplicates -----------------------------------------------------------------------------------


def _summary_and_detail(a: Memory, b: Memory) -> bool:
    """A MEMORY.md section and a section of the domain file it points to (`→ Details:`): Memory
    Fortress keeps the summary and its detail apart on purpose."""
    for summary, detail in ((a, b), (b, a)):
        if summary.system == detail.system == System.OPENCLAW and summary.source.path == MEMORY_MD:
            if summary.fields.get("details") == detail.source.path:
                return True
    return False


def _duplicates(ctx: _Context, threshold: float) -> list[Suggestion]:
    out = []
    exact, near = find_duplicates(ctx.memories, ctx.text_of, threshold=threshold)
    for group in exact:
        members = [ctx.by_id[i] for i in group.ids]
        how = (
            "the same sha256 of their content"
            if group.key.startswith("raw:")
            else (f"the same text once lowercased and whitespace-collapsed (sha256 {group.key[:12]}…)")
        )
        names = ", ".join(f"{m.system} {_name(m)}" for m in members)
        reason = f"Exact duplicates: {len(members)} memories have {how}, {members[0].words} words each: {names}. Keep one."
        out.append(Suggestion(kind="merge", ids=group.ids, reason=reason))
    for pair in near:
        a, b = ctx.by_id[pair.a], ctx.by_id[pair.b]
        if _summary_and_detail(a, b):
            continue
        reason = (
            f"Near duplicates (word-pair Jaccard {pair.score:.3f} >= {threshold}): {a.system} {_name(a)} says "
            f'"{preview(pair.passage_a)}" and {b.system} {_name(b)} says "{preview(pair.passage_b)}". '
            "Keep one wording."
        )
        out.append(Suggestion(kind="merge", ids=(pair.a, pair.b), reason=reason))
    return out


# ---- budgets --------------------------------------------------------------------------------------


def _budgets(ctx: _Context) -> list[Suggestion]:
    out: list[Suggestion] = []
    for plan in ctx.plans:
        if plan.system == System.DOLLHOUSE:
            out.extend(_dollhouse_budget(ctx, plan))
        elif plan.system == System.MASSGEN:
            out.extend(_massgen_budget(ctx, plan))
        elif plan.system == System.OPENCLAW:
            out.extend(_openclaw_budget(ctx, plan))
        elif plan.system == System.MEMORY_MCP:
            out.extend(_memory_mcp_budget(ctx, plan))
    return out


def _dollhouse_budget(ctx: _Context, plan: BudgetPlan) -> list[Suggestion]:
    past = [item for item in plan.past_cut if "disabled" not in item.note]
    if not past:
        return []
    first = past[0]
    memory = ctx.by_id.get(first.id)
    loaded = sum(item.cost for item in plan.fitting)
    reason = (
        f"DollhouseMCP auto-load: {len(plan.items)} memories cost {plan.used:,} tokens ({plan.estimator}) against "
        f"maxTokenBudget {plan.limit:,}. The enforcing path stops at {_name(memory, first.id)} "
        f"({first.cost:,} tokens on top of {loaded:,}), so these {len(past)} would not load: turn their autoLoad off, "
        f"lower their priority, or raise the budget to {plan.used:,}."
    )
    return [Suggestion(kind="demote", ids=tuple(item.id for item in past), reason=reason)]


def _massgen_budget(ctx: _Context, plan: BudgetPlan) -> list[Suggestion]:
    out = []
    big = [item for item in plan.items if item.cost > MASSGEN_ITEM_TOKENS]
    for item in big:
        memory = ctx.by_id[item.id]
        reason = (
            f"MassGen short-term memory {_name(memory)} is {item.cost:,} tokens ({memory.words:,} words, {plan.estimator}), "
            f"over MassGen's {MASSGEN_ITEM_TOKENS:,}-token guidance, and it is injected into every agent's prompt on "
            "every turn: split it, keeping a short summary in short_term/ and the detail in long_term/."
        )
        out.append(Suggestion(kind="split", ids=(item.id,), reason=reason))
    rest = [item for item in plan.past_cut if item not in big]
    if rest:
        reason = (
            f"MassGen short-term memory holds {len(plan.items)} items and {plan.used:,} tokens, past its guidance "
            f"(10 items, 10,000 tokens): move these {len(rest)} to long_term/, where only a summary row is injected."
        )
        out.append(Suggestion(kind="demote", ids=tuple(item.id for item in rest), reason=reason))
    return out


def _openclaw_budget(ctx: _Context, plan: BudgetPlan) -> list[Suggestion]:
    if plan.scope == "MEMORY.md":
        if plan.used <= MEMORY_MD_BYTES:
            return []
        past = [ctx.by_id[item.id] for item in plan.past_cut]
        tail = f"; sections past byte {MEMORY_MD_BYTES:,}: {', '.join(_name(m) for m in past)}" if past else ""
        reason = (
            f"MEMORY.md is {plan.used:,} bytes, over Memory Fortress's {MEMORY_MD_BYTES:,}-byte (10 KB) limit: split it "
            f"into memory/domains/ files, keeping one-line summaries and `→ Details:` pointers in MEMORY.md{tail}."
        )
        return [Suggestion(kind="split", ids=tuple(item.id for item in plan.items), reason=reason)]
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
                f"({OPENCLAW_FILE_CHARS:,} characters per file, 150,000 in total): {lost[path]:,} characters are dropped "
                "without a word to the agent. Split it or move detail out of the bootstrap files."
            ),
        )
        for path, ids in by_file.items()
    ]


def _memory_mcp_budget(ctx: _Context, plan: BudgetPlan) -> list[Suggestion]:
    past = plan.past_cut
    if not past:
        return []
    what = "hot cache" if plan.scope.startswith("hot cache") else "promoted set"
    reason = (
        f"memory-mcp {plan.scope}: {plan.used} hot memories for a {what} of {plan.limit}; these {len(past)} fall past it "
        f"({'memory-mcp would evict them' if what == 'promoted set' else 'they are not injected'}): demote the ones "
        "no longer needed."
    )
    return [Suggestion(kind="demote", ids=tuple(item.id for item in past), reason=reason)]


# ---- OpenClaw lifecycle ---------------------------------------------------------------------------


def _old_logs(ctx: _Context) -> list[Suggestion]:
    out = []
    today = ctx.now.date()
    for memory in ctx.memories:
        if memory.system != System.OPENCLAW or memory.kind != "log" or memory.tier == Tier.ARCHIVE:
            continue
        day = parse_time(memory.fields.get("date"))
        if day is None:
            continue
        age = (today - day.date()).days
        if age > LOG_ARCHIVE_DAYS:
            reason = (
                f"Daily log {memory.source.path} is {age} days old, past Memory Fortress's {LOG_ARCHIVE_DAYS} days, and "
                f"still outside the archive: move it to memory/archive/{day.strftime('%Y-%m')}/."
            )
            out.append(Suggestion(kind="archive", ids=(memory.id,), reason=reason))
    return out


def _unreferenced(ctx: _Context) -> list[Suggestion]:
    """Domain items whose last mention in a daily log is more than 30 days old. MEMORY.md sections
    are left out: a section summarises many items, and a log rarely names a section."""
    out = []
    today = ctx.now.date()
    for memory in ctx.memories:
        if memory.system != System.OPENCLAW or memory.kind != "note" or memory.source.path == MEMORY_MD:
            continue
        if ctx.is_pinned(memory):
            continue
        days = ctx.mentions.get(memory.id)
        if not days:
            continue
        age = (today - max(days)).days
        if age > UNREFERENCED_DAYS:
            reason = (
                f"{memory.source.path}, section {_name(memory)}: last mentioned in a daily log on {max(days).isoformat()}, "
                f"{age} days ago; Memory Fortress demotes items unreferenced for more than {UNREFERENCED_DAYS} days "
                "(domain file to the archive)."
            )
            out.append(Suggestion(kind="demote", ids=(memory.id,), reason=reason))
    return out


def _old_decisions(ctx: _Context) -> list[Suggestion]:
    out = []
    for memory in ctx.memories:
        if memory.system != System.OPENCLAW or memory.kind != "decision" or memory.fields.get("stale"):
            continue
        stamp = memory.fields.get("date")
        when = parse_time(stamp)
        if when is None:
            continue
        hours = (ctx.now - when).total_seconds() / 3600
        if hours > DECISIONS_WINDOW_HOURS:
            reason = (
                f"state/DECISIONS.md keeps the last {DECISIONS_WINDOW_HOURS} hours; {_name(memory)} is from {stamp}, "
                f"{hours:.1f} hours ago: move it to the daily log or MEMORY.md."
            )
            out.append(Suggestion(kind="demote", ids=(memory.id,), reason=reason))
    return out


def _pattern_keys(ctx: _Context) -> list[Suggestion]:
    groups: dict[tuple[str, str], list[Memory]] = defaultdict(list)
    for memory in ctx.memories:
        key = memory.fields.get("Pattern-Key")
        if memory.system == System.OPENCLAW and memory.kind == "learning" and isinstance(key, str) and key:
            groups[(memory.portfolio, key)].append(memory)
    out = []
    for (_portfolio, key), members in sorted(groups.items()):
        count = sum(_int(m.fields.get("Recurrence-Count")) or 1 for m in members)
        done = any(str(m.fields.get("Status", "")).startswith("promoted") for m in members)
        if count >= PATTERN_PROMOTE_COUNT and len(members) >= PATTERN_PROMOTE_ENTRIES and not done:
            reason = (
                f"Pattern-Key {key} recurs {count} times across {len(members)} learnings entries (Memory Fortress "
                f"promotes at {PATTERN_PROMOTE_COUNT}+ in {PATTERN_PROMOTE_ENTRIES}+ contexts) and none is promoted yet: "
                "write it into MEMORY.md or a skill."
            )
            out.append(Suggestion(kind="promote", ids=tuple(m.id for m in members), reason=reason))
    return out


def _fortress(ctx: _Context, scores: Mapping[str, FortressScore]) -> list[Suggestion]:
    out = []
    for memory_id, score in scores.items():
        memory = ctx.by_id.get(memory_id)
        if memory is None or memory.system != System.OPENCLAW:
            continue
        axes = f"durability {score.durability}, reuse {score.reuse}, impact {score.impact}, uniqueness {score.uniqueness}"
        in_memory_md = memory.source.path == MEMORY_MD
        if score.candidate and not in_memory_md:
            reason = f"Fortress score {axes}: a MEMORY.md candidate ({score.reason}); move its summary into MEMORY.md."
            out.append(Suggestion(kind="promote", ids=(memory.id,), reason=reason))
        elif not score.candidate and in_memory_md and not ctx.is_pinned(memory):
            reason = f"Fortress score {axes}: not a MEMORY.md candidate ({score.reason}); move it to memory/domains/."
            out.append(Suggestion(kind="demote", ids=(memory.id,), reason=reason))
    return out


# ---- hot and cold ---------------------------------------------------------------------------------


def _memory_mcp_demotions(ctx: _Context) -> list[Suggestion]:
    out = []
    for memory in ctx.memories:
        if memory.system != System.MEMORY_MCP or memory.tier != Tier.HOT:
            continue
        last = parse_time(memory.fields.get("last_accessed_at"))
        source = "last accessed"
        if last is None:
            last, source = parse_time(memory.fields.get("created_at")), "never accessed, created"
        if last is None:
            continue
        category = _category(memory)
        limit = demotion_days(category)
        days = (ctx.now - last).days
        if days < limit:
            continue
        scope = category_scope(category)
        rule = f"{category or 'uncategorized'} is {scope}: int(14 x {SCOPE_MULTIPLIER[scope]:g}) = {limit} days"
        if ctx.is_pinned(memory):
            reason = (
                f"memory-mcp memory {memory.source.row} {_name(memory)} is hot and pinned, so it is never demoted, but it "
                f"was {source} {_day(last)}, {days} days ago ({rule}): check it still holds, then unpin or demote it."
            )
            out.append(Suggestion(kind="stale", ids=(memory.id,), reason=reason))
        else:
            reason = (
                f"memory-mcp memory {memory.source.row} {_name(memory)} is hot but was {source} {_day(last)}, {days} days "
                f"ago ({rule}): memory-mcp's maintenance demotes it."
            )
            out.append(Suggestion(kind="demote", ids=(memory.id,), reason=reason))
    return out


def _logged_demotions(ctx: _Context) -> list[Suggestion]:
    """DollhouseMCP and MassGen keep no access record: only the workbench's access log can show a
    hot memory unused, so a memory the log never saw is left alone."""
    out = []
    for memory in ctx.memories:
        if memory.system not in (System.DOLLHOUSE, System.MASSGEN) or memory.tier != Tier.HOT or ctx.is_pinned(memory):
            continue
        times = [t for t in (parse_time(t) for t in (ctx.access_log or {}).get(memory.id, ())) if t is not None]
        if not times:
            continue
        last = max(times)
        days = (ctx.now - last).days
        limit = demotion_days(None)
        if days >= limit:
            where = "autoLoad off" if memory.system == System.DOLLHOUSE else "move it to long_term/"
            reason = (
                f"{memory.system} memory {_name(memory)} is hot but was last opened {_day(last)}, {days} days ago "
                f"(the workbench's access log; {limit} days for an uncategorized memory): {where}."
            )
            out.append(Suggestion(kind="demote", ids=(memory.id,), reason=reason))
    return out


def _helpfulness_blocked(memory: Memory) -> str | None:
    retrieved = _int(memory.fields.get("retrieved_count")) or 0
    used = _int(memory.fields.get("used_count")) or 0
    helpfulness = (used + 1) / (retrieved + 4)
    if retrieved >= HELPFULNESS_MIN_RETRIEVED and helpfulness < HELPFULNESS_FLOOR:
        return f"helpfulness (used {used} + 1) / (retrieved {retrieved} + 4) = {helpfulness:.2f} < {HELPFULNESS_FLOOR}"
    return None


_PROMOTE_ACTION = {
    System.MEMORY_MCP: "put it in the hot cache (is_hot = 1, promotion_source 'manual')",
    System.DOLLHOUSE: "set autoLoad: true with a priority",
    System.MASSGEN: "move it to short_term/",
    System.OPENCLAW: "move its summary into MEMORY.md",
}


def _promotable(ctx: _Context, memory: Memory) -> bool:
    if memory.tier != Tier.COLD or memory.id in ctx.superseded:
        return False
    if memory.trust in (TrustLevel.FLAGGED, TrustLevel.QUARANTINED):
        return False
    if memory.system == System.MEMORY_MCP:
        return _category(memory) not in NEVER_PROMOTE and _helpfulness_blocked(memory) is None
    if memory.system == System.OPENCLAW:
        return memory.kind == "note" and memory.source.path != MEMORY_MD
    return memory.system in (System.DOLLHOUSE, System.MASSGEN)


def _breakdown(s: Salience) -> str:
    parts = [
        f"importance {s.component('importance').value:.2f}",
        f"trust {s.component('trust').value:.2f}",
        f"access {s.access}",
        "never accessed" if s.days_since_access is None else f"last access {s.days_since_access:.1f} days ago",
    ]
    return ", ".join(parts)


def _promotions(ctx: _Context, memory_md_over: bool) -> list[Suggestion]:
    out = []
    for memory in ctx.memories:
        s = ctx.saliences.get(memory.id)
        if s is None or not _promotable(ctx, memory):
            continue
        category = _category(memory)
        threshold = promotion_threshold(category)
        by_score = s.score >= threshold
        if not by_score and s.access < PROMOTE_ACCESS:
            continue
        why = f"salience {s.score:.3f} >= {threshold:g}" if by_score else f"accessed {s.access} times (>= {PROMOTE_ACCESS})"
        gate = f", category {category}" if category else ""
        reason = f"{memory.system} memory {_name(memory)} is cold but {why} ({_breakdown(s)}{gate}): {_PROMOTE_ACTION[memory.system]}."
        if memory.system == System.OPENCLAW and memory_md_over:
            reason += " MEMORY.md is already over 10 KB: make room there first."
        out.append(Suggestion(kind="promote", ids=(memory.id,), reason=reason))
    return out


# ---- entry point ----------------------------------------------------------------------------------


def file_reader(portfolios: Sequence[Portfolio]) -> FileBytes:
    """The `file_bytes(memory)` callable for suggest() and plan_budgets(): the memory's source file
    read safely (safefs) under its portfolio's root. The one function here that touches the disk,
    and only when the callable is called; the facade builds it and passes it in."""
    roots = {(p.system, p.name): p.root for p in portfolios}

    def file_bytes(memory: Memory) -> bytes:
        root = roots[(memory.system, memory.portfolio)]
        return read_file(os.path.join(root, memory.source.path))

    return file_bytes


def _memoized(text_of: TextOf) -> TextOf:
    """Each text read once per suggest() call: several rules look at the same memory."""
    cache: dict[str, str] = {}

    def cached(memory_id: str) -> str:
        if memory_id not in cache:
            cache[memory_id] = text_of(memory_id)
        return cache[memory_id]

    return cached


def _dedupe(suggestions: Iterable[Suggestion]) -> list[Suggestion]:
    seen: set[tuple[str, tuple[str, ...]]] = set()
    out = []
    for s in suggestions:
        key = (s.kind, s.ids)
        if key not in seen:
            seen.add(key)
            out.append(s)
    return sorted(out, key=lambda s: KIND_ORDER.index(s.kind))


def suggest(
    memories: Sequence[Memory],
    portfolios: Sequence[Portfolio],
    now: datetime,
    *,
    text_of: TextOf | None = None,
    file_bytes: FileBytes | None = None,
    access_log: AccessLog | None = None,
    pinned: Collection[str] = (),
    fortress_scores: Mapping[str, FortressScore] | None = None,
    near_threshold: float = NEAR_THRESHOLD,
    estimator: TokenEstimator = DEFAULT_ESTIMATOR,
    saliences: Mapping[str, Salience] | None = None,
) -> list[Suggestion]:
    """Every suggestion for these memories, stale first and promotions last; never applied.

    `text_of(memory_id)` enables duplicates, `[STALE]` items inside sections and OpenClaw log
    mentions; `file_bytes(memory)` gives exact file lines and characters; `access_log` (memory id to
    access times) and `pinned` (ids pinned in the workbench's ledger) come from the ledger;
    `fortress_scores` are the four-axis scores a person gave."""
    now = aware(now)
    text_of = _memoized(text_of) if text_of is not None else None
    mentions = log_mentions(memories, text_of) if text_of is not None else {}
    if saliences is None:
        saliences = salience_all(memories, now, access_log=access_log, text_of=text_of, mentions=mentions)
    plans = plan_budgets(memories, portfolios, now, estimator=estimator, text_of=text_of, file_bytes=file_bytes)
    ctx = _Context(
        memories=memories,
        by_id={m.id: m for m in memories},
        now=now,
        saliences=saliences,
        plans=plans,
        mentions=mentions,
        text_of=text_of,
        file_bytes=file_bytes,
        access_log=access_log,
        pinned=frozenset(pinned),
        superseded=set(),
    )
    memory_md_over = any(p.scope == "MEMORY.md" and p.used > MEMORY_MD_BYTES for p in plans)
    found: list[Suggestion] = []
    # Stale findings first: they fill ctx.superseded, which promotions then skip.
    found += _relations(ctx)
    found += _closed_reversals(ctx)
    found += _stale_markers(ctx)
    found += _engram_revisions(ctx)
    found += _expiring(ctx)
    found += _duplicates(ctx, near_threshold)
    found += _budgets(ctx)
    found += _old_logs(ctx)
    found += _unreferenced(ctx)
    found += _old_decisions(ctx)
    found += _memory_mcp_demotions(ctx)
    found += _logged_demotions(ctx)
    found += _pattern_keys(ctx)
    found += _fortress(ctx, fortress_scores or {})
    found += _promotions(ctx, memory_md_over)
    return _dedupe(found)
