"""Exfiltration through links and images: a markdown or HTML image is fetched the moment an agent's
output is rendered, so an image URL carrying data in its query (or a template the agent fills in) is
a zero-click leak. Links need a click, so a plain query string on a link is only noted; templating
braces or secret-named parameters make it high. `data:` URIs that carry HTML or script are
flagged."""

from __future__ import annotations

import re
from collections.abc import Iterator
from urllib.parse import parse_qsl, urlsplit

from app.core.review.common import (
    HIGH,
    LOW,
    MEDIUM,
    Hit,
    Intervals,
    Prepared,
    keyed_matches,
    keyset,
)
from app.core.review.finding import Category

_E = Category.EXFILTRATION

_URL = r"<?((?:https?:)?//[^\s)<>\"']{1,2048}|data:[^\s)<>\"']{1,200})"
_MD_IMAGE = re.compile(
    r"!\[([^\[\]\n]{0,300})\]\(\s*"
    + _URL
    + r"(?:\s+(?:\"[^\"\n]{0,200}\"|'[^'\n]{0,200}'))?\s*>?\)?"
)
_MD_LINK = re.compile(
    r"\[([^\[\]\n]{0,300})\]\(\s*"
    + _URL
    + r"(?:\s+(?:\"[^\"\n]{0,200}\"|'[^'\n]{0,200}'))?\s*>?\)?"
)
_MD_REF_DEF = re.compile(r"\[([^\[\]\n]{1,200})\]:[ \t]*<?((?:https?:)?//[^\s<>]{1,2048})>?")
_HTML_SRC = re.compile(
    r"<(img|image|source|video|audio|iframe|embed|link|script|input)\b[^<>]{0,1000}?\b(?:src|href"
    r"|srcset|poster|data)\s*=\s*[\"']?((?:https?:)?//[^\s\"'<>]{1,2048})",
    re.IGNORECASE,
)
_BARE_URL = re.compile(r"https?://[^\s<>\"'`)\]]{1,2048}", re.IGNORECASE)
_DATA_URI = re.compile(
    r"data:([\w.+-]{1,40}/[\w.+-]{1,60})?((?:;[\w.+-]{1,40}(?:=[\w.+-]{1,60})?){0,4}),",
    re.IGNORECASE,
)

_TEMPLATE = re.compile(r"[{}]|\$[A-Za-z_]{3,}|%7[bBdD]|<[A-Za-z_]{3,}>|\[[A-Z_]{4,}\]")
_CAPS_NAME = re.compile(
    r"\[[A-Z_]{4,}\]"
)  # `_TEMPLATE`'s last branch, which starts with a literal and so searches fast
# Query parameters that carry data out: a secret-ish word anywhere in the name, or a bare one-letter
# or generic name (`?d=`, `?data=`) of the kind exfiltration payloads use.
_SECRETY_PARAM = re.compile(
    r"secret|token|key|pass|pwd|cred|auth|session|cookie|ssn|card|env|payload|leak|exfil|dump"
    r"|history|memor|conv|chat|prompt|msg|message|content|summary|email|user_?data",
    re.IGNORECASE,
)
_GENERIC_PARAM = re.compile(r"[a-z]|data|info|log|body|text|cc|v|val|value", re.IGNORECASE)
_CAPS_PLACEHOLDER = re.compile(r"[A-Z][A-Z0-9]*_[A-Z0-9_]{2,}")
_LOCAL_HOSTS = re.compile(
    r"^(?:localhost|127(?:\.\d{1,3}){3}|\[?::1\]?|0\.0\.0\.0|[\w-]+\.(?:local|localhost|internal"
    r"|lan))$",
    re.IGNORECASE,
)
_ENCODED_VALUE = re.compile(r"[A-Za-z0-9+/_=%-]{32,}")
_FETCH_VERB = re.compile(
    r"\b(?:fetch|visit|open|load|call|request|ping|get|curl|wget|send|post|browse|navigate|render"
    r"|include|append|embed|hit|query|poll|GET|POST)\b",
    re.IGNORECASE,
)
_RISKY_MIME = re.compile(
    r"text/html|application/(?:x-)?(?:javascript|ecmascript|xhtml\+xml)|text/(?:javascript"
    r"|ecmascript)|image/svg\+xml",
    re.IGNORECASE,
)


# Status badges: the query holds display options (`?style=flat`, `?url=<public json>`, codecov's
# public badge token), so a query alone is no leak there; a template still is.
_BADGE_HOSTS = re.compile(
    r"(?:^|\.)(?:shields\.io|badgen\.net|badge\.fury\.io|codecov\.io|coveralls\.io|pepy\.tech"
    r"|readthedocs\.(?:org|io)|pre-commit\.ci|codacy\.com|codeclimate\.com|snyk\.io|deepsource\.io"
    r"|sonarcloud\.io|circleci\.com|travis-ci\.(?:com|org)|appveyor\.com|anaconda\.org"
    r"|conda-forge\.org|bestpractices\.dev|securityscorecards\.dev|api\.securityscorecards\.dev"
    r"|app\.fossa\.com|zenodo\.org|opencollective\.com|gitter\.im|discord(?:app)?\.com"
    r"|black\.readthedocs\.io|mybinder\.org|colab\.research\.google\.com)$",
    re.IGNORECASE,
)
_BADGE_PATH = re.compile(
    r"/badge(?:s)?[/.]|/badge\.svg|/workflows/[^/]+/badge\.svg|/actions/workflows/[^?]+/badge\.svg",
    re.IGNORECASE,
)


def _badge(url: str) -> bool:
    host = _host(url) or ""
    return _BADGE_HOSTS.search(host) is not None or (
        host.endswith("github.com") and _BADGE_PATH.search(url) is not None
    )


def _host(url: str) -> str | None:
    try:
        parts = urlsplit(url if not url.startswith("//") else "https:" + url)
    except ValueError:
        return None
    return parts.hostname


def _assess(url: str) -> tuple[bool, bool, bool]:
    """(external, templated, carries data): what makes a URL a possible leak."""
    host = _host(url)
    external = bool(host) and not _LOCAL_HOSTS.match(host or "")
    templated = _TEMPLATE.search(url) is not None
    carries = False
    try:
        query = urlsplit(url if not url.startswith("//") else "https:" + url).query
    except ValueError:
        query = ""
    if query:
        for name, value in parse_qsl(query, keep_blank_values=True):
            if value and (
                _SECRETY_PARAM.search(name)
                or _GENERIC_PARAM.fullmatch(name)
                or _ENCODED_VALUE.search(value)
                or _CAPS_PLACEHOLDER.fullmatch(value)
            ):
                carries = True
                break
    return external, templated, carries


def _has_query(url: str) -> bool:
    q = url.find("?")
    return q >= 0 and "=" in url[q:]


def scan(p: Prepared) -> list[Hit]:
    hits = list(_scan(p))
    if hits and "<!--" in p.text:
        # A renderer fetches no image inside an HTML comment (a README's generator block, say).
        comments = Intervals(
            m.span() for m in re.finditer(r"<!--.{0,20000}?-->", p.text, re.DOTALL)
        )
        for h in hits:
            if (
                h.severity > MEDIUM
                and h.rule in ("html-image", "markdown-image", "reference-image")
                and comments.covers(h.start)
            ):
                h.severity = MEDIUM
                h.message += " (inside an HTML comment, so not fetched when rendered)"
    return hits


_MD_IMAGE_KEYS = keyset(("![",))
_MD_LINK_KEYS = keyset(("[",))
_REF_DEF_KEYS = keyset(("]:",))
_HTML_SRC_KEYS = keyset(
    (
        "<img",
        "<image",
        "<source",
        "<video",
        "<audio",
        "<iframe",
        "<embed",
        "<link",
        "<script",
        "<input",
    )
)
_BARE_URL_KEYS = keyset(("http",))
_DATA_URI_KEYS = keyset(("data:",))


def _scan(p: Prepared) -> Iterator[Hit]:
    # Every link, image and bare-URL rule reports a URL only when it holds a query ("?") or matches
    # `_TEMPLATE`, and a URL is a piece of the text. No URL pattern lets "<" or ">" in, so what of
    # `_TEMPLATE` a URL can match is a brace, "$", "%7" or a bracketed capital name: a text with
    # none of them and no "?" (most notes) has no URL to report.
    text = p.text
    if (
        "?" in text
        or "{" in text
        or "}" in text
        or "$" in text
        or "%7" in text
        or _CAPS_NAME.search(text) is not None
    ):
        yield from _urls(p)
    yield from _data_uris(p)


def _urls(p: Prepared) -> Iterator[Hit]:
    m: re.Match[str] | None  # loops bind matches; later probes may find none
    image_spans: list[tuple[int, int]] = []
    # Markdown images and links both need "](": a note without one (most) has neither, and its "["
    # are never tried.
    inline = "](" in p.text
    for m in keyed_matches(p, _MD_IMAGE_KEYS, _MD_IMAGE) if inline else ():
        image_spans.append((m.start(), m.end()))
        yield from _image(m.group(2), m.start(), m.end(), "markdown-image")
    for m in keyed_matches(p, _MD_LINK_KEYS, _MD_LINK) if inline else ():
        if m.start() > 0 and p.text[m.start() - 1] == "!":
            continue
        yield from _link(m.group(2), m.start(), m.end(), "markdown-link")
    ref_images = (
        {
            label.lower()
            for label in re.findall(r"!\[[^\[\]\n]{0,300}\]\[([^\[\]\n]{1,200})\]", p.text)
        }
        if "![" in p.text
        else set()
    )
    for pos in p.positions(_REF_DEF_KEYS):
        ls = p.line_start(pos)
        # A definition may sit in a block quote: Markdown reads it there too.
        m = _MD_REF_DEF.match(p.text, ls + len(p.text[ls:pos]) - len(p.text[ls:pos].lstrip(" >")))
        if m is None or m.end() <= pos:
            continue
        if m.group(1).lower() in ref_images:
            yield from _image(m.group(2), m.start(), m.end(), "reference-image")
        else:
            yield from _link(m.group(2), m.start(), m.end(), "reference-link")
    for m in keyed_matches(p, _HTML_SRC_KEYS, _HTML_SRC):
        end = p.text.find(">", m.end(), min(p.n, m.end() + 1000))
        yield from _image(m.group(2), m.start(), end + 1 if end >= 0 else m.end(), "html-image")
    images = Intervals(image_spans)
    # A bare URL is reported only when templated, and a URL's characters leave `_TEMPLATE` only
    # braces, `$` and `%7b`/`%7d` (no blank, `<` or `]`): without one of those in the text no URL is
    # looked at.
    templates = "{" in p.text or "}" in p.text or "$" in p.text or "%7" in p.text
    for m in keyed_matches(p, _BARE_URL_KEYS, _BARE_URL) if templates else ():
        if images.covers(m.start()):
            continue
        url = m.group(0)
        if _TEMPLATE.search(url) is not None and _assess(url)[0]:
            # An order to request it makes it a leak; a templated URL noted in passing (CI config)
            # is not.
            ordered = (
                _FETCH_VERB.search(p.text, max(p.line_start(m.start()), m.start() - 60), m.start())
                is not None
            )
            yield Hit(
                _E,
                HIGH if ordered else MEDIUM,
                "templated-url",
                "a URL with a template for the agent to fill in (data leaves in the request)",
                m.start(),
                m.end(),
                quotable=True,
            )


def _data_uris(p: Prepared) -> Iterator[Hit]:
    for m in keyed_matches(p, _DATA_URI_KEYS, _DATA_URI):
        if m.start() > 0 and (p.text[m.start() - 1].isalnum() or p.text[m.start() - 1] == "_"):
            continue
        mime = (m.group(1) or "").lower()
        end = m.end()
        while (
            end < p.n
            and end - m.end() < 200_000
            and not p.text[end].isspace()
            and p.text[end] not in ")\"'<>"
        ):
            end += 1
        if _RISKY_MIME.fullmatch(mime):
            payload = p.text[m.end() : min(end, m.end() + 4000)].lower()
            svg_only = mime == "image/svg+xml"
            severity = (
                HIGH
                if not svg_only
                or "script" in payload
                or "onload" in payload
                or "PHNjcmlwd" in p.text[m.end() : end]
                else MEDIUM
            )
            yield Hit(
                _E,
                severity,
                "data-uri",
                f"a data: URI carrying {mime} (script or markup runs where it is opened)",
                m.start(),
                end,
                quotable=True,
            )


def _image(url: str, start: int, end: int, rule: str) -> Iterator[Hit]:
    if url.lower().startswith("data:") or ("?" not in url and _TEMPLATE.search(url) is None):
        return  # without a query or a template nothing leaves (and nothing is worth a note)
    external, templated, carries = _assess(url)
    if not external:
        return
    if _badge(url) and not templated:
        return
    if templated or carries:
        why = "a template to fill in" if templated else "data in its query string"
        yield Hit(
            _E,
            HIGH,
            rule,
            f"an image fetched from an outside host with {why} (zero-click leak when rendered)",
            start,
            end,
            quotable=True,
        )
    elif _has_query(url):
        yield Hit(
            _E,
            MEDIUM,
            rule,
            "an image fetched from an outside host with a query string",
            start,
            end,
            quotable=True,
        )


def _link(url: str, start: int, end: int, rule: str) -> Iterator[Hit]:
    if url.lower().startswith("data:") or ("?" not in url and _TEMPLATE.search(url) is None):
        return  # without a query or a template nothing leaves (and nothing is worth a note)
    external, templated, carries = _assess(url)
    if not external:
        return
    if templated:
        yield Hit(
            _E,
            HIGH,
            rule,
            "a link with a template for the agent to fill in (data leaves when it is followed)",
            start,
            end,
            quotable=True,
        )
    elif carries and _ENCODED_VALUE.search(url.split("?", 1)[-1]):
        yield Hit(
            _E,
            MEDIUM,
            rule,
            "a link whose query carries a long encoded value",
            start,
            end,
            quotable=True,
        )
    elif _has_query(url):
        yield Hit(
            _E,
            LOW,
            rule,
            "a link to an outside host with a query string",
            start,
            end,
            quotable=True,
        )
