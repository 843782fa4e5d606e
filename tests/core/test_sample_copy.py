"""The sample the workbench opens when it is given no path: a copy in its own data folder, made on
first use, so curating it never edits the files of the checkout (or an installed package)."""

from __future__ import annotations

from pathlib import Path

from app.core.locations import Locations, sample_portfolio
from app.core.model import TrustLevel
from app.core.paths import default_paths, sample_copy
from app.core.workbench import Workbench

STATE = "openclaw-2026.9/.openclaw/state/openclaw.sqlite"


def files(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()
    }


def test_the_default_is_a_copy_in_the_data_folder_made_once(isolated_locations: Locations) -> None:
    bundled = sample_portfolio()
    [path] = default_paths(isolated_locations)
    assert path == isolated_locations.data / "sample-portfolio" and path.is_dir()
    copied, original = files(path), files(bundled)
    assert copied.pop(STATE) != original.pop(STATE)  # re-keyed: see the test below
    assert copied == original
    (path / "dollhouse" / "config.yml").write_bytes(
        b"curated\n"
    )  # the copy is the person's to curate
    again, made = sample_copy(isolated_locations)
    assert again == path and not made
    assert (path / "dollhouse" / "config.yml").read_bytes() == b"curated\n"
    assert not any(p.name.startswith(".sample") for p in isolated_locations.data.iterdir())


def test_a_first_use_says_it_made_the_copy(isolated_locations: Locations) -> None:
    path, made = sample_copy(isolated_locations)
    assert made and path.is_dir()
    assert sample_copy(isolated_locations) == (path, False)


def test_the_copy_keeps_openclaws_provenance(isolated_locations: Locations) -> None:
    """OpenClaw keys its records to the workspace's real path: the copy's are re-keyed to the
    copy's, so its files keep the claims the sample's have (USER.md written by a group chat)."""
    path, _ = sample_copy(isolated_locations)
    wb = Workbench(isolated_locations, workers=1)
    wb.open([path / "openclaw-2026.9"], index=False)
    user = next(m for m in wb.memories if m.source.path == "USER.md")
    assert user.trust is TrustLevel.UNTRUSTED and user.trust_claimed
    session = "agent:main:telegram:group:kite-helpers"
    assert user.fields["trust claim"] == f"originClass untrusted, session {session}"
