"""The sample the workbench opens when it is given no path: a copy in its own data folder, made on
first use, so curating it never edits the files of the checkout (or an installed package)."""

from __future__ import annotations

from pathlib import Path

from app.core.locations import Locations, sample_portfolio
from app.core.paths import default_paths, sample_copy


def files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_the_default_is_a_copy_in_the_data_folder_made_once(isolated_locations: Locations) -> None:
    bundled = sample_portfolio()
    [path] = default_paths(isolated_locations)
    assert path == isolated_locations.data / "sample-portfolio" and path.is_dir()
    assert files(path) == files(bundled)
    (path / "dollhouse" / "config.yml").write_bytes(b"curated\n")  # the copy is the person's to curate
    again, made = sample_copy(isolated_locations)
    assert again == path and not made
    assert (path / "dollhouse" / "config.yml").read_bytes() == b"curated\n"
    assert not any(p.name.startswith(".sample") for p in isolated_locations.data.iterdir())


def test_a_first_use_says_it_made_the_copy(isolated_locations: Locations) -> None:
    path, made = sample_copy(isolated_locations)
    assert made and path.is_dir()
    assert sample_copy(isolated_locations) == (path, False)
