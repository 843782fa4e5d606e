"""`memwb forget`: quarantine a selection (ids, a filter or a search query) as one change.

The dry run prints every file and row the change would touch and writes nothing; the change is
recorded as one entry in the ledger, and `memwb undo` restores the whole selection.
"""

from __future__ import annotations

import argparse

from app.cli.commands import _load, _outcome_json, _print_vault
from app.cli.common import FAILED, USAGE, emit_json, fail
from app.core.change.errors import ChangeError
from app.core.curate.selection import FilterError
from app.core.inert import inert, one_line
from app.core.review.ledger import Decision
from app.core.search import QuerySyntaxError
from app.core.workbench import UnknownMemory, Workbench


def _selected(args: argparse.Namespace, workbench: Workbench) -> list[str]:
    if args.query is not None:
        return workbench.select(query=args.query)
    if args.filter is not None:
        return workbench.select(filter=args.filter)
    return list(args.ids)


def cmd_forget(args: argparse.Namespace) -> int:
    given = [bool(args.ids), args.query is not None, args.filter is not None]
    if sum(given) != 1:
        return fail(
            "forget: give IDs, --filter F or --query Q (one of them)",
            USAGE,
            as_json=args.json,
        )
    workbench, _, _ = _load(args, index=args.query is not None)
    workbench.refresh_after_writes(False)
    try:
        ids = _selected(args, workbench)
        if not ids:
            return fail(
                "forget: the selection holds no memory; nothing was changed",
                FAILED,
                as_json=args.json,
            )
        outcome = workbench.forget(ids, reason=args.reason, dry_run=args.dry_run)
    except (FilterError, QuerySyntaxError) as error:
        return fail(f"forget: {error}", USAGE, as_json=args.json)
    except UnknownMemory as error:
        why = f"no memory with id {error.args[0]!r} in the portfolios read; nothing was changed"
        return fail(f"forget: {why}", FAILED, as_json=args.json)
    except ChangeError as error:
        return fail(f"forget: {error}", FAILED, as_json=args.json)
    finally:
        workbench.close()
    if args.json:
        emit_json(_outcome_json(workbench, outcome))
    elif isinstance(outcome, Decision):
        n = int(outcome.effect.get("count", 0))
        what = f"{n} {'memory' if n == 1 else 'memories'} quarantined as one change"
        print(f"forget: {what}, recorded in the ledger as {outcome.id}")
        for left in outcome.effect.get("left") or ():
            print(f"  left out: {one_line(str(left), 200)}")
        _print_vault(workbench, outcome)
        print(f"  to restore them all: memwb undo {outcome.id[:12]}")
    else:
        print("Dry run, nothing written. " + inert(str(outcome)))
    return 0
