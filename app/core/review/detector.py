"""The injection and secret detector: triage for a human, never authority.

`scan_text` runs every rule family over one entry's text and returns Findings ordered by (start,
category). Work is bounded: rules look only where their keywords occur, every regex quantifier is
bounded or possessive, decoding has a depth and a size budget, and the number of findings is capped,
so a 2 MB text or a pathological one (runs of `[`, of base64 characters, of zero-widths) scans in
well under a second."""

from __future__ import annotations

from dataclasses import dataclass, field

from app.core.inert import one_line
from app.core.model import TrustLevel
from app.core.review import (
    context,
    decode_orders,
    encodings,
    links,
    markup,
    patterns,
    poisoning,
    scorer,
    secrets,
    shell,
    unicode,
    yamlscan,
)
from app.core.review.agent_orders import scan as scan_agent_orders
from app.core.review.common import HIGH, MEDIUM, Hit, Intervals, Prepared, masks_of, render
from app.core.review.deadline import Deadline
from app.core.review.finding import SEVERITY_OF_RANK, Category, Finding, suggested_trust, worst

MAX_DEPTH = 3  # encoded inside encoded inside encoded, no deeper
DECODE_BUDGET = 1_000_000  # characters of decoded text rescanned per top-level scan
MAX_FINDINGS = 1000
SCAN_INCOMPLETE_RULE = "scan-incomplete"
# How far from a hidden or folded character the second look reads: past any rule's reach (a line,
# a paragraph's window), so what it finds there is what a look at the whole text would find.
SECOND_LOOK_REACH = 8_192
EDGE = 1_024  # within this of a window's cut end, a second-look finding is the cut's


@dataclass(slots=True)
class _Budget:
    left: int = DECODE_BUDGET
    learned: bool = True  # False runs the span rules alone (the bench compares both)
    deadline: Deadline | None = None
    incomplete: bool = field(default=False)

    def out_of_time(self) -> bool:
        """True once the memory's time budget is spent: rule families not run yet are skipped."""
        if self.deadline is not None and self.deadline.expired():
            self.incomplete = True
        return self.incomplete


def _phrase_hits(p: Prepared, budget: _Budget) -> list[Hit]:
    hits = patterns.scan(p)
    if budget.out_of_time():
        return hits
    poisoned = poisoning.scan(p)
    if poisoned:
        # Where a phrase rule already reports the same thing, its span is the one people know; the
        # poisoning rules add what the phrase rules miss.
        known = {
            c: Intervals((h.start, h.end) for h in hits if h.category == c)
            for c in {h.category for h in hits}
        }
        hits.extend(
            h
            for h in poisoned
            if h.category not in known or not known[h.category].overlaps(h.start, h.end)
        )
    families = [scan_agent_orders, decode_orders.scan, shell.scan, links.scan, yamlscan.scan_prose]
    if budget.learned:
        families.append(scorer.scan)
    for family in families:
        if budget.out_of_time():
            break
        hits.extend(family(p))
    return hits


def _scan(text: str, depth: int, budget: _Budget) -> list[Hit]:
    p = Prepared(text)

    def rescan(decoded: str) -> tuple[list[Hit], list[tuple[int, int, int]]]:
        if depth + 1 > MAX_DEPTH or budget.left <= 0 or budget.out_of_time():
            return [], []
        decoded = decoded[: budget.left]
        budget.left -= len(decoded)
        inner = _scan(decoded, depth + 1, budget)
        return inner, masks_of(inner)

    # Secrets first and always: their masks keep every excerpt safe, even of a scan cut short.
    hits = secrets.scan(p)
    if not budget.out_of_time():
        hits.extend(markup.scan(p))
    if not budget.out_of_time():
        hits.extend(_phrase_hits(p, budget))
    if not budget.out_of_time():
        hidden = unicode.scan_hidden(p, rescan)
        hits.extend(hidden)
        lookalikes = unicode.scan_homoglyphs(p)
        hits.extend(lookalikes)
        norm = unicode.normalized(p, lookalikes=bool(lookalikes))
        if norm is not None and not budget.out_of_time():
            hits.extend(_obfuscated(norm, hits, hidden, budget))
    if not budget.out_of_time():
        hits.extend(encodings.scan(p, rescan))
    if depth == 0:
        # Decoded text is never "just an example": hiding it is the point.
        context.lower(p, hits)
    return _dedupe(_explained([h for h in hits if h.severity > 0]))


def _explained(hits: list[Hit]) -> list[Hit]:
    """Learned windows that a rule already reports as severely: the rule's span is the precise
    one."""
    learned = [h for h in hits if h.rule.startswith(scorer.RULE)]
    if not learned:
        return hits
    rules = [h for h in hits if not h.rule.startswith(scorer.RULE) and h.quotable]
    by_severity = {
        s: Intervals((h.start, h.end) for h in rules if h.severity >= s)
        for s in {h.severity for h in learned}
    }
    return [
        h
        for h in hits
        if not h.rule.startswith(scorer.RULE)
        or not by_severity[h.severity].overlaps(h.start, h.end)
    ]


def _obfuscated(
    norm: unicode.Normalized, originals: list[Hit], hidden: list[Hit], budget: _Budget
) -> list[Hit]:
    """Phrase and secret rules again on the text a reader sees, around the places normalising
    changed; what only shows up there was hidden."""
    found: list[Hit] = []
    n = len(norm.text)
    for lo, hi in norm.windows(SECOND_LOOK_REACH):
        if budget.out_of_time():
            break
        q = Prepared(norm.text[lo:hi] if (lo, hi) != (0, n) else norm.text)
        part = _phrase_hits(q, budget)
        part.extend(markup.scan(q))
        part.extend(secrets.scan(q))
        # A rule that meets a cut end of the window (a line or a tag left open there) found the cut,
        # not what normalising changed, which lies a reach away from it.
        low_cut, high_cut = (EDGE if lo > 0 else -1), (hi - lo - EDGE if hi < n else hi - lo + 1)
        for h in part:
            if h.start < low_cut or h.end > high_cut:
                continue
            h.start, h.end = h.start + lo, h.end + lo
            if h.mask is not None:
                h.mask = (h.mask[0] + lo, h.mask[1] + lo, h.mask[2])
            found.append(h)
    # An original finding hides a re-found one only when it is at least as severe: a medium guess of
    # the learned scorer must not mask a high rule that only matches once look-alikes are undone.
    by_category: dict[tuple[Category, int], Intervals] = {}
    for category, severity in {(h.category, h.severity) for h in found}:
        by_category[category, severity] = Intervals(
            (o.start, o.end) for o in originals if o.category == category and o.severity >= severity
        )
    new: list[Hit] = []
    for h in found:
        start, end = norm.original_span(h.start, h.end)
        if by_category[h.category, h.severity].overlaps(start, end):
            continue
        h.start, h.end = start, end
        if h.mask is not None:
            m_start, m_end = norm.original_span(h.mask[0], h.mask[1])
            h.mask = (m_start, m_end, h.mask[2])
        if h.severity >= MEDIUM:
            h.severity = max(h.severity, HIGH)
        h.rule += "-obfuscated"
        h.message += " (hidden by invisible or look-alike characters)"
        new.append(h)
    covered = Intervals((n.start, n.end) for n in new)
    for hh in hidden:
        if covered.covers(hh.start):
            hh.severity = max(hh.severity, HIGH)
            if hh.rule == "soft-hyphen":
                hh.message = "a soft hyphen splitting a flagged phrase so that filters miss it"
    return new


def _dedupe(hits: list[Hit]) -> list[Hit]:
    """Drop a hit that another hit of the same category covers at least as severely."""
    hits.sort(key=lambda h: (h.category.value, h.start, -h.end, -h.severity))
    out: list[Hit] = []
    cover: Hit | None = None
    for h in hits:
        if (
            cover is not None
            and cover.category == h.category
            and cover.start <= h.start
            and h.end <= cover.end
            and h.severity <= cover.severity
        ):
            if cover.mask is None and h.mask is not None:
                cover.mask = h.mask
            continue
        out.append(h)
        if cover is None or cover.category != h.category or h.end > cover.end:
            cover = h
    return out


def _finding(text: str, h: Hit, masks: list[tuple[int, int, int]], entry: str | None) -> Finding:
    severity = SEVERITY_OF_RANK[h.severity]
    return Finding(
        category=h.category,
        severity=severity,
        rule=h.rule,
        message=one_line(h.message, 400),
        entry=entry,
        start=h.start,
        end=h.end,
        excerpt=render(text, h.start, h.end, masks),
        suggested_trust=TrustLevel.FLAGGED if h.severity >= HIGH else None,
        decoded=h.decoded,
    )


def findings_of(text: str, hits: list[Hit], entry: str | None) -> list[Finding]:
    """Hits rendered as Findings: capped (most severe kept), ordered by (start, category)."""
    masks = masks_of(hits)
    if len(hits) > MAX_FINDINGS:
        hits = sorted(hits, key=lambda h: (-h.severity, h.start))[:MAX_FINDINGS]
    hits.sort(key=lambda h: (h.start, h.category.value, h.end, h.rule))
    return [_finding(text, h, masks, entry) for h in hits]


def scan_text(text: str, *, entry: str | None = None, learned: bool = True) -> list[Finding]:
    """Every finding in one entry's text, ordered by (start, category). Offsets are characters.
    `learned=False` leaves out the learned scorer (the span rules alone, for comparison)."""
    if not text:
        return []
    return findings_of(text, _scan(text, 0, _Budget(learned=learned)), entry)


Entries = list[tuple[str | None, str]]


def scan_memory(entries: Entries, *, deadline: Deadline | None = None) -> list[Finding]:
    """Findings of every entry of a memory, entry by entry, each tagged with its entry id. Past the
    memory's time budget (`deadline`, by default MEMORY_BUDGET_SECONDS of CPU) the rest is left
    unscanned: what was found so far is kept and a "scan incomplete" finding asks for a review."""
    deadline = deadline if deadline is not None else Deadline()
    deadline.start()
    out: list[Finding] = []
    for done, (entry, text) in enumerate(entries):
        if not text:
            continue  # nothing left unscanned in an empty entry, whatever the budget
        if deadline.expired():
            out.append(_incomplete(entry, done, len(entries)))
            break
        budget = _Budget(deadline=deadline)
        hits = _scan(text, 0, budget)
        out.extend(findings_of(text, hits, entry))
        if budget.incomplete:
            out.append(_incomplete(entry, done, len(entries)))
            break
    return out


_UNSCANNED = "the rest was not scanned, review it by hand"


def _incomplete(entry: str | None, done: int, total: int) -> Finding:
    """The finding of a memory whose time budget ran out while scanning `entry` (0-based `done`)."""
    where = f"entry {done + 1} of {total}" if total > 1 else "its text"
    return Finding(
        category=Category.SCAN_INCOMPLETE,
        severity=SEVERITY_OF_RANK[HIGH],
        rule=SCAN_INCOMPLETE_RULE,
        message=f"scan incomplete: its time budget ran out at {where}; {_UNSCANNED}",
        entry=entry,
        start=0,
        end=0,
        excerpt="",
        suggested_trust=TrustLevel.FLAGGED,
    )


def scan_yaml_source(text: str) -> list[Finding]:
    """YAML hazards of a YAML source text (alias bombs, recursive aliases, deep nesting, unsafe
    tags), ordered by (start, category). The memory text inside it is scanned separately with
    scan_text."""
    if not text:
        return []
    return findings_of(text, _dedupe(yamlscan.scan_source(text)), None)


__all__ = [
    "Category",
    "Finding",
    "scan_memory",
    "scan_text",
    "scan_yaml_source",
    "suggested_trust",
    "worst",
]
