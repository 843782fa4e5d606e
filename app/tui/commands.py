"""The command palette: jump to a memory by search, switch screens, act on the current memory,
switch theme, open a portfolio, rescan.

Actions on "the current memory" belong to the screen the palette was opened from: a command is
offered only when that screen has the action (`promote`, or a bound `curate('promote')`) and does
not disable it, and running it is the same as pressing the screen's key. The palette renders a hit's
help text as markup, so every help string that carries memory text is inert and has its brackets
escaped.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from rich.text import Text
from textual.actions import ActionError
from textual.actions import parse as parse_action
from textual.binding import Binding
from textual.command import DiscoveryHit, Hit, Hits, Provider
from textual.screen import Screen
from textual.worker import Worker

from app.core.inert import one_line
from app.core.search import QuerySyntaxError
from app.tui.context import workbench_app
from app.tui.messages import Notice, OpenPaths, Warned
from app.tui.problems import ProblemRow
from app.tui.screens.browse_changes import run_write, undo_change
from app.tui.widgets.path_prompt import PathPrompt

SCREENS = (
    (
        "Browse memories",
        "browse",
        "The tree of portfolios, tiers and domains, and the memory table",
    ),
    ("Search", "search", 'Search every memory (words, field:value, "phrases", prefix*, fuzzy~)'),
    ("Review queue", "review", "Findings and trust, most severe first"),
    ("Budgets", "budget", "What each agent loads at startup and where the budget cuts"),
    ("Startup timeline", "timeline", "The core's load phases as they ran"),
    (
        "Problems",
        "problems",
        "Every problem of the read (file, line, what was kept) and the workbench's warnings",
    ),
    (
        "Activity and history",
        "activity",
        "A receipt for every change and load of this session; everything the ledger holds",
    ),
)

# (action name on the screen, palette title, help)
MEMORY_ACTIONS = (
    ("approve", "Approve this memory", "Mark it reviewed and trusted"),
    ("flag", "Flag this memory", "Mark it for a closer look"),
    ("quarantine", "Quarantine this memory", "Take it out of the agent's reach"),
    ("restore", "Restore this memory", "Bring a quarantined memory back"),
    (
        "quarantine_entry",
        "Quarantine one entry of this memory",
        "Choose the entry; the others stay as they are",
    ),
    (
        "approve_entry",
        "Approve one entry of this memory",
        "Choose the entry; the others stay as they are",
    ),
    ("promote", "Promote this memory", "Move it to a hotter tier, in its own system"),
    ("demote", "Demote this memory", "Move it to a colder tier, in its own system"),
    ("pin", "Pin this memory", "Keep it where it is; suggestions leave it alone"),
    (
        "load_earlier",
        "Load this memory earlier",
        "A smaller priority number: it loads earlier at startup",
    ),
    ("load_later", "Load this memory later", "A bigger priority number: it loads later at startup"),
    ("undo", "Undo the latest change", "Reverse the latest curation change, byte for byte"),
)

OPEN_PORTFOLIO = ("Open a portfolio…", "Read another portfolio folder instead of the current ones")
RESCAN = ("Rescan portfolios", "Read every portfolio again")
THEME_PREFIX = "Theme: "
PATH_STARTS = ("/", "~", "./", "../")


def help_text(text: str, limit: int = 100) -> str:
    """A help line that shows memory text as text: the palette parses help as markup, and an escaped
    '[' is the one thing its parser never reads as a tag."""
    return one_line(text, limit).replace("[", "\\[")


def _bindings_of(screen: Screen[Any]) -> list[Binding]:
    return [
        b
        for cls in type(screen).__mro__
        for b in getattr(cls, "BINDINGS", ())
        if isinstance(b, Binding)
    ]


def _allowed(screen: Screen[Any], action: str) -> bool:
    try:
        _namespace, name, params = parse_action(action)
    except ActionError:
        return False
    if _namespace or not callable(getattr(screen, f"action_{name}", None)):
        return False
    try:
        return bool(screen.check_action(name, params))
    except Exception:  # noqa: BLE001 - a screen's check failing only hides the command
        return False


def screen_action(screen: Screen[Any], name: str) -> str | None:
    """The screen's own action string for `name`, if it has one it allows just now: `promote`
    itself, or a bound parameterised form such as `curate('promote')` or `decide('approve')`."""
    candidates = [name]
    for binding in _bindings_of(screen):
        try:
            _namespace, _method, params = parse_action(binding.action)
        except ActionError:
            continue
        if params == (name,):
            candidates.append(binding.action)
    return next((action for action in candidates if _allowed(screen, action)), None)


class WorkbenchCommands(Provider):
    # -- what the palette lists before anything is typed -------------------------------------------

    async def discover(self) -> Hits:
        for title, command, help_ in self._static_commands():
            yield DiscoveryHit(title, command, help=help_)

    def _static_commands(self) -> list[tuple[str, Callable[[], object], str]]:
        app = workbench_app(self.app)
        commands: list[tuple[str, Callable[[], object], str]] = [
            (title, partial(app.switch_mode, mode), help_) for title, mode, help_ in SCREENS
        ]
        for action, title, help_ in MEMORY_ACTIONS:
            if (bound := screen_action(self.screen, action)) is not None:
                commands.append(
                    (title, partial(self._run_screen_action, self.screen, bound), help_)
                )
            elif action == "undo":
                commands.append((title, self._undo, help_))
        commands.append((OPEN_PORTFOLIO[0], self._ask_for_portfolio, OPEN_PORTFOLIO[1]))
        commands.append((RESCAN[0], app.action_rescan, RESCAN[1]))
        commands.append(
            ("Switch theme…", app.action_change_theme, "Choose one of the registered themes")
        )
        return commands

    # -- what the palette lists for a query ------------------------------------------------------

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for title, command, help_ in self._static_commands():
            if (score := matcher.match(title)) > 0:
                yield Hit(score, matcher.highlight(title), command, help=help_)
        for name in sorted(self.app.available_themes):
            title = f"{THEME_PREFIX}{name}"
            if (score := matcher.match(title)) > 0:
                yield Hit(
                    score,
                    matcher.highlight(title),
                    partial(setattr, self.app, "theme", name),
                    help="Switch to this theme",
                )
        stripped = query.strip()
        if stripped.startswith(PATH_STARTS):
            # a path typed straight into the palette: offer to open it without the extra prompt
            yield Hit(
                1.0,
                Text(f"Open portfolio {one_line(stripped, 60)}"),
                partial(self._open_portfolio, stripped),
                text=f"Open portfolio {stripped}",
                help=OPEN_PORTFOLIO[1],
            )
            return
        async for hit in self._memory_hits(stripped):
            yield hit

    async def _memory_hits(self, query: str) -> Hits:
        app = workbench_app(self.app)
        workbench = app.workbench
        if len(query) < 2 or app.loading or not app.generation:
            return
        try:
            result = await asyncio.to_thread(workbench.search, query, limit=8)
        except QuerySyntaxError:
            return  # half-typed queries are common here; the search screen explains errors
        except Exception:  # noqa: BLE001 - the palette still offers its commands
            return
        for rank, hit in enumerate(result.hits):
            try:
                memory = workbench.memory(hit.id)
            except KeyError:
                continue
            name = one_line(memory.name, 50)
            label = Text(f"{name}  ", style="bold")
            label.append(f"{memory.system} · {memory.tier.value}", style="dim")
            yield Hit(
                0.5 - rank * 0.01,
                label,
                partial(app.open_memory, hit.id),
                text=name,
                help=help_text(hit.highlight),
            )

    # -- commands ----------------------------------------------------------------------------------

    @staticmethod
    async def _run_screen_action(screen: Screen[Any], action: str) -> None:
        await screen.run_action(action)

    def _undo(self) -> Worker[None]:
        """Undo from a screen without its own undo: the facade call runs in the "change" worker,
        which only posts messages (the app may be gone by the time it ends)."""
        app = workbench_app(self.app)
        write = undo_change("undo from the command palette")

        def undo() -> None:
            receipt = run_write(app, write, "undo")
            if receipt is not None:
                app.post_message(Notice(receipt.title, title="Undo"))

        return app.run_worker(
            undo, name="undo", group="change", thread=True, exclusive=True, exit_on_error=False
        )

    def _ask_for_portfolio(self) -> None:
        self.app.push_screen(PathPrompt(), self._portfolio_chosen)

    def _portfolio_chosen(self, value: str | None) -> None:
        if value:
            self._open_portfolio(value)

    def _open_portfolio(self, value: str) -> Worker[None]:
        """Look at the path first (in the "open-portfolio" worker): a path that holds no portfolio
        keeps what is open now, says why, and is listed among the problems."""
        app = workbench_app(self.app)
        path = Path(value).expanduser()

        def check() -> None:
            problems = app.workbench.check_paths([path])
            if problems:
                why = problems[0].message
                app.post_message(
                    Warned(
                        ProblemRow("open", str(path), None, why, "the portfolios open stay open")
                    )
                )
                app.post_message(
                    Notice(
                        f"{one_line(str(path), 120)}: {one_line(why, 200)}."
                        " The portfolios open stay as they are.",
                        title="Not opened",
                        severity="error",
                        timeout=10,
                    )
                )
                return
            app.post_message(OpenPaths([path]))

        return app.run_worker(
            check,
            name="open-portfolio",
            group="open-portfolio",
            thread=True,
            exclusive=True,
            exit_on_error=False,
        )
