"""OpenClaw's `memory_search` index, written the way its memory manager writes it.

OpenClaw needs Node 24, which this machine does not have, so its code cannot run in the tests. This
module follows its published source (the builtin memory backend): the files it indexes, the SHA-256
it compares to skip unchanged files, the line chunker with its default 400-token chunks and 80-token
overlap, the `files`, `chunks` and `chunks_fts` tables, the removal of rows for files that are gone,
and the keyword query it builds. Vectors are left out: with no embedding provider configured,
OpenClaw searches by keyword only, and a vector row is written and dropped with its chunk anyway.
"""

from __future__ import annotations

import hashlib
import os
import re
import sqlite3
from dataclasses import dataclass
from pathlib import Path

CHUNK_TOKENS = 400
OVERLAP_TOKENS = 80
SOURCE = "memory"

SCHEMA = """
CREATE TABLE IF NOT EXISTS files (path TEXT PRIMARY KEY, source TEXT NOT NULL DEFAULT 'memory',
    hash TEXT NOT NULL, mtime INTEGER NOT NULL, size INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS chunks (id TEXT PRIMARY KEY, path TEXT NOT NULL,
    source TEXT NOT NULL DEFAULT 'memory',
    start_line INTEGER NOT NULL, end_line INTEGER NOT NULL, hash TEXT NOT NULL, model TEXT NOT NULL,
    text TEXT NOT NULL, embedding TEXT NOT NULL, updated_at INTEGER NOT NULL);
CREATE VIRTUAL TABLE IF NOT EXISTS chunks_fts USING fts5(text, id UNINDEXED, path UNINDEXED,
    source UNINDEXED, model UNINDEXED, start_line UNINDEXED, end_line UNINDEXED);
"""
MODEL = "fts-only"


@dataclass(frozen=True)
class Chunk:
    start_line: int
    end_line: int
    text: str


def memory_files(workspace: Path) -> list[Path]:
    """`MEMORY.md` (and `memory.md`) plus every `.md` file under `memory/`, dot folders included;
    symlinks are not followed."""
    found = [
        p
        for p in (workspace / "MEMORY.md", workspace / "memory.md")
        if p.is_file() and not p.is_symlink()
    ]
    folder = workspace / "memory"
    if folder.is_dir() and not folder.is_symlink():
        for dirpath, dirnames, filenames in os.walk(folder):
            dirnames[:] = sorted(d for d in dirnames if not (Path(dirpath) / d).is_symlink())
            found += [
                Path(dirpath) / f
                for f in sorted(filenames)
                if f.endswith(".md") and not (Path(dirpath) / f).is_symlink()
            ]
    unique: dict[Path, Path] = {}
    for path in found:
        unique.setdefault(path.resolve(), path)
    return list(unique.values())


def chunk_markdown(content: str) -> list[Chunk]:
    """Consecutive lines up to 4 characters per token; each chunk starts with the last lines of the
    one before, up to the overlap; a line longer than a chunk is cut into pieces."""
    max_chars, overlap_chars = max(32, CHUNK_TOKENS * 4), OVERLAP_TOKENS * 4
    chunks: list[Chunk] = []
    current: list[tuple[str, int]] = []
    size = 0

    def flush() -> None:
        if current:
            chunks.append(
                Chunk(current[0][1], current[-1][1], "\n".join(line for line, _ in current))
            )

    def carry() -> None:
        nonlocal current, size
        kept: list[tuple[str, int]] = []
        acc = 0
        for line, number in reversed(current):
            acc += len(line) + 1
            kept.insert(0, (line, number))
            if acc >= overlap_chars:
                break
        current, size = kept, sum(len(line) + 1 for line, _ in kept)

    for number, line in enumerate(content.split("\n"), start=1):
        for piece in [line[i : i + max_chars] for i in range(0, len(line), max_chars)] or [""]:
            if size + len(piece) + 1 > max_chars and current:
                flush()
                carry()
            current.append((piece, number))
            size += len(piece) + 1
    flush()
    return chunks


class MemoryIndex:
    """One agent's index database, outside the workspace (OpenClaw keeps it
    under `~/.openclaw/memory/`)."""

    def __init__(self, db: Path, workspace: Path) -> None:
        self.workspace = workspace
        self.db = sqlite3.connect(db)
        self.db.executescript(SCHEMA)

    def close(self) -> None:
        self.db.close()

    def sync(self) -> tuple[int, int]:
        """What OpenClaw does at session start and whenever its watcher marks the index dirty:
        re-index each file whose hash changed, drop the rows of files that are gone. Returns
        (indexed, deleted)."""
        indexed = deleted = 0
        active: set[str] = set()
        for path in memory_files(self.workspace):
            rel = path.relative_to(self.workspace).as_posix()
            active.add(rel)
            data = path.read_bytes()
            digest = hashlib.sha256(data).hexdigest()
            row = self.db.execute(
                "SELECT hash FROM files WHERE path = ? AND source = ?", (rel, SOURCE)
            ).fetchone()
            if row and row[0] == digest:
                continue
            self._index(rel, data.decode("utf-8", errors="replace"), digest, path.stat())
            indexed += 1
        for (rel,) in self.db.execute(
            "SELECT path FROM files WHERE source = ?", (SOURCE,)
        ).fetchall():
            if rel not in active:
                self._drop(rel)
                deleted += 1
        self.db.commit()
        return indexed, deleted

    def _drop(self, rel: str) -> None:
        self.db.execute("DELETE FROM files WHERE path = ? AND source = ?", (rel, SOURCE))
        self.db.execute("DELETE FROM chunks WHERE path = ? AND source = ?", (rel, SOURCE))
        self.db.execute("DELETE FROM chunks_fts WHERE path = ? AND source = ?", (rel, SOURCE))

    def _index(self, rel: str, content: str, digest: str, st: os.stat_result) -> None:
        self._drop(rel)
        for chunk in chunk_markdown(content):
            chunk_hash = hashlib.sha256(chunk.text.encode()).hexdigest()
            ident = hashlib.sha256(
                f"{SOURCE}:{rel}:{chunk.start_line}:{chunk.end_line}:{chunk_hash}:{MODEL}".encode()
            ).hexdigest()
            self.db.execute(
                "INSERT OR REPLACE INTO chunks VALUES (?, ?, ?, ?, ?, ?, ?, ?, '[]', ?)",
                (
                    ident,
                    rel,
                    SOURCE,
                    chunk.start_line,
                    chunk.end_line,
                    chunk_hash,
                    MODEL,
                    chunk.text,
                    int(st.st_mtime * 1000),
                ),
            )
            self.db.execute(
                "INSERT INTO chunks_fts VALUES (?, ?, ?, ?, ?, ?, ?)",
                (chunk.text, ident, rel, SOURCE, MODEL, chunk.start_line, chunk.end_line),
            )
        self.db.execute(
            "INSERT OR REPLACE INTO files VALUES (?, ?, ?, ?, ?)",
            (rel, SOURCE, digest, int(st.st_mtime * 1000), st.st_size),
        )

    def search(self, query: str, limit: int = 50) -> list[tuple[str, str]]:
        """`memory_search` by keyword: every word token of the query, quoted, joined by AND."""
        tokens = re.findall(r"[A-Za-z0-9_]+", query)
        if not tokens:
            return []
        match = " AND ".join(f'"{t}"' for t in tokens)
        rows = self.db.execute(
            "SELECT path, text FROM chunks_fts WHERE chunks_fts MATCH ? ORDER BY rank LIMIT ?",
            (match, limit),
        )
        return [(path, text) for path, text in rows]

    def texts(self) -> list[str]:
        return [text for (text,) in self.db.execute("SELECT text FROM chunks")]
