"""The guard's policy: what to do with a memory's text, decided from the detector's findings.

The vocabulary is OWASP's for memory and context poisoning: `allow` (save or serve it as it is),
`redact` (save or serve it only with its secrets masked), `quarantine` (keep it out of what an
agent loads, for a person to look at), `block` (refuse it outright). One table, `POLICY`, maps
findings to a decision; the first row any finding matches decides, rows ordered most severe first,
so text with an injection and a secret is quarantined (its secret masked in whatever is served).

Credentials (leaks.py): an order to send, share or save one is a `credential-leak`, quarantined. A
bare credential is a live secret about to become durable agent memory, loaded into every later
context: one whose shape makes it sure (a provider's token, a private key, a JWT, a bearer header,
a password in a URL, a long random value) is quarantined for a person to remove and rotate; one
known only by its key's name (`password: ...`) may be a setting, so the note is kept, masked.

The policy is the same for every system: naming a system never buys a laxer answer.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field

from app.core.guard import leaks
from app.core.review.finding import Category, Finding, Severity
from app.core.review.masking import mask_spans
from app.core.systems import registry


class GuardDecision(StrEnum):
    ALLOW = "allow"
    REDACT = "redact"
    QUARANTINE = "quarantine"
    BLOCK = "block"


WITHHELD = (GuardDecision.QUARANTINE, GuardDecision.BLOCK)  # their text is never served


class PolicyRow(BaseModel):
    """A finding at one of `severities` makes `decision` when its rule is one of `rules` (when
    given) and not one of `unless`, and it is of one of `categories` (when given; else of `SECRET`
    when `secret`, of any other category when not)."""

    model_config = ConfigDict(frozen=True)

    decision: GuardDecision
    severities: frozenset[Severity]
    categories: frozenset[Category] = frozenset()
    rules: frozenset[str] = frozenset()
    unless: frozenset[str] = frozenset()
    secret: bool = False
    why: str

    def matches(self, finding: Finding) -> bool:
        if finding.severity not in self.severities or finding.rule in self.unless:
            return False
        if self.rules and finding.rule not in self.rules:
            return False
        if self.categories:
            return finding.category in self.categories
        return bool(self.rules) or self.secret == (finding.category is Category.SECRET)


_SEVERE = frozenset({Severity.HIGH, Severity.CRITICAL})

POLICY: tuple[PolicyRow, ...] = (
    PolicyRow(
        decision=GuardDecision.BLOCK,
        severities=frozenset({Severity.CRITICAL}),
        why="a critical finding: a pipe into a shell, a YAML bomb or code tag, smuggled orders",
    ),
    PolicyRow(
        decision=GuardDecision.QUARANTINE,
        severities=_SEVERE,
        rules=frozenset({leaks.LEAK_RULE}),
        why="an order to send, share or save a credential",
    ),
    PolicyRow(
        decision=GuardDecision.QUARANTINE,
        severities=frozenset({Severity.HIGH}),
        why="a high-severity injection finding",
    ),
    PolicyRow(
        decision=GuardDecision.QUARANTINE,
        severities=frozenset({Severity.MEDIUM}),
        categories=frozenset({Category.HOMOGLYPH}),
        why="look-alike letters inside a word, which no honest note needs",
    ),
    PolicyRow(
        decision=GuardDecision.QUARANTINE,
        severities=_SEVERE,
        unless=frozenset({leaks.KEY_VALUE_RULE}),
        secret=True,
        why="a live credential (a token, key or password of a known shape, or a generated value):"
        " kept out of memory for a person to remove and rotate",
    ),
    PolicyRow(
        decision=GuardDecision.REDACT,
        severities=_SEVERE,
        secret=True,
        why="a secret known by its key's name, masked before it is kept",
    ),
)
ALLOW_WHY = "no finding the policy acts on (low and medium ones are reported, not acted on)"


class GuardFinding(BaseModel):
    """A detector finding as the guard serves it: `start`/`end` are character offsets into the
    checked text (end exclusive). `message`, `excerpt` and `decoded` are inert with secrets masked,
    and left out (None) when the decision withholds the text (a message may quote it), so an answer
    never repeats an injection."""

    model_config = ConfigDict(frozen=True)

    category: str
    severity: str
    rule: str
    message: str | None = None
    entry: str | None = None
    start: int
    end: int
    excerpt: str | None = None
    decoded: str | None = None


class GuardResult(BaseModel):
    model_config = ConfigDict(frozen=True)

    decision: GuardDecision
    why: str
    system: str | None = None
    findings: list[GuardFinding] = Field(default_factory=list)
    masked_text: str | None = Field(
        default=None,
        description="the text with its secrets masked, given when the decision is redact",
    )


def decide(findings: Iterable[Finding]) -> tuple[GuardDecision, str]:
    """The decision the first matching row of `POLICY` makes, and why; allow when none matches."""
    found = list(findings)
    for row in POLICY:
        if any(row.matches(finding) for finding in found):
            return row.decision, row.why
    return GuardDecision.ALLOW, ALLOW_WHY


def served_findings(findings: Sequence[Finding], decision: GuardDecision) -> list[GuardFinding]:
    """Findings as served: spans always, the text around them only when the decision lets it out."""
    shown = decision not in WITHHELD
    return [
        GuardFinding(
            category=f.category.value,
            severity=f.severity.value,
            rule=f.rule,
            message=f.message if shown else None,
            entry=f.entry,
            start=f.start,
            end=f.end,
            excerpt=f.excerpt if shown else None,
            decoded=f.decoded if shown else None,
        )
        for f in findings
    ]


def scan(text: str) -> list[Finding]:
    """The detector over the text as prose and as a YAML source (a memory file may be either;
    prose parses as plain YAML scalars, which draw nothing), and the guard's own credential
    findings (leaks.py)."""
    # The detector compiles its rules on import: loaded only where a scan is made.
    from app.core.review.detector import scan_text, scan_yaml_source

    found = {(f.category, f.rule, f.start, f.end): f for f in scan_text(text)}
    for f in scan_yaml_source(text):
        found.setdefault((f.category, f.rule, f.start, f.end), f)
    for f in leaks.guard_findings(text, list(found.values())):
        found.setdefault((f.category, f.rule, f.start, f.end), f)
    return sorted(found.values(), key=lambda f: (f.start, f.category.value, f.end))


def check_memory(text: str, system: str | None = None) -> GuardResult:
    """What the guard makes of `text` about to be saved into (or read from) a memory store.
    `system` must be a known system's name (registry.UnknownSystem otherwise); it is echoed."""
    if system is not None and system not in registry.names():
        raise registry.UnknownSystem(system)
    findings = scan(text)
    decision, why = decide(findings)
    masked = mask_spans(text, findings) if decision is GuardDecision.REDACT else None
    shown = served_findings(findings, decision)
    return GuardResult(
        decision=decision,
        why=why,
        system=system,
        findings=shown,
        masked_text=masked,
    )
