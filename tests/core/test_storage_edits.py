"""Byte-preserving edits (docs/security.md section 5, step 3): only the intended bytes change; BOM,
CRLF, comments, indentation and key order stay; the result reads back with only the intended key
changed."""

from __future__ import annotations

from typing import Any

import pytest

from app.core.model import Span
from app.core.parsing import frontmatter, yamlsafe
from app.core.parsing.text import decode
from app.core.storage import EditError
from app.core.storage.edits import cut_span, insert_span, render, replace_span, scalar, set_key
from tests.core.test_storage import write_guard  # noqa: F401  (the fixture, used by pytestmark)

pytestmark = pytest.mark.usefixtures("write_guard")

BOM = b"\xef\xbb\xbf"

DOLLHOUSE_FM = (
    BOM
    + b"---\r\n"
    + b"# written by hand, keep this comment\r\n"
    + b"name: team-glossary\r\n"
    + b"description: Shared vocabulary   # trailing comment\r\n"
    + b"trustLevel: untrusted  # the agent's claim\r\n"
    + b"tags: [glossary, kite]\r\n"
    + b"version: 1.10\r\n"
    + b"---\r\n"
    + b"# Glossary\r\n"
    + b"trustLevel: this line is body text, not a key\r\n"
)

V2 = (
    b"entries:\n"
    b"- content: Staging deploys only from release/* branches.\n"
    b"  id: mem_1\n"
    b"  tags: [deploy, policy]\n"
    b"  trustLevel: untrusted\n"
    b"- content: |\n"
    b"    Prod needs two approvals.\n"
    b"\n"
    b"  id: mem_2  # no trust yet\n"
    b"extensions: {maxEntries: 1000, searchable: true}\n"
    b"metadata:\n"
    b"  name: deploy-runbook\n"
    b"  version: 1.0.0\n"
)


def meta(data: bytes) -> dict[str, Any]:
    """The front matter as parsing.yamlsafe reads it."""
    text = decode(data).text
    fm = frontmatter.split(text)
    return yamlsafe.load_mapping(fm.meta, line_offset=1)


def document(data: bytes) -> dict[str, Any]:
    return yamlsafe.load_mapping(decode(data).text)


def only(old: bytes, new: bytes, before: bytes, after: bytes) -> None:
    """`new` is `old` with the one occurrence of `before` replaced by `after`, every other byte
    equal."""
    assert old.count(before) == 1, before
    at = old.index(before)
    assert new[:at] == old[:at]
    assert new[at : at + len(after)] == after
    assert new[at + len(after) :] == old[at + len(before) :]


# -- set_key in front matter -----------------------------------------------------------------------


@pytest.mark.timeout(10)
def test_replace_keeps_bom_crlf_comments_and_order() -> None:
    new = set_key(DOLLHOUSE_FM, "trustLevel", "validated")
    only(DOLLHOUSE_FM, new, b"trustLevel: untrusted  #", b"trustLevel: validated  #")
    assert new.startswith(BOM + b"---\r\n") and new.count(b"\r\n") == DOLLHOUSE_FM.count(b"\r\n")
    assert b"\n" not in new.replace(b"\r\n", b"")
    old_meta, new_meta = meta(DOLLHOUSE_FM), meta(new)
    assert list(new_meta) == list(old_meta)
    assert new_meta == {**old_meta, "trustLevel": "validated"}
    assert new_meta["version"] == "1.10"  # never retyped to 1.1


@pytest.mark.timeout(10)
def test_insert_absent_key_after_the_last_one_with_the_files_newline() -> None:
    new = set_key(DOLLHOUSE_FM, "autoLoad", True)
    only(DOLLHOUSE_FM, new, b"version: 1.10\r\n---", b"version: 1.10\r\nautoLoad: true\r\n---")
    assert list(meta(new)) == [*meta(DOLLHOUSE_FM), "autoLoad"]
    assert meta(new)["autoLoad"] == "true"


@pytest.mark.timeout(10)
def test_value_with_a_trailing_comment_and_extra_spaces() -> None:
    new = set_key(DOLLHOUSE_FM, "description", "Kite words: the list")
    only(DOLLHOUSE_FM, new, b"Shared vocabulary   #", b'"Kite words: the list"   #')
    assert meta(new)["description"] == "Kite words: the list"


@pytest.mark.timeout(10)
def test_body_lines_that_look_like_keys_are_never_touched() -> None:
    new = set_key(DOLLHOUSE_FM, "trustLevel", "flagged")
    assert new.endswith(b"trustLevel: this line is body text, not a key\r\n")


@pytest.mark.timeout(10)
def test_list_int_and_empty_values() -> None:
    source = b"---\nname: a\ntags: [x]\npriority: 50\ndescription:\n---\nbody\n"
    new = set_key(source, "tags", ["deploy", "two words", "2026", "yes"])
    only(source, new, b"[x]", b'[deploy, two words, "2026", "yes"]')
    assert meta(new)["tags"] == ["deploy", "two words", "2026", "yes"]
    new = set_key(source, "priority", 7)
    only(source, new, b"priority: 50", b"priority: 7")
    new = set_key(source, "description", "Filled in")
    only(source, new, b"description:\n", b"description: Filled in\n")
    assert meta(new) == {"name": "a", "tags": ["x"], "priority": "50", "description": "Filled in"}


@pytest.mark.timeout(10)
def test_setting_the_same_text_changes_nothing() -> None:
    assert set_key(DOLLHOUSE_FM, "name", "team-glossary") is DOLLHOUSE_FM


@pytest.mark.timeout(10)
def test_quoted_key_keeps_its_spelling() -> None:
    source = b"---\n\"name\": a\n'kind': b\n---\n"
    new = set_key(source, "kind", "c")
    only(source, new, b"'kind': b", b"'kind': c")


@pytest.mark.timeout(10)
def test_empty_front_matter_gets_its_first_key() -> None:
    new = set_key(b"---\r\n---\r\nbody", "name", "first")
    assert new == b"---\r\nname: first\r\n---\r\nbody"


@pytest.mark.timeout(10)
def test_front_matter_of_only_comments() -> None:
    source = b"---\n# nothing yet\n---\n"
    assert set_key(source, "name", "x") == b"---\n# nothing yet\nname: x\n---\n"


@pytest.mark.timeout(10)
@pytest.mark.parametrize(
    "value",
    [
        "validated",
        "Release and deploy rules",
        "mem_1773479553120_k3p9x2q7a",
        "yes",
        "No",
        "ON",
        "null",
        "~",
        "true",
        "2026-03-14",
        "1.10",
        "012",
        "0x1F",
        ".inf",
        "1e3",
        "a: b",
        "x # not a comment",
        "[not, a, list]",
        "{a: 1}",
        "*alias",
        "&anchor",
        "!tag",
        "%directive",
        "@at",
        "`tick",
        "-dash",
        "? q",
        "| pipe",
        "> fold",
        "'single'",
        '"double"',
        "back\\slash",
        "",
        " leading",
        "trailing ",
        "two  spaces",
        "line\nbreak",
        "cr\rlf",
        "tab\there",
        "nul\x00",
        "bell\x07",
        "esc\x1b[2J",
        "nel\x85",
        "ls\u2028",
        "bidi\u202eevil",
        "zw\u200bj",
        "tag\U000e0041",
        "bom\ufeff",
        "nbsp\xa0",
        "café",
        "日本語",
        "emoji 😀",
        "a,b",
        "trailing:",
    ],
)
def test_any_text_value_stays_on_one_line_and_reads_back_exactly(value: str) -> None:
    source = b"---\nname: a\ndescription: old\nversion: 1\n---\nbody\n"
    new = set_key(source, "description", value)
    assert new.count(b"\n") == source.count(b"\n")  # one line, whatever the value holds
    assert new.startswith(b"---\nname: a\ndescription: ") and new.endswith(
        b"\nversion: 1\n---\nbody\n"
    )
    assert meta(new) == {"name": "a", "description": value, "version": "1"}


@pytest.mark.timeout(10)
def test_plain_only_when_unambiguous() -> None:
    assert scalar("validated") == "validated"
    assert scalar("Release and deploy rules") == "Release and deploy rules"
    assert scalar("yes") == '"yes"'
    assert scalar("1.10") == '"1.10"'
    assert scalar("a\u202eb") == '"a\\u202eb"'
    assert scalar("esc\x1b") == '"esc\\x1b"'
    assert render(False) == ("false", "false")
    assert render(None) == ("null", "null")
    assert render(("a", "b c")) == ("[a, b c]", ["a", "b c"])


# -- set_key in a whole YAML document, by path -----------------------------------------------------


@pytest.mark.timeout(10)
def test_entry_trust_in_a_v2_document() -> None:
    new = set_key(V2, "trustLevel", "validated", path=("entries", 0))
    only(V2, new, b"  trustLevel: untrusted\n", b"  trustLevel: validated\n")
    doc = document(new)
    assert doc["entries"][0]["trustLevel"] == "validated"
    assert doc == {
        **document(V2),
        "entries": [
            {**document(V2)["entries"][0], "trustLevel": "validated"},
            document(V2)["entries"][1],
        ],
    }


@pytest.mark.timeout(10)
def test_insert_into_an_entry_after_a_block_scalar_and_a_comment() -> None:
    new = set_key(V2, "trustLevel", "quarantined", path=("entries", 1))
    only(
        V2,
        new,
        b"  id: mem_2  # no trust yet\n",
        b"  id: mem_2  # no trust yet\n  trustLevel: quarantined\n",
    )
    entry = document(new)["entries"][1]
    assert list(entry) == ["content", "id", "trustLevel"]
    assert entry["content"] == "Prod needs two approvals.\n"


@pytest.mark.timeout(10)
def test_insert_top_level_key_at_the_end_of_a_document() -> None:
    new = set_key(V2, "stats", "rebuilt", where="document")
    assert new == V2 + b"stats: rebuilt\n"
    new = set_key(b"a: 1", "b", "2")
    assert new == b'a: 1\nb: "2"'  # no final newline before, none after
    new = set_key(b"metadata:\n  name: x\n", "version", "v2", path=("metadata",))
    assert new == b"metadata:\n  name: x\n  version: v2\n"


@pytest.mark.timeout(10)
def test_replace_a_one_line_flow_value_and_inside_a_flow_mapping() -> None:
    new = set_key(V2, "tags", ["deploy"], path=("entries", 0))
    only(V2, new, b"[deploy, policy]", b"[deploy]")
    new = set_key(V2, "maxEntries", 500, path=("extensions",))
    only(V2, new, b"maxEntries: 1000", b"maxEntries: 500")


# -- refusals: nothing changed ---------------------------------------------------------------------


@pytest.mark.timeout(10)
@pytest.mark.parametrize(
    ("source", "key", "value", "options", "message"),
    [
        (b"---\ntags:\n  - a\n  - b\n---\n", "tags", ["c"], {}, r"spans lines 2-4"),
        (
            b"---\ndescription: |\n  two\n  lines\nname: a\n---\n",
            "description",
            "x",
            {},
            r"spans lines 2-4",
        ),
        (b"---\na: &x one\nb: *x\n---\n", "b", "two", {}, r"alias"),
        (V2, "encrypted", True, {"path": ("extensions",)}, r"flow style"),
        (
            b"---\nname: a\nname: b\n---\n",
            "name",
            "c",
            {},
            r"duplicate key `name` on lines 2 and 3",
        ),
        (b"---\nname: a\n", "name", "c", {}, r"never closed"),
        (b"---\nname: \xff\n---\n", "name", "c", {}, r"invalid UTF-8 at byte 10"),
        (
            "---\nname: a\x85trustLevel: trusted\n---\n".encode(),
            "name",
            "c",
            {},
            r"U\+0085 \(NEL\)",
        ),
        (b"- a\n- b\n", "name", "c", {}, r"not a mapping"),
        (V2, "trustLevel", "x", {"path": ("entries", 5)}, r"item 5 does not exist"),
        (V2, "trustLevel", "x", {"path": ("nothing",)}, r"no key `nothing`"),
        (V2, "trustLevel", "x", {"path": ("metadata", "name")}, r"does not lead to a mapping"),
        (b"---\nname: a\n---\n", "bad key", "x", {}, r"must be a plain name"),
        (b"---\nname: a\n---\n", "yes", "x", {}, r"must be a plain name"),
        (b"---\nname: a\n---\n", "name", "\udcff", {}, r"lone surrogate"),
        (b"---\nname: a\n---\n", "name", 1.5, {}, r"type float"),
        (
            b"# no front matter\n",
            "name",
            "x",
            {"where": "front_matter"},
            r"does not start with a `---` line",
        ),
    ],
)
def test_edits_that_cannot_be_exact_are_refused(
    source: bytes, key: str, value: Any, options: dict[str, Any], message: str
) -> None:
    with pytest.raises(EditError, match=message) as caught:
        set_key(source, key, value, **options)
    assert str(caught.value).endswith("nothing was changed")


# -- spans -----------------------------------------------------------------------------------------


@pytest.mark.timeout(10)
def test_span_edits_change_exactly_the_span() -> None:
    data = BOM + "---\r\nname: é\r\n---\r\nfirst\r\nsecond\r\n".encode()
    first = data.index(b"first")
    span = Span(start=first, end=first + len(b"first\r\n"))
    assert replace_span(data, span, b"1st\r\n") == data[:first] + b"1st\r\n" + data[span.end :]
    assert cut_span(data, (span.start, span.end)) == data[:first] + data[span.end :]
    assert insert_span(data, first, b"zeroth\r\n") == data[:first] + b"zeroth\r\n" + data[first:]
    assert insert_span(data, len(data), b"end") == data + b"end"
    assert cut_span(data, (0, len(data))) == b""


@pytest.mark.timeout(10)
@pytest.mark.parametrize(
    ("span", "message"), [((5, 3), "not inside"), ((0, 999), "not inside"), ((-1, 2), "not inside")]
)
def test_span_out_of_range_is_refused(span: tuple[int, int], message: str) -> None:
    with pytest.raises(EditError, match=message):
        cut_span(b"0123456789", span)


@pytest.mark.timeout(10)
def test_span_splitting_a_utf8_character_is_refused() -> None:
    data = "name: é\n".encode()
    inside = data.index("é".encode()) + 1
    with pytest.raises(EditError, match=f"byte {inside} is inside a UTF-8 character"):
        replace_span(data, (inside, inside + 1), b"x")
    with pytest.raises(EditError, match="inside a UTF-8 character"):
        insert_span(data, inside, b"x")
