"""A memory read through a symbolic link is a memory of its own: a change never goes through it.

The walk follows a link that stays inside the portfolio root, so `short_term/policy_hot.md ->
../long_term/policy.md` lists two memories, the link and its target. A quarantine of the link's
memory takes the link itself into the vault (with the text it showed) and a restore puts the link
back; the target is never opened for writing, moved or removed. Every other change of a file reached
through a link (an edit, a cut section, a trust line, a move between tiers) is refused with the
reason: it would change the target, which the person did not choose, and which other links or the
target's own memory show too.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, fields
from pathlib import Path

from app.core.change.errors import Unsupported
from app.core.parsing.safefs import display_name
from app.core.storage.base import Base
from app.core.storage.links import link_text


@dataclass(frozen=True)
class Linked(Base):
    """The base of a file reached through a symbolic link: `path` is the target that was read,
    `link` the link's own path and `points_to` what it names (os.readlink)."""

    link: Path = Path()
    points_to: str = ""


def linked(path: str | os.PathLike[str], base: Base) -> Base:
    """`base` (captured at `path`) as a Linked base when `path` is a symbolic link."""
    points_to = link_text(path)
    if points_to is None:
        return base
    kept = {f.name: getattr(base, f.name) for f in fields(Base)}
    return Linked(**kept, link=Path(path), points_to=points_to)


def target_shown(base: Linked, root: str | os.PathLike[str]) -> str:
    """Where the link leads, relative to the portfolio root when inside it, printable."""
    real_root = os.path.realpath(root)
    target = os.fspath(base.path)
    inside = target.startswith(real_root.rstrip(os.sep) + os.sep)
    return display_name(os.path.relpath(target, real_root) if inside else target)


def refuse_through_link(
    base: Base | None,
    rel: str,
    root: str | os.PathLike[str],
    doing: str,
) -> None:
    """Raise Unsupported when `base` was reached through a symbolic link: `doing` would change the
    file it leads to."""
    if not isinstance(base, Linked):
        return
    target = target_shown(base, root)
    raise Unsupported(
        f"{doing}: {rel} is a symbolic link to {target}, and the workbench never changes a file "
        f"through a link (it would change {target}, which is read as a memory of its own); nothing "
        f"was changed. A quarantine of the whole memory takes the link itself; to change the text, "
        f"act on {target}"
    )
