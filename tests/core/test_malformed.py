"""Malformed input (docs/security.md sections 3.1 and 3.2), each case through the whole load
pipeline: the exact problem with its line, the good memory beside it still read, nothing hangs,
nothing is written into the portfolio."""

from __future__ import annotations

import os
import pickle
import socket
import stat
from pathlib import Path

import pytest

from app.core.model import Memory, Problem
from app.core.workbench import Workbench
from tests.write_guard import guarding

GOOD = (
    b"---\nname: good-memory\ndescription: still read\n---\nThe deploy runbook lives in the wiki.\n"
)
DAY = "memories/2026-11-01"


def _portfolio(tmp_path: Path) -> Path:
    root = tmp_path / "dh"
    (root / "portfolio" / DAY).mkdir(parents=True)
    (root / "portfolio" / DAY / "good.yaml").write_bytes(GOOD)
    return root


def _snapshot(root: Path) -> dict[str, tuple[int, int]]:
    return {
        os.path.relpath(os.path.join(folder, name), root): (
            os.lstat(os.path.join(folder, name)).st_size,
            os.lstat(os.path.join(folder, name)).st_mtime_ns,
        )
        for folder, _, names in os.walk(root)
        for name in names
    }


def scan(root: Path) -> tuple[list[Memory], list[Problem]]:
    before = _snapshot(root)
    workbench = Workbench()
    workbench.open([root])
    assert _snapshot(root) == before, "a scan wrote into the portfolio"
    names = [m.name for m in workbench.memories]
    assert "good-memory" in names, "one bad file stopped the rest"
    return workbench.memories, workbench.problems()


def scan_bad(tmp_path: Path, name: str, data: bytes) -> tuple[list[Memory], list[Problem]]:
    root = _portfolio(tmp_path)
    (root / "portfolio" / DAY / name).write_bytes(data)
    return scan(root)


def only_problem(problems: list[Problem], path_part: str) -> Problem:
    found = [p for p in problems if path_part in p.path]
    assert len(found) == 1, problems
    return found[0]


def _laughs(levels: int) -> str:
    lines = ['l0: &l0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for i in range(1, levels):
        lines.append(f"l{i}: &l{i} [" + ",".join([f"*l{i - 1}"] * 9) + "]")
    return "\n".join(lines) + "\n"


FM = "---\nname: {name}\n{extra}---\nbody text\n"

# (file name, bytes, message fragment, line). Lines are 1-based in the file.
CASES: list[tuple[str, bytes, str, int | None]] = [
    # B: YAML bombs, aliases, nesting
    ("bomb-fm.yaml", ("---\nname: bomb\n" + _laughs(9) + "---\nx\n").encode(), "YAML bomb", None),
    ("bomb-v2.yaml", ("metadata:\n  name: bomb\n" + _laughs(9)).encode(), "YAML bomb", None),
    (
        "aliases.yaml",
        (
            "---\nname: a\nx: &x ["
            + ",".join(["1"] * 400)
            + "]\n"
            + "".join(f"k{i}: *x\n" for i in range(70))
            + "---\nb\n"
        ).encode(),
        "YAML bomb",
        None,
    ),
    ("recursive-list.yaml", b"---\nname: r\nself: &a [*a]\n---\nb\n", "recursive YAML alias", 3),
    ("recursive-map.yaml", b"---\nname: r\nself: &a {x: *a}\n---\nb\n", "recursive YAML alias", 3),
    (
        "deep-flow.yaml",
        ("---\nname: d\nx: " + "[" * 5000 + "]" * 5000 + "\n---\nb\n").encode(),
        "nesting depth",
        3,
    ),
    (
        "deep-block.yaml",
        (
            "---\nname: d\n"
            + "".join("  " * i + f"k{i}:\n" for i in range(40))
            + "  " * 40
            + "v\n---\nb\n"
        ).encode(),
        "nested deeper than",
        None,
    ),
    # B: duplicate and colliding keys
    (
        "dup-name.yaml",
        b"---\nname: one\ndescription: d\nname: two\n---\nb\n",
        "duplicate key `name` on lines 2 and 4",
        4,
    ),
    (
        "dup-trust.yaml",
        b"entries:\n- content: hi\n  id: mem_1_abc\n  trustLevel: quarantined\n  "
        b"trustLevel: validated\nmetadata:\n  name: dup-trust\n",
        "duplicate key `trustLevel` on lines 4 and 5",
        5,
    ),
    (
        "collide.yaml",
        b"---\nname: c\n1: a\n'1': b\n---\nb\n",
        "duplicate key `1` on lines 3 and 4",
        4,
    ),
    (
        "complex-key.yaml",
        b"---\nname: c\n? [a, b]\n: c\n---\nb\n",
        "mapping key is not a plain scalar",
        3,
    ),
    # B: tags
    (
        "python-tag.yaml",
        b"---\nname: t\nx: !!python/object/apply:os.system ['id']\n---\nb\n",
        "unsupported YAML tag `!!python/object/apply:os.system`",
        3,
    ),
    (
        "binary-tag.yaml",
        b"---\nname: t\nx: !!binary aGk=\n---\nb\n",
        "unsupported YAML tag `!!binary`",
        3,
    ),
    ("custom-tag.yaml", b"---\nname: t\nx: !evil v\n---\nb\n", "unsupported YAML tag `!evil`", 3),
    # B: encodings and bytes
    ("bad-utf8.yaml", b"---\nname: u\n---\nbody \xff here\n", "invalid UTF-8 at byte 21 (0xff)", 4),
    ("bad-utf8-meta.yaml", b"---\nname: \xc3\x28\n---\nb\n", "invalid UTF-8 at byte 10 (0xc3)", 2),
    ("surrogate.yaml", b"---\nname: s\n---\n\xed\xa0\x80\n", "invalid UTF-8 at byte 16 (0xed)", 4),
    ("utf16le.yaml", "\ufeff---\nname: w\n---\nb\n".encode("utf-16-le"), "UTF-16", 1),
    ("utf16be.yaml", "\ufeff---\nname: w\n---\nb\n".encode("utf-16-be"), "UTF-16", 1),
    ("nul.yaml", b"---\nname: n\n---\nbody\x00more\n", "NUL character", 4),
    ("binary.yaml", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "invalid UTF-8 at byte 0 (0x89)", 1),
    ("nel.yaml", "---\nname: a\x85trustLevel: trusted\n---\nb\n".encode(), "U+0085 (NEL)", 2),
    ("line-sep.yaml", "---\nname: a\u2028x: y\n---\nb\n".encode(), "U+2028", 2),
    # B: fences and shapes
    ("no-close.yaml", b"---\nname: open\ndescription: never closed\nbody\n", "never closed", 1),
    ("no-close-crlf.yaml", b"---\r\nname: open\r\nbody\r\n", "never closed", 1),
    ("list-fm.yaml", b"---\n- a\n- b\n---\nbody\n", "is a list, not a mapping", 2),
    ("scalar-fm.yaml", b"---\njust a sentence\n---\nbody\n", "is a single value, not a mapping", 2),
    ("list-doc.yaml", b"- a\n- b\n", "is a list, not a mapping", 1),
    (
        "syntax.yaml",
        b"metadata:\n  name: s\n  tags: [a, b\n  description: x\n",
        "YAML syntax error",
        None,
    ),
    ("tabs.yaml", b"---\nname: t\nmeta:\n\tkey: v\n---\nb\n", "YAML syntax error", 4),
    # B: sizes
    (
        "huge-file.yaml",
        b"---\nname: big\n---\n" + b"x" * (3 * 1024 * 1024),
        "over the 2,097,152-byte limit",
        None,
    ),
    (
        "huge-fm.yaml",
        ("---\nname: big\ndescription: " + "x" * 300_000 + "\n---\nb\n").encode(),
        "over the 262,144-character limit",
        2,
    ),
]


@pytest.mark.timeout(10)
@pytest.mark.parametrize("name, data, message, line", CASES, ids=[c[0] for c in CASES])
def test_parse_fault(
    tmp_path: Path, name: str, data: bytes, message: str, line: int | None
) -> None:
    memories, problems = scan_bad(tmp_path, name, data)
    problem = only_problem(problems, name)
    assert message in problem.message
    if line is not None:
        assert problem.line == line
    assert problem.kept
    kept = [m for m in memories if m.source.path.endswith(name)]
    if "file skipped" in problem.kept:
        assert kept == []
    else:  # a bad field or entry is dropped and the rest of the file is read
        assert len(kept) == 1


@pytest.mark.timeout(10)
def test_empty_file_is_reported(tmp_path: Path) -> None:
    memories, problems = scan_bad(tmp_path, "empty.yaml", b"")
    assert "empty" in only_problem(problems, "empty.yaml").message


@pytest.mark.timeout(10)
def test_yaml_1_1_values_stay_as_written(tmp_path: Path) -> None:
    data = (
        b"---\nname: typed\nversion: 1.10\nautoLoad: yes\npriority: 012\non: x\ncreated: "
        b"2026-13-45\n---\nbody\n"
    )
    memories, problems = scan_bad(tmp_path, "typed.yaml", data)
    memory = next(m for m in memories if m.name == "typed")
    assert memory.fields["version"] == "1.10"
    assert memory.fields["on"] == "x"
    assert memory.tier.value == "cold", "`yes` is not true in YAML 1.2 (js-yaml): not auto-loaded"
    problem = only_problem(problems, "typed.yaml")
    assert problem.line == 4 and "`yes` is not a YAML boolean" in problem.message


@pytest.mark.timeout(10)
def test_bom_crlf_and_mixed_line_endings_read(tmp_path: Path) -> None:
    root = _portfolio(tmp_path)
    folder = root / "portfolio" / DAY
    (folder / "bom.yaml").write_bytes(b"\xef\xbb\xbf---\nname: with-bom\n---\nbody\n")
    (folder / "crlf.yaml").write_bytes(b"---\r\nname: with-crlf\r\n---\r\nbody\r\n")
    (folder / "mixed.yaml").write_bytes(b"---\nname: mixed\r\ndescription: d\n---\r\nbody\n")
    memories, problems = scan(root)
    names = {m.name for m in memories}
    assert {"with-bom", "with-crlf", "mixed"} <= names
    assert not [p for p in problems if p.path.endswith(("bom.yaml", "crlf.yaml", "mixed.yaml"))]


@pytest.mark.timeout(10)
def test_long_single_line_body(tmp_path: Path) -> None:
    memories, problems = scan_bad(
        tmp_path, "long.yaml", b"---\nname: long\n---\n" + b"word " * 300_000
    )
    memory = next(m for m in memories if m.name == "long")
    assert memory.words == 300_000


@pytest.mark.timeout(10)
def test_traversal_in_name_is_only_a_name(tmp_path: Path) -> None:
    memories, _ = scan_bad(tmp_path, "trav.yaml", b"---\nname: ../../../etc/passwd\n---\nb\n")
    memory = next(m for m in memories if m.source.path.endswith("trav.yaml"))
    assert memory.name == "../../../etc/passwd"
    assert memory.locator == "trav"


# -- C: the file system ---------------------------------------------------------------------------


@pytest.mark.timeout(10)
def test_symlinks_out_of_root_are_not_followed(tmp_path: Path) -> None:
    root = _portfolio(tmp_path)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.yaml").write_bytes(b"---\nname: outside-secret\n---\nsecret\n")
    folder = root / "portfolio" / DAY
    (folder / "escape.yaml").symlink_to(outside / "secret.yaml")
    (root / "portfolio" / "memories" / "escape-dir").symlink_to(outside)
    (folder / "dangling.yaml").symlink_to(folder / "missing.yaml")
    (folder / "loop-a.yaml").symlink_to(folder / "loop-b.yaml")
    (folder / "loop-b.yaml").symlink_to(folder / "loop-a.yaml")
    (folder / "inside.yaml").symlink_to(folder / "good.yaml")
    memories, problems = scan(root)
    assert "outside-secret" not in {m.name for m in memories}
    assert (
        only_problem(problems, "escape.yaml").message == "symlink leads outside the portfolio root"
    )
    assert (
        only_problem(problems, "escape-dir").message == "symlink leads outside the portfolio root"
    )
    assert only_problem(problems, "dangling.yaml").message == "dangling or looping symlink"
    assert only_problem(problems, "loop-a.yaml").message == "dangling or looping symlink"
    assert (
        sum(m.name == "good-memory" for m in memories) == 2
    )  # the symlink inside the root is read


@pytest.mark.timeout(10)
def test_fifo_socket_and_device_skipped_without_blocking(tmp_path: Path) -> None:
    root = _portfolio(tmp_path)
    folder = root / "portfolio" / DAY
    os.mkfifo(folder / "evil.yaml")
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(folder / "sock.yaml"))
    device = False
    if os.geteuid() == 0:
        try:
            os.mknod(folder / "dev.yaml", stat.S_IFCHR | 0o600, os.makedev(1, 3))
            device = True
        except OSError:
            pass
    try:
        _, problems = scan(root)
    finally:
        sock.close()
    assert only_problem(problems, "evil.yaml").message == "not a regular file (FIFO)"
    assert only_problem(problems, "sock.yaml").message == "not a regular file (socket)"
    if device:
        assert only_problem(problems, "dev.yaml").message == "not a regular file (device)"


@pytest.mark.timeout(10)
def test_hard_link_is_read_as_a_file(tmp_path: Path) -> None:
    root = _portfolio(tmp_path)
    folder = root / "portfolio" / DAY
    os.link(folder / "good.yaml", folder / "hard.yaml")
    memories, problems = scan(root)
    assert sum(m.name == "good-memory" for m in memories) == 2
    assert not [p for p in problems if "hard.yaml" in p.path]


NOBODY = 65534


def _scan_as_nobody(root: Path, state: Path) -> list[tuple[str, str]]:
    """Scan `root` in a child process that has given up root (root reads files whatever their
    mode), with the workbench's own folders in `state`; the problems it reports, as (path,
    message)."""
    reader, writer = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns into pytest
        status = 0
        try:
            os.close(reader)
            os.setgroups([])
            os.setgid(NOBODY)
            os.setuid(NOBODY)
            for name in ("cache", "data", "config"):
                os.environ[f"MEMWB_{name.upper()}_DIR"] = str(state / name)
            _, problems = scan(root)
            result: object = [(p.path, p.message) for p in problems]
        except BaseException as exc:  # noqa: BLE001 - carried to the parent whatever it is
            result, status = repr(exc), 1
        with os.fdopen(writer, "wb") as out:
            pickle.dump(result, out)
        os._exit(status)
    os.close(writer)
    with os.fdopen(reader, "rb") as inp:
        result = pickle.load(inp)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0, result
    assert isinstance(result, list)
    return result


@pytest.mark.timeout(30)
def test_unreadable_file_and_folder(tmp_path: Path) -> None:
    root = _portfolio(tmp_path)
    folder = root / "portfolio" / DAY
    (folder / "locked.yaml").write_bytes(GOOD)
    os.chmod(folder / "locked.yaml", 0)
    locked_dir = root / "portfolio" / "memories" / "2026-11-02"
    locked_dir.mkdir()
    os.chmod(locked_dir, 0)
    try:
        if os.geteuid() == 0:
            problems = _scan_as_nobody_in(tmp_path, root)
        else:
            problems = [(p.path, p.message) for p in scan(root)[1]]
    finally:
        os.chmod(folder / "locked.yaml", 0o644)
        os.chmod(locked_dir, 0o755)
    found = {next(m for p, m in problems if part in p) for part in ("locked.yaml", "2026-11-02")}
    assert (
        len([p for p, _ in problems if "locked.yaml" in p]) == 1
        and len([p for p, _ in problems if "2026-11-02" in p]) == 1
    ), problems
    assert any("cannot open" in m for m in found) and any(
        "cannot list folder" in m for m in found
    ), problems


def _scan_as_nobody_in(tmp_path: Path, root: Path) -> list[tuple[str, str]]:
    """pytest's temporary folders are private to root: let `nobody` pass through them (search only,
    no listing) for the scan, with its own writable state folder, and put the modes back after."""
    modes = {p: stat.S_IMODE(p.stat().st_mode) for p in (tmp_path, *tmp_path.parents)}
    closed = {p: mode for p, mode in modes.items() if not mode & 0o001}
    state = tmp_path / "nobody-state"
    state.mkdir()
    os.chown(state, NOBODY, NOBODY)
    # Only these mode changes of pytest's own folders are let through, and they are undone below.
    with guarding([tmp_path, *closed]) as guard:
        try:
            for p, mode in closed.items():
                os.chmod(p, mode | 0o001)
            return _scan_as_nobody(root, state)
        finally:
            for p, mode in closed.items():
                os.chmod(p, mode)
            assert not guard.violations, guard.violations


@pytest.mark.timeout(10)
def test_odd_file_names(tmp_path: Path) -> None:
    root = _portfolio(tmp_path)
    folder = os.fsencode(root / "portfolio" / DAY)
    names = [
        b"bad\xff.yaml",
        b"new\nline.yaml",
        b"-dash.yaml",
        "rtl\u202eLMY.yaml".encode(),
        "\u0430dmin.yaml".encode(),
        b" spaced .yaml",
        b"CON.yaml",
        b"n" * 250 + b".yaml",
    ]
    for index, name in enumerate(names):
        with open(os.path.join(folder, name), "wb") as handle:
            handle.write(f"---\nname: odd-{index}\n---\nbody\n".encode())
    memories, problems = scan(root)
    assert {f"odd-{i}" for i in range(len(names))} <= {m.name for m in memories}
    shown = {m.source.path for m in memories}
    assert f"{DAY}/bad\\xff.yaml" in shown
    assert f"{DAY}/new\\x0aline.yaml" in shown
    assert f"{DAY}/rtl\\u202eLMY.yaml" in shown
    for memory in memories:
        memory.source.path.encode("utf-8")  # every shown path is printable UTF-8


@pytest.mark.timeout(10)
def test_nfc_nfd_and_case_pairs_are_distinct(tmp_path: Path) -> None:
    root = _portfolio(tmp_path)
    folder = root / "portfolio" / DAY
    for index, name in enumerate(["caf\u00e9.yaml", "cafe\u0301.yaml", "Notes.yaml", "notes.yaml"]):
        (folder / name).write_bytes(f"---\nname: pair-{index}\n---\nb\n".encode())
    memories, _ = scan(root)
    assert {f"pair-{i}" for i in range(4)} <= {m.name for m in memories}
    assert len({m.id for m in memories}) == len(memories)


@pytest.mark.timeout(10)
def test_server_internal_files_are_skipped(tmp_path: Path) -> None:
    root = _portfolio(tmp_path)
    memories_dir = root / "portfolio" / "memories"
    (memories_dir / "_index.json").write_text('{"version": 1}')
    (memories_dir / ".tmp").mkdir()
    (memories_dir / ".tmp" / "half.yaml").write_bytes(GOOD.replace(b"good-memory", b"tmp-copy"))
    (memories_dir / "backups" / "user" / "2026-11-01").mkdir(parents=True)
    (
        memories_dir
        / "backups"
        / "user"
        / "2026-11-01"
        / "good.backup-2026-11-01T09-12-33-120Z.yaml"
    ).write_bytes(GOOD.replace(b"good-memory", b"backup-copy"))
    (memories_dir / DAY.split("/")[1] / "good.backup-2026-11-01T09-12-33-120Z-v2.yaml").write_bytes(
        GOOD.replace(b"good-memory", b"inline-backup")
    )
    (memories_dir / DAY.split("/")[1] / "good.yaml.lock").write_text("123")
    (memories_dir / DAY.split("/")[1] / "backup-strategy.yaml").write_bytes(
        GOOD.replace(b"good-memory", b"backup-strategy")
    )
    memories, problems = scan(root)
    names = {m.name for m in memories}
    assert "backup-strategy" in names
    assert not names & {"tmp-copy", "backup-copy", "inline-backup"}
    assert problems == []
