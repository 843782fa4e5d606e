"""examples/memwb_guard_hook.py run as Claude Code runs a PreToolUse hook: the tool call as JSON
on stdin, exit 2 (with the reason on stderr) to refuse it. A poisoned or secret-bearing write
into a memory is refused without the refusal repeating what it found; any other write passes."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.conftest import ROOT
from tests.core.detector_corpus import ATTACKS, BENIGN, SECRETS

HOOK = ROOT / "examples" / "memwb_guard_hook.py"
MEMORY = "/home/dev/.claude/projects/kite/memory/MEMORY.md"
Done = subprocess.CompletedProcess[str]


def case(case_id: str) -> str:
    return next(c.text for c in ATTACKS + BENIGN if c.id == case_id)


def hook(call: object, *args: str, python: tuple[str, ...] = (sys.executable,)) -> Done:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    stdin = call if isinstance(call, str) else json.dumps(call)
    command = [*python, str(HOOK), *args]
    return subprocess.run(command, input=stdin, capture_output=True, text=True, env=env, timeout=60)


def write(path: str, content: str) -> dict[str, object]:
    given = {"file_path": path, "content": content}
    return {"hook_event_name": "PreToolUse", "tool_name": "Write", "tool_input": given}


def test_an_injection_written_to_memory_is_refused_without_repeating_it() -> None:
    text = case("override-deploy-note")
    done = hook(write(MEMORY, text))
    assert done.returncode == 2
    answer = json.loads(done.stdout)
    assert answer["decision"] in ("quarantine", "block")
    assert "memwb guard: " + answer["decision"] in done.stderr and "line 1, col" in done.stderr
    cover = next(c.cover for c in ATTACKS if c.id == "override-deploy-note")
    assert cover not in done.stderr and cover not in done.stdout


def test_a_benign_memory_note_passes_silently() -> None:
    done = hook(write(MEMORY, case("benign-trunk")))
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")


def test_a_write_outside_memory_is_not_checked() -> None:
    done = hook(write("/home/dev/kite/src/notes.py", case("override-deploy-note")))
    assert (done.returncode, done.stdout) == (0, "")


FILE_STORES = [
    "/w/.openclaw/workspace/memory/2026-11-28.md",
    "/w/workspace_coder/memory/long_term/x.md",
    "/h/.dollhouse/portfolio/memories/a.yaml",
]


@pytest.mark.parametrize("path", FILE_STORES)
def test_each_file_store_is_guarded(path: str) -> None:
    assert hook(write(path, case("shell-wget-sh"))).returncode == 2


def test_a_credential_in_an_edit_is_refused_and_never_echoed() -> None:
    text = case("secret-github")
    given = {"file_path": MEMORY, "old_string": "x", "new_string": text}
    call = {"tool_name": "Edit", "tool_input": given}
    done = hook(call)
    assert done.returncode == 2 and json.loads(done.stdout)["decision"] == "quarantine"
    assert "rotate it" in done.stderr
    assert not [s for s in SECRETS if s in done.stdout + done.stderr]


def test_a_secret_known_by_its_key_is_refused_with_the_masked_way_out() -> None:
    text = "staging db_password: Winter2026x! (ask Dana before changing it)"
    given = {"file_path": MEMORY, "old_string": "x", "new_string": text}
    done = hook({"tool_name": "Edit", "tool_input": given})
    assert done.returncode == 2 and json.loads(done.stdout)["decision"] == "redact"
    assert "without the credential" in done.stderr
    assert "Winter2026x!" not in done.stdout + done.stderr


def test_an_mcp_save_is_checked_on_every_string() -> None:
    save = "mcp__engram__mem_save"
    given = {"title": "CI notes", "content": case("role-im-start"), "type": "config"}
    assert hook({"tool_name": save, "tool_input": given}, "--system", "engram").returncode == 2
    benign = {"title": "style", "content": case("benign-tabs")}
    assert hook({"tool_name": save, "tool_input": benign}, "--system", "engram").returncode == 0


def test_also_adds_memory_files() -> None:
    path = "/w/notes/agent-notes.txt"
    assert hook(write(path, case("persist-system-rule"))).returncode == 0
    also = ("--also", "*/agent-notes.txt")
    assert hook(write(path, case("persist-system-rule")), *also).returncode == 2


def test_it_fails_closed_when_the_guard_cannot_load() -> None:
    # Without site-packages (-S) neither memwb nor pydantic can be imported.
    done = hook(write(MEMORY, case("benign-trunk")), python=(sys.executable, "-S"))
    assert done.returncode == 2 and "cannot load the guard" in done.stderr


def test_input_that_is_no_json_is_a_hook_failure_not_a_refusal() -> None:
    done = hook("not json")
    assert done.returncode == 1 and "not JSON" in done.stderr
