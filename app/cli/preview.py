"""`memwb preview [--path P] [--json]`: the exact text each memory system injects at its agent's
next start or turn, with what its caps cut or drop marked in place (Workbench.preview)."""

from __future__ import annotations

import argparse

from app.cli.common import emit_json, say
from app.cli.opening import locations_from, resolve_paths
from app.cli.progress import ProgressLine
from app.core.model import Problem
from app.core.preview.models import Preview, PreviewBlock, PreviewPiece
from app.core.workbench import Workbench


def _open(args: argparse.Namespace) -> Workbench:
    """The workbench opened on the command's paths, the settings' problems said on stderr."""
    locations = locations_from(args)
    problems: list[Problem] = []
    paths, note = resolve_paths(args, locations, problems)
    for message in ([note] if note else []) + [str(p) for p in problems]:
        say(message)
    workbench = Workbench(locations)
    with ProgressLine() as line:
        workbench.open(paths, index=False, emit=line.phase)
    return workbench


def cmd_preview(args: argparse.Namespace) -> int:
    workbench = _open(args)
    previews = workbench.preview()
    if args.json:
        emit_json({"previews": [p.model_dump(mode="json") for p in previews]})
        return 0 if workbench.portfolios else 1
    for preview in previews:
        print(_heading(preview))
        for block in preview.blocks:
            print(_block(block))
    if not previews:
        print("no portfolio injects anything the workbench can preview")
    return 0 if workbench.portfolios else 1


def _heading(preview: Preview) -> str:
    lines = [f"\n=== {preview.system} {preview.portfolio} ({preview.scope})", f"    {preview.how}"]
    lines += [f"    note: {n}" for n in preview.notes]
    if preview.differs:
        lines.append(f"    differs: {preview.differs}")
    return "\n".join(lines)


def _block(block: PreviewBlock) -> str:
    cut = sum(len(p.text) for p in block.pieces if p.state in ("cut", "dropped"))
    head = f"--- {block.name}: {block.chars:,} characters injected"
    head += f", {cut:,} cut or dropped" if cut else ""
    return head + "\n" + "".join(_piece(p) for p in block.pieces)


def _piece(piece: PreviewPiece) -> str:
    """Shown text as it is; a cut or dropped part as one marked line in its place."""
    if piece.state in ("injected", "added"):
        return piece.text
    what = "cut" if piece.state == "cut" else "dropped"
    note = f": {piece.note}" if piece.note else ""
    first = piece.text.strip().splitlines()[0][:60] if piece.text.strip() else ""
    return f"\n[[{what} {len(piece.text):,} characters{note} | {first}...]]\n"
