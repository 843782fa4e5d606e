"""A large set join run in a process of its own: the join's MinHash signatures, band numbers and
candidate pairs, the numerical libraries that make them, and a copy of every set live there and
are gone with it, so the workbench's own process never holds them beside the memories it keeps.
The sets are streamed to it in batches (read one at a time from wherever the caller keeps them),
it tells how far the join has gone as it goes, and it answers what `similar_sets` answers, for it
runs that function on the same sets in the same order."""

from __future__ import annotations

from array import array
from collections.abc import Iterable
from multiprocessing.connection import Connection

from app.core.curate.set_join import Found, Progress, similar_sets
from app.core.processes import fresh_context, real_stderr

ITEM = array("Q").itemsize
BATCH_BYTES = 4 << 20  # sets' bytes a message carries
NAME = "memwb-join"


def _silent(done: int, total: int) -> None:
    pass


def joined_apart(
    raws: Iterable[bytes], threshold: float, progress: Progress | None = None
) -> Found | None:
    """`similar_sets` over the sets `raws` gives (each a set's ascending 64-bit numbers, native
    bytes), worked out in a new process; None when that process cannot start or breaks, and the
    caller joins in its own. An exception `progress` raises stops the process and is raised."""
    try:
        context = fresh_context()
        here, there = context.Pipe()
        child = context.Process(target=serve, args=(there, threshold), name=NAME, daemon=True)
        with real_stderr():
            child.start()
    except Exception:  # noqa: BLE001 - no process: the caller joins
        return None
    there.close()  # the child's end: its exit is then this end's EOF
    try:
        _send(here, raws)
        return _received(here, progress or _silent)
    except (EOFError, OSError):
        return None  # the process died (an out-of-memory kill): the caller joins
    finally:
        here.close()
        if child.is_alive():
            child.terminate()
        child.join()


def _send(conn: Connection, raws: Iterable[bytes]) -> None:
    counts, data = array("Q"), bytearray()
    for raw in raws:
        counts.append(len(raw) // ITEM)
        data += raw
        if len(data) >= BATCH_BYTES:
            conn.send_bytes(counts.tobytes())
            conn.send_bytes(data)
            counts, data = array("Q"), bytearray()
    if counts:
        conn.send_bytes(counts.tobytes())
        conn.send_bytes(data)
    conn.send_bytes(b"")


def _received(conn: Connection, tell: Progress) -> Found:
    while True:
        message = conn.recv()
        if message[0] == "told":
            tell(message[1], message[2])
            continue
        earlier, later, scores = array("q"), array("q"), array("d")
        earlier.frombytes(message[1])
        later.frombytes(message[2])
        scores.frombytes(message[3])
        return list(zip(earlier, later, scores, strict=True))


def serve(conn: Connection, threshold: float) -> None:
    """The process's work: read the sets, join them, tell the progress and send the pairs."""
    # imported while the sets arrive, not after: the join starts with them
    import datasketch  # noqa: F401
    import numpy  # noqa: F401

    sets: list[array[int]] = []
    while counts_bytes := conn.recv_bytes():
        counts = array("Q")
        counts.frombytes(counts_bytes)
        data = memoryview(conn.recv_bytes())
        at = 0
        for count in counts:
            grams = array("Q")
            grams.frombytes(data[at : at + count * ITEM])
            sets.append(grams)
            at += count * ITEM
    found = similar_sets(sets, threshold, lambda done, total: conn.send(("told", done, total)))
    conn.send(
        (
            "found",
            array("q", (one for one, _, _ in found)).tobytes(),
            array("q", (other for _, other, _ in found)).tobytes(),
            array("d", (score for _, _, score in found)).tobytes(),
        )
    )
    conn.close()
