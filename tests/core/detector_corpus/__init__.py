"""The detector's evaluation corpus, as data: attacks inside memory-like prose (deploy notes,
preferences, bug logs, meeting notes) and benign hard negatives that look like attacks. Every string
was written for this project. Invisible characters are written as escapes, and the fake credentials
are generated from a fixed seed at import time, so no real-looking secret sits in the source.

A Case names its class (the categories of docs/security.md 2.1), the category the detector must
report and, for an attack, the substring a finding of that category must cover (`cover`, its first
occurrence) at `severity` or above. A benign case must not draw a high or critical finding;
`category` says what it resembles.

`cases` holds the Case type, the payload builders and the fake credentials; the attacks are kept
by class in the `attacks_*` modules and joined here in a fixed order, which training reads."""

from __future__ import annotations

from tests.core.detector_corpus.attacks_encoded import ENCODED_AND_TOOLS
from tests.core.detector_corpus.attacks_hidden import HIDDEN
from tests.core.detector_corpus.attacks_markup import MARKUP_AND_VARIANTS
from tests.core.detector_corpus.attacks_secrets import SECRETS_AND_LOOKS
from tests.core.detector_corpus.attacks_words import WORDS
from tests.core.detector_corpus.benign import BENIGN
from tests.core.detector_corpus.cases import (
    CLASSES,
    SECRETS,
    Case,
    b64,
    tags,
)

ATTACKS: tuple[Case, ...] = (
    WORDS + HIDDEN + ENCODED_AND_TOOLS + SECRETS_AND_LOOKS + MARKUP_AND_VARIANTS
)

__all__ = ["ATTACKS", "BENIGN", "CLASSES", "SECRETS", "Case", "b64", "tags"]
