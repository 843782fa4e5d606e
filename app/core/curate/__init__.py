"""Curation: salience, suggestions and duplicates, as pure functions over the model.

Nothing in this package writes: it reads memories, portfolios, an injected `now` and optional
callables (a memory's text, a file's bytes, the workbench's access log), and returns results with
their reasons. Applying a suggestion is the change layer's job (app.core.change, through the
facade's typed methods: promote, demote, merge...).

The rules and inputs that belong to one memory system live in its package and are reached through
the registry (`System.salience_inputs`, `System.suggestions`...); what is here is shared.
"""

from __future__ import annotations

from .duplicates import NEAR_THRESHOLD, ExactGroup, NearPair, find_duplicates
from .rules import file_reader, suggest
from .salience import Salience, SalienceComponent, salience_formula

# `salience` (the function) stays in saliences: here the name is the salience module's.
from .saliences import log_mentions, salience_all
from .suggestions import FortressScore, Suggestion, fortress_score

__all__ = [
    "NEAR_THRESHOLD",
    "ExactGroup",
    "FortressScore",
    "NearPair",
    "Salience",
    "SalienceComponent",
    "Suggestion",
    "file_reader",
    "find_duplicates",
    "fortress_score",
    "log_mentions",
    "salience_all",
    "salience_formula",
    "suggest",
]
