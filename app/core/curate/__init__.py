"""Curation: salience, suggestions and duplicates, as pure functions over the model.

Nothing in this package writes: it reads memories, portfolios, an injected `now` and optional
callables (a memory's text, a file's bytes, the workbench's access log), and returns results with
their reasons. Applying a suggestion is the change layer's job (app.core.change, through the
facade's typed methods: promote, demote, merge...).

The rules and inputs that belong to one memory system live in its package and are reached through
the registry (`System.salience_inputs`, `System.suggestions`...); what is here is shared. The names
below are loaded on first use, so `app.core.budget` and the systems' planners (which need the
salience module's time helpers) and this package can import each other's modules in either order.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "NEAR_THRESHOLD": "duplicates",
    "ExactGroup": "duplicates",
    "NearPair": "duplicates",
    "find_duplicates": "duplicates",
    "Salience": "salience",
    "SalienceComponent": "salience",
    "log_mentions": "saliences",
    "salience": "saliences",
    "salience_all": "saliences",
    "salience_formula": "salience",
    "FortressScore": "suggestions",
    "Suggestion": "suggestions",
    "file_reader": "rules",
    "fortress_score": "suggestions",
    "suggest": "rules",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_EXPORTS[name]}"), name)
