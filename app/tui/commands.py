"""The command palette: jump to a memory by search, switch screens, rescan."""

from __future__ import annotations

import asyncio
from functools import partial

from rich.text import Text
from textual.command import DiscoveryHit, Hit, Hits, Provider

from app.core.inert import one_line
from app.core.search import QuerySyntaxError

SCREENS = (
    ("Browse memories", "browse", "The tree of portfolios, tiers and domains, and the memory table"),
    ("Search", "search", "Search every memory (words, field:value, \"phrases\", prefix*, fuzzy~)"),
    ("Review queue", "review", "Findings and trust, most severe first"),
    ("Budgets", "budget", "What each agent loads at startup and where the budget cuts"),
    ("Startup timeline", "timeline", "The core's load phases as they ran"),
)


class WorkbenchCommands(Provider):
    async def discover(self) -> Hits:
        for title, mode, help_text in SCREENS:
            yield DiscoveryHit(title, partial(self.app.switch_mode, mode), help=help_text)
        yield DiscoveryHit("Rescan portfolios", self.app.action_rescan, help="Read every portfolio again")  # type: ignore[attr-defined]

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for title, mode, help_text in SCREENS:
            score = matcher.match(title)
            if score > 0:
                yield Hit(score, matcher.highlight(title), partial(self.app.switch_mode, mode), help=help_text)
        rescan = "Rescan portfolios"
        if (score := matcher.match(rescan)) > 0:
            yield Hit(score, matcher.highlight(rescan), self.app.action_rescan, help="Read every portfolio again")  # type: ignore[attr-defined]
        workbench = self.app.workbench  # type: ignore[attr-defined]
        if len(query.strip()) < 2 or self.app.loading:  # type: ignore[attr-defined]
            return
        try:
            result = await asyncio.to_thread(workbench.search, query, limit=8)
        except QuerySyntaxError:
            return
        for rank, hit in enumerate(result.hits):
            memory = workbench.memory(hit.id)
            label = Text(f"{one_line(memory.name, 50)}  ", style="bold")
            label.append(f"{memory.system.value} · {memory.tier.value}", style="dim")
            yield Hit(0.5 - rank * 0.01, label, partial(self.app.open_memory, hit.id), help=one_line(hit.highlight, 100))  # type: ignore[attr-defined]
