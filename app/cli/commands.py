"""The commands of `memwb`, over the Workbench facade: each parses nothing (`app.cli` did) and
returns its exit status. Importing this module imports the core; opening the workbench imports the
Textual face as well, and only then."""

from __future__ import annotations

import argparse
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

from app.cli.common import CHANGES, DECISIONS, FAILED, USAGE, emit_json, fail, say
from app.cli.opening import locations_from, resolve_paths
from app.cli.preview import cmd_preview
from app.cli.progress import ProgressLine
from app.core.budget import BudgetItem, WhatIf
from app.core.change.errors import ChangeError
from app.core.change.plan import Plan
from app.core.change.summary import effect_summary
from app.core.curate.merge_guard import MergeRefused
from app.core.inert import inert, one_line
from app.core.load.pipeline import LoadResult
from app.core.model import Memory, Portfolio, Problem
from app.core.review.finding import Finding
from app.core.review.ledger import TRUST_ACTIONS, Decision
from app.core.review.spans import finding_name, finding_span
from app.core.review.trust import EffectiveTrust
from app.core.search import QuerySyntaxError
from app.core.workbench import UnknownMemory, Workbench

# -- scan ---------------------------------------------------------------------------------------


def _problem_json(problem: Problem) -> dict[str, Any]:
    return {
        "path": problem.path,
        "line": problem.line,
        "message": problem.message,
        "kept": problem.kept,
    }


def _portfolio_json(portfolio: Portfolio) -> dict[str, Any]:
    return {
        "name": portfolio.name,
        "system": portfolio.system,
        "root": portfolio.root,
        "memories": portfolio.memories,
        "store_version": portfolio.settings.get("store_version"),
        "problems": [_problem_json(p) for p in portfolio.problems],
    }


def _trust_json(trust: EffectiveTrust) -> dict[str, Any]:
    """Effective trust as every JSON document gives it: the level, its source and the label the
    other faces show ("flagged (ledger)")."""
    return {
        "effective_trust": trust.level.value,
        "effective_source": trust.source,
        "effective_detail": trust.detail,
        "effective_label": trust.label,
        "stale": trust.stale,
    }


def _memory_json(
    memory: Memory, salience: float | None = None, trust: EffectiveTrust | None = None
) -> dict[str, Any]:
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
        "trust_score": memory.trust_score,
        **({"trust_claim": memory.fields["trust claim"]} if "trust claim" in memory.fields else {}),
        **(_trust_json(trust) if trust is not None else {}),
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
    lines += [
        "  ".join(str(cell).ljust(widths[i]) for i, cell in enumerate(row)).rstrip() for row in rows
    ]
    return "\n".join(lines)


def _version(portfolio: Portfolio) -> str:
    """The store's version or schema as its reader detected it (`-` when it says none)."""
    return one_line(str(portfolio.settings.get("store_version") or "-"), 90)


def _scan_text(workbench: Workbench, problems: list[Problem]) -> str:
    out = []
    rows = [
        (
            p.system,
            inert(p.name, keep_newlines=False),
            str(p.memories),
            str(len(p.problems)),
            _version(p),
            one_line(p.root, 60),
        )
        for p in workbench.portfolios
    ]
    out.append(_table(rows, ("system", "portfolio", "memories", "problems", "version", "root")))
    tiers = ("hot", "cold", "archive", "quarantine")
    trusts = ("trusted", "validated", "untrusted", "flagged", "quarantined")
    effective = workbench.trusts()
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
                *(str(sum(effective[m.id].level.value == t for m in memories)) for t in trusts),
            )
        )
    out.append("")
    out.append(_table(count_rows, ("system", "total", *tiers, *trusts)))
    out.append(
        "trust is effective trust: the ledger's decision, else the system's claim, else "
        "the detector"
    )
    sources = Counter(
        t.label for t in effective.values() if t.source in ("ledger", "detector") or t.stale
    )
    for label, count in sorted(sources.items()):
        out.append(f"  {count:>5}  {label}")
    all_problems = [*problems, *workbench.problems()]
    out.append("")
    out.append(
        f"{len(workbench.memories)} memories in {len(workbench.portfolios)} portfolios; "
        f"{len(all_problems)} problems"
    )
    for problem in all_problems:
        out.append("  " + one_line(str(problem), 200))
    return "\n".join(out)


def _load(
    args: argparse.Namespace, *, index: bool = False, use_cache: bool = True
) -> tuple[Workbench, LoadResult, list[Problem]]:
    """The workbench opened on the command's paths; problems of the settings file are said and
    returned."""
    locations = locations_from(args)
    problems: list[Problem] = []
    paths, note = resolve_paths(args, locations, problems)
    if note:
        say(note)
    for problem in problems:
        say(str(problem))
    workbench = Workbench(locations)
    with ProgressLine() as line:
        return (
            workbench,
            workbench.open(paths, index=index, use_cache=use_cache, emit=line.phase),
            problems,
        )


def _open(args: argparse.Namespace) -> Workbench:
    return _load(args)[0]


def cmd_scan(args: argparse.Namespace) -> int:
    workbench, result, problems = _load(args)
    if args.json:
        scores = workbench.salience_scores()
        trusts = workbench.trusts()
        emit_json(
            {
                "portfolios": [_portfolio_json(p) for p in workbench.portfolios],
                "memories": [
                    _memory_json(m, scores.get(m.id), trusts[m.id]) for m in workbench.memories
                ],
                "problems": [_problem_json(p) for p in [*problems, *result.problems]],
            }
        )
        return 0 if result.portfolios else 1
    if not result.portfolios:
        for problem in [*problems, *result.problems]:
            say(str(problem))
        say("no portfolio could be read; nothing was changed")
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
        emit_json(document)
        return 0
    total = max(timeline.total_ms, 0.001)
    width = 40
    rows = []
    for phase in timeline.phases:
        left = int(phase.start_ms / total * width)
        bar = max(1, int(phase.duration_ms / total * width)) if phase.duration_ms > 0 else 0
        rows.append(
            (
                phase.name,
                phase.path,
                f"{phase.start_ms:.1f}",
                f"{phase.duration_ms:.1f}",
                str(phase.items),
                " " * left + "#" * bar,
                one_line(phase.message, 60),
            )
        )
    print(_table(rows, ("phase", "path", "start ms", "ms", "items", "timeline", "note")))
    print(
        f"\ncritical path {timeline.critical_path_ms:.1f} ms, total "
        f"{timeline.total_ms:.1f} ms; {len(result.memories)} memories, {result.reparsed} "
        "files parsed"
    )
    return 0


# -- search -------------------------------------------------------------------------------------


def cmd_search(args: argparse.Namespace) -> int:
    if args.limit < 1:
        return fail("--limit must be at least 1", USAGE, as_json=args.json)
    workbench, _, _ = _load(args, index=True)
    try:
        result = workbench.search(args.query, limit=args.limit)
    except QuerySyntaxError as error:
        say(f"query error at character {error.position + 1}: {error.message}")
        if args.json:
            emit_json({"error": error.message, "code": USAGE, "position": error.position})
            return USAGE
        say(f"  {inert(args.query, keep_newlines=False)}")
        say("  " + " " * error.position + "^")
        return USAGE
    finally:
        workbench.close()
    trusts = workbench.trusts()

    def shown(hit_id: str, text: str) -> str:
        # A hit's text has the memory's secrets masked unless --reveal.
        return text if args.reveal or hit_id not in trusts else workbench.masked(hit_id, text)

    if args.json:
        emit_json(
            {
                "query": result.query,
                "total": result.total,
                "shown": len(result.hits),
                "took_ms": round(result.took_ms, 3),
                "suggestion": result.suggestion,
                "fallback": result.fallback,
                "notice": result.notice,
                "hits": [
                    {
                        "id": h.id,
                        "score": round(h.score, 4),
                        "highlight": shown(h.id, h.highlight),
                        **(_trust_json(trusts[h.id]) if h.id in trusts else {}),
                    }
                    for h in result.hits
                ],
            }
        )
        return 0
    showing = (
        f", showing {len(result.hits)} of {result.total} (--limit {args.limit})"
        if result.total > len(result.hits)
        else ""
    )
    print(
        f"{result.total} hits in {result.took_ms:.1f} ms{showing}"
        + (
            f"; did you mean: {inert(result.suggestion, keep_newlines=False)}"
            if result.suggestion
            else ""
        )
    )
    if result.notice:
        print(inert(result.notice, keep_newlines=False))
    for hit in result.hits:
        memory = workbench.memory(hit.id)
        print(
            f"\n{hit.score:7.2f}  {one_line(memory.name, 60)}  [{memory.system} "
            f"{memory.tier.value}, {trusts[hit.id].label}]  {one_line(hit.id, 80)}"
        )
        print(f"         {one_line(shown(hit.id, hit.highlight), 150)}")
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


def _entry_texts(workbench: Workbench, memory: Memory) -> list[tuple[str | None, str]]:
    """A memory's entries' texts, to place its findings by line and column (none when unreadable:
    the findings are then placed by their character offsets)."""
    try:
        return workbench.entry_texts(memory)
    except Exception:  # noqa: BLE001 - the place falls back to offsets, the review goes on
        return []


def cmd_review(args: argparse.Namespace) -> int:
    workbench = _open(args)
    queue = workbench.review_queue()
    if args.json:
        emit_json(
            {
                "queue": [
                    {
                        "id": item.memory.id,
                        "name": item.memory.name,
                        "trust": item.memory.trust.value,
                        "trust_claimed": item.memory.trust_claimed,
                        **_trust_json(item.effective),
                        "findings": [_finding_json(f) for f in item.findings],
                        "due": item.due,
                    }
                    for item in queue
                ]
            }
        )
        return 0
    print(f"{len(queue)} memories to review")
    for item in queue:
        claim = f"{item.memory.trust.value}{'' if item.memory.trust_claimed else ' (no claim)'}"
        if item.memory.trust_claimed and "trust claim" in item.memory.fields:
            claim += f" ({item.memory.fields['trust claim']})"
        print(f"\n{one_line(item.memory.id, 90)}  {one_line(item.memory.name, 50)}")
        print(f"  trust: {item.effective.label}; claimed by the system: {claim}")
        if item.due:
            print("  due: the system's own review date has passed")
        texts = _entry_texts(workbench, item.memory) if item.findings else []
        for finding in item.findings:
            where = f"entry {one_line(finding.entry, 40)} " if finding.entry else ""
            place = f"at {finding_span(finding, texts)}"
            print(
                f"  {finding.severity.value:8} {finding_name(finding):20} {where}{place}: "
                f"{one_line(finding.excerpt, 80)}"
            )
    return 0


def cmd_decide(args: argparse.Namespace) -> int:
    workbench = _open(args)
    workbench.refresh_after_writes(False)
    decide = {
        "approve": workbench.approve,
        "flag": workbench.flag,
        "quarantine": workbench.quarantine,
        "restore": workbench.restore,
    }[args.command]
    try:
        outcome = decide(args.id, args.reason, entry=args.entry, dry_run=args.dry_run)
    except UnknownMemory:
        return fail(
            f"no memory with id {args.id!r} in the portfolios read; nothing was changed",
            FAILED,
            as_json=args.json,
        )
    except ChangeError as error:
        return fail(f"{args.command} {args.id}: {error}", FAILED, as_json=args.json)
    if args.json:
        emit_json(_outcome_json(workbench, outcome))
        return 0
    if isinstance(outcome, Plan):
        print("Dry run, nothing written. " + inert(str(outcome)))
    else:
        print(f"{args.command}: {one_line(args.id, 90)}, recorded in the ledger as {outcome.id}")
        _print_vault(workbench, outcome)
    return 0


def _outcome_json(workbench: Workbench, outcome: Decision | Plan) -> dict[str, Any]:
    """A decision or change as JSON: a recorded one with the vault folders it wrote."""
    document = outcome.model_dump(mode="json")
    if isinstance(outcome, Decision):
        document["vault_folders"] = workbench.vault_folders(outcome)
    return document


def _print_vault(workbench: Workbench, outcome: Decision) -> None:
    for folder in workbench.vault_folders(outcome):
        print(f"  kept whole in the vault: {inert(folder, keep_newlines=False)}")


def cmd_history(args: argparse.Namespace) -> int:
    workbench = _load(args, index=False)[0] if args.paths else Workbench(locations_from(args))
    decisions = workbench.memory_history(args.id)  # what the TUI's History tab shows
    if args.json:
        emit_json({"id": args.id, "decisions": [d.model_dump(mode="json") for d in decisions]})
        return 0
    if not decisions:
        print(f"No decision or change recorded for {one_line(args.id, 90)}.")
    for decision in decisions:
        entry = f" entry {one_line(decision.entry, 40)}" if decision.entry else ""
        change = effect_summary(decision.effect) if decision.action not in TRUST_ACTIONS else ""
        said = "; ".join(part for part in (change, one_line(decision.reason, 100)) if part)
        who = f"by {one_line(decision.user, 20)}{entry}"
        print(f"{decision.time}  {decision.id[:12]}  {decision.action:12} {who}: {said}")
    return 0


# -- curation and budgets -----------------------------------------------------------------------


def cmd_suggest(args: argparse.Namespace) -> int:
    workbench = _open(args)
    with ProgressLine() as line:
        suggestions = workbench.suggestions(on_progress=line.stage)
    if args.json:
        emit_json(
            {
                "suggestions": [
                    {"kind": s.kind, "ids": list(s.ids), "reason": s.reason} for s in suggestions
                ]
            }
        )
        return 0
    counts = Counter(s.kind for s in suggestions)
    print(", ".join(f"{n} {kind}" for kind, n in counts.most_common()) or "No suggestions.")
    for suggestion in suggestions:
        print(f"\n{suggestion.kind:8} {one_line(', '.join(suggestion.ids), 110)}")
        print(f"         {one_line(suggestion.reason, 200)}")
    return 0


def _done(outcome: Decision) -> str:
    """What a change did, in one line: an undo names the change it reversed and what that was."""
    if outcome.action == "undo":
        effect = outcome.effect
        undone = one_line(str(effect.get("undone_action", "change")), 20)
        change = one_line(str(effect.get("undoes", "")), 40)[:12]
        return f"undid the {undone} of {one_line(outcome.memory_id, 90)} (change {change})"
    return f"{outcome.action} of {one_line(outcome.memory_id, 90)} done"


def _report_change(args: argparse.Namespace, workbench: Workbench, outcome: Decision | Plan) -> int:
    if args.json:
        emit_json(_outcome_json(workbench, outcome))
    elif isinstance(outcome, Plan):
        print("Dry run, nothing written. " + inert(str(outcome)))
    else:
        print(f"{args.command}: {_done(outcome)}, recorded in the ledger as {outcome.id}")
        _print_vault(workbench, outcome)
    return 0


def cmd_change(args: argparse.Namespace) -> int:
    workbench = _open(args)
    workbench.refresh_after_writes(False)
    ids, common = list(args.ids), {"reason": args.reason, "dry_run": args.dry_run}
    try:
        if args.command == "merge":
            outcome = workbench.merge(ids[0], ids[1:], force=args.force, **common)
        elif args.command == "set-priority":
            outcome = workbench.set_priority(ids[0], args.priority, **common)
        else:
            change = {
                "promote": workbench.promote,
                "demote": workbench.demote,
                "pin": workbench.pin,
                "unpin": workbench.unpin,
            }[args.command]
            outcome = change(ids[0], **common)
    except UnknownMemory as error:
        return fail(
            f"no memory with id {error.args[0]!r} in the portfolios read; nothing was changed",
            FAILED,
            as_json=args.json,
        )
    except MergeRefused as error:
        reasons = list(error.check.reasons)
        why = f"merge: {error}; --force merges anyway"
        return fail(why, FAILED, as_json=args.json, reasons=reasons)
    except ChangeError as error:
        return fail(f"{args.command}: {error}", FAILED, as_json=args.json)
    return _report_change(args, workbench, outcome)


def cmd_undo(args: argparse.Namespace) -> int:
    workbench = _open(args) if args.paths else Workbench(locations_from(args))
    workbench.refresh_after_writes(False)
    try:
        outcome = workbench.undo(args.change, reason=args.reason, dry_run=args.dry_run)
    except ChangeError as error:
        return fail(f"undo: {error}", FAILED, as_json=args.json)
    return _report_change(args, workbench, outcome)


def cmd_relink(args: argparse.Namespace) -> int:
    workbench = Workbench(locations_from(args))
    try:
        old, new = workbench.relink(args.old, args.new)
    except ChangeError as error:
        return fail(f"relink: {error}", FAILED, as_json=args.json)
    if args.json:
        emit_json({"from": old, "to": new})
    else:
        print(f"relink: the decisions and changes made in {inert(old)} now belong to {inert(new)}")
    return 0


def cmd_budget_set(args: argparse.Namespace) -> int:
    if len(args.words) != 2 or args.max_tokens is None:
        return fail(
            "usage: memwb budget set PORTFOLIO --max-tokens N [--path PATH] [--dry-run]",
            USAGE,
            as_json=args.json,
        )
    workbench = _open(args)
    workbench.refresh_after_writes(False)
    try:
        outcome = workbench.set_budget(
            str(args.paths_set_portfolio),
            args.max_tokens,
            reason="budget set",
            dry_run=args.dry_run,
        )
    except (ChangeError, KeyError) as error:
        # A KeyError's str() is the repr of its key: say the message itself.
        why = error.args[0] if isinstance(error, KeyError) and error.args else error
        return fail(f"budget set: {why}", FAILED, as_json=args.json)
    return _report_change(args, workbench, outcome)


_ITEM_KEYS = {"id", "cost", "order", "fits", "truncated", "cut", "note"}


def _item_json(i: BudgetItem) -> dict[str, object]:
    return i.model_dump(mode="json", include=_ITEM_KEYS)


def cmd_budget(args: argparse.Namespace) -> int:
    if args.words and str(args.words[0]) == "set":
        args.paths_set_portfolio = args.words[1] if len(args.words) > 1 else ""
        return cmd_budget_set(args)
    workbench = _open(args)
    what_if = (
        WhatIf(max_tokens=args.what_if_max_tokens) if args.what_if_max_tokens is not None else None
    )
    plans = workbench.budgets(what_if)
    if args.json:
        emit_json(
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
                        "host": None if plan.host is None else plan.host.model_dump(mode="json"),
                        "items": [_item_json(i) for i in plan.items],
                    }
                    for plan in plans
                ]
            }
        )
        return 0
    for plan in plans:
        limit = "no limit" if plan.limit is None else f"{plan.limit:,}"
        flag = "  OVER" if plan.over else ""
        print(
            f"\n{plan.system} {one_line(plan.portfolio, 30)} ({one_line(plan.scope, 40)}): "
            f"{plan.used:,} / {limit} {plan.unit}{flag}"
        )
        for note in plan.notes:
            print(f"  {one_line(note, 150)}")
        if plan.host is not None and plan.host.limit is not None:
            host = plan.host
            print(f"  {host.host}: the model sees {host.seen:,} of {host.offered:,} characters")
        for item in plan.items:
            mark = "  " if item.fits else "x "
            extra = f"  truncated by {item.cut:,}" if item.truncated else ""
            print(f"  {mark}{item.order:3}. {item.cost:7,}  {one_line(item.id, 80)}{extra}")
    return 0


# -- discover -----------------------------------------------------------------------------------


def cmd_discover(args: argparse.Namespace) -> int:
    refs = Workbench.discover_standard()
    if args.json:
        emit_json({"portfolios": [ref.model_dump(mode="json") for ref in refs]})
        return 0
    if not refs:
        print(
            "No memory found in the standard locations (~/.dollhouse, "
            "~/.openclaw/workspace, ~/.engram/engram.db, ~/.memory-mcp/memory.db)."
        )
        return 0
    print(
        _table(
            [(r.system, inert(r.name, keep_newlines=False), one_line(r.root, 80)) for r in refs],
            ("system", "portfolio", "root"),
        )
    )
    return 0


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
    "relink": cmd_relink,
    "preview": cmd_preview,
    **{action: cmd_change for action in CHANGES},
}
