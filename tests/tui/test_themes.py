"""Bundled themes load and register; a broken theme file is reported once, never a crash."""

from __future__ import annotations

from pathlib import Path

from app.core.clock import FixedClock
from app.core.locations import Locations, themes_dir
from app.core.workbench import Workbench
from app.tui.app import MemoryWorkbenchApp
from app.tui.theming import load_theme_dirs
from tests.tui.helpers import loaded


def test_bundled_themes_are_valid() -> None:
    bundle = load_theme_dirs(themes_dir())
    assert bundle.errors == []
    assert {t.name for t in bundle.themes} >= {
        "workbench-dark",
        "workbench-light",
        "workbench-high-contrast",
    }
    assert all("tier-hot" in t.variables for t in bundle.themes)


def test_user_theme_overrides_and_broken_files_are_reported(tmp_path: Path) -> None:
    (tmp_path / "mine.yaml").write_text("name: workbench-dark\nprimary: '#ff0000'\n")
    (tmp_path / "typo.yaml").write_text("name: x\nprimray: '#ff0000'\n")
    (tmp_path / "colour.yaml").write_text("name: y\nprimary: not-a-colour\n")
    (tmp_path / "yaml.yaml").write_text("name: [z\n")
    bundle = load_theme_dirs(themes_dir(), tmp_path)
    dark = next(t for t in bundle.themes if t.name == "workbench-dark")
    assert dark.primary == "#ff0000"
    assert len(bundle.errors) == 3
    assert any("typo.yaml" in e and "primary" in e for e in bundle.errors)
    assert any("colour.yaml" in e and "not a colour" in e for e in bundle.errors)


async def test_app_starts_with_the_default_theme_and_reports_broken_ones(
    tmp_path: Path, isolated_locations: Locations, clock: FixedClock
) -> None:
    user_themes = isolated_locations.config / "themes"
    user_themes.mkdir(parents=True)
    (user_themes / "broken.yaml").write_text("name: broken\n")
    app = MemoryWorkbenchApp(Workbench(isolated_locations, clock=clock), [tmp_path])
    async with app.run_test() as pilot:
        await loaded(app, pilot)
        await pilot.pause()
        assert app.theme == "workbench-dark"
        assert len(app.theme_errors) == 1 and "broken.yaml" in app.theme_errors[0]
