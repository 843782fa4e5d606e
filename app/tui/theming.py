"""Themes are data: YAML files in the bundled `themes/` folder and the user's theme folder, each
validated by pydantic and turned into a Textual Theme. A broken file is reported once, never
fatal."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator
from textual.color import Color, ColorParseError
from textual.theme import Theme

from app.core.parsing.safefs import UnsafeFile, read_file
from app.core.parsing.text import TextProblem, decode
from app.core.parsing.yamlsafe import as_bool, load_mapping

DEFAULT_THEME = "workbench-dark"

# App colours used in the styles, with defaults so any Textual theme works (a theme that does not
# define one of these variables still renders).
VARIABLE_DEFAULTS = {
    "tier-hot": "#d75f5f",
    "tier-cold": "#5f87af",
    "tier-archive": "#8a8a8a",
    "tier-quarantine": "#af5fd7",
    "trust-trusted": "#87af5f",
    "trust-validated": "#87af87",
    "trust-untrusted": "#d7af5f",
    "trust-flagged": "#d7875f",
    "trust-quarantined": "#d75f5f",
}


def _colour(value: str) -> str:
    try:
        Color.parse(value)
    except ColorParseError:
        raise ValueError(f"not a colour: {value!r}") from None
    return value


class ThemeSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str
    dark: bool = True
    primary: str
    secondary: str | None = None
    accent: str | None = None
    warning: str | None = None
    error: str | None = None
    success: str | None = None
    foreground: str | None = None
    background: str | None = None
    surface: str | None = None
    panel: str | None = None
    variables: dict[str, str] = {}
    author: str | None = None
    description: str | None = None

    @field_validator(
        "primary",
        "secondary",
        "accent",
        "warning",
        "error",
        "success",
        "foreground",
        "background",
        "surface",
        "panel",
    )
    @classmethod
    def _is_colour(cls, value: str | None) -> str | None:
        return None if value is None else _colour(value)

    def theme(self) -> Theme:
        fields = self.model_dump(exclude={"author", "description", "variables"})
        return Theme(**fields, variables={**VARIABLE_DEFAULTS, **self.variables})


@dataclass
class ThemeBundle:
    themes: list[Theme] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


def load_theme_dirs(*folders: Path) -> ThemeBundle:
    """Every theme in the folders; a later folder's theme replaces an earlier one of the same
    name."""
    by_name: dict[str, Theme] = {}
    bundle = ThemeBundle()
    for folder in folders:
        if not folder.is_dir():
            continue
        for path in sorted(folder.glob("*.yaml")):
            try:
                raw = load_mapping(decode(read_file(str(path), 64 * 1024)).text)
                if "dark" in raw:
                    raw["dark"] = as_bool(raw["dark"], raw["dark"])
                spec = ThemeSpec.model_validate(raw)
            except (TextProblem, UnsafeFile) as error:
                bundle.errors.append(f"{path}: {error}")
                continue
            except ValidationError as error:
                first = error.errors()[0]
                where = ".".join(str(part) for part in first["loc"])
                bundle.errors.append(f"{path}: `{where}`: {first['msg']}; theme skipped")
                continue
            by_name[spec.name] = spec.theme()
    bundle.themes = list(by_name.values())
    return bundle
