"""Credentials: known token formats (AWS, GitHub, OpenAI/Anthropic, Stripe, Slack, Google), PEM
private keys, JWTs, bearer tokens, passwords in URLs and `key = value` secrets. Documentation
placeholders (`AKIAXXXXXXXXXXXXXXXX`, `sk-...your key...`, `<token>`, `${SECRET}`) are not secrets.
Every hit carries the range of the secret value so that every excerpt, decoded preview and message
masks it."""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Iterator

from app.core.review.common import CRITICAL, HIGH, MEDIUM, Hit, Keys, Prepared, family, keyset
from app.core.review.finding import Category

_S = Category.SECRET
KEEP = 4  # leading characters of a secret left visible

_AWS = re.compile(
    r"(?<![A-Za-z0-9])(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA"
    r"|APKA)[A-Z0-9]{16}(?![A-Za-z0-9])"
)
_AWS_KEYS = keyset(
    ("akia", "asia", "abia", "acca", "agpa", "aida", "aroa", "aipa", "anpa", "anva", "apka")
)
_GITHUB = re.compile(
    r"(?<![A-Za-z0-9_])(?:gh[pousr]_[A-Za-z0-9]{36,255}+"
    r"|github_pat_[A-Za-z0-9_]{22,255}+)(?![A-Za-z0-9_])"
)
_SK = re.compile(
    r"(?<![A-Za-z0-9_-])sk-(?:proj-|svcacct-|admin-|ant-(?:api"
    r"|admin)\d{2}-)?[A-Za-z0-9_-]{20,512}+(?![A-Za-z0-9_-])"
)
_STRIPE = re.compile(r"(?<![A-Za-z0-9_])(?:sk|rk)_(live|test)_[A-Za-z0-9]{16,512}+(?![A-Za-z0-9])")
_SLACK = re.compile(r"(?<![A-Za-z0-9-])xox[abposr]-[A-Za-z0-9-]{10,512}+(?![A-Za-z0-9-])")
_SLACK_HOOK = re.compile(
    r"https://hooks\.slack\.com/services/T[A-Z0-9]{6,}/B[A-Z0-9]{6,}/[A-Za-z0-9]{16,128}+"
)
_GOOGLE = re.compile(r"(?<![A-Za-z0-9_-])AIza[0-9A-Za-z_-]{35}(?![0-9A-Za-z_-])")
_PEM = re.compile(r"-----BEGIN ((?:[A-Z0-9]+ ){0,4})PRIVATE KEY(?: BLOCK)?-----")
_PEM_BODY = re.compile(
    r"\s*+(?:[A-Za-z-]{1,40}:[^\n]{0,200}\n\s*){0,8}([A-Za-z0-9+/=\s>]{40,200000}+)"
    r"(-----END [A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----)?",
    re.ASCII,
)
_JWT = re.compile(
    r"(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{8,4096}+\.eyJ[A-Za-z0-9_-]{8,8192}+\.[A-Za-z0-9_-]{8,4096}"
    r"+"
)
_BEARER = re.compile(r"\b[Bb]earer[ \t]+([A-Za-z0-9._~+/-]{20,1024}+=*)")
_URL_CREDS = re.compile(
    r"\b[a-zA-Z][a-zA-Z0-9+.-]{1,20}://([^\s:/@\"'<>]{1,64}):([^\s/@\"'<>]{3,128})@[\w.\[\]-]"
)
_SECRET_NAME = (
    r"(?:password|passwd|passphrase|pwd|secret|api[_-]?key|apikey|access[_-]?key|secret[_-]?key"
    r"|access[_-]?token|auth[_-]?token|refresh[_-]?token|client[_-]?secret|private[_-]?key|token"
    r"|aws_secret_access_key)"
)
_KEY_VALUE = re.compile(
    rf"(?<![A-Za-z0-9])((?:[A-Za-z0-9]{{1,20}}[_.-])"
    rf"{{0,3}}{_SECRET_NAME}(?:[_.-][A-Za-z0-9]{{1,20}}){{0,2}})"
    r"[\"']?[ \t]*(?:=|:(?!//))[ \t]*[\"']?([^\s\"'`,;<>(){}\[\]]{8,200})",
    re.IGNORECASE,
)
_KV_TAIL = re.compile(r"[A-Za-z0-9_.-]{0,40}[\"']?[ \t]*(?:=|:(?!//))")
_KV_KEYS = keyset(
    (
        "password",
        "passwd",
        "passphrase",
        "pwd",
        "secret",
        "api_key",
        "api-key",
        "apikey",
        "access_key",
        "access-key",
        "accesskey",
        "token",
    )
)

_PLACEHOLDER = re.compile(
    r"placeholder|your[_-]?|redacted|changeme|xxxx|\*{3}|\.{3}|…|<[^>]*>|\$\{|\{\{|insert|replace"
    r"|todo|here\b|goes|not[_-]?a[_-]?real|0{6}|123456|abcdef(?:gh)?$|^abc1|abc123|def456|xyz|foo"
    r"|bar\b|baz|qwerty|letmein|hunter2|s3cr3t|secret\d*$|^test|^demo|^my[_-]",
    re.IGNORECASE,
)
# A well-formed key that says it is an example (AWS's documented AKIAIOSFODNN7EXAMPLE) is reported
# at medium and masked all the same: an "example" key pasted into a memory is still worth a look.
_EXAMPLE = re.compile(r"example|sample|dummy|fake", re.IGNORECASE)
_REPEAT = re.compile(r"(.)\1{5,}")
_REFERENCE = re.compile(
    r"^(?:[a-z_]+(?:\.[A-Za-z_]\w*)+(?:\(|\[|$)|\$\w+|\$\{|%\w+%|env[:.]|vault:|secret:|op://|ssm:"
    r"|arn:|os\.environ|process\.env|getenv|none$|null$|nil$|true$|false$|undefined$|required$"
    r"|optional$|string$|str$)",
    re.IGNORECASE,
)


def _placeholder(value: str) -> bool:
    return bool(_PLACEHOLDER.search(value) or _REPEAT.search(value) or len(set(value)) <= 4)


def _grade(value: str, severity: int) -> int:
    """0 for a placeholder, MEDIUM for a key marked as an example, else the rule's severity."""
    if _placeholder(value):
        return 0
    return MEDIUM if _EXAMPLE.search(value) else severity


# The claims of the token every JWT tutorial shows ({"sub": "1234567890", "name": "John Doe", ...}).
_EXAMPLE_CLAIMS = re.compile(
    r'"sub"\s*:\s*"1234567890"|"name"\s*:\s*"John Doe"|example|sample|dummy', re.IGNORECASE
)


def _example_jwt(token: str) -> bool:
    payload = token.split(".")[1][:2048]
    try:
        claims = base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)).decode(
            "utf-8", "replace"
        )
    except (binascii.Error, ValueError):
        return False
    # A real token nearly always carries registered claims (expiry, subject, issuer); a payload with
    # none ({"some": "payload"}) is a library's documented example.
    return _EXAMPLE_CLAIMS.search(claims) is not None or _REGISTERED_CLAIM.search(claims) is None


_REGISTERED_CLAIM = re.compile(
    r'"(?:exp|iat|nbf|sub|iss|aud|jti|azp|scope|scp|uid|user_id|email|role|roles)"'
)
# A value that is a lowercase identifier of words (`token_provider`, `get_custom_token`) names code;
# one in capitals (`GEMINI_API_KEY`) names the environment variable the secret is read from.
_IDENTIFIER = re.compile(
    r"[a-z]{2,}(?:_[a-z]{2,})+|[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*_(?:API_)?(?:KEY|TOKEN|SECRET|PASSWORD)"
)
# A token inside a badge's URL (codecov graph, shields) is the public read token badges are made
# with.
_BADGE_URL = re.compile(r"badge|\.svg\b|codecov\.io/|shields\.io/", re.IGNORECASE)


def _in_badge_url(text: str, start: int, line_start: int) -> bool:
    at = text.rfind("http", line_start, start)
    if at < 0 or any(c.isspace() for c in text[at:start]):
        return False
    end = at
    while (
        end < len(text) and end - at < 1000 and not text[end].isspace() and text[end] not in ")\"'>"
    ):
        end += 1
    return _BADGE_URL.search(text, at, end) is not None


def _random_looking(value: str, minimum_distinct: int = 8) -> bool:
    classes = sum(
        bool(re.search(rx, value)) for rx in (r"[a-z]", r"[A-Z]", r"[0-9]", r"[^A-Za-z0-9]")
    )
    return len(set(value)) >= minimum_distinct and classes >= 2


def _default_of(text: str, m: re.Match[str]) -> str:
    """The value of a key-value match; for a shell default (`${DB_PASSWORD:-postgres}`, `:=`) the
    default without its operator, whose dash alone made a plain word look random."""
    value = m.group(2)
    if value[0] in "-=" and text[m.end(1) : m.start(2)].strip(" \t\"'") == ":":
        return value[1:]
    return value


def _hit(
    severity: int, rule: str, message: str, start: int, end: int, value_start: int, value_end: int
) -> Hit:
    return Hit(_S, severity, rule, message, start, end, mask=(value_start, value_end, KEEP))


def scan(p: Prepared) -> list[Hit]:
    # Every rule of the family is keyed (`_at`, `positions`): a text holding none of its keywords
    # skips it.
    return list(_scan(p)) if p.holds_any(_FAMILY) else []


def _at(p: Prepared, keys: Keys, pattern: re.Pattern[str]) -> list[re.Match[str]]:
    found = p.positions(keys)
    if not found:
        return []
    out: list[re.Match[str]] = []
    last_end = 0
    for pos in found:
        if pos < last_end:
            continue
        m = pattern.match(p.text, pos)
        if m is not None:
            last_end = m.end()
            out.append(m)
    return out


_GITHUB_KEYS = keyset(("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"))
_SLACK_KEYS = keyset(("xox",))
_GOOGLE_KEYS = keyset(("aiza",))
_SK_KEYS = keyset(("sk-",))
_STRIPE_KEYS = keyset(("sk_live_", "rk_live_", "sk_test_", "rk_test_"))
_SLACK_HOOK_KEYS = keyset(("https://hooks.slack.com",))
_PEM_KEYS = keyset(("-----begin",))
_JWT_KEYS = keyset(("eyj",))
_BEARER_KEYS = keyset(("bearer",))
_SCHEME_KEYS = keyset(("://",))


def _scan(p: Prepared) -> Iterator[Hit]:
    m: re.Match[str] | None  # loops bind matches; later probes may find none
    text = p.text
    known = (
        (_AWS_KEYS, _AWS, 4, CRITICAL, "aws-access-key", "an AWS access key id"),
        (_GITHUB_KEYS, _GITHUB, 4, CRITICAL, "github-token", "a GitHub token"),
        (_SLACK_KEYS, _SLACK, 5, CRITICAL, "slack-token", "a Slack token"),
        (_GOOGLE_KEYS, _GOOGLE, 4, HIGH, "google-api-key", "a Google API key"),
    )
    for keys, pattern, prefix, severity, rule, what in known:
        for m in _at(p, keys, pattern):
            body = m.group(0)[prefix:]
            if rule == "slack-token" and not _random_looking(body):
                continue
            grade = _grade(body, severity)
            if grade:
                note = " (marked as an example)" if grade == MEDIUM else ""
                yield _hit(grade, rule, what + note, m.start(), m.end(), m.start(), m.end())
    for m in _at(p, _SK_KEYS, _SK):
        body = m.group(0)[3:]
        grade = _grade(body, CRITICAL)
        if grade and _random_looking(body, 10) and re.search(r"[0-9]", body):
            yield _hit(
                grade,
                "api-key",
                "an OpenAI- or Anthropic-style secret key",
                m.start(),
                m.end(),
                m.start(),
                m.end(),
            )
    for m in _at(p, _STRIPE_KEYS, _STRIPE):
        grade = _grade(m.group(0)[8:], CRITICAL if m.group(1) == "live" else MEDIUM)
        if grade:
            yield _hit(
                grade,
                "stripe-key",
                f"a Stripe {m.group(1)} key",
                m.start(),
                m.end(),
                m.start(),
                m.end(),
            )
    for m in _at(p, _SLACK_HOOK_KEYS, _SLACK_HOOK):
        yield _hit(
            HIGH,
            "slack-webhook",
            "a Slack incoming-webhook URL",
            m.start(),
            m.end(),
            m.start() + 33,
            m.end(),
        )
    for m in _at(p, _GOOGLE_KEYS, _GOOGLE):
        if not _placeholder(m.group(0)[4:]):
            yield _hit(
                HIGH, "google-api-key", "a Google API key", m.start(), m.end(), m.start(), m.end()
            )
    for m in _at(p, _PEM_KEYS, _PEM):
        pem = _PEM_BODY.match(text, m.end())
        # A key in a block quote keeps its `>` markers in the body: they are not key characters.
        if pem is not None and len(re.sub(r"[\s>]", "", pem.group(1))) >= 40:
            body_end = pem.start(1) + len(pem.group(1).rstrip())
            end = pem.end(2) if pem.group(2) else body_end
            yield _hit(
                CRITICAL, "private-key", "a PEM private key", m.start(), end, pem.start(1), body_end
            )
        else:
            yield Hit(
                _S,
                MEDIUM,
                "private-key-header",
                "a PEM private-key header (no key body follows)",
                m.start(),
                m.end(),
            )
    for m in _at(p, _JWT_KEYS, _JWT):
        if _example_jwt(m.group(0)):
            yield _hit(
                MEDIUM,
                "jwt",
                "a JSON Web Token (the documented example claims)",
                m.start(),
                m.end(),
                m.start(),
                m.end(),
            )
        else:
            yield _hit(HIGH, "jwt", "a JSON Web Token", m.start(), m.end(), m.start(), m.end())
    for m in _at(p, _BEARER_KEYS, _BEARER):
        value = m.group(1)
        if not _placeholder(value) and not _EXAMPLE.search(value) and _random_looking(value):
            yield _hit(
                HIGH, "bearer-token", "a bearer token", m.start(), m.end(), m.start(1), m.end(1)
            )
    for pos in p.positions(_SCHEME_KEYS):
        at = text.find("@", pos, pos + 200)
        if at < 0 or text.find(" ", pos, at) >= 0:
            continue
        lo = max(p.line_start(pos), pos - 24)
        m = _URL_CREDS.search(text, lo, min(p.n, pos + 200))
        if m is None or not (m.start() <= pos < m.end()):
            continue
        password = m.group(2)
        if (
            _placeholder(password)
            or _EXAMPLE.search(password)
            or _REFERENCE.match(password)
            or password.lower() in ("password", "pass", "passwd", "pwd", "secret")
        ):
            continue
        yield _hit(
            HIGH,
            "url-credentials",
            "a password inside a URL",
            m.start(),
            m.end(),
            m.start(2),
            m.end(2),
        )
    last_end = 0
    for pos in p.positions(_KV_KEYS):
        if pos < last_end or not _KV_TAIL.match(text, pos):
            continue
        lo = max(p.line_start(pos), pos - 64, last_end)
        m = _KEY_VALUE.search(text, lo, min(p.n, pos + 300))
        if m is None or not (m.start() <= pos < m.end(1)):
            continue
        last_end = m.end()
        value = _default_of(text, m)
        called = (
            m.end(2) < p.n and text[m.end(2)] in "([."
        )  # `token = get_token()`: the value is code
        if (
            called
            or _placeholder(value)
            or _EXAMPLE.search(value)
            or _REFERENCE.match(value)
            or not _random_looking(value, 6)
        ):
            continue
        if _IDENTIFIER.fullmatch(value) or _in_badge_url(text, m.start(), p.line_start(m.start())):
            continue
        yield _hit(
            HIGH,
            "key-value-secret",
            f"a secret assigned to `{m.group(1)}`",
            m.start(),
            m.end(),
            m.start(2),
            m.end(2),
        )


_FAMILY = family(globals())  # defined last: every keyword set above
