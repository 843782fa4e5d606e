"""The budget screen's preview tab masks secrets until `v` shows them, on that tab only, and `v`
masks them again (Pilot, on a copy of the sample: Engram's context for kite injects a note that
holds an access key id)."""

from __future__ import annotations

from pathlib import Path

from textual.app import App

from app.core.clock import FixedClock
from app.core.locations import Locations
from app.tui.widgets.budget_preview import MASKED, REVEALED
from app.tui.widgets.injection_preview import InjectionPreview
from tests.tui.helpers import until
from tests.tui.test_budget import make_app, open_budget, select

KITE = ("engram", "engram", "mem_context kite")
HOLDER = "engram:engram:obs/6"


def _shown(app: App[None]) -> str:
    widget = app.screen.query_one("#budget-preview", InjectionPreview)
    rendered = widget.render()
    return rendered.plain if hasattr(rendered, "plain") else str(rendered)


def _status(app: App[None]) -> str:
    return str(app.screen.query_one("#budget-preview-secrets").render())


async def test_v_shows_the_previews_secrets_on_that_tab_only(
    sample_copy: Path, isolated_locations: Locations, clock: FixedClock
) -> None:
    app = make_app(isolated_locations, clock, sample_copy)
    async with app.run_test(size=(160, 48)) as pilot:
        screen = await open_budget(app, pilot)
        [secret] = app.workbench.secrets(HOLDER)
        masked = secret[:4] + "*" * (len(secret) - 4)
        await select(screen, pilot, KITE)
        await pilot.press("P")
        await until(pilot, lambda: masked in _shown(app))
        assert secret not in _shown(app) and _status(app) == MASKED
        await pilot.press("v")
        await until(pilot, lambda: secret in _shown(app))
        assert masked not in _shown(app) and _status(app) == REVEALED
        assert not app.reveal_secrets  # the other panes keep theirs masked
        await pilot.press("v")
        await until(pilot, lambda: masked in _shown(app))
        assert secret not in _shown(app) and _status(app) == MASKED
        # Off the preview tab, v is the app's own: every other pane's secrets.
        await pilot.press("P")
        await pilot.pause()
        await pilot.press("v")
        await pilot.pause()
        assert app.reveal_secrets


async def test_the_key_is_listed_with_its_id_on_the_preview_tab(
    sample_copy: Path, isolated_locations: Locations, clock: FixedClock
) -> None:
    app = make_app(isolated_locations, clock, sample_copy)
    async with app.run_test(size=(160, 48)) as pilot:
        screen = await open_budget(app, pilot)
        await pilot.press("P")
        await pilot.pause()
        shown = {b.binding.id: b for b in screen.active_bindings.values() if b.enabled}
        binding = shown["budget-preview-secrets"].binding
        assert binding.key == "v" and binding.description == "Secrets"
        assert "preview" in (binding.tooltip or "")
