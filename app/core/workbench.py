"""The facade: the only API the faces (the Textual app, the command line) use."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from pathlib import Path

from app.core.clock import Clock, SystemClock
from app.core.formats.discovery import standard_locations
from app.core.formats.registry import adapter as adapter_for
from app.core.load.pipeline import EventSink, LoadResult, Pipeline
from app.core.locations import Locations, sample_portfolio
from app.core.model import Memory, Portfolio, PortfolioRef, Problem, Timeline


class UnknownMemory(KeyError):
    pass


class Workbench:
    def __init__(self, locations: Locations | None = None, *, clock: Clock | None = None, workers: int | None = None) -> None:
        self.locations = locations or Locations.from_env()
        self.clock = clock or SystemClock()
        self.workers = workers
        self._result: LoadResult | None = None
        self._by_id: dict[str, Memory] = {}
        self._portfolios: dict[tuple[str, str], Portfolio] = {}

    # -- loading --------------------------------------------------------------------------------

    @staticmethod
    def default_paths() -> list[Path]:
        return [sample_portfolio()]

    def open(self, paths: Iterable[Path | str], *, emit: EventSink | None = None, use_cache: bool = True) -> LoadResult:
        """Run the startup pipeline over `paths`; events stream to `emit` as phases run."""
        pipeline = Pipeline(self.locations, clock=self.clock, emit=emit, workers=self.workers, use_cache=use_cache)
        result = pipeline.run([Path(p) for p in paths])
        self._result = result
        self._by_id = {m.id: m for m in result.memories}
        self._portfolios = {(p.system.value, p.name): p for p in result.portfolios}
        return result

    @property
    def result(self) -> LoadResult:
        if self._result is None:
            raise RuntimeError("Workbench.open() has not run yet")
        return self._result

    @property
    def portfolios(self) -> list[Portfolio]:
        return self.result.portfolios

    @property
    def memories(self) -> list[Memory]:
        return self.result.memories

    @property
    def timeline(self) -> Timeline:
        return self.result.timeline

    def problems(self) -> list[Problem]:
        """Every problem: those of the paths given, then each portfolio's."""
        return [*self.result.problems, *(p for portfolio in self.portfolios for p in portfolio.problems)]

    # -- lookups --------------------------------------------------------------------------------

    def memory(self, memory_id: str) -> Memory:
        try:
            return self._by_id[memory_id]
        except KeyError:
            raise UnknownMemory(memory_id) from None

    def portfolio_of(self, memory: Memory) -> Portfolio:
        return self._portfolios[(memory.system.value, memory.portfolio)]

    def text(self, memory_id: str) -> str:
        """A memory's content, read from its source now."""
        memory = self.memory(memory_id)
        return adapter_for(memory.system).text(Path(self.portfolio_of(memory).root), memory)

    def counts(self) -> dict[str, Counter[str]]:
        return {
            "system": Counter(m.system.value for m in self.memories),
            "tier": Counter(m.tier.value for m in self.memories),
            "trust": Counter(m.trust.value for m in self.memories),
        }

    @staticmethod
    def discover_standard(home: Path | None = None) -> list[PortfolioRef]:
        return standard_locations(home)
