"""The user's settings file: $XDG_CONFIG_HOME/memwb/config.yaml (portfolios to open, theme)."""

from __future__ import annotations

import json
import os
import re
import tempfile
from pathlib import Path

from pydantic import BaseModel, ConfigDict, ValidationError

from app.core.model import Problem
from app.core.parsing.safefs import UnsafeFile, read_file
from app.core.parsing.text import TextProblem, decode
from app.core.parsing.yamlsafe import load_mapping


class Settings(BaseModel):
    model_config = ConfigDict(extra="ignore")

    portfolios: list[str] = []
    theme: str | None = None
    keymap: dict[str, str] = {}  # binding id -> keys, e.g. {"mode-review": "f9"}


def load_settings(config_dir: Path, problems: list[Problem]) -> Settings:
    """Settings from config.yaml; a missing file means defaults, a broken one is reported and
    skipped."""
    path = config_dir / "config.yaml"
    if not path.exists():
        return Settings()
    try:
        return Settings.model_validate(load_mapping(decode(read_file(str(path), 256 * 1024)).text))
    except TextProblem as exc:
        problems.append(
            Problem(path=str(path), line=exc.line, message=exc.message, kept="defaults used")
        )
    except UnsafeFile as exc:
        problems.append(Problem(path=str(path), message=str(exc), kept="defaults used"))
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        problems.append(
            Problem(path=str(path), message=f"`{where}`: {first['msg']}", kept="defaults used")
        )
    return Settings()


_THEME_LINE = re.compile(rb"^theme[ \t]*:[^\n]*$", re.MULTILINE)


def save_theme(config_dir: Path, theme: str) -> Path:
    """Keep `theme` in config.yaml: its top-level `theme:` line is rewritten (or one is added at the
    end), every other byte stays as it was; the file is replaced atomically. Returns its path."""
    path = config_dir / "config.yaml"
    line = f"theme: {json.dumps(theme)}".encode()  # a JSON string is a YAML string
    old = read_file(str(path), 256 * 1024) if os.path.lexists(path) else b""
    if _THEME_LINE.search(old):
        new = _THEME_LINE.sub(lambda _match: line, old, count=1)
    else:
        new = old + (b"" if not old or old.endswith(b"\n") else b"\n") + line + b"\n"
    config_dir.mkdir(parents=True, exist_ok=True)
    mode = path.stat().st_mode & 0o777 if path.exists() else 0o600
    fd, tmp = tempfile.mkstemp(prefix=".config.yaml.", dir=config_dir)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(new)
            out.flush()
            os.fsync(out.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return path
