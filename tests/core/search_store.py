"""The search tests' memories: a small corpus built by hand, whose texts live in a dict that
`text_of` reads, as the workbench's adapters would re-read a memory's source; and the `store` and
`index` fixtures over it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from app.core.model import Memory, Source, Tier, TrustLevel
from app.core.reading.base import count_words, estimate_tokens, memory_id, sha256_text
from app.core.search.index import SearchIndex

CORPUS: list[tuple[str, dict[str, object], str]] = [
    (
        "deploy-runbook",
        dict(
            name="Deploy runbook",
            description="How we ship the web app",
            tags=("deploy", "runbook"),
            tier=Tier.HOT,
            kind="procedure",
            domain="infra",
            priority=1,
            created="2026-11-02T09:00:00Z",
            updated="2026-11-29",
        ),
        (
            "Deploying to staging first. The staging database is migrated before the "
            "release.\nRollback: revert the release tag and redeploy."
        ),
    ),
    (
        "kite-mobile",
        dict(
            name="Kite mobile release notes",
            description="Mobile client versions",
            tags=("kite", "mobile"),
            kind="notes",
            domain="product",
            priority=20,
            created="2026-03-15",
            trust=TrustLevel.VALIDATED,
        ),
        (
            "The kite mobile client shipped version 2.4 with offline sync. Release "
            "went to the app stores on Friday."
        ),
    ),
    (
        "oncall-policy",
        dict(
            name="On-call policy",
            description="Who answers pages",
            tags=("policy", "oncall"),
            kind="policy",
            domain="people",
            priority=5,
            created="2025-12-01",
            trust=TrustLevel.TRUSTED,
        ),
        (
            "Pages go to the primary first, then the secondary after ten minutes. "
            "Memories of past incidents are kept in the postmortem folder."
        ),
    ),
    (
        "queue-retry",
        dict(
            name="Queue retry tuning",
            description="Worker retries and timeouts",
            tags=("api", "queue"),
            system="memory-mcp",
            portfolio="memory",
            kind="fact",
            domain="infra",
            priority=60,
        ),
        (
            "The worker queue retries three times with exponential backoff. Timeouts "
            "above thirty seconds page the on-call. "
        )
        + "Latency budget discussion. " * 60,
    ),
    (
        "secret-rotation",
        dict(
            name="Secret rotation",
            description="Vault policy for API tokens",
            tags=("auth", "vault"),
            system="openclaw",
            portfolio="workspace",
            tier=Tier.QUARANTINE,
            kind="decision",
            trust=TrustLevel.FLAGGED,
            priority=90,
            created="2026-11-20T10:30:00+00:00",
        ),
        (
            "Rotate the oauth client secret every 90 days. The vault audit ledger "
            "records each rotation."
        ),
    ),
    (
        "staging-env",
        dict(
            name="Staging environment",
            description="Where releases wait",
            tags=("deploy", "staging"),
            system="massgen",
            portfolio="agent-a",
            tier=Tier.ARCHIVE,
            kind="fact",
            domain="infra",
            priority=30,
        ),
        (
            "Staging mirrors production. The database for staging is refreshed "
            "nightly from a masked backup."
        ),
    ),
]


def make_memory(locator: str, fields: dict[str, object], text: str) -> Memory:
    system = str(fields.get("system", "dollhouse"))
    portfolio = str(fields.get("portfolio", "main"))
    words = count_words(text)
    values = {k: v for k, v in fields.items() if k not in ("system", "portfolio")}
    values.setdefault("tier", Tier.COLD)
    return Memory(
        id=memory_id(system, portfolio, locator),
        system=system,
        portfolio=portfolio,
        locator=locator,
        source=Source(path=f"{locator}.md"),
        words=words,
        chars=len(text),
        tokens=estimate_tokens(words),
        sha256=sha256_text(text),
        **values,  # type: ignore[arg-type]
    )


class Store:
    """Memories and their texts, changeable the way files change on disk."""

    def __init__(self) -> None:
        self.memories: dict[str, Memory] = {}
        self.texts: dict[str, str] = {}
        for locator, fields, text in CORPUS:
            self.put(locator, fields, text)

    def put(self, locator: str, fields: dict[str, object], text: str) -> Memory:
        memory = make_memory(locator, fields, text)
        self.memories[memory.id] = memory
        self.texts[memory.id] = text
        return memory

    def text_of(self, memory: Memory) -> str:
        return self.texts[memory.id]

    def all(self) -> list[Memory]:
        return list(self.memories.values())


def mid(locator: str, system: str = "dollhouse", portfolio: str = "main") -> str:
    return memory_id(system, portfolio, locator)


RUNBOOK = mid("deploy-runbook")
KITE = mid("kite-mobile")
ONCALL = mid("oncall-policy")
QUEUE = mid("queue-retry", "memory-mcp", "memory")
SECRET = mid("secret-rotation", "openclaw", "workspace")
STAGING = mid("staging-env", "massgen", "agent-a")


@pytest.fixture(name="store")
def store_fixture() -> Store:
    return Store()


@pytest.fixture(name="index")
def index_fixture(tmp_path: Path, store: Store) -> Iterator[SearchIndex]:
    search_index = SearchIndex(tmp_path / "index", workers=1)
    report = search_index.update(store.all(), store.text_of)
    assert report.added == len(CORPUS) and report.rebuilt is None and not report.problems
    yield search_index
    search_index.close()


def ids(index: SearchIndex, query: str, limit: int = 20) -> list[str]:
    return [hit.id for hit in index.search(query, limit=limit).hits]
