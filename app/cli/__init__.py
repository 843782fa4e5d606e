"""`memwb`: the command line over the Workbench facade.

`memwb [PATH...]` opens the workbench; headless subcommands print a readable table, or one JSON
document with --json. Exit codes: 0 success, 1 failure, 2 usage error (an unknown command or option,
a missing argument, a PATH that names nothing to read; found before anything is read or written).
Why is said on stderr, without a traceback; a --json command also prints `{"error": ..., "code":
<exit status>}` on stdout. Every string that came from a memory is made inert before it is printed,
and JSON is ASCII-escaped, so nothing printed can drive the terminal.

This module parses and dispatches with the standard library only: `memwb --version` and
`memwb --help` import nothing else, each headless command imports the core when it runs
(`app.cli.commands`), and only opening the workbench imports Textual.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from app import __version__
from app.cli.common import FAILED, SUBCOMMANDS, USAGE, UsageError, fail, say

if TYPE_CHECKING:
    Handler = Callable[[argparse.Namespace], int]

__all__ = ["build_open_parser", "build_parser", "main"]


class Parser(argparse.ArgumentParser):
    """An argparse parser whose usage errors are raised as UsageError, for `main` to say in one line
    (naming what was wrong and the help to read) and exit 2, instead of printing a usage dump and
    raising SystemExit from inside the parse. `commands` holds the subcommands' parsers."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.commands: dict[str, argparse.ArgumentParser] = {}

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{message} (see {self.prog} --help)", prog=self.prog)


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--cache-dir",
        type=Path,
        help="the workbench's cache folder (default $XDG_CACHE_HOME/memwb)",
    )
    parser.add_argument(
        "--data-dir", type=Path, help="the workbench's data folder (default $XDG_DATA_HOME/memwb)"
    )
    parser.add_argument(
        "--config-dir",
        type=Path,
        help="the workbench's config folder (default $XDG_CONFIG_HOME/memwb)",
    )


def _path_option(parser: argparse.ArgumentParser, what: str) -> None:
    parser.add_argument(
        "--path", dest="paths", action="append", type=Path, default=[], metavar="PATH", help=what
    )


def _change_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--reason", default="", help="why (kept in the ledger)")
    parser.add_argument(
        "--dry-run", action="store_true", help="say what would change, write nothing"
    )


FORCE_HELP = "merge memories of different systems, or that are no near duplicates (refused without)"
HISTORY_HELP = "a memory's history: trust decisions, promote, demote, pin, priority, merge, undo"
OPEN_DESCRIPTION = """Memory Workbench: see, search, review and curate AI agents' long-term memory.

Open the app: memwb [PATH...] (no COMMAND). Each PATH is a portfolio root, a database file or a
folder holding portfolios; without one, the portfolios configured in config.yaml, else the bundled
sample. The commands below work headless, and print a table or, with --json, one JSON document."""
OPEN_EPILOG = "memwb COMMAND --help tells more of one command; memwb PATH --help of the app."
PATH_HELP = (
    "a portfolio root, a database file, or a folder holding portfolios (repeatable; default: "
    "configured portfolios, else the bundled sample)"
)
# Every command names its portfolios one way, `--path PATH` (repeatable). PATHs given after a
# command's other arguments, the older form, are still read, with a hint (see `_legacy_paths`).
LEGACY_HINT = (
    "PATH given without --path still works for now; every command takes --path PATH (repeatable)"
)


def _paths(parser: argparse.ArgumentParser, help: str = PATH_HELP) -> None:  # noqa: A002 - argparse's own word
    parser.add_argument(
        "--path", dest="paths", action="append", type=Path, default=[], metavar="PATH", help=help
    )
    parser.add_argument(
        "legacy_paths", nargs="*", type=Path, default=[], metavar="[PATH]", help=argparse.SUPPRESS
    )


def _open_paths(parser: argparse.ArgumentParser) -> None:
    """`memwb [PATH...]` opens the workbench: there PATH needs no option (it is the command)."""
    parser.add_argument("paths", nargs="*", type=Path, default=[], metavar="PATH", help=PATH_HELP)


def build_parser() -> Parser:
    parser = Parser(
        prog="memwb",
        usage="memwb [PATH...] [--theme NAME]    (open the app)\n       memwb COMMAND [options]",
        description=OPEN_DESCRIPTION,
        epilog=OPEN_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"memwb {__version__}")
    # The commands' own usage starts "memwb COMMAND", not with the usage above (both forms).
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", prog="memwb")

    scan = sub.add_parser("scan", help="read portfolios and list their memories and problems")
    _paths(scan)
    scan.add_argument("--json", action="store_true", help="print one JSON document")
    _common(scan)

    startup = sub.add_parser("startup", help="run the startup pipeline and print its timeline")
    _paths(startup)
    startup.add_argument("--json", action="store_true", help="print one JSON document")
    startup.add_argument(
        "--no-cache", action="store_true", help="ignore the parse cache (a cold start)"
    )
    _common(startup)

    search = sub.add_parser(
        "search",
        help="search every memory",
        description=(
            "Search memories. QUERY: words (name, description, body, tags); field:value "
            "filters (system, tier, "
            "trust: the effective trust the other commands show, claimed: the system's own claim, "
            'domain, tag, type, portfolio); "phrases"; prefix*; fuzzy~ or fuzzy~2; AND, OR, NOT, '
            "(grouping); ranges on priority, tokens and salience: priority:[1 TO 10], tokens:>500."
        ),
    )
    search.add_argument("query", metavar="QUERY")
    _paths(search)
    search.add_argument(
        "--limit",
        type=int,
        default=20,
        help="hits to show (default 20); the output says how many of how many",
    )
    search.add_argument(
        "--reveal", action="store_true", help="show secrets in the hits' text (masked by default)"
    )
    search.add_argument("--json", action="store_true", help="print one JSON document")
    _common(search)

    review = sub.add_parser(
        "review", help="the review queue: findings and trust, most severe first"
    )
    _paths(review)
    review.add_argument("--json", action="store_true", help="print one JSON document")
    _common(review)

    for action, what in (
        (
            "approve",
            "mark a memory reviewed and trusted (DollhouseMCP: trustLevel validated; "
            "memory-mcp: trust +0.15)",
        ),
        ("flag", "flag a memory for attention (DollhouseMCP: trustLevel flagged)"),
        ("quarantine", "take a memory out of what its agent loads, in that system's own way"),
        ("restore", "put back exactly what a quarantine took"),
    ):
        decision = sub.add_parser(action, help=what, description=what)
        decision.add_argument("id", metavar="ID", help="the memory id, as `memwb scan` prints it")
        _paths(decision)
        decision.add_argument("--reason", required=True, help="why (kept in the ledger)")
        decision.add_argument("--entry", help="one entry of a DollhouseMCP memory")
        decision.add_argument(
            "--dry-run", action="store_true", help="say what would change, write nothing"
        )
        decision.add_argument("--json", action="store_true", help="print one JSON document")
        _common(decision)

    suggest_ = sub.add_parser(
        "suggest",
        help="promote, demote, archive, merge, split and stale suggestions (never applied)",
    )
    _paths(suggest_)
    suggest_.add_argument("--json", action="store_true", help="print one JSON document")
    _common(suggest_)

    budget = sub.add_parser(
        "budget",
        help="what each agent loads at startup, at what cost, and where its budget cuts",
        description="Show budget plans; `memwb budget set PORTFOLIO --max-tokens N` writes "
        "DollhouseMCP's autoLoad.maxTokenBudget.",
    )
    budget.add_argument(
        "words",
        nargs="*",
        default=[],
        metavar="set PORTFOLIO",
        help="`set PORTFOLIO` changes a budget",
    )
    budget.add_argument(
        "--what-if-max-tokens",
        type=int,
        metavar="N",
        help="show DollhouseMCP's plan with this budget (nothing is written)",
    )
    budget.add_argument(
        "--max-tokens", type=int, metavar="N", help="with `set`: the new autoLoad.maxTokenBudget"
    )
    budget.add_argument(
        "--path",
        dest="paths",
        action="append",
        type=Path,
        default=[],
        metavar="PATH",
        help=PATH_HELP,
    )
    budget.add_argument(
        "--dry-run", action="store_true", help="with `set`: say what would change, write nothing"
    )
    budget.add_argument("--json", action="store_true", help="print one JSON document")
    _common(budget)

    for action, what in (
        (
            "promote",
            "move a memory to its system's hot tier (DollhouseMCP autoLoad, MassGen "
            "short_term/, OpenClaw MEMORY.md, memory-mcp is_hot)",
        ),
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
        if action == "merge":
            change.add_argument(
                "--force",
                action="store_true",
                help=FORCE_HELP,
            )
        _path_option(
            change, "a portfolio to read (repeatable; default: configured, else the sample)"
        )
        _change_options(change)
        change.add_argument(
            "--yes",
            action="store_true",
            help="accepted for scripts; changes are only made when asked for anyway",
        )
        change.add_argument("--json", action="store_true", help="print one JSON document")
        _common(change)

    undo = sub.add_parser(
        "undo",
        help="reverse a promote/demote/pin/priority/merge/budget change, byte for byte: the "
        "latest, or the one named",
    )
    undo.add_argument(
        "change",
        nargs="?",
        metavar="CHANGE",
        help="the change's id (or a unique start of it), as `memwb history` shows it",
    )
    _path_option(
        undo,
        "a portfolio to read first (repeatable), so a change made before it was renamed or "
        "moved is undone where it is now",
    )
    _change_options(undo)
    undo.add_argument("--json", action="store_true", help="print one JSON document")
    _common(undo)

    preview = sub.add_parser(
        "preview",
        help="the exact text each agent sees at its next start or turn, with what caps cut or drop",
    )
    _path_option(preview, PATH_HELP)
    preview.add_argument("--json", action="store_true", help="print one JSON document")
    _common(preview)

    forget_help = (
        "quarantine many memories as one change (IDs, --filter or --query); `memwb undo` "
        "restores them all"
    )
    forget = sub.add_parser("forget", help=forget_help, description=forget_help)
    forget.add_argument("ids", nargs="*", metavar="ID", help="the memories to forget")
    forget.add_argument("--query", help="every memory a search for QUERY finds (as `memwb search`)")
    forget.add_argument(
        "--filter",
        help="memories matching every word: field:value (system, portfolio, tier, trust, kind, "
        "domain, tag, path, name, id) or a word",
    )
    _path_option(forget, "a portfolio to read (repeatable; default: configured, else the sample)")
    _change_options(forget)
    forget.add_argument("--json", action="store_true", help="print one JSON document")
    _common(forget)

    relink = sub.add_parser(
        "relink",
        help="say that the portfolio once at OLD is the one at NEW now, so its decisions and "
        "changes follow it",
    )
    relink.add_argument(
        "old", metavar="OLD", help="where the portfolio was when its decisions were made"
    )
    relink.add_argument("new", metavar="NEW", type=Path, help="where it is now")
    relink.add_argument("--json", action="store_true", help="print one JSON document")
    _common(relink)

    history = sub.add_parser(
        "history",
        help=HISTORY_HELP,
    )
    history.add_argument("id", metavar="ID")
    _paths(
        history,
        "a portfolio to read first (repeatable), so that records are matched to it by root "
        "(the id as it is open under); without, the ledger's ids as written",
    )
    history.add_argument("--json", action="store_true", help="print one JSON document")
    _common(history)

    mcp = sub.add_parser(
        "mcp",
        help="serve the guard and guarded reads to agents over MCP (stdio)",
        description="Serve check_memory, search, list_review, explain_memory and context_preview "
        "over the Model Context Protocol on stdio, read-only; see docs/mcp.md.",
    )
    _paths(mcp)
    _common(mcp)

    discover = sub.add_parser(
        "discover", help="list the standard memory locations found on this machine"
    )
    discover.add_argument("--json", action="store_true", help="print one JSON document")
    _common(discover)
    watch = sub.add_parser("watch", help="print what other processes write, as they write it")
    _paths(watch)
    watch.add_argument("--json", action="store_true", help="print one JSON object a line")
    _common(watch)
    parser.commands = dict(sub.choices)
    return parser


def build_open_parser() -> Parser:
    parser = Parser(
        prog="memwb",
        description="Open the workbench on PATHs. Subcommands: "
        + ", ".join(SUBCOMMANDS)
        + " (memwb COMMAND --help).",
    )
    parser.add_argument("--version", action="version", version=f"memwb {__version__}")
    _open_paths(parser)
    parser.add_argument(
        "--theme",
        help="a theme name (bundled: workbench-dark, workbench-light, workbench-high-contrast)",
    )
    _common(parser)
    return parser


# -- usage errors -------------------------------------------------------------------------------

# A token argparse reads as a value, never as an option (its own test for negative numbers).
_NEGATIVE_NUMBER = re.compile(r"^-\d+$|^-\d*\.\d+$")


def _closest(word: str, choices: Sequence[str]) -> str:
    """`; did you mean "x"?` for the choice nearest to a mistyped word, or "" when none is near."""
    import difflib

    near = difflib.get_close_matches(word, choices, n=1, cutoff=0.6)
    return f'; did you mean "{near[0]}"?' if near else ""


def _check_options(parser: argparse.ArgumentParser, tokens: Sequence[str]) -> None:
    """An option the command does not have is the error to report, before argparse takes the value
    after it for a PATH or complains of a required option the mistyped one was meant to be."""
    known = [option for action in parser._actions for option in action.option_strings]
    for token in tokens:
        if token == "--":
            return
        if not token.startswith("-") or token == "-" or _NEGATIVE_NUMBER.match(token):
            continue
        name = token.split("=", 1)[0]
        if name in known or (
            name.startswith("--") and any(option.startswith(name) for option in known)
        ):
            continue  # exact, or an abbreviation argparse resolves (or reports as ambiguous)
        if " " in token:
            continue  # argparse reads it as a value
        longs = [option for option in known if option.startswith("--")]
        raise UsageError(
            f'unknown option "{name}"{_closest(name, longs)} (see {parser.prog} --help)',
            prog=parser.prog,
        )


def _check_command_word(word: str) -> None:
    """`memwb WORD`, where WORD is no command, no option and no existing file or folder: a mistyped
    command (or a path that is not there), said as such rather than opening an empty workbench."""
    if (
        word.startswith("-")
        or word in SUBCOMMANDS
        or os.sep in word
        or (os.altsep and os.altsep in word)
        or Path(word).expanduser().exists()
    ):
        return
    near = _closest(word, SUBCOMMANDS)
    if near:
        raise UsageError(f'unknown command "{word}"{near} (see memwb --help)')
    raise UsageError(f'"{word}" is neither a command nor a file or folder (see memwb --help)')


def _parse(parser: Parser, argv: Sequence[str]) -> argparse.Namespace:
    args, extras = parser.parse_known_args(argv)
    if extras:  # arguments no positional takes: name them, as the command's own error
        owner = parser.commands.get(getattr(args, "command", None) or "", parser)
        raise UsageError(
            f'unexpected argument "{extras[0]}" (see {owner.prog} --help)', prog=owner.prog
        )
    return args


def _dispatch(argv: list[str]) -> tuple[argparse.Namespace, Handler]:
    """The parsed command line and the command to run it; each command's module is imported here,
    so a command imports only what it uses."""
    if argv and (argv[0] in SUBCOMMANDS or argv[0] in ("-h", "--help")):
        parser = build_parser()
        if argv[0] in SUBCOMMANDS:
            _check_options(parser.commands[argv[0]], argv[1:])
        args = _parse(parser, argv)
        _legacy_paths(args, parser.commands[args.command].prog)
        if args.command == "mcp":  # the MCP SDK is imported only by this command
            from app.cli.mcp import cmd_mcp

            return args, cmd_mcp
        if args.command == "watch":
            from app.cli.watch import cmd_watch

            return args, cmd_watch
        if args.command == "forget":
            from app.cli.forget import cmd_forget

            return args, cmd_forget
        from app.cli.commands import COMMANDS

        return args, COMMANDS[args.command]
    if argv and argv[0] == "open" and not Path("open").exists():
        # `memwb open PATH` is how many tools say it: it opens the app, as `memwb PATH` does.
        argv = argv[1:]
    if argv:
        _check_command_word(argv[0])
    parser = build_open_parser()
    _check_options(parser, argv)
    args = _parse(parser, argv)
    from app.cli.opening import cmd_open

    return args, cmd_open


def _legacy_paths(args: argparse.Namespace, prog: str) -> None:
    """PATHs given the older way (after the command's arguments, without --path) join the --path
    ones, with a hint of the one form; `memwb search PATH` with no QUERY is refused: the path was
    meant to be read, not searched for."""
    legacy = list(getattr(args, "legacy_paths", []) or [])
    if (
        args.command == "search"
        and not legacy
        and not args.paths
        and Path(args.query).expanduser().exists()
    ):
        raise UsageError(
            f'"{args.query}" is a file or folder and no QUERY was given: memwb search '
            f"QUERY --path {args.query}",
            prog=prog,
        )
    if args.command == "budget":
        words = list(args.words)
        if words and words[0] == "set":
            return
        legacy, args.words = [Path(w) for w in words], []
    if legacy:
        say(LEGACY_HINT, prog)
        args.paths = [*legacy, *args.paths]


def _os_message(error: OSError) -> str:
    if error.filename is not None and error.strerror:
        return f"{error.filename}: {error.strerror}"
    return str(error) or "operating system error"


def main(argv: Sequence[str] | None = None) -> int:
    """Run `memwb` on `argv` (default: this process's arguments); returns the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    as_json = "--json" in argv  # until the command line is parsed
    try:
        args, handler = _dispatch(argv)
        as_json = bool(getattr(args, "json", False))
        return handler(args)
    except UsageError as error:
        return fail(error.message, USAGE, as_json=as_json, prog=error.prog)
    except SystemExit as stop:  # --help and --version print, then stop
        return stop.code if isinstance(stop.code, int) else 0
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # Output piped into `head`: stop quietly.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except OSError as error:
        return fail(_os_message(error), FAILED, as_json=as_json)


if __name__ == "__main__":
    raise SystemExit(main())
