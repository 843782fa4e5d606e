"""Where the workbench keeps its own state (docs/architecture.md, "Where state lives") and where its
bundled data lives.

Every location can be overridden by an environment variable (tests always do), so nothing is ever
written inside a portfolio.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

APP_NAME = "memwb"


def _xdg(var: str, fallback: str) -> Path:
    value = os.environ.get(var)
    return Path(value) if value else Path.home() / fallback


@dataclass(frozen=True)
class Locations:
    cache: Path
    data: Path
    config: Path

    @classmethod
    def from_env(cls) -> Locations:
        return cls(
            cache=Path(
                os.environ.get("MEMWB_CACHE_DIR") or _xdg("XDG_CACHE_HOME", ".cache") / APP_NAME
            ),
            data=Path(
                os.environ.get("MEMWB_DATA_DIR") or _xdg("XDG_DATA_HOME", ".local/share") / APP_NAME
            ),
            config=Path(
                os.environ.get("MEMWB_CONFIG_DIR") or _xdg("XDG_CONFIG_HOME", ".config") / APP_NAME
            ),
        )

    def portfolio_cache(self, root: str | Path) -> Path:
        """A private cache folder per portfolio root, named readably and made unique by a hash."""
        root_str = os.fspath(root)
        digest = hashlib.sha256(root_str.encode("utf-8", "surrogateescape")).hexdigest()[:12]
        stem = "".join(c if c.isalnum() or c in "-_" else "-" for c in Path(root_str).name)[:40]
        return self.cache / f"{stem or 'root'}-{digest}"

    def search_index(self, roots: list[str]) -> Path:
        """The search index of a set of portfolios (one index per set, so switching sets never
        churns)."""
        return self.cache / "search" / _set_key(roots)

    def derived(self, roots: list[str]) -> Path:
        """What salience took from the texts of a set of portfolios (per set, like the index: a
        mention links memories of the whole set)."""
        return self.cache / "derived" / _set_key(roots)

    def ensure_private(self, folder: Path) -> Path:
        """Create a folder of ours with mode 0700 (a Whoosh index unpickles on open: keep it
        private)."""
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        try:
            os.chmod(folder, 0o700)
        except OSError:
            pass
        return folder


def _set_key(roots: list[str]) -> str:
    return hashlib.sha256("\0".join(sorted(roots)).encode("utf-8", "surrogateescape")).hexdigest()[
        :16
    ]


def bundled(name: str) -> Path:
    """A data folder shipped with the project: the checkout's copy first, then the wheel's copy."""
    checkout = Path(__file__).resolve().parents[2] / name
    if checkout.is_dir():
        return checkout
    packaged = Path(str(resources.files("app"))) / "_data" / name
    return packaged


def sample_portfolio() -> Path:
    return bundled("sample-portfolio")


def themes_dir() -> Path:
    return bundled("themes")
