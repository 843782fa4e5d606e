"""The detail view and the review queue say OpenClaw 2026.9's claim in its own words: the origin
class and the session that wrote the file, beside the level it is read as."""

from __future__ import annotations

from app.core.model import Memory, Source, Tier, TrustLevel
from app.tui.widgets.memory_detail import claim_text

CLAIM = "originClass untrusted, session agent:main:telegram:group:7"


def test_the_claim_is_the_origin_class_and_session() -> None:
    memory = Memory(
        id="openclaw:workspace:file/USER",
        system="openclaw",
        portfolio="workspace",
        locator="file/USER",
        name="USER",
        tier=Tier.COLD,
        trust=TrustLevel.UNTRUSTED,
        trust_claimed=True,
        source=Source(path="USER.md"),
        fields={"trust claim": CLAIM},
    )
    assert claim_text(memory) == f"{CLAIM} (read as untrusted)"
