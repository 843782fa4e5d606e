"""A change's step log (journal.py): each step appended as a JSON line, then the bytes it carries,
then a newline; read back up to the first record cut short."""

from __future__ import annotations

import contextlib
import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# Every step of a change, appended in order: a JSON line, then the bytes it carries, then a newline.
STEPS = "steps.log"


def sha_or_none(data: bytes | None) -> str | None:
    return None if data is None else hashlib.sha256(data).hexdigest()


@dataclass
class Log:
    """What a change's step log holds: each step, the bytes each file held before its step, and
    the record each database step wrote right before its COMMIT."""

    steps: list[tuple[int, dict[str, Any]]]
    before: dict[int, bytes]
    commits: dict[int, dict[str, Any]]


def log_record(kind: str, n: int, meta: dict[str, Any], payload: bytes) -> bytes:
    head = meta | {"kind": kind, "n": n, "size": len(payload), "payload": sha_or_none(payload)}
    return json.dumps(head, sort_keys=True).encode() + b"\n" + payload + b"\n"


def read_log(folder: Path) -> Log:
    """The change's steps as written down. A record cut short (the process died while it was
    appended) ends the log: the write it announced was never made, since a write waits until its
    step is durable."""
    log = Log([], {}, {})
    try:
        data = (folder / STEPS).read_bytes()
    except FileNotFoundError:
        return _old_log(folder, log)
    at = 0
    while at < len(data):
        end = data.find(b"\n", at)
        if end < 0:
            break
        try:
            head = json.loads(data[at:end])
            size, n = int(head.pop("size")), int(head.pop("n"))
        except (ValueError, KeyError, TypeError):
            break
        payload = data[end + 1 : end + 1 + size]
        if len(payload) != size or sha_or_none(payload) != head.pop("payload", None):
            break
        at = end + 1 + size + 1
        kind = head.pop("kind", None)
        if kind == "step":
            log.steps.append((n, head))
            if head.get("existed"):
                log.before[n] = payload
        elif kind == "commit":
            log.commits[n] = json.loads(payload)
    return log


def _old_log(folder: Path, log: Log) -> Log:
    """A journal written one file a step (`<n>.json`, `<n>.before`, `<n>.commit.json`)."""
    for path in folder.glob("*.json"):
        if path.stem.isdigit():
            log.steps.append((int(path.stem), json.loads(path.read_bytes())))
    log.steps.sort(key=lambda pair: pair[0])
    for n, _ in log.steps:
        with contextlib.suppress(FileNotFoundError):
            log.before[n] = (folder / f"{n}.before").read_bytes()
        with contextlib.suppress(FileNotFoundError):
            log.commits[n] = json.loads((folder / f"{n}.commit.json").read_bytes())
    return log
