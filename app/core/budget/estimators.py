"""Token estimators: what a memory costs in a model's context, estimated without a tokenizer.

The default is DollhouseMCP's own estimate, ceil(words / 0.75), because it is the one a system
actually budgets with; ceil(chars / 4) is the other common rule of thumb. A real BPE tokenizer is
used only if one is already installed (tiktoken); nothing is installed for it. `estimator_error`
states an estimator's error against such a reference on a set of texts.
"""

from __future__ import annotations

import importlib
import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

WORDS_PER_TOKEN = 0.75
CHARS_PER_TOKEN = 4


@runtime_checkable
class TokenEstimator(Protocol):
    """Turns a memory's counts (or its text, for estimators that need it) into tokens."""

    # Read-only, so frozen dataclasses (whose fields cannot be set) satisfy the protocol.
    @property
    def name(self) -> str: ...

    @property
    def needs_text(self) -> bool: ...

    def estimate(self, *, words: int, chars: int, text: str | None = None) -> int: ...


@dataclass(frozen=True)
class WordsEstimator:
    """DollhouseMCP's estimate: ceil(words / 0.75), words split on whitespace."""

    name: str = "ceil(words/0.75)"
    needs_text: bool = False

    def estimate(self, *, words: int, chars: int, text: str | None = None) -> int:
        if text is not None:
            words = len(text.split())
        return math.ceil(words / WORDS_PER_TOKEN) if words > 0 else 0


@dataclass(frozen=True)
class CharsEstimator:
    """The rule of thumb for English with GPT-style BPE: ceil(characters / 4)."""

    name: str = "ceil(chars/4)"
    needs_text: bool = False

    def estimate(self, *, words: int, chars: int, text: str | None = None) -> int:
        if text is not None:
            chars = len(text)
        return math.ceil(chars / CHARS_PER_TOKEN) if chars > 0 else 0


@dataclass(frozen=True)
class CallableEstimator:
    """A real tokenizer's `encode` wrapped as an estimator; it needs the text."""

    name: str
    encode: Callable[[str], Any]
    needs_text: bool = True

    def estimate(self, *, words: int, chars: int, text: str | None = None) -> int:
        if text is None:
            # Without the text, fall back to the default rather than guess a count of zero.
            return DEFAULT_ESTIMATOR.estimate(words=words, chars=chars)
        return len(self.encode(text))


DEFAULT_ESTIMATOR: TokenEstimator = WordsEstimator()
ESTIMATORS: dict[str, TokenEstimator] = {"words": WordsEstimator(), "chars": CharsEstimator()}


def bpe_estimator(encoding: str = "cl100k_base") -> TokenEstimator | None:
    """tiktoken's encoding as an estimator if tiktoken is installed, else None (nothing is ever
    installed for it). tiktoken fetches an encoding file it has not cached yet, so nothing in the
    workbench calls this on its own: it is for measuring the estimators' error on purpose."""
    try:
        tiktoken = importlib.import_module("tiktoken")
        enc = tiktoken.get_encoding(encoding)
    except Exception:  # noqa: BLE001 - absent package, absent cached encoding, no network: all mean "none"
        return None
    return CallableEstimator(name=f"tiktoken {encoding}", encode=enc.encode)


@dataclass(frozen=True)
class EstimatorError:
    """How far `estimator` lands from `reference` over some texts, in percent of the reference."""

    estimator: str
    reference: str
    texts: int
    estimated: int
    actual: int
    mean_abs_pct: float
    max_abs_pct: float

    @property
    def total_pct(self) -> float:
        return 100.0 * (self.estimated - self.actual) / self.actual if self.actual else 0.0

    def sentence(self) -> str:
        return (
            f"{self.estimator} against {self.reference} on {self.texts} texts: total "
            f"{self.estimated:,} vs "
            f"{self.actual:,} tokens ({self.total_pct:+.1f}%), mean error "
            f"{self.mean_abs_pct:.1f}%, "
            f"worst {self.max_abs_pct:.1f}%"
        )


def estimator_error(
    estimator: TokenEstimator, reference: TokenEstimator, texts: Iterable[str]
) -> EstimatorError:
    """Per-text absolute errors of `estimator` relative to `reference` (texts the reference counts
    as zero tokens are skipped)."""
    errors: list[float] = []
    estimated = actual = count = 0
    for text in texts:
        words, chars = len(text.split()), len(text)
        truth = reference.estimate(words=words, chars=chars, text=text)
        guess = estimator.estimate(words=words, chars=chars, text=text)
        if truth <= 0:
            continue
        count += 1
        estimated += guess
        actual += truth
        errors.append(100.0 * abs(guess - truth) / truth)
    mean = sum(errors) / len(errors) if errors else 0.0
    return EstimatorError(
        estimator.name,
        reference.name,
        count,
        estimated,
        actual,
        round(mean, 2),
        round(max(errors, default=0.0), 2),
    )
