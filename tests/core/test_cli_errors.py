"""`memwb` says why a command line cannot run and exits 2: unknown commands and options (with the
nearest one suggested), PATHs that name nothing to read. Nothing is opened, read or written then."""

from __future__ import annotations

import json
import subprocess
import sys
import types
from pathlib import Path

import pytest

from app.cli import main
from app.core.locations import Locations

ROOT = Path(__file__).resolve().parents[2]
MEMORY = "dollhouse:dollhouse:web-research-rate-limits"


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.fixture
def no_workbench_window(monkeypatch: pytest.MonkeyPatch) -> None:
    """Reaching for the workbench's window fails the test: a usage error stops before the UI is
    even imported."""

    def reached(name: str) -> object:
        raise AssertionError(f"the workbench's UI was imported ({name})")

    ui = types.ModuleType("app.tui.app")
    ui.__getattr__ = reached  # type: ignore[method-assign]
    monkeypatch.setitem(sys.modules, "app.tui.app", ui)


@pytest.fixture
def workbench_window(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, object]]:
    """A stand-in for the workbench's window: what it was opened with, one dict per opening."""
    opened: list[dict[str, object]] = []

    class Window:
        exit_status = 0

        def __init__(self, workbench: object, paths: list[Path], **kwargs: object) -> None:
            opened.append({"paths": paths, **kwargs})

        def run(self) -> None:
            pass

        def close_workbench(self) -> None:
            pass

    ui = types.ModuleType("app.tui.app")
    ui.MemoryWorkbenchApp = Window  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "app.tui.app", ui)
    return opened


def assert_plain(err: str) -> None:
    """Said to a person: no traceback, no exception class."""
    assert "Traceback" not in err and "UsageError" not in err and "Error:" not in err


# -- commands -----------------------------------------------------------------------------------


def test_a_mistyped_command_is_named_with_the_nearest(
    capsys: pytest.CaptureFixture[str], no_workbench_window: None
) -> None:
    code, out, err = run(capsys, "aprove", MEMORY, "--reason", "checked")
    assert code == 2 and out == ""
    assert err == 'memwb: unknown command "aprove"; did you mean "approve"? (see memwb --help)\n'


@pytest.mark.parametrize(
    "typed, meant",
    [
        ("sacn", "scan"),
        ("serch", "search"),
        ("qurantine", "quarantine"),
        ("set-prority", "set-priority"),
    ],
)
def test_each_command_is_suggested(
    capsys: pytest.CaptureFixture[str], no_workbench_window: None, typed: str, meant: str
) -> None:
    code, _, err = run(capsys, typed)
    assert code == 2 and f'unknown command "{typed}"; did you mean "{meant}"?' in err


def test_a_word_near_no_command_is_neither(
    capsys: pytest.CaptureFixture[str], no_workbench_window: None
) -> None:
    code, out, err = run(capsys, "frobnicate")
    assert code == 2 and out == ""
    assert (
        err == 'memwb: "frobnicate" is neither a command nor a file or folder (see memwb --help)\n'
    )


def test_a_folder_named_like_a_command_typo_is_a_path(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    no_workbench_window: None,
) -> None:
    (tmp_path / "aprove").mkdir()
    monkeypatch.chdir(tmp_path)
    code, _, err = run(capsys, "aprove")
    assert (
        code == 2
        and "aprove: no memory portfolio found here" in err
        and "unknown command" not in err
    )


def test_what_the_command_line_says_is_inert(
    capsys: pytest.CaptureFixture[str], no_workbench_window: None
) -> None:
    code, _, err = run(capsys, "scna\x1b]0;PWNED\x07")
    assert code == 2 and "\x1b" not in err and "\x07" not in err and "neither a command" in err


# -- options ------------------------------------------------------------------------------------


def test_a_mistyped_option_is_named_with_the_nearest(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "scan", "--jsn")
    assert code == 2 and out == ""
    assert (
        err
        == 'memwb scan: unknown option "--jsn"; did you mean "--json"? (see memwb scan --help)\n'
    )


def test_a_mistyped_required_option_is_the_error_not_the_missing_one(
    sample_copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run(capsys, "approve", MEMORY, str(sample_copy), "--reasn", "checked")
    assert code == 2
    assert (
        'memwb approve: unknown option "--reasn"; did you mean "--reason"?' in err
        and "required" not in err
    )


def test_a_mistyped_option_of_the_workbench_itself(
    capsys: pytest.CaptureFixture[str], no_workbench_window: None
) -> None:
    code, _, err = run(capsys, "--verison")
    assert code == 2 and 'memwb: unknown option "--verison"; did you mean "--version"?' in err


def test_an_option_value_is_not_taken_for_an_option(
    sample_copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(
        capsys, "set-priority", MEMORY, "-5", "--path", str(sample_copy), "--dry-run"
    )
    assert code == 1 and out == ""  # read as the priority, and refused by the memory's system
    assert "unknown option" not in err and "refused priority -5" in err


def test_a_usage_error_of_a_json_command_is_a_json_document(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, err = run(capsys, "review", "--json", "--limit", "3")
    assert code == 2
    assert json.loads(out) == {
        "error": 'unknown option "--limit" (see memwb review --help)',
        "code": 2,
    }
    assert 'memwb review: unknown option "--limit"' in err


def test_missing_and_extra_arguments(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "history")
    assert (
        code == 2
        and err
        == "memwb history: the following arguments are required: ID (see memwb history --help)\n"
    )
    code, _, err = run(capsys, "undo", "abc", "now")
    assert code == 2 and err == 'memwb undo: unexpected argument "now" (see memwb undo --help)\n'
    code, _, err = run(capsys, "search", "deploy", "--limit", "many")
    assert code == 2 and "argument --limit: invalid int value: 'many'" in err
    assert_plain(err)


def test_help_and_version_return_0(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "--version")
    assert code == 0 and out.startswith("memwb ")
    code, out, _ = run(capsys, "--help")
    assert code == 0 and "COMMAND" in out and "approve" in out
    code, out, _ = run(capsys, "approve", "--help")
    assert code == 0 and "--reason" in out


# -- paths --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        ["scan"],
        ["review"],
        ["startup"],
        ["search", "deploy"],
        ["suggest"],
        ["budget"],
        ["history", MEMORY],
    ],
)
def test_a_missing_path_is_a_usage_error_naming_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: list[str]
) -> None:
    missing = tmp_path / "nowhere"
    code, out, err = run(capsys, *command, "--path", str(missing))
    assert code == 2 and out == ""
    assert err == f"memwb: {missing}: no such file or folder\n"


@pytest.mark.parametrize(
    "command",
    [
        ["scan"],
        ["review"],
        ["startup"],
        ["search", "deploy"],
        ["suggest"],
        ["budget"],
        ["history", MEMORY],
    ],
)
def test_a_path_without_path_still_reads_with_a_hint(
    sample_copy: Path, capsys: pytest.CaptureFixture[str], command: list[str]
) -> None:
    code, _, err = run(capsys, *command, str(sample_copy / "massgen"), "--json")
    assert code == 0
    assert (
        err == f"memwb {command[0]}: PATH given without --path still works for now; every command "
        "takes --path PATH (repeatable)\n"
    )


def test_search_with_a_path_and_no_query_is_a_usage_error(
    sample_copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(capsys, "search", str(sample_copy))
    assert code == 2 and out == ""
    assert (
        err == f'memwb search: "{sample_copy}" is a file or folder and no QUERY was given: memwb '
        f"search QUERY --path {sample_copy}\n"
    )


def test_a_folder_without_a_portfolio_is_a_usage_error_naming_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "empty" / "sub").mkdir(parents=True)
    code, out, err = run(capsys, "scan", "--path", str(tmp_path / "empty"), "--json")
    assert code == 2
    message = (
        f"{tmp_path / 'empty'}: no memory portfolio found here (looked two folder levels down)"
    )
    assert json.loads(out) == {"error": message, "code": 2}
    assert err == f"memwb: {message}\n"


def test_a_folder_without_a_portfolio_beside_a_portfolio_is_a_problem_of_the_scan(
    tmp_path: Path, sample_copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "empty").mkdir()
    code, out, _ = run(
        capsys, "scan", str(tmp_path / "empty"), str(sample_copy / "massgen"), "--json"
    )
    report = json.loads(out)
    assert code in (0, 1) and [p["system"] for p in report["portfolios"]] == ["massgen"]
    assert [p["path"] for p in report["problems"]] == [str(tmp_path / "empty")]


def test_every_bad_path_is_named_and_nothing_is_written(
    tmp_path: Path,
    sample_copy: Path,
    isolated_locations: Locations,
    capsys: pytest.CaptureFixture[str],
) -> None:
    before = {p: p.read_bytes() for p in sample_copy.rglob("*") if p.is_file()}
    paths = [
        arg
        for path in (sample_copy, tmp_path / "gone", tmp_path / "lost")
        for arg in ("--path", str(path))
    ]
    code, _, err = run(capsys, "quarantine", MEMORY, *paths, "--reason", "exfiltration")
    assert code == 2
    assert err.splitlines() == [
        f"memwb: {tmp_path / 'gone'}: no such file or folder",
        f"memwb: {tmp_path / 'lost'}: no such file or folder",
    ]
    assert {p: p.read_bytes() for p in sample_copy.rglob("*") if p.is_file()} == before
    assert not (isolated_locations.data / "ledger.jsonl").exists()


def test_a_change_with_a_missing_path(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "promote", MEMORY, "--path", str(tmp_path / "nowhere"), "--dry-run")
    assert code == 2 and f"{tmp_path / 'nowhere'}: no such file or folder" in err


def test_the_workbench_is_not_opened_on_a_missing_path(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], no_workbench_window: None
) -> None:
    code, out, err = run(capsys, str(tmp_path / "nowhere"))
    assert code == 2 and out == ""
    assert err == f"memwb: {tmp_path / 'nowhere'}: no such file or folder\n"


def test_the_workbench_opens_on_a_portfolio(
    sample_copy: Path, capsys: pytest.CaptureFixture[str], workbench_window: list[dict[str, object]]
) -> None:
    code, out, err = run(capsys, str(sample_copy), "--theme", "workbench-light")
    assert code == 0 and out == "" and err == ""
    assert [(w["paths"], w["theme"]) for w in workbench_window] == [
        ([sample_copy], "workbench-light")
    ]


def test_a_broken_settings_file_is_said_once(
    isolated_locations: Locations,
    capsys: pytest.CaptureFixture[str],
    workbench_window: list[dict[str, object]],
) -> None:
    isolated_locations.config.mkdir(parents=True, exist_ok=True)
    (isolated_locations.config / "config.yaml").write_text("portfolios: [unclosed\n")
    code, _, err = run(capsys)
    assert code == 0 and len(workbench_window) == 1
    assert err.count("config.yaml:2: YAML syntax error") == 1, err


# -- failures of --json commands ----------------------------------------------------------------


def test_a_failed_decision_of_a_json_command_is_a_json_document(
    sample_copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(
        capsys, "flag", "dollhouse:dollhouse:nope", str(sample_copy), "--reason", "x", "--json"
    )
    assert code == 1
    document = json.loads(out)
    assert (
        document["code"] == 1
        and "dollhouse:dollhouse:nope" in document["error"]
        and "nothing was changed" in document["error"]
    )
    assert document["error"] in err
    assert_plain(err)


# -- the installed entry point ------------------------------------------------------------------


def test_the_entry_point_exits_2_with_the_reason() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "app", "aprove", MEMORY, "--reason", "x"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
    )
    assert out.returncode == 2 and out.stdout == ""
    assert (
        out.stderr
        == 'memwb: unknown command "aprove"; did you mean "approve"? (see memwb --help)\n'
    )
