"""MassGen: a memory is a file, and MassGen keeps no trust (FORMAT.md beside this file).

The orchestrator injects every `short_term/*.md` and lists every `long_term/*.md`, whatever the
file says, so the only quarantine that works is taking the file out of the agent's tree: it is moved
into the workbench vault, and a restore moves it back byte for byte. Approve and flag have nothing
to write in MassGen and live in the ledger only.

MassGen also copies a workspace's memory folder into its session archive before clearing the
workspace (and into the winner's workspace after a vote), and its prompt builder injects those
copies' raw text, keyed by file name. Taking only the one file out would leave its text in front of
the agent, so a quarantine covers every copy: each other memory file of the portfolio with the same
file name whose text holds this memory's text (or whose bytes are the same) goes into the vault with
it, under the same decision, and a restore puts all of them back. An earlier version whose whole
text is part of this memory's (the file grew after MassGen archived it) goes too: once the newer
copies are gone the archive loader, which keeps the newest copy per file name, injects it. Copies
that share no whole text with it (an older version rewritten since) are memories of their own and
are left alone.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path, PurePosixPath
from typing import Any

from app.core.change.edits import ledger_only
from app.core.change.errors import ChangeError, translated
from app.core.change.freshness import fresh_memory, read_base
from app.core.change.memo import in_batch, remembered
from app.core.change.plan import Prepared
from app.core.change.target import Target
from app.core.change.vaulting import restore_file_item, restore_from_vault, vault_file
from app.core.model import Memory
from app.core.parsing import safefs
from app.core.parsing.text import TextProblem, decode
from app.core.reading.base import ParseContext
from app.core.storage.base import Base
from app.core.systems.massgen.reader import MassGenAdapter, body_of

NO_TRUST = "MassGen keeps no trust of its own; the decision lives in the workbench ledger only"
WHY = "MassGen loads every file of its memory folders, so the file leaves them"
COPY_WHY = "a copy MassGen injects with the quarantined memory's text"


def prepare(t: Target) -> Prepared:
    if t.action == "restore":
        return restore(t)
    if t.action != "quarantine":
        return ledger_only(t, NO_TRUST)
    base = read_base(t)
    fresh_memory(t, base.data)
    main = vault_file(t, base, WHY)
    # Numbered: archive locators can be longer than the part of a locator an item name keeps.
    copies = [
        vault_file(
            ct, cbase, COPY_WHY, name=f"copy-{n}-{t.vault.item_name(ct.memory, t.decision_id)}"
        )
        for n, (ct, cbase) in enumerate(_copies(t, base), 1)
    ]
    if not copies:
        return main
    return _together(t, main, copies)


def _copies(t: Target, base: Base) -> list[tuple[Target, Base]]:
    """Every other memory file of the portfolio that MassGen would
    inject this memory's text from."""
    name = PurePosixPath(t.rel).name
    try:
        body = body_of(decode(base.data, nul_ok=True).text)
    except TextProblem:
        body = ""
    ctx = ParseContext(
        system=t.memory.system,
        portfolio=t.memory.portfolio,
        root=t.portfolio.root,
        today=t.now.date(),
        settings=dict(t.portfolio.settings),
    )
    out: list[tuple[Target, Base]] = []
    for ref in _named(Path(t.root), name):
        if ref.rel == t.rel:
            continue
        try:
            data = safefs.read_file(ref.path)
            text = decode(data, nul_ok=True).text
        except (safefs.UnsafeFile, TextProblem, OSError):
            continue
        if data != base.data and not _shares_text(body, body_of(text)):
            continue
        memories: list[Memory] = MassGenAdapter.parse(ctx, ref.rel, data).memories
        if not memories:
            continue
        ct = replace(t, memory=memories[0])
        out.append((ct, read_base(ct)))
    return out


def _named(root: Path, name: str) -> list[safefs.FileRef]:
    """The portfolio's memory files named `name`. One change walks only the files of that name; a
    batch lists the portfolio once for all its parts (a file an earlier part took out no longer
    reads, so the caller passes over it)."""
    if not in_batch():
        return list(MassGenAdapter.files_named(root, name, []))
    return remembered(("massgen-files", str(root)), lambda: _files_by_name(root)).get(name, [])


def _files_by_name(root: Path) -> dict[str, list[safefs.FileRef]]:
    """Every memory file of the portfolio, by file name as shown (`files_named` for each)."""
    by_name: dict[str, list[safefs.FileRef]] = {}
    for ref in MassGenAdapter.files(root, []):
        by_name.setdefault(safefs.display_name(ref.rel.rpartition("/")[2]), []).append(ref)
    return by_name


def _shares_text(body: str, other: str) -> bool:
    """The copy holds this memory's text, or is an earlier version of it: its whole text is part of
    this one (an agent that appended to the file after MassGen archived it)."""
    return bool(body and other) and (body in other or other in body)


def _together(t: Target, main: Prepared, copies: list[Prepared]) -> Prepared:
    """One quarantine of several files; when one cannot be taken, the ones already taken go back."""
    effect = main.effect | {"copies": [c.effect for c in copies]}
    changes = main.changes + [change for c in copies for change in c.changes]
    description = (
        f"{main.description}, with {len(copies)} "
        f"cop{'y' if len(copies) == 1 else 'ies'} MassGen injects the same text from"
    )

    def apply() -> dict[str, Any]:
        done: list[tuple[Prepared, dict[str, Any]]] = []
        try:
            for part in [*copies, main]:
                assert part.apply is not None
                done.append((part, part.apply()))
        except BaseException:
            _put_back(t, [result for _, result in done])
            raise
        main_result = done[-1][1]
        return main_result | {"copies": [result for _, result in done[:-1]]}

    writes = tuple(w for part in [*copies, main] for w in part.writes)
    return Prepared(description, effect, changes, apply, writes=writes)


def _put_back(t: Target, results: list[dict[str, Any]]) -> None:
    for result in reversed(results):
        with translated(f"put back {result.get('file')}"):
            back = restore_file_item(t, str(result["vault"]))
            if back.apply is not None:
                back.apply()
            t.vault.discard(str(result["vault"]))


def restore(t: Target) -> Prepared:
    """Put back the file and every copy the quarantine took with it."""
    main = restore_from_vault(t)
    copies = [restore_file_item(t, str(c["vault"])) for c in t.undo_effect.get("copies", ())]
    if not copies:
        return main
    for part in copies:
        if part.apply is None:
            raise ChangeError(
                f"cannot restore {t.memory.id}: internal: a copy "
                "has nothing to restore; nothing was written"
            )
    effect = main.effect | {"copies": [c.effect for c in copies]}

    def apply() -> dict[str, Any]:
        assert main.apply is not None
        result = main.apply()
        return result | {"copies": [c.apply() for c in copies if c.apply is not None]}

    return Prepared(
        f"{main.description}, and {len(copies)} copies",
        effect,
        main.changes + [x for c in copies for x in c.changes],
        apply,
        writes=tuple(w for part in [main, *copies] for w in part.writes),
    )
