"""The strict, bounded parsing primitives every adapter stands on."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest

from app.core.inert import inert, one_line
from app.core.model import Problem
from app.core.parsing import frontmatter, safefs, text, yamlsafe

# -- front matter ---------------------------------------------------------------------------------


def test_split_lf() -> None:
    source = "---\nname: a\ntags: [x]\n---\n# Body\n"
    fm = frontmatter.split(source)
    assert fm.meta == "name: a\ntags: [x]\n"
    assert source[fm.body_start :] == "# Body\n"
    assert fm.newline == "\n"


def test_split_crlf_keeps_offsets() -> None:
    source = "---\r\nname: a\r\n---\r\nbody\r\n"
    fm = frontmatter.split(source)
    assert fm.meta == "name: a\r\n"
    assert source[fm.meta_start : fm.meta_start + len(fm.meta)] == fm.meta
    assert source[fm.body_start :] == "body\r\n"
    assert fm.newline == "\r\n"


def test_split_closing_fence_at_eof_without_newline() -> None:
    fm = frontmatter.split("---\nname: a\n---")
    assert fm.meta == "name: a\n"
    assert fm.body_start == len("---\nname: a\n---")


@pytest.mark.parametrize(
    "source, message",
    [
        ("name: a\n---\n", "does not start with a `---` line"),
        ("---\nname: a\nbody\n", "never closed"),
        ("---\r\nname: a\r\n", "never closed"),
        ("--- \nname: a\n---\n", "does not start with a `---` line"),
        ("\n---\nname: a\n---\n", "does not start with a `---` line"),
    ],
)
def test_split_refuses(source: str, message: str) -> None:
    with pytest.raises(text.TextProblem) as caught:
        frontmatter.split(source)
    assert message in caught.value.message
    assert caught.value.line == 1


def test_fence_with_trailing_text_does_not_close() -> None:
    with pytest.raises(text.TextProblem):
        frontmatter.split("---\nname: a\n--- not a fence\n")


@pytest.mark.parametrize(
    "source, meta, body",
    [
        ("---\n---\nbody\n", "", "body\n"),  # empty metadata
        ("---\nname: a\n---\r", "name: a\n", ""),  # CRLF's CR before the end of the text
        ("---\na: 1\n----\n---\nb\n", "a: 1\n----\n", "b\n"),  # four dashes are metadata
        ("---\na: 1\n---\rb\n---\nc", "a: 1\n---\rb\n", "c"),  # a CR inside a line does not end it
        ("---\na: 1\n ---\n---\n", "a: 1\n ---\n", ""),  # an indented fence is metadata
        (
            "---\r\na: 1\n---\n\nbody",
            "a: 1\n",
            "\nbody",
        ),  # the first closing fence, whatever its line end
    ],
)
def test_split_finds_the_first_line_of_three_dashes_alone(
    source: str, meta: str, body: str
) -> None:
    fm = frontmatter.split(source)
    assert (fm.meta, source[fm.body_start :]) == (meta, body)
    assert source[fm.meta_start : fm.meta_start + len(fm.meta)] == fm.meta


# -- text -----------------------------------------------------------------------------------------


def test_decode_bom() -> None:
    decoded = text.decode(b"\xef\xbb\xbf---\nname: a\n---\n")
    assert decoded.bom and decoded.text.startswith("---")


@pytest.mark.parametrize(
    "data, message, line",
    [
        (b"ok\nbad \xff here\n", "invalid UTF-8 at byte 7 (0xff)", 2),
        (b"\xef\xbb\xbfa\n\n\xc3\x28", "invalid UTF-8 at byte 6 (0xc3)", 3),
        (b"lone surrogate \xed\xa0\x80\n", "invalid UTF-8 at byte 15 (0xed)", 1),
        (b"\xff\xfe-\x00-\x00", "UTF-16", 1),
        (b"\xfe\xff\x00-", "UTF-16", 1),
        (b"text\n\x00binary", "NUL character", 2),
    ],
)
def test_decode_refuses(data: bytes, message: str, line: int) -> None:
    with pytest.raises(text.TextProblem) as caught:
        text.decode(data)
    assert message in caught.value.message
    assert caught.value.line == line


def test_line_index_bytes_and_lines() -> None:
    source = "é\nab\nc"
    index = text.LineIndex(source, byte_base=3)
    assert index.line_of(0) == 1 and index.line_of(2) == 2 and index.line_of(5) == 3
    assert index.byte_of(2) == 3 + len("é\n".encode())
    assert index.line_start(3) == 5


# -- YAML -----------------------------------------------------------------------------------------


def test_scalars_stay_text() -> None:
    value = yamlsafe.load_mapping(
        "version: 1.10\nflag: yes\nn: 012\nhex: 0x1F\nt: 1:30\nd: 2026-02-30\non: x\n1: "
        "one\ntrue: t\n"
    )
    assert value == {
        "version": "1.10",
        "flag": "yes",
        "n": "012",
        "hex": "0x1F",
        "t": "1:30",
        "d": "2026-02-30",
        "on": "x",
        "1": "one",
        "true": "t",
    }


@pytest.mark.parametrize(
    "source, message, line",
    [
        ("a: 1\nb: 2\na: 3\n", "duplicate key `a` on lines 1 and 3", 3),
        ("1: a\n'1': b\n", "duplicate key `1` on lines 1 and 2", 2),
        (
            "x: !!python/object/apply:os.system ['ls']\n",
            "unsupported YAML tag `!!python/object/apply:os.system`",
            1,
        ),
        ("x: !!binary aGVsbG8=\n", "unsupported YAML tag `!!binary`", 1),
        ("x: !custom v\n", "unsupported YAML tag `!custom`", 1),
        ("a: &a [*a]\n", "recursive YAML alias", 1),
        ("a: &a {x: *a}\n", "recursive YAML alias", 1),
        ("? [a, b]\n: c\n", "mapping key is not a plain scalar", 1),
        ("a: [1, 2\nb: 3\n", "YAML syntax error", 2),
        ("a:\n\tb: 1\n", "YAML syntax error", 2),
        ("a: x\x85b: y\n", "U+0085 (NEL)", 1),
        ("a: x\u2028b: y\n", "U+2028", 1),
    ],
)
def test_yaml_refuses(source: str, message: str, line: int) -> None:
    with pytest.raises(yamlsafe.YamlProblem) as caught:
        yamlsafe.load(source)
    assert message in caught.value.message
    assert caught.value.line == line


def test_line_offset_is_added() -> None:
    with pytest.raises(yamlsafe.YamlProblem) as caught:
        yamlsafe.load("a: 1\na: 2\n", line_offset=1)
    assert caught.value.line == 3


@pytest.mark.timeout(5)
def test_billion_laughs_is_refused_before_expanding() -> None:
    lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for i, name in enumerate("bcdefghi"):
        prev = "a" if i == 0 else "bcdefghi"[i - 1]
        lines.append(f"{name}: &{name} [" + ",".join(f"*{prev}" for _ in range(9)) + "]")
    with pytest.raises(yamlsafe.YamlProblem) as caught:
        yamlsafe.load("\n".join(lines) + "\n")
    assert "YAML bomb" in caught.value.message


@pytest.mark.timeout(5)
def test_many_aliases_refused() -> None:
    source = (
        "a: &a x\n"
        + "".join(f"k{i}: [*a]\n" for i in range(10))
        + "l: &l [1]\n"
        + "".join(f"m{i}: *l\n" for i in range(70))
    )
    with pytest.raises(yamlsafe.YamlProblem) as caught:
        yamlsafe.load(source)
    assert "more than 64 aliases" in caught.value.message


@pytest.mark.timeout(5)
@pytest.mark.parametrize(
    "source",
    [
        "[" * 20000 + "]" * 20000,
        "".join("  " * i + f"k{i}:\n" for i in range(40)) + "  " * 40 + "v\n",
    ],
)
def test_deep_nesting_refused(source: str) -> None:
    with pytest.raises(yamlsafe.YamlProblem) as caught:
        yamlsafe.load(source)
    assert "nested" in caught.value.message or "syntax" in caught.value.message


def test_oversize_yaml_refused() -> None:
    with pytest.raises(yamlsafe.YamlProblem) as caught:
        yamlsafe.load("a: " + "x" * 300_000)
    assert "over the 262,144-character limit" in caught.value.message


@pytest.mark.parametrize(
    "source, message",
    [
        ("- a\n- b\n", "is a list, not a mapping"),
        ("just text\n", "is a single value, not a mapping"),
    ],
)
def test_mapping_required(source: str, message: str) -> None:
    with pytest.raises(yamlsafe.YamlProblem) as caught:
        yamlsafe.load_mapping(source)
    assert message in caught.value.message


def test_typing_helpers_follow_yaml_1_2() -> None:
    assert (
        yamlsafe.as_bool("true") is True
        and yamlsafe.as_bool("yes") is None
        and yamlsafe.as_bool("False") is False
    )
    assert (
        yamlsafe.as_int("012") == 12
        and yamlsafe.as_int("0x1F") is None
        and yamlsafe.as_int("9" * 5000) is None
    )
    assert yamlsafe.as_int("10.0") == 10 and yamlsafe.as_int("true") is None
    assert yamlsafe.as_float("0.25") == 0.25 and yamlsafe.as_float("nan") is None
    assert yamlsafe.as_str_list("one") == ["one"] and yamlsafe.as_str_list(["a", ["b"], "c"]) == [
        "a",
        "c",
    ]


# -- file system ----------------------------------------------------------------------------------


def _walk(root: Path) -> tuple[list[str], list[Problem]]:
    problems: list[Problem] = []
    files = [f.rel for f in safefs.walk_files(root, lambda rel: rel.endswith(".md"), problems)]
    return files, problems


@pytest.mark.timeout(5)
def test_walk_skips_fifo_socket_and_outside_symlinks(tmp_path: Path) -> None:
    root = tmp_path / "root"
    (root / "sub").mkdir(parents=True)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text("secret")
    (root / "a.md").write_text("a")
    (root / "sub" / "b.md").write_text("b")
    os.mkfifo(root / "evil.md")
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(root / "sock.md"))
    (root / "out.md").symlink_to(outside / "secret.md")
    (root / "outdir").symlink_to(outside)
    (root / "inside.md").symlink_to(root / "a.md")
    (root / "dangling.md").symlink_to(root / "missing.md")
    (root / "loop1.md").symlink_to(root / "loop2.md")
    (root / "loop2.md").symlink_to(root / "loop1.md")
    try:
        files, problems = _walk(root)
    finally:
        sock.close()
    assert files == ["a.md", "inside.md", "sub/b.md"]
    messages = {p.path: p.message for p in problems}
    assert messages["evil.md"] == "not a regular file (FIFO)"
    assert messages["sock.md"] == "not a regular file (socket)"
    assert messages["out.md"] == "symlink leads outside the portfolio root"
    assert messages["outdir"] == "symlink leads outside the portfolio root"
    assert messages["dangling.md"] == "dangling or looping symlink"
    assert messages["loop1.md"] == "dangling or looping symlink"


@pytest.mark.timeout(5)
def test_read_file_never_blocks_on_fifo_and_refuses_symlinks(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "fifo.md")
    with pytest.raises(safefs.UnsafeFile, match="FIFO"):
        safefs.read_file(str(tmp_path / "fifo.md"))
    (tmp_path / "real.md").write_text("x")
    (tmp_path / "link.md").symlink_to(tmp_path / "real.md")
    with pytest.raises(safefs.UnsafeFile, match="symlink"):
        safefs.read_file(str(tmp_path / "link.md"))


def test_read_file_size_cap(tmp_path: Path) -> None:
    (tmp_path / "big.md").write_bytes(b"x" * 2048)
    with pytest.raises(safefs.UnsafeFile, match="over the 1,024-byte limit"):
        safefs.read_file(str(tmp_path / "big.md"), max_bytes=1024)


def test_odd_names_are_shown_escaped(tmp_path: Path) -> None:
    root = tmp_path / "r"
    root.mkdir()
    names = (
        b"bad\xff.md",
        b"new\nline.md",
        b"-dash.md",
        "file\u202egpj.md".encode(),
        "\u0430dmin.md".encode(),
        b"c1\xc2\x85.md",
        b"back\\x.md",
    )
    for name in names:
        with open(os.path.join(os.fsencode(root), name), "wb") as handle:
            handle.write(b"x")
    files, problems = _walk(root)
    assert problems == []
    shown = sorted(files)
    expected = [
        "bad\\xff.md",
        "new\\x0aline.md",
        "-dash.md",
        "file\\u202egpj.md",
        "\u0430dmin.md",
        "c1\\u0085.md",
        "back\\\\x.md",
    ]
    assert shown == sorted(expected)
    assert sorted(os.fsencode(safefs.real_name(s)) for s in shown) == sorted(names)


def test_nfc_and_nfd_names_are_two_files(tmp_path: Path) -> None:
    (tmp_path / "caf\u00e9.md").write_text("nfc")
    (tmp_path / "cafe\u0301.md").write_text("nfd")
    files, _ = _walk(tmp_path)
    assert len(files) == 2


# -- inert rendering ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "raw, shown",
    [
        ("a\x1b[2Kb", "a\u241b[2Kb"),
        ("\x1b]0;PWNED\x07", "\u241b]0;PWNED\u2407"),
        ("x\x9by", "x\u27e6U+009B\u27e7y"),
        ("ad\u200bmin", "ad\u27e6U+200B\u27e7min"),
        ("\u202egnp.exe", "\u27e6U+202E\u27e7gnp.exe"),
        ("\U000e0041\U000e0042", "\u27e6U+E0041\u27e7\u27e6U+E0042\u27e7"),
        (
            "\U0001f3f4\U000e0067\U000e0062\U000e0065\U000e006e\U000e0067\U000e007f",
            "\U0001f3f4\U000e0067\U000e0062\U000e0065\U000e006e\U000e0067\U000e007f",
        ),
        ("\u05e9\u05dc\u05d5\u05dd", "\u05e9\u05dc\u05d5\u05dd"),
        ("[@click=app.quit]x[/]", "[@click=app.quit]x[/]"),
    ],
)
def test_inert(raw: str, shown: str) -> None:
    assert inert(raw) == shown
    assert "\x1b" not in inert(raw) and "\x07" not in inert(raw)


def test_inert_changes_no_printable_ascii_and_every_other_ascii_character() -> None:
    """The printable ASCII characters come back as they are (the quick path); every other ASCII
    character is made visible or flattened, alone or among printable ones."""
    printable = "".join(map(chr, range(0x20, 0x7F)))
    assert inert(printable) == printable and inert(printable, keep_newlines=False) == printable
    for code in [*range(0x20), 0x7F]:
        text = f"a{chr(code)}b"
        if chr(code) == "\n":
            assert inert(text) == text and inert(text, keep_newlines=False) == "a\u2424b"
        elif chr(code) == "\t":
            assert inert(text) == text and inert(text, keep_newlines=False) == "a b"
        else:
            assert inert(text) == f"a{chr(0x2400 + code if code < 0x20 else 0x2421)}b"


def test_one_line_flattens_and_shortens() -> None:
    assert one_line("a\n b\tc", 80) == "a b c"
    assert one_line("x" * 100, 10) == "x" * 9 + "\u2026"
    # the quick path for a line already flat and printable agrees with the long way round
    for raw in (
        "plain name",
        " lead",
        "trail ",
        "two  spaces",
        "x" * 10,
        "x" * 11,
        "",
        "tab\there",
        "caf\u00e9",
        "a\x1bb",
    ):
        assert one_line(raw, 10) == (lambda flat: flat if len(flat) <= 10 else flat[:9] + "\u2026")(
            inert(" ".join(raw.split()), keep_newlines=False)
        )


def test_walk_order_is_by_shown_path_and_prefix_is_added(tmp_path: Path) -> None:
    root = tmp_path / "root"
    (root / "b").mkdir(parents=True)
    (root / "a").mkdir()
    for rel in ("z.md", "a/2.md", "a/1.md", "b/x.md", "m.md", "b/\x7fdel.md", "b/a.md"):
        (root / rel).write_text("x")
    problems: list[Problem] = []
    files = [
        f.rel
        for f in safefs.walk_files(
            root, lambda rel: rel.endswith(".md"), problems, prefix="memories/"
        )
    ]
    # Each folder's files in the order of their shown paths, before its subfolders': DEL (0x7f)
    # sorts after the letters, its escape `\x7f` before them.
    assert files == [
        "memories/m.md",
        "memories/z.md",
        "memories/a/1.md",
        "memories/a/2.md",
        "memories/b/\\x7fdel.md",
        "memories/b/a.md",
        "memories/b/x.md",
    ]
    assert problems == []


def test_one_file_is_what_the_walk_lists_or_none(tmp_path: Path) -> None:
    root = tmp_path / "root"
    (root / "a" / "b").mkdir(parents=True)
    (root / ".git").mkdir()
    (root / "deep" / "x" / "y").mkdir(parents=True)
    for rel in (
        "top.md",
        "a/one.md",
        "a/b/two.md",
        ".git/hidden.md",
        "deep/x/y/far.md",
        "a/skip.txt",
        "a/.wb-0123456789abcdef.tmp",
    ):
        (root / rel).write_text("text", encoding="utf-8")
    (root / "a" / "b" / "link.md").symlink_to(root / "top.md")
    (root / "linked").symlink_to(root / "a", target_is_directory=True)

    def accept(rel: str) -> bool:
        return rel.endswith((".md", ".tmp"))

    def prune(rel: str) -> bool:
        return rel.rsplit("/", 1)[-1].startswith(".")

    walked = {
        ref.rel: ref
        for ref in safefs.walk_files(root, accept, [], prune=prune, max_depth=2, prefix="m/")
    }
    assert {"m/top.md", "m/a/one.md", "m/a/b/two.md"} <= set(walked)
    for rel in ("m/top.md", "m/a/one.md", "m/a/b/two.md"):
        assert (
            safefs.one_file(root, rel, accept, prune=prune, max_depth=2, prefix="m/") == walked[rel]
        )
    # The walk follows a symlink, prunes, stops at a depth, passes litter over: only it can tell
    # those.
    for rel in (
        "m/a/b/link.md",
        "m/.git/hidden.md",
        "m/deep/x/y/far.md",
        "m/a/skip.txt",
        "m/a/.wb-0123456789abcdef.tmp",
        "m/linked/one.md",
    ):
        assert rel not in walked or rel == "m/a/b/link.md"
        assert safefs.one_file(root, rel, accept, prune=prune, max_depth=2, prefix="m/") is None, (
            rel
        )
    for rel in ("top.md", "m/missing.md", "m/../top.md", "m//top.md", "m/a/b"):
        assert safefs.one_file(root, rel, accept, prune=prune, max_depth=2, prefix="m/") is None, (
            rel
        )


def test_a_walk_for_one_name_lists_what_the_whole_walk_lists_of_that_name(tmp_path: Path) -> None:
    root = tmp_path / "root"
    for rel in ("a/x.md", "a/y.md", "b/c/x.md", "b/x.md.bak", "x.md", "d/x.md/inner.md", "e/y.md"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("text", encoding="utf-8")
    (root / "e" / "x.md").symlink_to(
        root / "a" / "y.md"
    )  # named so: followed, as the whole walk does
    (root / "e" / "link.md").symlink_to(root / "a" / "x.md")  # another name to the same file
    (root / "f").symlink_to(root / "b", target_is_directory=True)
    os.mkfifo(root / "b" / "x.md.fifo")

    for name in ("x.md", "y.md", "inner.md", "link.md", "none.md"):

        def accept(rel: str, name: str = name) -> bool:
            return rel.endswith(".md") and rel.rpartition("/")[2] == name

        whole = list(safefs.walk_files(root, accept, []))
        assert list(safefs.walk_files(root, accept, [], named=name)) == whole, name
        assert whole or name == "none.md"
    assert [
        ref.rel
        for ref in safefs.walk_files(root, lambda rel: rel.endswith(".md"), [], named="x.md")
    ] == [
        "x.md",
        "a/x.md",
        "b/c/x.md",
        "e/link.md",
        "e/x.md",
    ]
