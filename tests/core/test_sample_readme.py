"""The sample portfolio's README points only inside the repository: every link it makes resolves to
a file of the checkout, and it names no absolute path."""

from __future__ import annotations

import re
from pathlib import Path

README = Path(__file__).resolve().parents[2] / "sample-portfolio" / "README.md"


def test_readme_links_resolve_inside_the_repository() -> None:
    text = README.read_text(encoding="utf-8")
    # a link quoted as a planted payload (an exfiltration image) is text, not a link of the README
    links = [link for link in re.findall(r"\]\(([^)#]+)\)", text) if "://" not in link]
    assert links, "the README links each system's FORMAT.md"
    repository = README.parents[1]
    for link in links:
        target = (README.parent / link).resolve()
        assert target.is_file(), link
        assert target.is_relative_to(repository), link
    assert "app/core/systems/openclaw/FORMAT.md" in text


def test_readme_names_no_path_outside_the_repository() -> None:
    text = README.read_text(encoding="utf-8")
    assert not re.search(r"`/(work|home|tmp|usr)/", text)
