#!/usr/bin/env python3
"""A pre-save guard for agents' memory: a Claude Code PreToolUse hook that runs Memory Workbench's
guard (allow / redact / quarantine / block) on what an agent is about to write into its memory.

Claude Code runs it before a tool call, with the call as JSON on stdin ({"tool_name": ...,
"tool_input": {...}}). It looks at:
  - file writes (Write, Edit, MultiEdit) into a memory file: MEMORY.md, CLAUDE.md, anything in a
    folder named memory/ or memories/, or in a DollhouseMCP portfolio (.dollhouse/portfolio/),
    plus any --also GLOB given;
  - MCP tool calls (mcp__<server>__<tool>): every string of the tool's input, so point the hook's
    matcher at the memory servers' saving tools only (mcp__engram__mem_save, say).
Anything else passes untouched (exit 0).

On allow it exits 0 and says nothing. On redact, quarantine or block it exits 2 and says why on
stderr, which Claude Code shows the model as the reason the call was refused; stdout gets the
guard's answer as one JSON line for other hosts. The reason names each finding's kind and where
it is (line and column), never the text found, so the refusal repeats no injection or secret.
It fails closed: when a memory write cannot be checked (memwb not importable), it is refused.

Run it with the Python that has memwb installed:
  /path/to/venv/bin/python examples/memwb_guard_hook.py [--system NAME] [--also GLOB]...
"""

from __future__ import annotations

import argparse
import json
import sys
from fnmatch import fnmatch
from pathlib import PurePath
from typing import Any, TextIO

ALLOW, REFUSE, BROKEN = 0, 2, 1  # exit statuses: 2 is the one Claude Code reads as "deny"
MEMORY_NAMES = ("MEMORY.md", "CLAUDE.md")
MEMORY_FOLDERS = ("memory", "memories")
FILE_TOOLS = ("Write", "Edit", "MultiEdit")


def is_memory_file(path: str, also: list[str]) -> bool:
    parts = PurePath(path).parts
    if not parts:
        return False
    if parts[-1] in MEMORY_NAMES or any(part in MEMORY_FOLDERS for part in parts[:-1]):
        return True
    if any(a == ".dollhouse" and b == "portfolio" for a, b in zip(parts, parts[1:])):
        return True
    return any(fnmatch(path, pattern) for pattern in also)


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for item in value.values() for s in _strings(item)]
    if isinstance(value, list):
        return [s for item in value for s in _strings(item)]
    return []


def texts_to_check(call: dict[str, Any], also: list[str]) -> list[str] | None:
    """The texts the call would write into a memory, or None when it writes none."""
    tool, given = call.get("tool_name", ""), call.get("tool_input") or {}
    if not isinstance(given, dict):
        return None
    if tool in FILE_TOOLS:
        if not is_memory_file(str(given.get("file_path", "")), also):
            return None
        if tool == "Write":
            return [str(given.get("content", ""))]
        if tool == "Edit":
            return [str(given.get("new_string", ""))]
        edits = [edit for edit in given.get("edits", []) if isinstance(edit, dict)]
        return [str(edit.get("new_string", "")) for edit in edits]
    if str(tool).startswith("mcp__"):
        return _strings(given)
    return None


def _place(text: str, offset: int) -> str:
    line = text.count("\n", 0, offset) + 1
    return f"line {line}, col {offset - (text.rfind(chr(10), 0, offset) + 1) + 1}"


def _reason(answers: list[tuple[str, Any]]) -> str:
    decision = answers[0][1]
    lines = [f"memwb guard: {decision.decision.value} - {decision.why}."]
    for text, answer in answers:
        for finding in answer.findings:
            if finding.severity in ("high", "critical") or answer.decision.value == "redact":
                where = _place(text, finding.start)
                lines.append(f"  {finding.severity} {finding.category} ({finding.rule}) at {where}")
    if decision.decision.value == "redact":
        lines.append("Write it again without the credential (keep that in a secrets manager).")
    else:
        lines.append("Do not save this text into memory; tell the user what was refused and why.")
        if any(f.category == "secret" for _, answer in answers for f in answer.findings):
            lines.append(
                "A live credential belongs in a secrets manager; ask the user to rotate it."
            )
    return "\n".join(lines)


RANK = {"allow": 0, "redact": 1, "quarantine": 2, "block": 3}


def run(stdin: TextIO, stdout: TextIO, stderr: TextIO, argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="memwb_guard_hook")
    parser.add_argument("--system", help="the memory system written to (echoed in the answer)")
    parser.add_argument("--also", action="append", default=[], metavar="GLOB", help="more files")
    args = parser.parse_args(argv)
    try:
        call = json.loads(stdin.read() or "{}")
    except ValueError as error:
        print(f"memwb guard: the hook's input is not JSON ({error}); nothing checked", file=stderr)
        return BROKEN
    texts = texts_to_check(call, args.also) if isinstance(call, dict) else None
    if not texts:
        return ALLOW
    try:
        from app.core.guard import check_memory
    except ImportError as error:
        print(f"memwb guard: cannot load the guard ({error}); the write is refused", file=stderr)
        return REFUSE
    try:
        answers = [(text, check_memory(text, args.system)) for text in texts]
    except KeyError as error:  # an unknown --system, said with the known ones
        print(f"memwb guard: {error}; the memory write is refused", file=stderr)
        return REFUSE
    answers.sort(key=lambda pair: -RANK[pair[1].decision.value])
    worst = answers[0][1]
    if worst.decision.value == "allow":
        return ALLOW
    answer = worst.model_dump(mode="json", exclude={"masked_text"})
    stdout.write(json.dumps(answer, ensure_ascii=True) + "\n")
    print(_reason(answers), file=stderr)
    return REFUSE


if __name__ == "__main__":
    raise SystemExit(run(sys.stdin, sys.stdout, sys.stderr, sys.argv[1:]))
