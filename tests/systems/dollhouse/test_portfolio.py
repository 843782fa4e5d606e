"""DollhouseMCP portfolio: detect, the files walked (and skipped), config.yml's auto-load."""

from __future__ import annotations

from pathlib import Path

from app.core.model import Memory, Problem
from app.core.systems.dollhouse.reader import DollhouseAdapter
from tests.systems.dollhouse.examples import CTX, FRONT_MATTER_EXAMPLE, write


def test_detect_and_portfolio_name(tmp_path: Path) -> None:
    home = tmp_path / ".dollhouse"
    (home / "portfolio" / "memories").mkdir(parents=True)
    assert DollhouseAdapter.detect(home) == home / "portfolio"
    assert DollhouseAdapter.detect(home / "portfolio") == home / "portfolio"
    assert DollhouseAdapter.detect(tmp_path) is None
    assert DollhouseAdapter.portfolio_name(home / "portfolio") == "dollhouse"
    (tmp_path / "work-kite" / "memories").mkdir(parents=True)
    assert DollhouseAdapter.detect(tmp_path / "work-kite") == tmp_path / "work-kite"
    assert DollhouseAdapter.portfolio_name(tmp_path / "work-kite") == "work-kite"


def test_files_skip_server_internals(tmp_path: Path) -> None:
    root = tmp_path / "portfolio"
    mem = root / "memories"
    kept = [
        "memories/2026-03-14/deploy-runbook.yaml",
        "memories/2026-03-14/backup-strategy.yaml",
        "memories/adapters/bridge.yaml",
        "memories/legacy-root-file.yaml",
        "memories/system/dollhousemcp-baseline-knowledge.yaml",
    ]
    for rel in kept:
        write(root / rel, "metadata:\n  name: x\n")
    for rel in [
        "2026-03-14/deploy-runbook.backup-2026-03-14T09-12-33-120Z.yaml",
        "2026-03-14/deploy-runbook.backup-2026-03-14T09-12-33-120Z-v2.yaml",
        "backups/user/2026-03-14/deploy-runbook.backup-2026-03-14T09-12-33-120Z.yaml",
        "backups/system/plain.yaml",
        ".tmp/half-written.yaml",
        "2026-03-14/deploy-runbook.yaml.lock",
        "_index.json",
        "2026-03-14/other.yml",
        "2026-03-14/notes.md",
        "2026-03-14/.wb-deploy-runbook.tmp",
    ]:
        write(mem / rel, "metadata:\n  name: skipped\n")
    write(root / "personas" / "not-a-memory.yaml", "name: p\n")
    problems: list[Problem] = []
    refs = list(DollhouseAdapter.files(root, problems))
    assert problems == []
    assert sorted(ref.rel for ref in refs) == sorted(kept)
    assert all(Path(ref.path).is_file() for ref in refs)


def test_malformed_file_does_not_stop_the_others(tmp_path: Path) -> None:
    root = tmp_path / "portfolio"
    write(root / "memories/2026-03-14/good-a.yaml", "metadata:\n  name: good-a\n")
    write(root / "memories/2026-03-14/bad.yaml", "metadata:\n  name: bad\n  tags: [oops\n")
    write(root / "memories/2026-03-14/bad-bytes.yaml", b"\x00\x01binary")
    write(root / "memories/system/good-b.yaml", FRONT_MATTER_EXAMPLE)
    problems: list[Problem] = []
    memories: list[Memory] = []
    for ref in DollhouseAdapter.files(root, problems):
        result = DollhouseAdapter.parse(CTX, ref.rel, Path(ref.path).read_bytes())
        memories.extend(result.memories)
        problems.extend(result.problems)
    assert sorted(m.name for m in memories) == ["good-a", "team-glossary"]
    assert sorted((p.path, p.kept) for p in problems) == [
        ("memories/2026-03-14/bad-bytes.yaml", "file skipped"),
        ("memories/2026-03-14/bad.yaml", "file skipped"),
    ]


def test_settings_read_config_yml_beside_the_portfolio(tmp_path: Path) -> None:
    home = tmp_path / ".dollhouse"
    (home / "portfolio" / "memories").mkdir(parents=True)
    write(
        home / "config.yml",
        "version: 1.0.0\nautoLoad:\n  enabled: false\n  maxTokenBudget: "
        "12000\n  maxSingleMemoryTokens: 3000\n  suppressLargeMemoryWarnings: "
        "true\n  memories: [dollhousemcp-baseline-knowledge]\n",
    )
    problems: list[Problem] = []
    settings = DollhouseAdapter.settings(home / "portfolio", problems)
    # The server reads config.yml with the FAILSAFE schema: `false` is a non-empty string, so true.
    assert [(p.path, p.line, p.kept) for p in problems] == [
        ("../config.yml", 3, "read as enabled, as the server reads it")
    ]
    assert settings == {
        "autoLoad": {
            "enabled": True,
            "enabled_written": "false",
            "maxTokenBudget": 12000,
            "maxSingleMemoryTokens": 3000,
            "suppressLargeMemoryWarnings": True,
            "memories": ["dollhousemcp-baseline-knowledge"],
        },
        "config_path": str(home / "config.yml"),
        "server_version": None,
        "store_version": "DollhouseMCP (version not recorded), v2 memory files, flat layout",
    }


def test_settings_defaults_without_config(tmp_path: Path) -> None:
    (tmp_path / "memories").mkdir()
    problems: list[Problem] = []
    settings = DollhouseAdapter.settings(tmp_path, problems)
    assert problems == []
    assert settings == {
        "autoLoad": {
            "enabled": True,
            "maxTokenBudget": 5000,
            "maxSingleMemoryTokens": None,
            "suppressLargeMemoryWarnings": False,
            "memories": [],
        },
        "config_path": str(tmp_path / "config.yml"),
        "server_version": None,
        "store_version": "DollhouseMCP (version not recorded), v2 memory files, flat layout",
    }


def test_settings_broken_config_keeps_defaults(tmp_path: Path) -> None:
    write(tmp_path / "config.yml", "autoLoad:\n  enabled: false\n  maxTokenBudget: [5000\n")
    problems: list[Problem] = []
    settings = DollhouseAdapter.settings(tmp_path, problems)
    assert (
        settings["autoLoad"]["enabled"] is True and settings["autoLoad"]["maxTokenBudget"] == 5000
    )
    assert [(p.path, p.line, p.kept) for p in problems] == [
        ("config.yml", 4, "auto-load defaults used")
    ]
    assert problems[0].message.startswith("YAML syntax error")


def test_settings_bad_value_keeps_its_default(tmp_path: Path) -> None:
    home = tmp_path / ".dollhouse"
    write(home / "config.yml", "autoLoad:\n  enabled: false\n  maxTokenBudget: lots\n")
    problems: list[Problem] = []
    settings = DollhouseAdapter.settings(home / "portfolio", problems)
    assert settings["autoLoad"]["enabled"] is True  # as the server reads `false` (see above)
    assert settings["autoLoad"]["maxTokenBudget"] == 5000
    assert [(p.path, p.line, p.kept) for p in problems] == [
        ("../config.yml", 2, "read as enabled, as the server reads it"),
        ("../config.yml", 3, "default 5000 kept"),
    ]


def test_capabilities() -> None:
    caps = DollhouseAdapter.capabilities
    assert caps.trust_source == "per-entry trustLevel (a claim)"
    assert caps.quarantine == "entry trustLevel: quarantined"
    assert caps.promote == "autoLoad + priority"
    assert caps.budget.startswith("ceil(words/0.75)")


def test_symlink_leaving_the_portfolio_is_reported_with_its_portfolio_path(tmp_path: Path) -> None:
    root = tmp_path / "portfolio"
    write(root / "memories/2026-03-14/ok.yaml", "metadata:\n  name: ok\n")
    outside = write(tmp_path / "secret.yaml", "metadata:\n  name: secret\n")
    (root / "memories/2026-03-14/evil.yaml").symlink_to(outside)
    problems: list[Problem] = []
    refs = list(DollhouseAdapter.files(root, problems))
    assert [ref.rel for ref in refs] == ["memories/2026-03-14/ok.yaml"]
    assert [(p.path, p.kept) for p in problems] == [
        ("memories/2026-03-14/evil.yaml", "skipped, target not read")
    ]
