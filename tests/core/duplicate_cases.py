"""A looping agent's memory: one OpenClaw domain section appended thousands of times."""

from __future__ import annotations

from pathlib import Path

COPIES = 10_000
LOOPED = (
    "## Retry the flaky deploy\nWhen the staging deploy fails on the health check, wait two "
    "minutes and retry once before paging.\n"
)


def looped_workspace(root: Path, copies: int) -> Path:
    """An OpenClaw workspace whose agent appended one domain section `copies` times."""
    (root / "memory" / "domains").mkdir(parents=True)
    (root / "MEMORY.md").write_text(
        "# Memory\n\n## Deploys\n- Staging deploys only from release branches.\n", encoding="utf-8"
    )
    (root / "memory" / "domains" / "lessons.md").write_text(
        "# Lessons\n\n" + "\n".join([LOOPED] * copies), encoding="utf-8"
    )
    return root
