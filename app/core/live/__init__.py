"""Live: what other processes (the agents) write to the open portfolios while the workbench is open.

- events: `LiveEvent`, one memory added, changed or removed by another process, with its findings.
- watch: `LiveWatch`, which watches every open portfolio (files through watchfiles, databases by
  their stamp, polled) and re-reads what changed through the facade's own refresh after a write.

The workbench's own writes are told apart by what each left on disk (the change layer keeps it);
a write by another process soon after one of ours to the same file or database is reported as
racing it, and the change layer's freshness check refuses any of ours that would overwrite it.
"""

from app.core.live.events import LiveEvent, LiveKind
from app.core.live.watch import LiveWatch

__all__ = ["LiveEvent", "LiveKind", "LiveWatch"]
