"""Generated portfolios for the benchmarks: DollhouseMCP memories in date folders, each with the
14-field front matter and 300-3,000 characters of English-like Markdown that ../PERF-style
measurements use. Deterministic for a given size and seed."""

from __future__ import annotations

import random
from pathlib import Path

WORDS = (
    "deploy release branch staging prod approval token budget cache index search memory agent review "
    "trust quarantine promote demote salience priority session context decision runbook rollback api "
    "client server latency error retry timeout queue worker schema migration database replica backup "
    "restore incident postmortem owner team kite mobile web console login oauth refresh rotation secret "
    "vault policy audit ledger metric alert dashboard feature flag experiment rollout canary build test "
    "lint format style review merge conflict rebase commit tag version semver changelog docs guide"
).split()
TAGS = ("deploy", "policy", "kite", "infra", "auth", "mobile", "web", "api", "review", "oncall")


def _sentence(rng: random.Random) -> str:
    words = rng.choices(WORDS, k=rng.randint(6, 16))
    return " ".join(words).capitalize() + "."


def _body(rng: random.Random) -> str:
    target = rng.randint(300, 3000)
    parts: list[str] = [f"# {_sentence(rng)[:-1]}", ""]
    size = 0
    while size < target:
        if rng.random() < 0.2:
            line = f"- {_sentence(rng)}"
        else:
            line = " ".join(_sentence(rng) for _ in range(rng.randint(2, 4)))
        parts.append(line)
        size += len(line) + 1
    return "\n".join(parts) + "\n"


def memory_file(index: int, rng: random.Random, body: str | None = None) -> str:
    """One memory file; `body` replaces the generated Markdown (bench/mixed.py brings its own prose)."""
    name = f"note-{index:06d}-{rng.choice(WORDS)}"
    tags = rng.sample(TAGS, 3)
    auto = rng.random() < 0.05
    return (
        "---\n"
        f"name: {name}\n"
        f"description: {_sentence(rng)}\n"
        "type: memory\n"
        "version: 1.0.0\n"
        f"author: {rng.choice(['maya', 'jonas', 'priya', 'theo'])}\n"
        f"created: '2026-{rng.randint(1, 11):02d}-{rng.randint(1, 28):02d}T09:{rng.randint(10, 59)}:00.000Z'\n"
        f"modified: '2026-11-{rng.randint(1, 28):02d}T10:{rng.randint(10, 59)}:00.000Z'\n"
        f"tags: [{', '.join(tags)}]\n"
        f"autoLoad: {'true' if auto else 'false'}\n"
        f"priority: {rng.randint(1, 99)}\n"
        "privacyLevel: private\n"
        "searchable: true\n"
        "retentionDays: 365\n"
        f"unique_id: memory_{name}_{1770000000000 + index}\n"
        "---\n" + (_body(rng) if body is None else body)
    )


def generate(root: Path, count: int, seed: int = 7) -> Path:
    """A DollhouseMCP portfolio of `count` memories under root/portfolio (reused when complete)."""
    portfolio = root / "portfolio"
    marker = root / f".complete-{count}-{seed}"
    if marker.exists():
        return portfolio
    rng = random.Random(seed)
    memories = portfolio / "memories"
    for index in range(count):
        folder = memories / f"2026-{(index // 3000) % 12 + 1:02d}-{(index // 100) % 28 + 1:02d}"
        if index % 100 == 0:
            folder.mkdir(parents=True, exist_ok=True)
        (folder / f"note-{index:06d}.yaml").write_text(memory_file(index, rng), encoding="utf-8")
    (root / "config.yml").write_text("autoLoad:\n  enabled: true\n  maxTokenBudget: 5000\n", encoding="utf-8")
    marker.touch()
    return portfolio
