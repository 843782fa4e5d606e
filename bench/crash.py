"""Random kill -9 of the real command line in the middle of a change or of its reverse, then a
fresh start.

    python -m bench.crash [--runs 200] [--seed 1]

Each run copies the sample portfolio and picks a change: a quarantine of an entry, a file and a
section, a promote, a demote that moves a section between files, a priority, a merge (in
DollhouseMCP, MassGen, OpenClaw); in Engram a quarantine and a merge; in memory-mcp a quarantine, a
promote, a pin and a merge. Half the runs kill that change; the other half make it, then kill its
reverse (the restore or the undo: an undo of a merge too). The kill is a SIGKILL at a random
instant of the command's writes (0-30 ms after its intent appears in the journal, or `--window`
seconds; a slower machine needs a wider one to reach the last writes); then the
workbench opens again (which finishes or rolls back what the kill left) and checks: none of the
workbench's temp or set-aside files is left in the portfolio, and either every file holds what it
held before the killed command (every file's bytes; for a database, the rows its system reads) and
the command can be run again, or the command is in the ledger, and in both cases the original
comes back (by the reverse, or as the reverse recorded). It prints how many runs ended which way,
how many kills landed, and every failure.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from app.core.locations import Locations  # noqa: E402
from app.core.review.ledger import Ledger  # noqa: E402
from app.core.storage import LITTER_PATTERN  # noqa: E402
from app.core.workbench import Workbench  # noqa: E402

SAMPLE = ROOT / "sample-portfolio"
MASSGEN, PLANNER = "massgen:massgen:workspace_coder", "massgen:massgen:workspace_planner"
AT_MASSGEN = ("--path", "{root}/massgen")
# (command line, the memory or portfolio the ledger records it under, how it is reversed)
KINDS = (
    (
        (
            "quarantine",
            "dollhouse:dollhouse:feature-flags",
            "{root}/dollhouse",
            "--entry",
            "mem_1795782861009_nu7e4fm1o",
        ),
        "dollhouse:dollhouse:feature-flags",
        "restore",
    ),
    (
        ("quarantine", "massgen:massgen:workspace_coder/api_versioning_policy", "{root}/massgen"),
        "massgen:massgen:workspace_coder/api_versioning_policy",
        "restore",
    ),
    (
        ("quarantine", "openclaw:workspace:note/projects", "{root}/openclaw"),
        "openclaw:workspace:note/projects",
        "restore",
    ),
    (
        ("promote", "dollhouse:dollhouse:feature-flags", "--path", "{root}/dollhouse"),
        "dollhouse:dollhouse:feature-flags",
        "undo",
    ),
    (
        ("demote", "openclaw:workspace:note/projects", "--path", "{root}/openclaw"),
        "openclaw:workspace:note/projects",
        "undo",
    ),
    (
        ("set-priority", "dollhouse:dollhouse:deploy-runbook", "7", "--path", "{root}/dollhouse"),
        "dollhouse:dollhouse:deploy-runbook",
        "undo",
    ),
    (
        (
            "merge",
            "openclaw:workspace:note/production",
            "openclaw:workspace:note/staging",
            "--path",
            "{root}/openclaw",
            "--force",
        ),
        "openclaw:workspace:note/production",
        "undo",
    ),
    (
        ("merge", f"{MASSGEN}/api_versioning_policy", f"{PLANNER}/api_versioning", *AT_MASSGEN),
        f"{MASSGEN}/api_versioning_policy",
        "undo",
    ),
    (("quarantine", "engram:engram:obs/6", "{root}/engram"), "engram:engram:obs/6", "restore"),
    (
        (
            "merge",
            "engram:engram:obs/4",
            "engram:engram:obs/22",
            "--path",
            "{root}/engram",
            "--force",
        ),
        "engram:engram:obs/4",
        "undo",
    ),
    (
        ("quarantine", "memory-mcp:memory-mcp:mem/8", "{root}/memory-mcp"),
        "memory-mcp:memory-mcp:mem/8",
        "restore",
    ),
    (
        ("promote", "memory-mcp:memory-mcp:mem/9", "--path", "{root}/memory-mcp"),
        "memory-mcp:memory-mcp:mem/9",
        "undo",
    ),
    (
        ("pin", "memory-mcp:memory-mcp:mem/2", "--path", "{root}/memory-mcp"),
        "memory-mcp:memory-mcp:mem/2",
        "undo",
    ),
    (
        (
            "merge",
            "memory-mcp:memory-mcp:mem/3",
            "memory-mcp:memory-mcp:mem/4",
            "--path",
            "{root}/memory-mcp",
            "--force",
        ),
        "memory-mcp:memory-mcp:mem/3",
        "undo",
    ),
)


# What an agent's database holds that the systems read back: every table but the ones a restore or
# an undo legitimately adds to (trust history, audit, autoincrement counters) and the full-text
# index, which is rebuilt from the rows by the system's own triggers.
_NOT_COMPARED = ("trust_history", "audit_log", "sqlite_sequence")


def _database(path: Path) -> dict[str, list[tuple[object, ...]]]:
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        tables = [
            r[0]
            for r in conn.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND sql NOT LIKE 'CREATE "
                "VIRTUAL%'"
            )
        ]
        kept = [t for t in tables if t not in _NOT_COMPARED and "_fts" not in t]
        return {
            t: sorted((tuple(r) for r in conn.execute(f'SELECT * FROM "{t}"')), key=repr)
            for t in kept
        }
    finally:
        conn.close()


def tree(root: Path) -> dict[str, object]:
    """Every file's bytes, and for each SQLite store the rows its system reads. SQLite's own
    rollback journal (`-journal`, left unplayed when a transaction never reached its COMMIT) is
    SQLite's to clear, not content."""
    out: dict[str, object] = {}
    for p in root.rglob("*"):
        if not p.is_file() or p.name.endswith(("-journal", "-wal", "-shm")):
            continue
        data = p.read_bytes()
        out[p.relative_to(root).as_posix()] = (
            _database(p) if data.startswith(b"SQLite format 3\x00") else data
        )
    return out


def command(args: tuple[str, ...], root: Path) -> list[str]:
    filled = [a.format(root=root) for a in args]
    return [sys.executable, "-m", "app", *filled, "--reason", "crash run"]


def environment(locations: Locations) -> dict[str, str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    env.update(
        {f"MEMWB_{k.upper()}_DIR": str(getattr(locations, k)) for k in ("cache", "data", "config")}
    )
    return env


def killed(command: list[str], env: dict[str, str], locations: Locations, delay: float) -> bool:
    """Run `command`, and kill it `delay` seconds after its intent appears in the journal (the
    kills land among its writes, not in its start-up). Whether it was still running then."""
    quiet = subprocess.DEVNULL
    process = subprocess.Popen(command, env=env, stdout=quiet, stderr=quiet)
    journal = locations.data / "journal"
    while process.poll() is None and not journal.exists():
        time.sleep(0.0005)
    time.sleep(delay)
    alive = process.poll() is None
    if alive:
        os.kill(process.pid, signal.SIGKILL)
    process.wait()
    return alive


def reverse_command(
    args: tuple[str, ...],
    subject: str,
    reverse: str,
    sample: Path,
    entry: str | None,
) -> list[str]:
    """The command line of the change's reverse: its restore (of the entry it took) or an undo."""
    if reverse != "restore":
        return [sys.executable, "-m", "app", "undo", "--reason", "back"]
    where = args[2].format(root=sample)
    which = ["--entry", entry] if entry else []
    return [sys.executable, "-m", "app", "restore", subject, where, *which, "--reason", "back"]


def started(locations: Locations, sample: Path) -> set[str]:
    """Open the workbench again; what it says it did with an interrupted command."""
    wb = Workbench(locations, workers=1)
    wb.open([sample], index=False)
    return {p.kept for p in wb.problems() if p.kept in ("completed", "rolled back")}


def litter(sample: Path) -> bool:
    return any(LITTER_PATTERN.fullmatch(p.name) for p in sample.rglob("*"))


def one_run(work: Path, kind: tuple[tuple[str, ...], str, str], delay: float) -> str:
    args, subject, reverse = kind
    sample = work / "sample"
    shutil.copytree(SAMPLE, sample, symlinks=True)
    locations = Locations(work / "cache", work / "data", work / "config")
    original = tree(sample)
    env = environment(locations)
    was_killed = killed(command(args, sample), env, locations, delay)
    recovered = started(locations, sample)
    if litter(sample):
        return "FAIL: litter left in the portfolio"
    recorded = [d for d in Ledger(locations).decisions() if d.memory_id == subject]
    if not recorded:
        if tree(sample) != original:
            return "FAIL: not recorded, but the portfolio changed"
        if not was_killed:
            return "FAIL: finished but not recorded"
        return "killed, as before" + (" (rolled back)" if "rolled back" in recovered else "")
    back = reverse_command(args, subject, reverse, sample, recorded[0].entry)
    done = subprocess.run(back, env=env, capture_output=True)
    if done.returncode != 0:
        return (
            f"FAIL: recorded, but the {reverse} failed: "
            f"{done.stderr.decode(errors='replace').strip()[:300]}"
        )
    if tree(sample) != original:
        return f"FAIL: the {reverse} did not give the original back"
    if not was_killed:
        return "finished, as decided"
    return "killed, as decided" + (" (completed)" if "completed" in recovered else "")


def one_reverse_run(work: Path, kind: tuple[tuple[str, ...], str, str], delay: float) -> str:
    """The change made, then its reverse killed: after the next start, either the reverse is
    recorded and the original is back, or nothing of it is left and it can be made again."""
    args, subject, reverse = kind
    sample = work / "sample"
    shutil.copytree(SAMPLE, sample, symlinks=True)
    locations = Locations(work / "cache", work / "data", work / "config")
    original = tree(sample)
    env = environment(locations)
    made = subprocess.run(command(args, sample), env=env, capture_output=True)
    if made.returncode != 0:
        return f"FAIL: the {args[0]} failed: {made.stderr.decode(errors='replace').strip()[:300]}"
    decided = tree(sample)
    [change] = [d for d in Ledger(locations).decisions() if d.memory_id == subject]
    back = reverse_command(args, subject, reverse, sample, change.entry)
    was_killed = killed(back, env, locations, delay)
    recovered = started(locations, sample)
    if litter(sample):
        return f"FAIL: litter left in the portfolio by the {reverse}"
    if any(d.action == reverse for d in Ledger(locations).decisions()):
        if tree(sample) != original:
            return f"FAIL: the {reverse} is recorded, but the original is not back"
        if not was_killed:
            return f"{reverse} finished, as reversed"
        how = " (completed)" if "completed" in recovered else ""
        return f"{reverse} killed, as reversed" + how
    if tree(sample) != decided:
        return f"FAIL: the {reverse} is not recorded, but the portfolio changed"
    if not was_killed:
        return f"FAIL: the {reverse} finished but is not recorded"
    again = subprocess.run(back, env=env, capture_output=True)
    if again.returncode != 0 or tree(sample) != original:
        why = again.stderr.decode(errors="replace").strip()[:300]
        return f"FAIL: the {reverse} cannot be made again: {why}"
    return f"{reverse} killed, as before" + (" (rolled back)" if "rolled back" in recovered else "")


def durations(kinds: tuple[tuple[tuple[str, ...], str, str], ...], scratch: Path) -> list[float]:
    """How long each change takes uninterrupted: the kills land within it."""
    out = []
    for i, (args, _, _) in enumerate(kinds):
        work = scratch / f"time{i}"
        shutil.copytree(SAMPLE, work / "sample", symlinks=True)
        locations = Locations(work / "cache", work / "data", work / "config")
        start = time.perf_counter()
        subprocess.run(
            command(args, work / "sample"), env=environment(locations), capture_output=True
        )
        out.append(time.perf_counter() - start)
        shutil.rmtree(work)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--seed", type=int, default=1)
    window = "kill within this many seconds of the intent"
    parser.add_argument("--window", type=float, default=0.03, help=window)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    outcomes: Counter[str] = Counter()
    by_system: Counter[tuple[str, str]] = Counter()
    with tempfile.TemporaryDirectory(prefix="memwb-crash-") as scratch:
        took = durations(KINDS, Path(scratch))
        print(
            "uninterrupted: "
            + ", ".join(f"{k[0][0]} {t:.2f} s" for k, t in zip(KINDS, took, strict=True))
        )
        for run in range(args.runs):
            i = rng.randrange(len(KINDS))
            of_reverse = rng.random() < 0.5
            delay = rng.uniform(0.0, args.window)  # after the command's first journal entry
            work = Path(scratch) / f"run{run}"
            outcome = (one_reverse_run if of_reverse else one_run)(work, KINDS[i], delay)
            outcomes[outcome] += 1
            ended = "killed"
            if outcome.startswith("FAIL"):
                ended = "FAIL"
            elif " finished" in f" {outcome}":
                ended = "finished"
            by_system[(KINDS[i][1].split(":", 1)[0], ended)] += 1
            if outcome.startswith("FAIL"):
                what = f"a {KINDS[i][0][0]}"
                if of_reverse:
                    what = f"the {KINDS[i][2]} of {what}"
                print(f"run {run}: {what} killed after {delay:.3f} s: {outcome}")
            shutil.rmtree(work, ignore_errors=True)
    print(f"{args.runs} runs:")
    for outcome, count in sorted(outcomes.items(), key=lambda item: -item[1]):
        print(f"  {count:4}  {outcome}")
    print("by system (killed / finished before the kill / failed):")
    for system in sorted({s for s, _ in by_system}):
        print(
            f"  {system:12} {by_system[(system, 'killed')]:4} / "
            f"{by_system[(system, 'finished')]:4} / {by_system[(system, 'FAIL')]:4}"
        )
    ends = Counter(end for (_, end), count in by_system.items() for _ in range(count))
    after = f"{ends['finished']} came after the command ended"
    print(f"{args.runs} kills tried: {ends['killed']} landed, {after}; {ends['FAIL']} failures")


if __name__ == "__main__":
    main()
