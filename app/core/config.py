"""The user's settings file: $XDG_CONFIG_HOME/memwb/config.yaml (portfolios to open, theme)."""

from __future__ import annotations

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
    """Settings from config.yaml; a missing file means defaults, a broken one is reported and skipped."""
    path = config_dir / "config.yaml"
    if not path.exists():
        return Settings()
    try:
        return Settings.model_validate(load_mapping(decode(read_file(str(path), 256 * 1024)).text))
    except TextProblem as exc:
        problems.append(Problem(path=str(path), line=exc.line, message=exc.message, kept="defaults used"))
    except UnsafeFile as exc:
        problems.append(Problem(path=str(path), message=str(exc), kept="defaults used"))
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        problems.append(Problem(path=str(path), message=f"`{where}`: {first['msg']}", kept="defaults used"))
    return Settings()
