"""`memwb`: the command line over the Workbench facade.

`memwb [PATH...]` opens the workbench; headless subcommands print a readable table, or one JSON
document with --json. Exit codes: 0 success, 1 failure, 2 usage error. Every string that came from
a memory is made inert before it is printed, and JSON is ASCII-escaped, so nothing printed can drive
the terminal.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from app import __version__
from app.core.budget import WhatIf
from app.core.change.errors import ChangeError
from app.core.change.plan import Plan
from app.core.config import Settings, load_settings
from app.core.inert import inert, one_line
from app.core.load.pipeline import LoadResult
from app.core.locations import Locations
from app.core.model import Memory, Portfolio, Problem
from app.core.review.finding import Finding
from app.core.search import QuerySyntaxError
from app.core.workbench import UnknownMemory, Workbench

SUBCOMMANDS = (
    "scan",
    "startup",
    "discover",
    "search",
    "review",
    "approve",
    "flag",
    "quarantine",
    "restore",
    "history",
    "suggest",
    "budget",
    "promote",
    "demote",
    "pin",
    "unpin",
    "set-priority",
    "merge",
    "undo",
)
CHANGES = ("promote", "demote", "pin", "unpin", "set-priority", "merge")
DECISIONS = ("approve", "flag", "quarantine", "restore")


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--cache-dir", type=Path, help="the workbench's cache folder (default $XDG_CACHE_HOME/memwb)")
    parser.add_argument("--data-dir", type=Path, help="the workbench's data folder (default $XDG_DATA_HOME/memwb)")
    parser.add_argument("--config-dir", type=Path, help="the workbench's config folder (default $XDG_CONFIG_HOME/memwb)")


def _paths(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "paths",
        nargs="*",
        type=Path,
        metavar="PATH",
        help="a portfolio root, a database file, or a folder holding portfolios (default: configured portfolios, else the bundled sample)",
    )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="memwb", description="Memory Workbench: see, search, review and curate AI agents' long-term memory.")
    parser.add_argument("--version", action="version", version=f"memwb {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    scan = sub.add_parser("scan", help="read portfolios and list their memories and problems")
    _paths(scan)
    scan.add_argument("--json", action="store_true", help="print one JSON document")
    _common(scan)

    startup = sub.add_parser("startup", help="run the startup pipeline and print its timeline")
    _paths(startup)
    startup.add_argument("--json", action="store_true", help="print one JSON document")
    startup.add_argument("--no-cache", action="store_true", help="ignore the parse cache (a cold start)")
    _common(startup)

    search = sub.add_parser(
        "search",
        help="search every memory",
        description=(
            "Search memories. QUERY: words (name, description, body, tags); field:value filters (system, tier, "
            'trust, domain, tag, type, portfolio); "phrases"; prefix*; fuzzy~ or fuzzy~2; AND, OR, NOT, '
            "(grouping); ranges on priority, tokens and salience: priority:[1 TO 10], tokens:>500."
        ),
    )
    search.add_argument("query", metavar="QUERY")
    _paths(search)
    search.add_argument("--limit", type=int, default=20, help="hits to show (default 20)")
    search.add_argument("--json", action="store_true", help="print one JSON document")
    _common(search)

    review = sub.add_parser("review", help="the review queue: findings and trust, most severe first")
    _paths(review)
    review.add_argument("--json", action="store_true", help="print one JSON document")
    _common(review)

    for action, what in (
        ("approve", "mark a memory reviewed and trusted (DollhouseMCP: trustLevel validated; memory-mcp: trust +0.15)"),
        ("flag", "flag a memory for attention (DollhouseMCP: trustLevel flagged)"),
        ("quarantine", "take a memory out of what its agent loads, in that system's own way"),
        ("restore", "put back exactly what a quarantine took"),
    ):
        decision = sub.add_parser(action, help=what, description=what)
        decision.add_argument("id", metavar="ID", help="the memory id, as `memwb scan` prints it")
        _paths(decision)
        decision.add_argument("--reason", required=True, help="why (kept in the ledger)")
        decision.add_argument("--entry", help="one entry of a DollhouseMCP memory")
        decision.add_argument("--dry-run", action="store_true", help="say what would change, write nothing")
        decision.add_argument("--json", action="store_true", help="print one JSON document")
        _common(decision)

    suggest_ = sub.add_parser("suggest", help="promote, demote, archive, merge, split and stale suggestions (never applied)")
    _paths(suggest_)
    suggest_.add_argument("--json", action="store_true", help="print one JSON document")
    _common(suggest_)

    budget = sub.add_parser(
        "budget",
        help="what each agent loads at startup, at what cost, and where its budget cuts",
        description="Show budget plans; `memwb budget set PORTFOLIO --max-tokens N` writes DollhouseMCP's autoLoad.maxTokenBudget.",
    )
    budget.add_argument("paths", nargs="*", metavar="PATH", help="portfolios to read, or `set PORTFOLIO` to change a budget")
    budget.add_argument("--what-if-max-tokens", type=int, metavar="N", help="show DollhouseMCP's plan with this budget (nothing is written)")
    budget.add_argument("--max-tokens", type=int, metavar="N", help="with `set`: the new autoLoad.maxTokenBudget")
    budget.add_argument(
        "--path", dest="read_paths", action="append", type=Path, default=[], metavar="PATH", help="with `set`: where the portfolio is (repeatable)"
    )
    budget.add_argument("--dry-run", action="store_true", help="with `set`: say what would change, write nothing")
    budget.add_argument("--json", action="store_true", help="print one JSON document")
    _common(budget)

    for action, what in (
        ("promote", "move a memory to its system's hot tier (DollhouseMCP autoLoad, MassGen short_term/, OpenClaw MEMORY.md, memory-mcp is_hot)"),
        ("demote", "move a memory out of the hot tier (and archive an old OpenClaw daily log)"),
        ("pin", "keep a memory hot (memory-mcp is_pinned; elsewhere kept in the workbench ledger)"),
        ("unpin", "undo a pin"),
        ("set-priority", "set a memory's priority (DollhouseMCP 1-99; OpenClaw (Pn) markers)"),
        ("merge", "keep the first memory and move the others into the vault"),
    ):
        change = sub.add_parser(action, help=what, description=what)
        change.add_argument("ids", nargs="+" if action == "merge" else 1, metavar="ID")
        if action == "set-priority":
            change.add_argument("priority", type=int, metavar="N")
        change.add_argument(
            "--path",
            dest="paths",
            action="append",
            type=Path,
            default=[],
            metavar="PATH",
            help="a portfolio to read (repeatable; default: configured, else the sample)",
        )
        change.add_argument("--reason", default="", help="why (kept in the ledger)")
        change.add_argument("--dry-run", action="store_true", help="say what would change, write nothing")
        change.add_argument("--yes", action="store_true", help="accepted for scripts; changes are only made when asked for anyway")
        change.add_argument("--json", action="store_true", help="print one JSON document")
        _common(change)

    undo = sub.add_parser("undo", help="reverse the latest promote/demote/pin/priority/merge/budget change, byte for byte")
    undo.add_argument("--reason", default="", help="why (kept in the ledger)")
    undo.add_argument("--dry-run", action="store_true", help="say what would change, write nothing")
    undo.add_argument("--json", action="store_true", help="print one JSON document")
    _common(undo)

    history = sub.add_parser("history", help="the ledger's decisions about one memory")
    history.add_argument("id", metavar="ID")
    history.add_argument(
        "paths",
        nargs="*",
        type=Path,
        metavar="PATH",
        help="portfolios to read first, so that records are matched to them by root (the id as they are open under); without, the ledger's ids as written",
    )
    history.add_argument("--json", action="store_true", help="print one JSON document")
    _common(history)

    discover = sub.add_parser("discover", help="list the standard memory locations found on this machine")
    discover.add_argument("--json", action="store_true", help="print one JSON document")
    _common(discover)
    return parser


def build_open_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="memwb",
        description="Open the workbench on PATHs. Subcommands: " + ", ".join(SUBCOMMANDS) + " (memwb COMMAND --help).",
    )
    parser.add_argument("--version", action="version", version=f"memwb {__version__}")
    _paths(parser)
    parser.add_argument("--theme", help="a theme name (bundled: workbench-dark, workbench-light, workbench-high-contrast)")
    _common(parser)
    return parser


def _locations(args: argparse.Namespace) -> Locations:
    base = Locations.from_env()
    return Locations(
        cache=args.cache_dir or base.cache,
        data=args.data_dir or base.data,
        config=args.config_dir or base.config,
    )


def _resolve_paths(args: argparse.Namespace, locations: Locations, problems: list[Problem]) -> tuple[list[Path], str]:
    if args.paths:
        return list(args.paths), ""
    settings: Settings = load_settings(locations.config, problems)
    if settings.portfolios:
        return [Path(p).expanduser() for p in settings.portfolios], ""
    sample = Workbench.default_paths()
    return sample, f"no PATH given and no portfolio configured: opening the bundled sample portfolio ({sample[0]})"


def _emit_json(document: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(document, indent=2, ensure_ascii=True) + "\n")


def _say(message: str) -> None:
    print(f"memwb: {inert(message, keep_newlines=False)}", file=sys.stderr)


# -- scan ---------------------------------------------------------------------------------------


def _problem_json(problem: Problem) -> dict[str, Any]:
    return {"path": problem.path, "line": problem.line, "message": problem.message, "kept": problem.kept}


def _portfolio_json(portfolio: Portfolio) -> dict[str, Any]:
    return {
        "name": portfolio.name,
        "system": portfolio.system,
        "root": portfolio.root,
        "memories": portfolio.memories,
        "problems": [_problem_json(p) for p in portfolio.problems],
    }


def _memory_json(memory: Memory, salience: float | None = None) -> dict[str, Any]:
    return {
        "salience": salience,
        "id": memory.id,
        "system": memory.system,
        "portfolio": memory.portfolio,
        "tier": memory.tier.value,
        "domain": memory.domain,
        "name": memory.name,
        "trust": memory.trust.value,
        "trust_claimed": memory.trust_claimed,
        "priority": memory.priority,
        "tokens": memory.tokens,
        "entries": len(memory.entries),
        "source": str(memory.source),
        "updated": memory.updated,
        "kind": memory.kind,
        "tags": list(memory.tags),
        "pinned": memory.pinned,
        "sha256": memory.sha256,
    }


def _table(rows: Sequence[Sequence[str]], header: Sequence[str]) -> str:
    widths = [max(len(str(row[i])) for row in [header, *rows]) for i in range(len(header))]
    lines = ["  ".join(str(cell).ljust(widths[i]) for i, cell in enumerate(header)).rstrip()]
    lines.append("  ".join("-" * w for w in widths))
    lines += ["  ".join(str(cell).ljust(widths[i]) for i, cell in enumerate(row)).rstrip() for row in rows]
    return "\n".join(lines)


def _scan_text(workbench: Workbench, problems: list[Problem]) -> str:
    out = []
    rows = [(p.system, inert(p.name, keep_newlines=False), str(p.memories), str(len(p.problems)), one_line(p.root, 60)) for p in workbench.portfolios]
    out.append(_table(rows, ("system", "portfolio", "memories", "problems", "root")))
    tiers = ("hot", "cold", "archive", "quarantine")
    trusts = ("trusted", "validated", "untrusted", "flagged", "quarantined")
    by_system: dict[str, list[Memory]] = {}
    for memory in workbench.memories:
        by_system.setdefault(memory.system, []).append(memory)
    count_rows = []
    for system, memories in by_system.items():
        count_rows.append(
            (
                system,
                str(len(memories)),
                *(str(sum(m.tier.value == t for m in memories)) for t in tiers),
                *(str(sum(m.trust.value == t for m in memories)) for t in trusts),
            )
        )
    out.append("")
    out.append(_table(count_rows, ("system", "total", *tiers, *trusts)))
    all_problems = [*problems, *workbench.problems()]
    out.append("")
    out.append(f"{len(workbench.memories)} memories in {len(workbench.portfolios)} portfolios; {len(all_problems)} problems")
    for problem in all_problems:
        out.append("  " + one_line(str(problem), 200))
    return "\n".join(out)


def _load(args: argparse.Namespace, *, index: bool = False, use_cache: bool = True) -> tuple[Workbench, LoadResult, list[Problem]]:
    """The workbench opened on the command's paths; problems of the settings file are said and returned."""
    locations = _locations(args)
    problems: list[Problem] = []
    paths, note = _resolve_paths(args, locations, problems)
    if note:
        _say(note)
    for problem in problems:
        _say(str(problem))
    workbench = Workbench(locations)
    return workbench, workbench.open(paths, index=index, use_cache=use_cache), problems


def _open(args: argparse.Namespace) -> Workbench:
    return _load(args)[0]


def cmd_scan(args: argparse.Namespace) -> int:
    workbench, result, problems = _load(args)
    if args.json:
        saliences = workbench.saliences()
        _emit_json(
            {
                "portfolios": [_portfolio_json(p) for p in workbench.portfolios],
                "memories": [_memory_json(m, saliences[m.id].score if m.id in saliences else None) for m in workbench.memories],
                "problems": [_problem_json(p) for p in [*problems, *result.problems]],
            }
        )
        return 0 if result.portfolios else 1
    if not result.portfolios:
        for problem in [*problems, *result.problems]:
            _say(str(problem))
        _say("no portfolio could be read; nothing was changed")
        return 1
    print(_scan_text(workbench, problems))
    return 0


# -- startup ------------------------------------------------------------------------------------


def cmd_startup(args: argparse.Namespace) -> int:
    _, result, _ = _load(args, index=True, use_cache=not args.no_cache)
    timeline = result.timeline
    if args.json:
        document = timeline.model_dump(mode="json")
        document["memories"] = len(result.memories)
        document["reparsed"] = result.reparsed
        _emit_json(document)
        return 0
    total = max(timeline.total_ms, 0.001)
    width = 40
    rows = []
    for phase in timeline.phases:
        left = int(phase.start_ms / total * width)
        bar = max(1, int(phase.duration_ms / total * width)) if phase.duration_ms > 0 else 0
        rows.append(
            (phase.name, phase.path, f"{phase.start_ms:.1f}", f"{phase.duration_ms:.1f}", str(phase.items), " " * left + "#" * bar, one_line(phase.message, 60))
        )
    print(_table(rows, ("phase", "path", "start ms", "ms", "items", "timeline", "note")))
    print(
        f"\ncritical path {timeline.critical_path_ms:.1f} ms, total {timeline.total_ms:.1f} ms; {len(result.memories)} memories, {result.reparsed} files parsed"
    )
    return 0


# -- search -------------------------------------------------------------------------------------


def cmd_search(args: argparse.Namespace) -> int:
    if args.limit < 1:
        _say("--limit must be at least 1")
        return 2
    workbench, _, _ = _load(args, index=True)
    try:
        result = workbench.search(args.query, limit=args.limit)
    except QuerySyntaxError as error:
        if args.json:
            _emit_json({"error": error.message, "position": error.position})
        else:
            _say(f"query error at character {error.position + 1}: {error.message}")
            _say(f"  {inert(args.query, keep_newlines=False)}")
            _say("  " + " " * error.position + "^")
        return 2
    finally:
        workbench.close()
    if args.json:
        _emit_json(
            {
                "query": result.query,
                "total": result.total,
                "took_ms": round(result.took_ms, 3),
                "suggestion": result.suggestion,
                "fallback": result.fallback,
                "notice": result.notice,
                "hits": [{"id": h.id, "score": round(h.score, 4), "highlight": h.highlight} for h in result.hits],
            }
        )
        return 0
    print(f"{result.total} hits in {result.took_ms:.1f} ms" + (f"; did you mean: {inert(result.suggestion, keep_newlines=False)}" if result.suggestion else ""))
    if result.notice:
        print(inert(result.notice, keep_newlines=False))
    for hit in result.hits:
        memory = workbench.memory(hit.id)
        print(f"\n{hit.score:7.2f}  {one_line(memory.name, 60)}  [{memory.system} {memory.tier.value}]  {one_line(hit.id, 80)}")
        print(f"         {one_line(hit.highlight, 150)}")
    return 0


# -- review -------------------------------------------------------------------------------------


def _finding_json(finding: Finding) -> dict[str, Any]:
    return {
        "category": finding.category.value,
        "severity": finding.severity.value,
        "entry": finding.entry,
        "start": finding.start,
        "end": finding.end,
        "excerpt": finding.excerpt,
        "message": finding.message,
        "decoded": finding.decoded,
    }


def cmd_review(args: argparse.Namespace) -> int:
    workbench = _open(args)
    queue = workbench.review_queue()
    if args.json:
        _emit_json(
            {
                "queue": [
                    {
                        "id": item.memory.id,
                        "name": item.memory.name,
                        "trust": item.memory.trust.value,
                        "trust_claimed": item.memory.trust_claimed,
                        "effective_trust": item.effective.level.value,
                        "effective_source": item.effective.source,
                        "stale": item.effective.stale,
                        "findings": [_finding_json(f) for f in item.findings],
                    }
                    for item in queue
                ]
            }
        )
        return 0
    print(f"{len(queue)} memories to review")
    for item in queue:
        claim = f"{item.memory.trust.value}{'' if item.memory.trust_claimed else ' (no claim)'}"
        stale = ", changed since the decision" if item.effective.stale else ""
        print(f"\n{one_line(item.memory.id, 90)}  {one_line(item.memory.name, 50)}")
        print(f"  trust: {claim}; effective: {item.effective.level.value} ({item.effective.source}{stale})")
        for finding in item.findings:
            where = f"entry {one_line(finding.entry, 40)} " if finding.entry else ""
            print(f"  {finding.severity.value:8} {finding.category.value:20} {where}[{finding.start}:{finding.end}] {one_line(finding.excerpt, 80)}")
    return 0


def cmd_decide(args: argparse.Namespace) -> int:
    workbench = _open(args)
    workbench.refresh_after_writes(False)
    decide = {"approve": workbench.approve, "flag": workbench.flag, "quarantine": workbench.quarantine, "restore": workbench.restore}[args.command]
    try:
        outcome = decide(args.id, args.reason, entry=args.entry, dry_run=args.dry_run)
    except UnknownMemory:
        _say(f"no memory with id {args.id!r} in the portfolios read; nothing was changed")
        return 1
    except ChangeError as error:
        _say(f"{args.command} {args.id}: {error}")
        return 1
    if args.json:
        _emit_json(outcome.model_dump(mode="json"))
        return 0
    if isinstance(outcome, Plan):
        print("Dry run, nothing written. " + inert(str(outcome)))
    else:
        print(f"{args.command}: {one_line(args.id, 90)}, recorded in the ledger as {outcome.id}")
    return 0


def cmd_history(args: argparse.Namespace) -> int:
    workbench = _load(args, index=False)[0] if args.paths else Workbench(_locations(args))
    decisions = workbench.history(args.id)
    if args.json:
        _emit_json({"id": args.id, "decisions": [d.model_dump(mode="json") for d in decisions]})
        return 0
    if not decisions:
        print(f"No decision recorded for {one_line(args.id, 90)}.")
    for decision in decisions:
        entry = f" entry {one_line(decision.entry, 40)}" if decision.entry else ""
        print(f"{decision.time}  {decision.action:10} by {one_line(decision.user, 20)}{entry}: {one_line(decision.reason, 100)}")
    return 0


# -- curation and budgets -----------------------------------------------------------------------


def cmd_suggest(args: argparse.Namespace) -> int:
    workbench = _open(args)
    suggestions = workbench.suggestions()
    if args.json:
        _emit_json({"suggestions": [{"kind": s.kind, "ids": list(s.ids), "reason": s.reason} for s in suggestions]})
        return 0
    counts = Counter(s.kind for s in suggestions)
    print(", ".join(f"{n} {kind}" for kind, n in counts.most_common()) or "No suggestions.")
    for suggestion in suggestions:
        print(f"\n{suggestion.kind:8} {one_line(', '.join(suggestion.ids), 110)}")
        print(f"         {one_line(suggestion.reason, 200)}")
    return 0


def _report_change(args: argparse.Namespace, outcome: Any) -> int:
    if args.json:
        _emit_json(outcome.model_dump(mode="json"))
    elif isinstance(outcome, Plan):
        print("Dry run, nothing written. " + inert(str(outcome)))
    else:
        print(f"{args.command}: done, recorded in the ledger as {outcome.id}")
    return 0


def cmd_change(args: argparse.Namespace) -> int:
    workbench = _open(args)
    workbench.refresh_after_writes(False)
    ids, common = list(args.ids), {"reason": args.reason, "dry_run": args.dry_run}
    try:
        if args.command == "merge":
            outcome = workbench.merge(ids[0], ids[1:], **common)
        elif args.command == "set-priority":
            outcome = workbench.set_priority(ids[0], args.priority, **common)
        else:
            change = {"promote": workbench.promote, "demote": workbench.demote, "pin": workbench.pin, "unpin": workbench.unpin}[args.command]
            outcome = change(ids[0], **common)
    except UnknownMemory as error:
        _say(f"no memory with id {error.args[0]!r} in the portfolios read; nothing was changed")
        return 1
    except ChangeError as error:
        _say(f"{args.command}: {error}")
        return 1
    return _report_change(args, outcome)


def cmd_undo(args: argparse.Namespace) -> int:
    workbench = Workbench(_locations(args))
    try:
        outcome = workbench.undo(reason=args.reason, dry_run=args.dry_run)
    except ChangeError as error:
        _say(f"undo: {error}")
        return 1
    return _report_change(args, outcome)


def cmd_budget_set(args: argparse.Namespace) -> int:
    if len(args.paths) != 2 or args.max_tokens is None:
        _say("usage: memwb budget set PORTFOLIO --max-tokens N [--path PATH] [--dry-run]")
        return 2
    args.paths = list(args.read_paths)
    workbench = _open(args)
    workbench.refresh_after_writes(False)
    try:
        outcome = workbench.set_budget(str(args.paths_set_portfolio), args.max_tokens, reason="budget set", dry_run=args.dry_run)
    except (ChangeError, KeyError) as error:
        _say(f"budget set: {error}")
        return 1
    return _report_change(args, outcome)


def cmd_budget(args: argparse.Namespace) -> int:
    if args.paths and str(args.paths[0]) == "set":
        args.paths_set_portfolio = args.paths[1] if len(args.paths) > 1 else ""
        return cmd_budget_set(args)
    args.paths = [Path(p) for p in args.paths]
    workbench = _open(args)
    what_if = WhatIf(max_tokens=args.what_if_max_tokens) if args.what_if_max_tokens is not None else None
    plans = workbench.budgets(what_if)
    if args.json:
        _emit_json(
            {
                "budgets": [
                    {
                        "portfolio": plan.portfolio,
                        "system": plan.system,
                        "scope": plan.scope,
                        "unit": plan.unit,
                        "limit": plan.limit,
                        "used": plan.used,
                        "loaded": plan.loaded,
                        "over": plan.over,
                        "notes": list(plan.notes),
                        "items": [{"id": i.id, "cost": i.cost, "order": i.order, "fits": i.fits, "truncated": i.truncated, "note": i.note} for i in plan.items],
                    }
                    for plan in plans
                ]
            }
        )
        return 0
    for plan in plans:
        limit = "no limit" if plan.limit is None else f"{plan.limit:,}"
        flag = "  OVER" if plan.over else ""
        print(f"\n{plan.system} {one_line(plan.portfolio, 30)} ({one_line(plan.scope, 40)}): {plan.used:,} / {limit} {plan.unit}{flag}")
        for note in plan.notes:
            print(f"  {one_line(note, 150)}")
        for item in plan.items:
            mark = "  " if item.fits else "x "
            extra = f"  truncated by {item.cut:,}" if item.truncated else ""
            print(f"  {mark}{item.order:3}. {item.cost:7,}  {one_line(item.id, 80)}{extra}")
    return 0


# -- discover -----------------------------------------------------------------------------------


def cmd_discover(args: argparse.Namespace) -> int:
    refs = Workbench.discover_standard()
    if args.json:
        _emit_json({"portfolios": [ref.model_dump(mode="json") for ref in refs]})
        return 0
    if not refs:
        print("No memory found in the standard locations (~/.dollhouse, ~/.openclaw/workspace, ~/.engram/engram.db, ~/.memory-mcp/memory.db).")
        return 0
    print(_table([(r.system, inert(r.name, keep_newlines=False), one_line(r.root, 80)) for r in refs], ("system", "portfolio", "root")))
    return 0


# -- open the workbench -------------------------------------------------------------------------


def cmd_open(args: argparse.Namespace) -> int:
    locations = _locations(args)
    problems: list[Problem] = []
    paths, note = _resolve_paths(args, locations, problems)
    settings = load_settings(locations.config, problems)
    for problem in problems:
        _say(str(problem))
    from app.tui.app import MemoryWorkbenchApp  # the UI is loaded only when it is shown

    app = MemoryWorkbenchApp(Workbench(locations), paths, notice=note, theme=args.theme or settings.theme, keymap=settings.keymap)
    app.run()
    return app.exit_status


COMMANDS: dict[str, Callable[[argparse.Namespace], int]] = {
    "scan": cmd_scan,
    "startup": cmd_startup,
    "discover": cmd_discover,
    "search": cmd_search,
    "review": cmd_review,
    "history": cmd_history,
    **{action: cmd_decide for action in DECISIONS},
    "suggest": cmd_suggest,
    "budget": cmd_budget,
    "undo": cmd_undo,
    **{action: cmd_change for action in CHANGES},
}


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] in SUBCOMMANDS or (argv and argv[0] in ("-h", "--help")):
        args = build_parser().parse_args(argv)
        if args.command is None:
            build_parser().print_help()
            return 0
        handler = COMMANDS[args.command]
    else:
        args = build_open_parser().parse_args(argv)
        handler = cmd_open
    try:
        return handler(args)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # Output piped into `head`: stop quietly.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


if __name__ == "__main__":
    raise SystemExit(main())
