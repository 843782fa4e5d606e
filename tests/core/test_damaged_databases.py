"""Damaged databases never stop a scan: 400 random corruptions of a page of each sample database,
and `memwb scan` always exits without a traceback, lists the healthy portfolio beside it, and either
reads the damaged store or names it (or its folder, when it is not even recognised) in a problem."""

from __future__ import annotations

import contextlib
import io
import json
import random
import shutil
from pathlib import Path

import pytest

from app.cli import main

SAMPLE = Path(__file__).resolve().parents[2] / "sample-portfolio"
DATABASES = {
    "engram": SAMPLE / "engram" / "engram.db",
    "memory-mcp": SAMPLE / "memory-mcp" / "memory.db",
}
RUNS = 400


def corrupt(data: bytes, rng: random.Random) -> bytes:
    """Random bytes over part or all of one random page (page 1, the schema, included)."""
    page_size = int.from_bytes(data[16:18], "big") or 65536
    page = rng.randrange(len(data) // page_size)
    length = rng.choice([1, 4, 16, 64, page_size])
    start = page * page_size + rng.randrange(page_size - length + 1)
    damaged = bytearray(data)
    damaged[start : start + length] = bytes(rng.randrange(256) for _ in range(length))
    return bytes(damaged)


@pytest.mark.timeout(300)
@pytest.mark.parametrize("system", sorted(DATABASES))
def test_scan_survives_random_page_corruptions(system: str, tmp_path: Path) -> None:
    source = DATABASES[system]
    original = source.read_bytes()
    healthy = tmp_path / "massgen"
    shutil.copytree(SAMPLE / "massgen", healthy)
    rng = random.Random(f"{system}-corruption")  # the same 400 corruptions on every run
    read = named = 0
    for run in range(RUNS):
        store = tmp_path / f"run{run}"
        store.mkdir()
        (store / source.name).write_bytes(corrupt(original, rng))
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(["scan", str(store), str(healthy), "--json"])
        assert "Traceback" not in err.getvalue(), (run, err.getvalue())
        assert code in (0, 1), (run, code, err.getvalue())
        report = json.loads(out.getvalue())
        systems = {p["system"]: p for p in report["portfolios"]}
        assert systems["massgen"]["memories"] == 18, run
        damaged = systems.get(system)
        if damaged is not None and damaged["memories"] and not damaged["problems"]:
            read += 1
        else:
            named += 1
            problems = json.dumps(report["problems"] + (damaged["problems"] if damaged else []))
            assert source.name in problems or store.name in problems, (
                run,
                problems[:2000],
            )  # the file, or its folder when not even recognised
        shutil.rmtree(store)
    assert (
        read + named == RUNS and named > 0
    )  # the corruptions do damage: some stores are unreadable
