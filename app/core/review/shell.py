"""Tool-call and shell injection: download-and-run pipelines, destructive commands, reverse shells,
reads of credential files, and JSON or XML tool-call shapes naming shell or file tools."""

from __future__ import annotations

import re
from collections.abc import Iterator

from app.core.review.common import (
    CRITICAL,
    HIGH,
    LOW,
    MEDIUM,
    Hit,
    Keys,
    Prepared,
    family,
    keyed_matches,
    keyset,
)
from app.core.review.finding import Category

_I = re.IGNORECASE
_T = Category.TOOL_INJECTION

_PIPE_TO_SHELL = re.compile(
    r"(?:curl|wget|fetch|iwr|irm|Invoke-WebRequest|Invoke-RestMethod|base64\s+(?:-d|--decode|-D)"
    r"|xxd\s+-r|openssl\s+(?:enc\s+)?(?:-\w+\s+)*-d)\b[ \t]*[^\s|](?:[^\n|]"
    r"|\n(?![ \t]*\n)){0,300}+\|\s*(?:sudo\s+(?:-\S+\s+)*)?(?:(?:ba|z|k|da|fi)?sh|python[23]?|perl"
    r"|ruby|node|iex|Invoke-Expression)\b",
    _I,
)
_SUBSHELL_FETCH = re.compile(
    r"\b(?:ba|z)?sh\s+(?:-c\s+)?[\"']?(?:\$\(|`)\s*(?:curl|wget)\b|\b(?:ba|z)?sh\s+<\(\s*(?:curl"
    r"|wget)\b|\b(?:source|\.)\s+<\(\s*(?:curl|wget)\b",
    _I,
)
_DOWNLOAD_RUN = re.compile(
    r"\b(?:curl|wget)\b[^\n]{0,300}?(?:&&|;)\s*(?:sudo\s+)?(?:(?:ba|z)?sh\s+\S|python[23]?\s+\S"
    r"|chmod\s+\+x|\./\S)",
    _I,
)
_SUBST = re.compile(r"\$\(([^()\n]{1,200})\)")
_DANGEROUS_INNER = re.compile(
    r"\b(?:curl|wget|nc|ncat|netcat|bash|sh|zsh|base64|env|printenv|whoami|python[23]?|perl|rm|scp"
    r"|ssh|eval)\b|\.ssh|/etc/(?:passwd|shadow)|\.env\b|\.aws|credentials",
    _I,
)
_RM = re.compile(
    r"\brm\s+((?:-{1,2}[\w-]+\s+){1,4})(?:/\*?|~/?\*?|\$HOME/?\*?|\*|\.\./?|/(?:etc|usr|var|home"
    r"|root|boot|bin|lib|opt|srv)/?\*?)(?=$|[\s;&|'\"`)])"
)
_REVERSE_SHELL = re.compile(
    r"\b(?:nc|ncat|netcat)\b[^\n]{0,80}?\s-[a-z]*e\s*/bin/(?:ba)?sh\b"
    r"|\b(?:ba)?sh\s+-i\s*>&\s*/dev/tcp/[\w.-]+/\d{1,5}|/dev/tcp/[\w.-]+/\d{1,5}|\bbash\s+-i\s*>&"
    r"|\bmkfifo\s+/tmp/\S+[^\n]{0,80}?\b(?:nc|ncat|sh)\b|\bsocat\b[^\n]{0,80}?\bexec:",
    _I,
)
_DESTRUCTIVE = re.compile(
    r":\(\)\s*\{\s*:\s*\|\s*:\s*&\s*\}\s*;\s*:|\bdd\s+if=\S+\s+of=/dev/(?:sd|nvme|hd|xvd|disk)\w*"
    r"|\bmkfs(?:\.\w+)?\s+/dev/\w+|\bchmod\s+(?:-R\s+)?777\s+/(?=$|[\s;&|])|>\s*/dev/sd[a-z]\b"
    r"|--no-preserve-root|\bsudo\s+rm\s+-\w*r",
    _I,
)
_POWERSHELL = re.compile(
    r"\bpowershell(?:\.exe)?\b[^\n]{0,80}?\s-(?:e|ec|enc|encodedcommand)\s+[A-Za-z0-9+/=]{20,}"
    r"|\biex\s*\(\s*(?:new-object|iwr|irm|\(new-object|invoke-webrequest)"
    r"|\bInvoke-Expression\b[^\n]{0,120}?(?:DownloadString|iwr|irm|Invoke-WebRequest"
    r"|Net\.WebClient)",
    _I,
)
# Files that hold secrets (private keys, cloud credentials, tokens) versus system files that are
# only sensitive: reading the first is high on its own, the second only when it is also sent
# somewhere.
_SECRET_PATH = re.compile(
    r"(?:~|\$HOME|/home/[\w.-]+|/root|%USERPROFILE%)?/\.ssh/id_[\w.-]+(?<!\.pub)|\bid_(?:rsa|dsa"
    r"|ecdsa|ed25519)\b(?!\.pub)|/etc/(?:shadow|gshadow)\b|(?:~/)?\.aws/credentials\b|~/\.netrc\b"
    r"|\.git-credentials\b|~/\.docker/config\.json|~/\.kube/config\b|/proc/self/environ\b"
    r"|~/\.gnupg\b|~/\.config/gh/hosts\.yml|~/\.npmrc\b|~/\.pypirc\b|~/\.bash_history\b"
    # A path that climbs out of the workspace to a secret file: "../../../home/u/.env".
    r"|(?:\.\./){2,}(?:[\w.-]{1,40}/){0,6}"
    r"(?:\.env(?!\.(?:example|sample|template|dist|defaults?)\b)(?:\.[\w-]{1,20})?|credentials"
    r"|id_(?:rsa|dsa|ecdsa|ed25519)|\.netrc|\.npmrc|\.pypirc|\.git-credentials|shadow|passwd)\b",
    _I,
)
_SYSTEM_PATH = re.compile(
    r"(?:~|\$HOME|/home/[\w.-]+|/root|%USERPROFILE%)?/\.ssh(?:/(?:authorized_keys|known_hosts"
    r"|config))?\b|/etc/(?:passwd|sudoers)\b",
    _I,
)
_SENSITIVE_KEYS = keyset(
    (
        ".ssh",
        "/etc/passwd",
        "/etc/shadow",
        "/etc/sudoers",
        "/etc/gshadow",
        ".aws/credentials",
        ".netrc",
        ".git-credentials",
        ".docker/config",
        ".kube/config",
        "/proc/self/environ",
        ".gnupg",
        "id_rsa",
        "id_dsa",
        "id_ecdsa",
        "id_ed25519",
        "gh/hosts.yml",
        ".npmrc",
        ".pypirc",
        ".bash_history",
        "../../",
    )
)
_READ_VERB = re.compile(
    r"\b(?:cat|less|more|head|tail|type|read|open|print|dump|copy|cp|scp|rsync|upload|send|post"
    r"|curl|wget|exfil\w*|base64|xxd|tar|zip|attach|include|paste|show|display|output|grep|strings"
    r"|load|fetch|get|forward|email)\b|-d\s*@|-F\s*\S*=@|--data(?:-binary)?\s*@|--upload-file",
    _I,
)
_SEND_VERB = re.compile(
    r"\b(?:scp|rsync|upload\w*|send\w*|post\w*|curl|wget|nc|ncat|netcat|exfil\w*|attach\w*"
    r"|include\w*|paste\w*|e-?mail\w*|forward\w*|reply|share\w*)\b|-d\s*@|-F\s*\S*=@"
    r"|--data(?:-binary)?\s*@|--upload-file|\|\s*(?:nc|curl)\b",
    _I,
)
_TOOL_JSON = re.compile(
    r"\{\s*\"(?:name|tool|tool_name|function|action|type"
    r"|recipient_name)\"\s*:\s*\"(?:functions\.)?(?:bash|shell|sh|zsh|exec|execute|execute_command"
    r"|run|run_command|run_shell|run_terminal_cmd|terminal|cmd|powershell|computer|system"
    r"|os\.system|subprocess|write_file|create_file|edit_file|delete_file|remove_file|read_file"
    r"|fs_write|fs_read|file_write|str_replace_editor|str_replace_based_edit_tool|text_editor"
    r"|python|code_interpreter|eval|http_request|fetch|browser|send_email)\"",
    _I,
)
_TOOL_ARGS = re.compile(
    r"\"(?:command|cmd|code|script|shell|input)\"\s*:\s*\"[^\"\n]{0,200}?(?:rm\s+-|curl\s|wget\s"
    r"|chmod\s|/etc/passwd|\.ssh|bash\s+-c|\bnc\s|base64\s+-d|os\.system|subprocess)",
    _I,
)
_TOOL_XML = re.compile(
    r"<(?:tool_call|tool_use|function_calls?|invoke|antml:\w+|execute_command|run_command|bash"
    r"|shell|execute)\b[^<>\n]{0,200}>",
    _I,
)
_CODE_EXEC = re.compile(
    r"\b(?:os\.system|os\.popen|subprocess\.(?:run|call|Popen|check_output|check_call)|eval|exec"
    r"|__import__|child_process\.exec(?:Sync)?|Runtime\.getRuntime\(\)\.exec|shell_exec|passthru"
    r"|proc_open|popen)\s*\(([^\n]{0,200})",
    _I,
)
_SHELL_PROFILE = re.compile(
    r">>\s*(?:~|\$HOME)?/?(?:[\w.-]+/)*\.(?:bashrc|zshrc|profile|bash_profile)\b|\(crontab\s+-l", _I
)


_PIPE_KEYS = keyset(
    (
        "curl",
        "wget",
        "fetch",
        "iwr",
        "irm",
        "invoke-webrequest",
        "invoke-restmethod",
        "base64",
        "xxd",
        "openssl",
    )
)
_DOWNLOAD_KEYS = keyset(("curl", "wget"))
_SUBSHELL_KEYS = keyset(
    ("$(curl", "$(wget", "`curl", "`wget", "<(curl", "<(wget", "<( curl", "<( wget")
)
_SUBST_KEYS = keyset(("$(",))
_RM_KEYS = keyset(("rm ",))
_REVERSE_KEYS = keyset(("nc ", "ncat", "netcat", "/dev/tcp/", "bash -i", "mkfifo", "socat"))
_DESTRUCTIVE_KEYS = keyset(
    (":(){", ":() {", "dd if=", "mkfs", "chmod", "/dev/sd", "--no-preserve-root", "sudo rm")
)
_POWERSHELL_KEYS = keyset(("powershell", "iex", "invoke-expression"))
_TOOL_JSON_KEYS = keyset(("{",))
_TOOL_ARGS_KEYS = keyset(('"command"', '"cmd"', '"code"', '"script"', '"shell"', '"input"'))
_TOOL_XML_KEYS = keyset(
    (
        "<tool_call",
        "<tool_use",
        "<function_call",
        "<invoke",
        "<" + "antml:",
        "<execute",
        "<run_command",
        "<bash",
        "<shell",
    )
)
_CODE_KEYS = keyset(
    (
        "os.system",
        "os.popen",
        "subprocess.",
        "eval",
        "exec",
        "__import__",
        "child_process",
        "runtime.getruntime",
        "shell_exec",
        "passthru",
        "proc_open",
        "popen",
    )
)
_PROFILE_KEYS = keyset((".bashrc", ".zshrc", ".profile", ".bash_profile", "crontab"))


def scan(p: Prepared) -> list[Hit]:
    # Every rule of the family is keyed (`keyed_matches`, `_iter_at`, `positions`): most notes hold
    # none of its keywords and skip it whole.
    return list(_scan(p)) if p.holds_any(_FAMILY) else []


def _call_args(rest: str) -> tuple[str, bool]:
    """What a call passes, from the text after its `(`: up to the `)` that closes it, and whether
    one does (else the whole line piece, as far as it was read)."""
    depth = 1
    for i, ch in enumerate(rest):
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth == 0:
                return rest[:i], True
    return rest, False


def _scan(p: Prepared) -> Iterator[Hit]:
    text = p.text
    for m in keyed_matches(p, _PIPE_KEYS, _PIPE_TO_SHELL):
        yield Hit(
            _T,
            CRITICAL,
            "pipe-to-shell",
            "downloads or decodes something and runs it in a shell",
            m.start(),
            m.end(),
            quotable=True,
        )
    for m in keyed_matches(p, _DOWNLOAD_KEYS, _DOWNLOAD_RUN):
        yield Hit(
            _T,
            HIGH,
            "download-and-run",
            "downloads a file and runs it",
            m.start(),
            m.end(),
            quotable=True,
        )
    for m in _iter_at(p, _SUBSHELL_KEYS, _SUBSHELL_FETCH, back=24):
        yield Hit(
            _T,
            CRITICAL,
            "pipe-to-shell",
            "runs a downloaded script in a shell",
            m.start(),
            m.end(),
            quotable=True,
        )
    for m in keyed_matches(p, _SUBST_KEYS, _SUBST):
        dangerous = _DANGEROUS_INNER.search(m.group(1)) is not None
        yield Hit(
            _T,
            HIGH if dangerous else LOW,
            "command-substitution",
            "command substitution"
            + (" running a network, shell or credential command" if dangerous else ""),
            m.start(),
            m.end(),
            quotable=True,
        )
    for m in keyed_matches(p, _RM_KEYS, _RM):
        if _recursive(m.group(1)):
            yield Hit(
                _T,
                CRITICAL,
                "rm-rf",
                "recursive delete of a root, home or system folder",
                m.start(),
                m.end(),
                quotable=True,
            )
    for m in _iter_at(p, _REVERSE_KEYS, _REVERSE_SHELL, back=0):
        yield Hit(
            _T,
            CRITICAL,
            "reverse-shell",
            "opens a reverse shell to another host",
            m.start(),
            m.end(),
            quotable=True,
        )
    for m in _iter_at(p, _DESTRUCTIVE_KEYS, _DESTRUCTIVE, back=0):
        yield Hit(
            _T,
            HIGH,
            "destructive-command",
            "a destructive system command",
            m.start(),
            m.end(),
            quotable=True,
        )
    for m in _iter_at(p, _POWERSHELL_KEYS, _POWERSHELL, back=0):
        yield Hit(
            _T,
            HIGH,
            "powershell-download",
            "PowerShell that runs encoded or downloaded code",
            m.start(),
            m.end(),
            quotable=True,
        )
    yield from _sensitive_paths(p)
    for m in keyed_matches(p, _TOOL_JSON_KEYS, _TOOL_JSON):
        yield Hit(
            _T,
            HIGH,
            "tool-call-json",
            "a JSON tool call naming a shell or file tool",
            m.start(),
            m.end(),
            quotable=True,
        )
    for m in keyed_matches(p, _TOOL_ARGS_KEYS, _TOOL_ARGS):
        yield Hit(
            _T,
            HIGH,
            "tool-call-args",
            "tool-call arguments carrying a dangerous command",
            m.start(),
            m.end(),
            quotable=True,
        )
    for m in keyed_matches(p, _TOOL_XML_KEYS, _TOOL_XML):
        yield Hit(
            _T, HIGH, "tool-call-xml", "an XML tool-call block", m.start(), m.end(), quotable=True
        )
    for m in _iter_at(p, _CODE_KEYS, _CODE_EXEC, back=0):
        args, closed = _call_args(m.group(1))
        if closed and not args.strip():
            continue  # `eval()` names the function; there is no code in it to run
        dangerous = _DANGEROUS_INNER.search(args) is not None
        yield Hit(
            _T,
            HIGH if dangerous else MEDIUM,
            "code-execution",
            "a code-execution call"
            + (" running a network, shell or credential command" if dangerous else ""),
            m.start(),
            m.end(),
            quotable=True,
        )
    for m in _iter_at(p, _PROFILE_KEYS, _SHELL_PROFILE, back=160):
        ls, le = p.line_start(m.start()), p.line_end(m.end())
        if re.search(r"\b(?:curl|wget|nc|ncat|bash\s+-i|base64)\b", text[ls:le], _I):
            yield Hit(
                _T,
                HIGH,
                "shell-persistence",
                "installs a network command into a shell profile or crontab",
                ls + len(text[ls:le]) - len(text[ls:le].lstrip()),
                le,
                quotable=True,
            )


def _recursive(flags: str) -> bool:
    for flag in flags.split():
        if flag.startswith("--"):
            if flag.lower() == "--recursive":
                return True
        elif "r" in flag[1:].lower():
            return True
    return False


def _iter_at(
    p: Prepared, keys: Keys, pattern: re.Pattern[str], *, back: int
) -> list[re.Match[str]]:
    """Matches of `pattern` that contain a keyword occurrence, searched from a little before it."""
    found = p.positions(keys)
    if not found:
        return []
    out: list[re.Match[str]] = []
    last_end = 0
    match = pattern.match
    text = p.text
    for pos in found:
        if pos < last_end:
            continue
        lo = max(last_end, pos - back)
        hi = min(p.n, pos + 600)
        # The leftmost match of a search from `lo` counts only if it starts by pos + 1: trying those
        # few starts one by one finds the same match without searching 600 characters past them.
        for start in range(lo, min(pos + 1, hi) + 1):
            m = match(text, start, hi)
            if m is not None:
                if m.end() > pos:
                    last_end = m.end()
                    out.append(m)
                break
    return out


def _sensitive_paths(p: Prepared) -> Iterator[Hit]:
    last_end = 0
    for pos in p.positions(_SENSITIVE_KEYS):
        if pos < last_end:
            continue
        lo = max(last_end, pos - 40, p.line_start(pos))
        hi = min(p.n, pos + 80)
        m = _SECRET_PATH.search(p.text, lo, hi)
        secret = m is not None and m.start() <= pos < m.end()
        # `m is None` implies `not secret`; spelled out so the checker sees m is a match below.
        if m is None or not secret:
            m = _SYSTEM_PATH.search(p.text, lo, hi)
            if m is None or not (m.start() <= pos < m.end()):
                continue
        last_end = m.end()
        ls = max(p.line_start(m.start()), m.start() - 100)
        le = min(p.line_end(m.end()), m.end() + 100)
        verb = None
        for v in _READ_VERB.finditer(p.text, ls, m.start()):
            verb = v
        sent = _SEND_VERB.search(p.text, ls, le) is not None
        if verb is not None and (secret or sent):
            yield Hit(
                _T,
                HIGH,
                "credential-file-read",
                "reads or sends a credential or system file",
                verb.start(),
                m.end(),
                quotable=True,
            )
        elif secret and sent:
            yield Hit(
                _T,
                HIGH,
                "credential-file-read",
                "sends a credential file",
                m.start(),
                m.end(),
                quotable=True,
            )
        else:
            yield Hit(
                _T,
                MEDIUM,
                "credential-file-path",
                "mentions a credential or system file",
                m.start(),
                m.end(),
                quotable=True,
            )


_FAMILY = family(globals())  # defined last: every keyword set above
