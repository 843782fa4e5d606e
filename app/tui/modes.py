"""The app's modes past the first screen, imported when first shown, and the keys that switch."""

from __future__ import annotations

from collections.abc import Callable
from importlib import import_module

from textual.binding import Binding
from textual.screen import Screen

# The screens past the first, by mode: (module under app.tui.screens, class). Their modules are
# imported when the mode is first shown, or in the background once the first screen is up; the
# first frame waits only for the browse screen's.
LATER_SCREENS = {
    "search": ("search", "SearchScreen"),
    "review": ("review", "ReviewScreen"),
    "budget": ("budget", "BudgetScreen"),
    "timeline": ("timeline", "TimelineScreen"),
    "problems": ("problems", "ProblemsScreen"),
    "activity": ("activity", "ActivityScreen"),
    "help": ("help", "HelpScreen"),
}


def later_screen(mode: str) -> type[Screen[None]]:
    module, name = LATER_SCREENS[mode]
    screen: type[Screen[None]] = getattr(import_module(f"app.tui.screens.{module}"), name)
    return screen


def mode_maker(mode: str) -> Callable[[], Screen[None]]:
    return lambda: later_screen(mode)()


# The keys that switch modes: off the footer, listed by `?`.
MODE_BINDINGS = [
    Binding("f2", "app.switch_mode('browse')", "Browse", show=False, id="mode-browse"),
    Binding(
        "ctrl+f",
        "app.switch_mode('search')",
        "Search",
        tooltip="Search every memory (the full search screen)",
        show=False,
        id="mode-search",
    ),
    Binding(
        "f3",
        "app.switch_mode('review')",
        "Review",
        tooltip="The review queue",
        show=False,
        id="mode-review",
    ),
    Binding(
        "f4",
        "app.switch_mode('budget')",
        "Budget",
        tooltip="Budgets: what each agent loads at startup",
        show=False,
        id="mode-budget",
    ),
    Binding(
        "f5",
        "app.switch_mode('timeline')",
        "Timeline",
        tooltip="The startup timeline",
        show=False,
        id="mode-timeline",
    ),
    Binding(
        "f6",
        "app.switch_mode('problems')",
        "Problems",
        tooltip="Every problem of the read, and the workbench's warnings",
        show=False,
        id="mode-problems",
    ),
    Binding(
        "f7",
        "app.switch_mode('activity')",
        "Activity",
        tooltip="What this session changed and read, and the history",
        show=False,
        id="mode-activity",
    ),
]
