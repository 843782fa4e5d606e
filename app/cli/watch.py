"""`memwb watch [--path P]... [--json]`: what other processes write to the portfolios, as they do.

The portfolios are read once, then watched (app.core.live): each memory another process adds,
changes or removes is printed as one line, or one JSON object a line with --json, with the file or
row, the time and the detector's findings. Ctrl-C stops it (exit 0)."""

from __future__ import annotations

import argparse
import json
import queue
from typing import TYPE_CHECKING

from app.cli.common import say
from app.cli.opening import locations_from, resolve_paths

if TYPE_CHECKING:
    from app.core.live import LiveEvent
    from app.core.model import Problem
    from app.core.workbench import Workbench

WAKE_SECONDS = 0.5  # the printing loop looks up this often, so Ctrl-C is taken at once


def cmd_watch(args: argparse.Namespace) -> int:
    from app.core.workbench import Workbench

    locations = locations_from(args)
    problems: list[Problem] = []
    paths, note = resolve_paths(args, locations, problems)
    for problem in problems:
        say(str(problem), "memwb watch")
    if note:
        say(note, "memwb watch")
    workbench = Workbench(locations)
    try:
        workbench.open(paths, index=False)
        return _watch(workbench, as_json=bool(args.json))
    finally:
        workbench.close()


def _watch(workbench: Workbench, *, as_json: bool) -> int:
    said: queue.Queue[list[LiveEvent] | str] = queue.Queue()
    watch = workbench.watch_live(said.put, on_error=said.put)
    try:
        watch.ready.wait()
        count = len(workbench.portfolios)
        say(f"watching {count} portfolio{'' if count == 1 else 's'}; Ctrl-C stops", "memwb watch")
        while True:
            try:
                item = said.get(timeout=WAKE_SECONDS)
            except queue.Empty:
                continue
            if isinstance(item, str):
                say(item, "memwb watch")
                continue
            for event in item:
                print(_json(event) if as_json else event.line(), flush=True)
    except KeyboardInterrupt:
        say("stopped", "memwb watch")
        return 0
    finally:
        watch.stop()


def _json(event: LiveEvent) -> str:
    """One line of ASCII JSON: nothing printed can drive the terminal."""
    return json.dumps(event.model_dump(mode="json"), ensure_ascii=True)
