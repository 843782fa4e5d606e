"""What the detector reports: one Finding per suspicious span of an entry's text."""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field

from app.core.model import TrustLevel


class Category(StrEnum):
    """The attack classes the detector reports (docs/security.md 2.1; terminal and markup are split;
    YAML has two)."""

    INSTRUCTION_OVERRIDE = "instruction-override"
    ROLE_HIJACK = "role-hijack"
    HIDDEN_UNICODE = "hidden-unicode"
    ENCODED_PAYLOAD = "encoded-payload"
    EXFILTRATION = "exfiltration"
    TOOL_INJECTION = "tool-injection"
    SECRET = "secret"
    HOMOGLYPH = "homoglyph"
    PERSISTENCE = "persistence"
    TERMINAL_ESCAPE = "terminal-escape"
    MARKUP_INJECTION = "markup-injection"
    YAML_BOMB = "yaml-bomb"
    YAML_TAG = "yaml-tag"
    # Not an attack: the detector ran out of its time budget on the memory; a human looks instead.
    SCAN_INCOMPLETE = "scan-incomplete"


class Severity(StrEnum):
    LOW = "low"
    MEDIUM = "medium"
    HIGH = "high"
    CRITICAL = "critical"


SEVERITY_RANK: dict[Severity, int] = {
    Severity.LOW: 1,
    Severity.MEDIUM: 2,
    Severity.HIGH: 3,
    Severity.CRITICAL: 4,
}
SEVERITY_OF_RANK: dict[int, Severity] = {rank: severity for severity, rank in SEVERITY_RANK.items()}


class Finding(BaseModel):
    """One suspicious span. `start`/`end` are 0-based character offsets into the entry's text (end
    exclusive): text[start:end] is exactly the offending span. Every string field is inert (no
    control or invisible character survives) and has secrets masked, so a Finding is safe to print,
    log or index. Detection is triage for a human: `suggested_trust` is a suggestion, never applied
    by the detector."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    category: Category
    severity: Severity
    rule: str
    message: str
    entry: str | None = None
    start: int = Field(ge=0)
    end: int = Field(ge=0)
    excerpt: str
    suggested_trust: TrustLevel | None = None
    decoded: str | None = None

    @property
    def rank(self) -> int:
        return SEVERITY_RANK[self.severity]

    @property
    def flagged(self) -> bool:
        """High and critical findings are the ones that suggest FLAGGED."""
        return self.rank >= SEVERITY_RANK[Severity.HIGH]


def worst(findings: list[Finding]) -> Finding | None:
    """The most severe finding (the first one at that severity), or None."""
    best: Finding | None = None
    for f in findings:
        if best is None or f.rank > best.rank:
            best = f
    return best


def suggested_trust(findings: list[Finding]) -> TrustLevel | None:
    """FLAGGED when any finding is high or critical; the detector never suggests more than that."""
    return TrustLevel.FLAGGED if any(f.flagged for f in findings) else None
