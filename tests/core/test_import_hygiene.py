"""The core is UI-free: importing any app.core module (and the CLI's headless paths) loads no
Textual; `memwb --version` and `memwb --help` load none of the heavy modules at all."""

from __future__ import annotations

import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest

import app.core
from app import __version__

ROOT = Path(__file__).resolve().parents[2]


def _python(script: str, timeout: float = 60) -> str:
    """What `script` prints, run by a new interpreter in the project's folder; it must exit 0."""
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, timeout=timeout
    )
    assert out.returncode == 0, out.stderr
    return out.stdout


def core_modules() -> list[str]:
    return sorted(m.name for m in pkgutil.walk_packages(app.core.__path__, "app.core."))


def test_core_modules_found() -> None:
    names = core_modules()
    assert "app.core.workbench" in names
    assert "app.core.systems.dollhouse.reader" in names


def test_no_core_module_imports_textual() -> None:
    script = (
        "import importlib, sys\n"
        f"for name in {core_modules()!r}:\n"
        "    importlib.import_module(name)\n"
        "bad = sorted(m for m in sys.modules if m == 'textual' or m.startswith('textual.'))\n"
        "print(','.join(bad))\n"
    )
    assert _python(script).strip() == ""


def test_headless_cli_does_not_import_textual() -> None:
    script = "import sys, app.cli; print('textual' in sys.modules)"
    assert _python(script).strip() == "False"


# What `memwb --version` and `memwb --help` must not load: the UI, the search engine, the models and
# YAML, the facade. (No timing here: bench/cli.py measures that.)
HEAVY = ("textual", "whoosh", "pydantic", "yaml", "app.core.workbench")


def loaded_by(argv: list[str], heavy: tuple[str, ...] = HEAVY) -> tuple[int, list[str], str]:
    """Run the `memwb` entry point on `argv` in a fresh interpreter: its exit status and which of
    `heavy` (or their submodules) were imported by then."""
    script = (
        "import sys\n"
        "from app.cli import main\n"
        "try:\n"
        f"    code = main({argv!r})\n"
        "except SystemExit as stop:  # argparse's way out of --help and --version\n"
        "    code = stop.code\n"
        f"heavy = {heavy!r}\n"
        "found = sorted(m for m in sys.modules if any(m == h or m.startswith(h + '.') for "
        "h in heavy))\n"
        "print('LOADED:' + ','.join(found))\n"
        "raise SystemExit(code)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, timeout=60
    )
    last = out.stdout.strip().splitlines()[-1]
    assert last.startswith("LOADED:"), out.stdout + out.stderr
    return out.returncode, [m for m in last.removeprefix("LOADED:").split(",") if m], out.stdout


@pytest.mark.parametrize("argv", [["--version"], ["--help"], ["approve", "--help"]])
def test_version_and_help_import_nothing_heavy(argv: list[str]) -> None:
    code, loaded, stdout = loaded_by(argv)
    assert code == 0 and "memwb" in stdout
    assert loaded == []


def test_a_headless_command_imports_no_ui(sample_copy: Path) -> None:
    code, loaded, _ = loaded_by(["review", str(sample_copy), "--json"], ("textual", "app.tui"))
    assert code == 0 and loaded == []


def test_the_command_answers_version_before_loading_the_parser() -> None:
    """`memwb --version` (the console command, app.entry) loads neither argparse nor app.cli; any
    other argument list goes to app.cli.main."""
    script = (
        "import sys\n"
        "from app.entry import main\n"
        "sys.argv = ['memwb', '--version']\n"
        "code = main()\n"
        "print('LOADED:' + ','.join(sorted(m for m in ('argparse', 'pathlib', 'app.cli') "
        "if m in sys.modules)))\n"
        "raise SystemExit(code)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, timeout=60
    )
    assert out.returncode == 0 and out.stdout.splitlines() == [f"memwb {__version__}", "LOADED:"], (
        out.stdout + out.stderr
    )
    help_ = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from app.entry import main; sys.argv = ['memwb', '--help']; raise "
            "SystemExit(main())",
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
    )
    assert help_.returncode == 0 and help_.stdout.startswith("usage: memwb"), (
        help_.stdout + help_.stderr
    )


def _opened_loads(state: Path, portfolio: Path, then: str, how: str = "index=False") -> list[str]:
    """Open `portfolio` (without the search index, unless `how` says otherwise) in a fresh
    interpreter, with the workbench's folders under `state`, run `then` (statements over `wb`), and
    say which of the detector and the search engine were imported by then."""
    script = (
        "import sys\n"
        "from pathlib import Path\n"
        "from app.core.locations import Locations\n"
        "from app.core.workbench import Workbench\n"
        f"state = Path({str(state)!r})\n"
        "wb = Workbench(Locations(cache=state / 'cache', data=state / 'data', config=state "
        "/ 'config'), workers=1)\n"
        f"wb.open([Path({str(portfolio)!r})], {how})\n"
        f"{then}\n"
        "heavy = ('app.core.review.detector', 'whoosh')\n"
        "print('LOADED:' + ','.join(sorted(m for m in sys.modules if any(m == h or "
        "m.startswith(h + '.') for h in heavy))))\n"
    )
    last = _python(script, timeout=120).strip().splitlines()[-1]
    return [m for m in last.removeprefix("LOADED:").split(",") if m]


def test_a_warm_start_and_its_trust_load_neither_the_detector_nor_the_search_engine(
    sample_copy: Path, tmp_path: Path
) -> None:
    """A cold start scans, so it loads the detector; a warm start finds every content's findings in
    the cache, and the trust, the badges and the review queue are read from them."""
    cold = _opened_loads(tmp_path, sample_copy, "")
    assert "app.core.review.detector" in cold
    warm = _opened_loads(
        tmp_path, sample_copy, "wb.trusts(); wb.finding_severities(); wb.review_queue()"
    )
    assert warm == []
    # without the index a search is the substring match, which needs neither
    searched = _opened_loads(tmp_path, sample_copy, "assert wb.search('deploy').fallback")
    assert searched == []


def test_a_warm_start_that_leaves_the_index_for_later_does_not_load_the_search_engine(
    sample_copy: Path, tmp_path: Path
) -> None:
    """The index's last update was fed these very inputs: the later index phase (a face's) only
    looks at what it was fed, and the engine is loaded at the first search."""
    built = _opened_loads(tmp_path, sample_copy, "", how="")
    assert "whoosh" in built
    later = _opened_loads(
        tmp_path, sample_copy, "wb.build_index(); assert wb.index_ready", how="index_later=True"
    )
    assert later == []
    searched = _opened_loads(
        tmp_path,
        sample_copy,
        "wb.build_index(); assert wb.search('deploy').hits",
        how="index_later=True",
    )
    assert "whoosh" in searched


def test_the_apps_start_loads_no_numerical_library() -> None:
    """numpy, scipy and datasketch serve the near-duplicate join alone: the modules the app and
    `memwb PATH` import to show a first screen load none of them."""
    script = (
        "import sys, app.cli.opening, app.tui.app, app.core.workbench\n"
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'numpy', 'scipy', 'datasketch'}))"
    )
    assert _python(script).strip() == "[]"
