"""`memwb mcp [--path P]...`: the guard served over the Model Context Protocol (stdio), with the
official Python SDK, for agents and their hooks.

Tools, all read-only: `check_memory(text, system?)` answers allow / redact / quarantine / block
with the findings at their spans; `search`, `list_review`, `explain_memory(id)` and
`context_preview(portfolio)` read the portfolios opened at start. Nothing served carries the text
of a memory the guard withholds, or an unmasked secret (app.core.guard.served). stdout is the
protocol's: everything said for people goes to stderr.
"""

from __future__ import annotations

import argparse
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import ToolAnnotations

from app import __version__
from app.cli.common import say
from app.cli.opening import locations_from, resolve_paths
from app.core.change.errors import ChangeError
from app.core.guard import GuardResult
from app.core.guard.served import ContextView, Explanation, ReviewView, SearchView
from app.core.model import Problem
from app.core.search import QuerySyntaxError
from app.core.workbench import UnknownMemory, Workbench

INSTRUCTIONS = (
    "Memory Workbench's guard. Call check_memory on any text before saving it into an agent's "
    "long-term memory: save it only on allow; on redact save masked_text instead; on quarantine "
    "or block do not save it. The other tools read the open portfolios; a memory the guard "
    "withholds is given by id, trust and finding spans only."
)
READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True)


def build_server(workbench: Workbench) -> MCPServer[Any]:
    """The MCP server over an opened workbench, its five tools registered."""
    server: MCPServer[Any] = MCPServer(
        "memwb",
        instructions=INSTRUCTIONS,
        version=__version__,
        log_level="WARNING",
    )

    @server.tool(annotations=READ_ONLY)
    def check_memory(text: str, system: str | None = None) -> GuardResult:
        """allow, redact, quarantine or block for TEXT about to be saved into a memory store
        (SYSTEM: dollhouse, massgen, openclaw, engram or memory-mcp), with the findings' spans
        (character offsets into TEXT) and, on redact, the text with its secrets masked."""
        try:
            return workbench.guard_check(text, system)
        except KeyError as error:  # an unknown system, said with the known ones
            raise ToolError(str(error)) from None

    @server.tool(annotations=READ_ONLY)
    def search(query: str, limit: int = 20) -> SearchView:
        """Search every open memory (words, field:value filters, "phrases", prefix*)."""
        if limit < 1:
            raise ToolError("limit must be at least 1")
        try:
            return workbench.guarded_search(query, limit=limit)
        except QuerySyntaxError as error:
            at = error.position + 1
            raise ToolError(f"query error at character {at}: {error.message}") from None

    @server.tool(annotations=READ_ONLY)
    def list_review() -> ReviewView:
        """The review queue: memories with findings or a decision, most severe first."""
        return workbench.guarded_review()

    @server.tool(annotations=READ_ONLY)
    def explain_memory(id: str) -> Explanation:  # noqa: A002 - the name agents see
        """One memory: its effective trust and where that comes from, findings and history."""
        try:
            return workbench.explain_memory(id)
        except UnknownMemory:
            raise ToolError(f"no memory with id {id!r} in the open portfolios") from None

    @server.tool(annotations=READ_ONLY)
    def context_preview(portfolio: str) -> ContextView:
        """What the agents of PORTFOLIO (a name, or system:name) will see: the text each system
        injects as it renders it (inert, secrets masked, cut and dropped parts marked, memories the
        guard withholds marked by id), and the budget plans: what loads, in order, at what cost."""
        try:
            return workbench.context_preview(portfolio)
        except ChangeError as error:
            raise ToolError(str(error).removesuffix("; nothing was changed")) from None

    return server


def cmd_mcp(args: argparse.Namespace) -> int:
    locations = locations_from(args)
    problems: list[Problem] = []
    paths, note = resolve_paths(args, locations, problems)
    if note:
        say(note)
    for problem in problems:
        say(str(problem))
    workbench = Workbench(locations)
    result = workbench.open(paths, index=True)
    for problem in result.problems:
        say(str(problem))
    count, portfolios = len(workbench.memories), len(workbench.portfolios)
    say(f"serving MCP on stdio: {count} memories in {portfolios} portfolios")
    try:
        build_server(workbench).run("stdio")
    finally:
        workbench.close()
    return 0
