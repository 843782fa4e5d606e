"""MassGen filesystem memory mode (FORMAT.md beside this file): one `.md` file per memory, per agent
workspace.

A workspace holds `memory/short_term/*.md` (injected into every prompt: hot) and
`memory/long_term/*.md` (only a summary row is injected: cold). The file grammar is MassGen's own,
reproduced quirk for quirk so the workbench shows what MassGen itself would load: the text is cut
with `str.split("---", 2)` (not a line-based fence), and the front matter is read line by line at
the first colon, never as YAML.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from app.core.model import Entry, Memory, Problem, Source, Span, Tier, TrustLevel
from app.core.parsing import safefs
from app.core.parsing.text import LineIndex, TextProblem, decode, nul_problem
from app.core.reading.base import (
    Capabilities,
    FileAdapter,
    ParseContext,
    ParsedFile,
    count_words,
    estimate_tokens,
    memory_id,
    sha256_text,
)
from app.core.systems.common import iso_or_none, unexpected
from app.core.systems.massgen import NAME, versions

MEMORY_DIR = "memory"
TIER_DIRS: dict[str, Tier] = {"short_term": Tier.HOT, "long_term": Tier.COLD}
# Workspaces are read at the root, its children and its grandchildren (a run folder holding agent
# workspaces, or `.massgen/workspaces/<agent>`); deeper trees are an agent's own project files.
MAX_WORKSPACE_DEPTH = 2
# Folders that are never a workspace and can hold thousands of entries: not worth a scandir each.
NEVER_WORKSPACE = frozenset({".git", "node_modules", ".venv", "venv", "__pycache__"})
# Before it clears a workspace, MassGen copies its memory/ folder to
# `.massgen/sessions/<session>/archived_memories/<agent>_answer_<n>/` (relative to the folder it
# runs in), and its prompt builder injects those copies' raw text. The portfolio root is that folder
# (the archive starts with `.massgen/`) or the `.massgen` folder itself (it starts with
# `sessions/`).
MASSGEN_DIR = ".massgen"
SESSIONS_DIR = "sessions"
ARCHIVE_DIR = "archived_memories"
SHORT_TERM = "short_term"
RAW = "raw"  # the `fields` key saying a file has no front matter MassGen can read


@dataclass(frozen=True, slots=True)
class MassGenFile:
    """A file cut the way MassGen cuts it; offsets are character offsets in the decoded text."""

    meta: dict[str, str]  # last value wins, as in MassGen's dict
    meta_lines: dict[str, list[int]]  # 1-based lines each key was found on
    body: str
    body_start: int
    close_fence: int  # character offset of the `---` that ended the front matter


class MassGenFormatError(ValueError):
    """A file MassGen itself would refuse to load; `line` is 1-based."""

    def __init__(self, message: str, line: int = 1) -> None:
        super().__init__(message)
        self.message = message
        self.line = line


def split_massgen(text: str) -> MassGenFile:
    """MassGen's grammar: starts with `---`, `split("---", 2)`, first-colon key/value lines, body
    stripped.

    Raises MassGenFormatError where MassGen raises (the file would not load there either).
    """
    if not text.startswith("---"):
        raise MassGenFormatError("no front matter: the file does not start with `---`", 1)
    parts = text.split("---", 2)
    if len(parts) < 3:
        raise MassGenFormatError(
            "front matter opened on line 1 is never closed: no second `---` in the file", 1
        )
    # parts[0] is "" because the text starts with the fence.
    meta_start = 3
    close_fence = meta_start + len(parts[1])
    raw_body = parts[2]
    body_offset = close_fence + 3
    meta: dict[str, str] = {}
    meta_lines: dict[str, list[int]] = {}
    line = text.count("\n", 0, meta_start) + 1
    for raw_line in parts[1].split("\n"):
        if ":" in raw_line:
            key, value = raw_line.split(":", 1)
            key = key.strip()
            meta[key] = value.strip()
            meta_lines.setdefault(key, []).append(line)
        line += 1
    lead = len(raw_body) - len(raw_body.lstrip())
    body = raw_body.strip()
    return MassGenFile(meta, meta_lines, body, body_offset + lead, close_fence)


def _is_real_dir(path: Path) -> bool:
    # A symlinked folder is skipped by safefs.walk_files, so it must not make a portfolio either.
    try:
        return path.is_dir() and not path.is_symlink()
    except OSError:
        return False


def is_workspace(path: Path) -> bool:
    memory = path / MEMORY_DIR
    return any(_is_real_dir(memory / tier) for tier in TIER_DIRS)


def _subdirs(path: Path) -> list[Path]:
    try:
        with os.scandir(path) as it:
            names = sorted(
                e.name
                for e in it
                if e.name not in NEVER_WORKSPACE and e.is_dir(follow_symlinks=False)
            )
    except OSError:
        return []
    return [path / name for name in names]


def archive_rel(rel: str) -> tuple[str, str, str] | None:
    """(archive answer folder, tier folder, file name) when `rel` is an
    archived copy's place, else None."""
    parts = rel.split("/")
    if parts and parts[0] == MASSGEN_DIR:
        parts = parts[1:]
        prefix = MASSGEN_DIR + "/"
    else:
        prefix = ""
    if len(parts) != 6 or parts[0] != SESSIONS_DIR or parts[2] != ARCHIVE_DIR:
        return None
    tier, name = parts[4], parts[5]
    if tier not in TIER_DIRS or not name.endswith(".md") or name == ".md":
        return None
    return prefix + "/".join(parts[:4]), tier, name


def _archive_path_prefix(rel_dir: str) -> bool:
    """Whether a folder lies on the way to an archive tier folder."""
    parts = rel_dir.split("/")
    if parts[0] == MASSGEN_DIR:
        parts = parts[1:]
    if not parts:
        return True
    pattern = [SESSIONS_DIR, None, ARCHIVE_DIR, None, "tier"]
    if len(parts) > len(pattern):
        return False
    for got, want in zip(parts, pattern):
        if want == "tier":
            if got not in TIER_DIRS:
                return False
        elif want is not None and got != want:
            return False
    return True


def has_archive(path: Path) -> bool:
    """Whether `path` holds MassGen session archives of memory (as the folder
    MassGen ran in, or as `.massgen`)."""
    bases = [path / MASSGEN_DIR / SESSIONS_DIR]
    if path.name == MASSGEN_DIR:
        bases.append(path / SESSIONS_DIR)
    for base in bases:
        if not _is_real_dir(base):
            continue
        for session in _subdirs(base):
            if _is_real_dir(session / ARCHIVE_DIR):
                return True
    return False


def _split_rel(rel: str) -> tuple[str, str, str] | None:
    """(workspace path or "", tier folder, file name) when `rel` is a
    memory file's place, else None."""
    parts = rel.split("/")
    if len(parts) < 3 or len(parts) - 3 > MAX_WORKSPACE_DEPTH:
        return None
    *workspace, memory, tier, name = parts
    if memory != MEMORY_DIR or tier not in TIER_DIRS or not name.endswith(".md") or name == ".md":
        return None
    return "/".join(workspace), tier, name


def _may_hold_memories(rel_dir: str) -> bool:
    """Whether a folder can be a workspace, or lie on the way to a workspace's tier folder."""
    parts = rel_dir.split("/")
    if parts[-1] in NEVER_WORKSPACE:
        return False
    for depth in range(min(len(parts), MAX_WORKSPACE_DEPTH) + 1):
        tail = parts[depth:]
        if any(tail == [MEMORY_DIR, tier][: len(tail)] for tier in TIER_DIRS):
            return True
    return False


class MassGenAdapter(FileAdapter):
    system: ClassVar[str] = NAME
    capabilities: ClassVar[Capabilities] = Capabilities(
        trust_source="none: MassGen keeps no trust; only the workbench ledger vouches for a memory",
        quarantine=(
            "the file, and every copy MassGen injects its "
            "text from, is moved into the workbench vault"
        ),
        promote="move the file between memory/short_term/ and memory/long_term/",
        budget=(
            "short-term: at most 10 memories, 1,000 tokens "
            "each, 10,000 in total (recommended, not enforced)"
        ),
    )

    @classmethod
    def detect(cls, path: Path) -> Path | None:
        if not _is_real_dir(path):
            return None
        if is_workspace(path) or has_archive(path):
            return path
        # Only direct children: a folder two levels above workspaces is found by discovery walking
        # down to it, so a parent holding other systems' portfolios is never claimed whole.
        for child in _subdirs(path):
            if is_workspace(child):
                return path
        return None

    @classmethod
    def settings(cls, root: Path, problems: list[Problem]) -> dict[str, object]:
        version = versions.logged_version(root)
        sessions = versions.archived_sessions(root)
        return {"massgen_version": version, "store_version": versions.describe(version, sessions)}

    @classmethod
    def files(cls, root: Path, problems: list[Problem]) -> Iterator[safefs.FileRef]:
        return safefs.walk_files(root, _holds_memories, problems, prune=_cannot_hold_memories)

    @classmethod
    def file_at(cls, root: Path, rel: str) -> safefs.FileRef | None:
        return safefs.one_file(root, rel, _holds_memories, prune=_cannot_hold_memories)

    @classmethod
    def files_named(
        cls, root: Path, name: str, problems: list[Problem]
    ) -> Iterator[safefs.FileRef]:
        """`files` whose file name is `name`: the others are passed
        over before they are looked at."""

        def named(rel: str) -> bool:
            return safefs.display_name(rel.rpartition("/")[2]) == name and _holds_memories(rel)

        # A shown name changes a file name only by writing backslash escapes into it: a name without
        # a backslash is shown for that very file name alone, so the walk can pass over the others.
        raw = name if "\\" not in name else None
        return safefs.walk_files(root, named, problems, prune=_cannot_hold_memories, named=raw)

    @classmethod
    def parse(cls, ctx: ParseContext, rel: str, data: bytes) -> ParsedFile:
        out = ParsedFile(rel=rel)
        try:
            cls._parse_into(ctx, rel, data, out)
        except Exception as exc:  # a parse never raises: the last line of defence for one bad file
            out.problems.append(unexpected(rel, exc, "file skipped"))
        return out

    @classmethod
    def _parse_into(cls, ctx: ParseContext, rel: str, data: bytes, out: ParsedFile) -> None:
        place = _split_rel(rel)
        archive = archive_rel(rel) if place is None else None
        if place is None and archive is None:
            out.problems.append(
                Problem(
                    path=rel,
                    message=(
                        "not a MassGen memory file (expected "
                        "<workspace>/memory/short_term|long_term/<name>.md)"
                    ),
                    kept="file skipped",
                )
            )
            return
        where = place if place is not None else archive
        assert where is not None
        workspace, tier_dir, filename = where
        try:
            decoded = decode(
                data, nul_ok=True
            )  # MassGen reads with Python's open(): a NUL is just a character
        except TextProblem as exc:
            out.problems.append(
                Problem(path=rel, line=exc.line, message=exc.message, kept="file skipped")
            )
            return
        if (nul := nul_problem(rel, decoded, "MassGen")) is not None:
            out.problems.append(nul)
        text = decoded.text
        index = LineIndex(text, byte_base=decoded.bom_len)
        try:
            parsed = split_massgen(text)
        except MassGenFormatError as exc:
            # MassGen's workspace loader skips such a file, but in short_term/ its temp-workspace
            # loader (a fallback for a failed parse) and its archive loader (no parse at all) inject
            # the raw text. In long_term/ both show only the file name and a description line, which
            # such a file does not have: no text of it reaches the agent.
            if tier_dir != SHORT_TERM:
                out.problems.append(
                    Problem(
                        path=rel,
                        line=exc.line,
                        message=exc.message,
                        kept="file skipped: MassGen does not load it either",
                    )
                )
                return
            if not text.strip():
                out.problems.append(
                    Problem(
                        path=rel,
                        line=exc.line,
                        message=exc.message,
                        kept="file skipped: it holds no text",
                    )
                )
                return
            out.problems.append(
                Problem(
                    path=rel,
                    line=exc.line,
                    message=(
                        f"{exc.message}; MassGen's workspace loader skips it, but "
                        "its temp-workspace and archive loaders inject its raw text"
                    ),
                    kept="memory read as raw text",
                )
            )
            lead = len(text) - len(text.lstrip())
            parsed = MassGenFile({}, {}, text.strip(), lead, -1)
        else:
            if decoded.bom:
                out.problems.append(
                    Problem(
                        path=rel,
                        line=1,
                        message=(
                            "file starts with a UTF-8 BOM: MassGen reads "
                            "it as text before `---` and refuses the file"
                        ),
                        kept="memory read anyway",
                    )
                )
            cls._fence_problems(rel, text, parsed, index, out.problems)
        raw = parsed.close_fence < 0

        stem = filename[: -len(".md")]
        if archive is not None:
            # An archived copy never changes tier, and one answer folder may hold the same name in
            # both tiers: the tier folder is part of its locator.
            domain = workspace
            locator = f"{workspace}/{tier_dir}/{stem}"
            tier = Tier.ARCHIVE
        else:
            domain = workspace or Path(ctx.root).name or ctx.portfolio
            locator = f"{domain}/{stem}"
            tier = TIER_DIRS[tier_dir]
        meta = parsed.meta
        cls._field_problems(rel, tier_dir, meta.get("tier"), parsed, out.problems)

        fields: dict[str, str] = dict(meta)
        if raw:
            fields[RAW] = (
                "no front matter: injected as raw text by the temp-workspace and archive loaders"
            )
        if archive is not None:
            fields["archived_tier"] = tier_dir
        fields.setdefault("name", stem)
        fields.setdefault("description", "")
        fields.setdefault("tier", "short_term")
        fields.setdefault("agent_id", "unknown")

        body_start = index.byte_of(parsed.body_start)
        body_end = index.byte_of(parsed.body_start + len(parsed.body))
        words = count_words(parsed.body)
        created_raw = meta.get("created")
        entry = Entry(
            id=locator,
            span=Span(start=body_start, end=body_end),
            timestamp=created_raw or None,
            source=fields["agent_id"],
            words=words,
            chars=len(parsed.body),
        )
        out.memories.append(
            Memory(
                id=memory_id(NAME, ctx.portfolio, locator),
                system=NAME,
                portfolio=ctx.portfolio,
                locator=locator,
                name=meta.get("name") or stem,
                description=meta.get("description", ""),
                tier=tier,
                domain=domain,
                kind="memory",
                trust=TrustLevel.UNTRUSTED,
                trust_claimed=False,
                tokens=estimate_tokens(words),
                words=words,
                chars=len(parsed.body),
                entries=(entry,),
                source=Source(path=rel),
                span=Span(start=0, end=len(data)),
                sha256=sha256_text(parsed.body),
                created=iso_or_none(created_raw),
                updated=iso_or_none(meta.get("updated")),
                fields=fields,
            )
        )

    @staticmethod
    def _fence_problems(
        rel: str, text: str, parsed: MassGenFile, index: LineIndex, problems: list[Problem]
    ) -> None:
        """MassGen accepts a `---` anywhere; say so when a fence is not alone on its line, since the
        front matter or body then differs from what the author meant."""
        after_open = text[3:5]
        if not (after_open.startswith("\n") or after_open == "\r\n"):
            problems.append(
                Problem(
                    path=rel,
                    line=1,
                    message=(
                        "the opening `---` is not alone on its line; "
                        "MassGen reads what follows it as front matter"
                    ),
                    kept="read as MassGen reads it",
                )
            )
        pos = parsed.close_fence
        before = text[pos - 1 : pos] if pos > 0 else ""
        after = text[pos + 3 : pos + 5]
        alone = before == "\n" and (after == "" or after.startswith("\n") or after == "\r\n")
        if not alone:
            problems.append(
                Problem(
                    path=rel,
                    line=index.line_of(pos),
                    message=(
                        "a `---` inside a line ends the front matter here (MassGen splits "
                        "on the first two `---`); the rest of the file is read as the body"
                    ),
                    kept="read as MassGen reads it",
                )
            )

    @staticmethod
    def _field_problems(
        rel: str,
        tier_dir: str,
        tier_field: str | None,
        parsed: MassGenFile,
        problems: list[Problem],
    ) -> None:
        # A missing tier field is MassGen's default, not a disagreement:
        # only a written one is checked.
        if tier_field is not None:
            tier_line = parsed.meta_lines["tier"][-1]
            if tier_field not in TIER_DIRS:
                problems.append(
                    Problem(
                        path=rel,
                        line=tier_line,
                        message=(
                            f"tier `{tier_field}` is not short_term or long_term (MassGen "
                            f"reads it as short_term); the folder {tier_dir}/ wins"
                        ),
                        kept=f"read as {tier_dir}",
                    )
                )
            elif tier_field != tier_dir:
                problems.append(
                    Problem(
                        path=rel,
                        line=tier_line,
                        message=(
                            f"tier field says {tier_field} but the file is in "
                            f"{tier_dir}/; the folder wins (MassGen loads by folder)"
                        ),
                        kept=f"read as {tier_dir}",
                    )
                )
        for key, lines in parsed.meta_lines.items():
            if len(lines) > 1:
                where = ", ".join(str(n) for n in lines)
                problems.append(
                    Problem(
                        path=rel,
                        line=lines[-1],
                        message=f"duplicate key `{key}` on lines {where}; MassGen keeps the last",
                        kept="last value kept",
                    )
                )

    @classmethod
    def text(cls, root: Path, memory: Memory) -> str:
        """The memory's stripped body (the stripped raw text of a file without front matter),
        re-read from disk. Raises safefs.UnsafeFile or TextProblem when the
        file can no longer be read."""
        data = safefs.read_at(root, memory.source.path)
        return body_of(decode(data, nul_ok=True).text)


def body_of(text: str) -> str:
    """The text MassGen's loaders inject: the body when the file has
    front matter, else the raw text."""
    try:
        return split_massgen(text).body
    except MassGenFormatError:
        return text.strip()


def _holds_memories(rel: str) -> bool:
    return _split_rel(rel) is not None or archive_rel(rel) is not None


def _cannot_hold_memories(rel_dir: str) -> bool:
    return not (_may_hold_memories(rel_dir) or _archive_path_prefix(rel_dir))
