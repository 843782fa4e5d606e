"""Budget plans: made by the load, re-planned for the portfolios a write touched."""

from __future__ import annotations

from pathlib import Path

from app.core.budget import BudgetContext, BudgetPlan, WhatIf, plan_budgets
from app.core.curate import file_reader
from app.core.facade.state import Bench
from app.core.model import Memory, Portfolio
from app.core.preview import build as preview_build
from app.core.preview.models import Preview


def plan(wb: Bench, portfolios: list[Portfolio], memories: list[Memory]) -> tuple[int, str]:
    wb._planned.plans = plan_budgets(
        memories, portfolios, wb.clock.now(), file_bytes=file_reader(portfolios)
    )
    over = sum(plan.over for plan in wb._planned.plans)
    return len(wb._planned.plans), f"{len(wb._planned.plans)} budget plans, {over} over"


def budgets(wb: Bench, what_if: WhatIf | None = None) -> list[BudgetPlan]:
    """What each agent loads at startup, in its order and unit, and where the budget cuts; with
    `what_if`, the plan a new budget or priority order would give, without writing anything."""
    if what_if is None:
        # Planned again outside the state lock, so that the faces' reads after a write do not
        # wait for it; a second asker waits here for the plans rather than take the ones before
        # the write.
        with wb._planned.lock:
            with wb._lock:
                behind, wb._planned.behind = wb._planned.behind, []
                members = members_of(wb, {(p.system, p.name) for p in behind}) if behind else []
            if behind:
                replan(wb, behind, members)
            if wb._planned.plans:
                return wb._planned.plans
    return plan_budgets(
        wb.memories,
        wb.portfolios,
        wb.clock.now(),
        what_if=what_if,
        text_of=wb._read_ahead(),
        file_bytes=file_reader(wb.portfolios),
    )


def members_of(wb: Bench, keys: set[tuple[str, str]]) -> list[Memory]:
    """The memories of the portfolios `keys`, in the order of `memories`: each portfolio's read
    lists its own (no test per memory), and the vault's follow them all."""
    result = wb.result
    members: list[Memory] = []
    for work in result.works:
        if (work.ref.system, work.ref.name) in keys:
            members += work.memories
    if wb._loaded.vaulted:
        members += [
            m
            for m in result.memories[len(result.memories) - len(wb._loaded.vaulted) :]
            if (m.system, m.portfolio) in keys
        ]
    return members


def replan(wb: Bench, portfolios: list[Portfolio], members: list[Memory]) -> None:
    """Plan the touched portfolios again (`members`: their memories); the others keep their
    plans, in portfolio order."""
    keys = {(p.system, p.name) for p in portfolios}
    fresh = plan_budgets(members, portfolios, wb.clock.now(), file_bytes=file_reader(portfolios))
    with wb._lock:
        old, plans = wb._planned.plans, []
        for portfolio in wb.portfolios:
            key = (portfolio.system, portfolio.name)
            plans += [
                plan
                for plan in (fresh if key in keys else old)
                if (plan.system, plan.portfolio) == key
            ]
        wb._planned.plans = plans


def preview(wb: Bench, path: Path | str | None = None, *, reveal: bool = False) -> list[Preview]:
    """`Workbench.preview`: the previews of the portfolios at or under `path` (all without)."""
    context = BudgetContext(
        now=wb.clock.now(),
        text_of=wb._read_ahead(),
        file_bytes=file_reader(wb.portfolios),
    )
    portfolios = preview_build.under(wb.portfolios, path)
    plans = wb.budgets()
    secrets = preview_build.no_secrets if reveal else wb.secrets
    return preview_build.build_previews(wb.memories, portfolios, plans, context, secrets)
