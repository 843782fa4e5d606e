"""Generated portfolios for the benchmarks: DollhouseMCP memories in date folders, each with the
14-field front matter and 300-3,000 characters of English-like Markdown that ../PERF-style
measurements use. Deterministic for a given size and seed."""

from __future__ import annotations

import itertools
import random
from pathlib import Path

WORDS = (
    "deploy release branch staging prod approval token budget cache index search memory "
    "agent review "
    "trust quarantine promote demote salience priority session context decision runbook "
    "rollback api "
    "client server latency error retry timeout queue worker schema migration database "
    "replica backup "
    "restore incident postmortem owner team kite mobile web console login oauth refresh "
    "rotation secret "
    "vault policy audit ledger metric alert dashboard feature flag experiment rollout "
    "canary build test "
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
    """One memory file; `body` replaces the generated Markdown (bench/mixed.py brings its own
    prose)."""
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
        f"created: '2026-{rng.randint(1, 11):02d}-{rng.randint(1, 28):02d}"
        f"T09:{rng.randint(10, 59)}:00.000Z'\n"
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
    (root / "config.yml").write_text(
        "autoLoad:\n  enabled: true\n  maxTokenBudget: 5000\n", encoding="utf-8"
    )
    marker.touch()
    return portfolio


# -- memory texts for the duplicate benchmark ------------------------------------------------------

FUNCTION_WORDS = (
    "the of and to a in is that for it as with was on be by this are or from at an not but "
    "have we they you all can when will if should after before then so"
).split()
ONSETS = "b c d f g h j k l m n p r s t v w z br cr dr fl gr pl pr st tr sh ch th".split()
NUCLEI = "a e i o u ai ea ie ou".split()
BOILERPLATE = (
    "Ask the on-call owner before changing anything described in this section.",
    "This note was written by the agent after the session and has not been reviewed yet.",
    "Check the runbook and the dashboard first, then escalate in the incident channel.",
    "Keep this in mind for every future session with this team and this repository.",
    "Source: the weekly planning meeting notes, copied here so the agent can find them.",
)


def vocabulary(rng: random.Random, size: int = 20_000) -> list[str]:
    """Content words in Zipf rank order: the domain words, then generated ones."""
    words = [word for word in dict.fromkeys(WORDS) if word not in FUNCTION_WORDS]
    seen = set(words)
    while len(words) < size:
        word = "".join(rng.choice(ONSETS) + rng.choice(NUCLEI) for _ in range(rng.randint(2, 4)))
        if word not in seen:
            seen.add(word)
            words.append(word)
    return words


def _zipf(count: int, offset: int = 1) -> list[float]:
    """Cumulative Zipf-Mandelbrot weights 1 / (rank + offset)."""
    return list(itertools.accumulate(1.0 / (rank + offset) for rank in range(count)))


class MemoryTexts:
    """`count` memory texts shaped like the systems' own (one-passage facts as memory-mcp and Engram
    keep them, `## ` sections of list items as OpenClaw's, multi-paragraph notes as DollhouseMCP's)
    in sentences of short phrases (an optional function word or two, such as "of the", then one or
    two content words from a Zipf-Mandelbrot vocabulary of 20,000), so that, as in English, "of the"
    is common and "the the" never happens; with the duplicates a real portfolio holds planted:

    * `near` of the memories restate a passage of an earlier one, each word then replaced, dropped
      or followed by an inserted word with a probability drawn from 0 to `max_edit` (so the pairs'
      Jaccard spreads on both sides of the threshold);
    * `exact` of them copy an earlier memory whole (case and spacing changed half the time);
    * `boilerplate` of them carry one of five stock sentences as a paragraph of their own.

    Deterministic for a count and seed; `ids` and `texts` are in generation order."""

    def __init__(
        self,
        count: int,
        seed: int = 7,
        *,
        near: float = 0.04,
        exact: float = 0.01,
        boilerplate: float = 0.005,
        max_edit: float = 0.6,
    ) -> None:
        rng = self.rng = random.Random(seed)
        self.words = vocabulary(rng)
        # the commonest content word is about 0.3% of the words, as in English prose
        self.cum = _zipf(len(self.words), 40)
        self.function_cum = _zipf(len(FUNCTION_WORDS))
        self.max_edit = max_edit
        self.ids: list[str] = []
        self.texts: dict[str, str] = {}
        self.paragraphs: list[list[str]] = []
        for index in range(count):
            draw = rng.random()
            if index and draw < exact:
                source = self.texts[self.ids[rng.randrange(index)]]
                text = source if rng.random() < 0.5 else source.upper().replace(" ", "  ")
                parts = self._split(source)
            else:
                parts = self._parts()
                if index and draw < exact + near:
                    borrowed = rng.choice(self.paragraphs[rng.randrange(index)])
                    parts.insert(
                        rng.randint(1 if parts[0].startswith("#") else 0, len(parts)),
                        self._edited(borrowed),
                    )
                if rng.random() < boilerplate:
                    parts.append(rng.choice(BOILERPLATE))
                text = "\n\n".join(parts) + "\n"
            memory_id = f"memory-mcp:bench:mem/{index}"
            self.ids.append(memory_id)
            self.texts[memory_id] = text
            self.paragraphs.append([p for p in parts if not p.startswith("#")] or parts)

    @staticmethod
    def _split(text: str) -> list[str]:
        return [line for line in text.splitlines() if line.strip()]

    def _content(self, count: int = 1) -> list[str]:
        return self.rng.choices(self.words, cum_weights=self.cum, k=count)

    def _function(self) -> str:
        return self.rng.choices(FUNCTION_WORDS, cum_weights=self.function_cum)[0]

    def _sentence(self, low: int = 6, high: int = 18) -> str:
        rng = self.rng
        target = rng.randint(low, high)
        words: list[str] = []
        while len(words) < target:
            if rng.random() < 0.6:
                words.append(self._function())
                if rng.random() < 0.25 and (second := self._function()) != words[-1]:
                    words.append(second)
            words += self._content(rng.choice((1, 1, 2)))
        return " ".join(words[:target]).capitalize() + "."

    def _parts(self) -> list[str]:
        rng = self.rng
        shape = rng.random()
        if shape < 0.4:  # a fact
            return [" ".join(self._sentence() for _ in range(rng.randint(1, 2)))]
        if shape < 0.75:  # a section of items
            return [f"## {self._sentence(2, 5)[:-1]}"] + [
                f"- {self._sentence()}" for _ in range(rng.randint(2, 6))
            ]
        return [f"# {self._sentence(2, 6)[:-1]}"] + [
            " ".join(self._sentence() for _ in range(rng.randint(2, 4)))
            for _ in range(rng.randint(3, 8))
        ]

    def _edited(self, paragraph: str) -> str:
        rng = self.rng
        rate = rng.uniform(0.0, self.max_edit)
        marker, _, body = (
            paragraph.partition(" ") if paragraph.startswith("- ") else ("", "", paragraph)
        )
        out: list[str] = []
        for word in body.split():
            roll = rng.random()
            if roll < rate / 2:
                out.append(self._content()[0])
            elif roll < rate * 3 / 4:
                continue
            else:
                out.append(word)
                if roll < rate:
                    out.append(self._content()[0] if rng.random() < 0.5 else self._function())
        return (marker + " " if marker else "") + " ".join(out or body.split()[:1])
