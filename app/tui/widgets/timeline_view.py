"""A Gantt-style view of the startup pipeline's phases, drawn only from PhaseEvents.

The widget takes its events as a reactive tuple, so a test or a snapshot can feed a fixed list (a
load half done) and get the same picture every time; nothing here reads a clock or runs a timer.
A running phase's bar ends at the newest event's time, which is as far as anyone knows it has got.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from rich.style import Style
from rich.text import Text
from textual.reactive import reactive
from textual.widget import Widget

from app.core.inert import one_line
from app.core.load.pipeline import PHASES
from app.core.model import PhaseEvent, Timeline

LANES = (
    ("critical", "Critical path", "the first screen waits for these"),
    ("deferred", "Deferred", "filled in after the first screen"),
)
NAME_WIDTH = 10
TIME_WIDTH = 11
INFO_WIDTH = 34
NOTE_CHARS = 120  # a phase's note shown at most this long, wherever the screen has the room
MIN_BAR_WIDTH = 10


@dataclass
class PhaseBar:
    """One phase as far as the events tell: pending, running, done or error."""

    name: str
    path: str
    status: str = "pending"
    start_ms: float | None = None
    end_ms: float | None = None
    done: int = 0
    total: int | None = None
    message: str = ""

    def duration(self, now_ms: float) -> float:
        if self.start_ms is None:
            return 0.0
        end = self.end_ms if self.end_ms is not None else now_ms
        return max(0.0, end - self.start_ms)


def phase_bars(events: Iterable[PhaseEvent]) -> list[PhaseBar]:
    """Fold the events into one bar per phase, the pipeline's six phases first in their order."""
    bars = {name: PhaseBar(name, path) for name, path in PHASES}
    for event in events:
        bar = bars.setdefault(event.phase, PhaseBar(event.phase, event.path))
        bar.path = event.path
        if event.status == "start":
            bar.status, bar.start_ms, bar.end_ms = "running", event.at_ms, None
            bar.done, bar.total, bar.message = 0, event.total, ""
        elif event.status == "progress":
            bar.status = "running" if bar.status != "error" else bar.status
            bar.start_ms = event.at_ms if bar.start_ms is None else bar.start_ms
            bar.done, bar.total = event.done, event.total if event.total is not None else bar.total
        else:  # end or error
            bar.status = "done" if event.status == "end" else "error"
            bar.start_ms = event.at_ms if bar.start_ms is None else bar.start_ms
            bar.end_ms = event.at_ms
            bar.done = event.done
            bar.total = event.total if event.total is not None else bar.total
            bar.message = event.message
    return list(bars.values())


def events_from_timeline(timeline: Timeline) -> tuple[PhaseEvent, ...]:
    """A finished load's records as the start and end events they came from (the data of `memwb
    startup`), so one drawing serves the live load and the finished one."""
    events: list[PhaseEvent] = []
    for record in timeline.phases:
        events.append(
            PhaseEvent(phase=record.name, path=record.path, status="start", at_ms=record.start_ms)
        )
        events.append(
            PhaseEvent(
                phase=record.name,
                path=record.path,
                status="end",
                at_ms=round(record.start_ms + record.duration_ms, 3),
                done=record.items,
                message=record.message,
            )
        )
    return tuple(events)


class TimelineView(Widget):
    """Lanes for the critical and deferred phases; each phase a bar from its start to its end."""

    COMPONENT_CLASSES = {
        "timeline-view--lane",
        "timeline-view--name",
        "timeline-view--critical",
        "timeline-view--deferred",
        "timeline-view--running",
        "timeline-view--error",
        "timeline-view--dim",
    }

    events: reactive[tuple[PhaseEvent, ...]] = reactive((), layout=True)

    def __init__(self, events: Iterable[PhaseEvent] = (), *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.set_reactive(TimelineView.events, tuple(events))

    # -- numbers the tests and the summary share ---------------------------------------------------

    @property
    def bars(self) -> list[PhaseBar]:
        return phase_bars(self.events)

    @property
    def now_ms(self) -> float:
        return max((event.at_ms for event in self.events), default=0.0)

    @property
    def finished(self) -> bool:
        return bool(self.events) and all(bar.status in ("done", "error") for bar in self.bars)

    def critical_path_ms(self) -> float:
        ends = [
            bar.start_ms + bar.duration(self.now_ms)
            for bar in self.bars
            if bar.path == "critical" and bar.start_ms is not None
        ]
        return max(ends, default=0.0)

    # -- drawing -----------------------------------------------------------------------------------

    def _style(self, name: str) -> Style:
        return self.get_component_rich_style(f"timeline-view--{name}", partial=True)

    def render(self) -> Text:
        bars = self.bars
        span = max(self.now_ms, 0.001)
        infos = {bar.name: self._info(bar) for bar in bars}
        # the notes take what they need, up to two thirds of the room; the bars the rest
        room = self.size.width - 2 - NAME_WIDTH - TIME_WIDTH - 3
        info_width = max(
            INFO_WIDTH,
            min(room * 2 // 3, max((info.cell_len for info in infos.values()), default=0)),
        )
        width = max(MIN_BAR_WIDTH, room - info_width)
        lines: list[Text] = [self._axis(span, width)]
        for path, title, note in LANES:
            lane = [bar for bar in bars if bar.path == path]
            header = Text(title, style=self._style("lane"))
            header.append(f"  {note}", style=self._style("dim"))
            lines.append(header)
            lines.extend(self._bar_line(bar, span, width, infos[bar.name]) for bar in lane)
        lines.append(self._summary())
        return Text("\n").join(lines)  # cut at the edge, not wrapped: timeline.tcss

    def _axis(self, span: float, width: int) -> Text:
        left, right = "0 ms", f"{span:,.1f} ms" if self.events else ""
        gap = max(1, width - len(left) - len(right))
        return Text(" " * (2 + NAME_WIDTH + 1) + left + " " * gap + right, style=self._style("dim"))

    def _bar_line(self, bar: PhaseBar, span: float, width: int, info: Text) -> Text:
        line = Text("  ")
        line.append(f"{bar.name:<{NAME_WIDTH}}"[:NAME_WIDTH], style=self._style("name"))
        line.append(" ")
        line.append_text(self._bar(bar, span, width))
        if bar.start_ms is None:
            line.append(f"{'':>{TIME_WIDTH}} ")
        else:
            line.append(f"{bar.duration(self.now_ms):>{TIME_WIDTH - 3},.1f} ms ")
        line.append_text(info)
        return line

    def _bar(self, bar: PhaseBar, span: float, width: int) -> Text:
        if bar.start_ms is None:
            return Text("·" * width, style=self._style("dim"))
        left = min(width - 1, int(bar.start_ms / span * width))
        length = max(1, min(width - left, round(bar.duration(self.now_ms) / span * width)))
        style = {"running": "running", "error": "error"}.get(bar.status, bar.path)
        glyph = "▒" if bar.status == "running" else "█"
        text = Text(" " * left)
        text.append(glyph * length, style=self._style(style))
        text.append(" " * (width - left - length))
        return text

    def _info(self, bar: PhaseBar) -> Text:
        if bar.status == "pending":
            return Text("waiting", style=self._style("dim"))
        if bar.status == "running":
            if bar.total:
                percent = min(100, int(bar.done * 100 / bar.total))
                return Text(
                    f"running {bar.done:,}/{bar.total:,} ({percent}%)", style=self._style("running")
                )
            return Text("running…", style=self._style("running"))
        noun = "item" if bar.done == 1 else "items"
        info = Text(
            f"{bar.done:,} {noun}", style=self._style("error") if bar.status == "error" else ""
        )
        if bar.status == "error":
            info.append(" failed", style=self._style("error"))
        if bar.message:
            # a phase's note can quote a path or a reason read from disk: inert, one line
            info.append(f"  {one_line(bar.message, NOTE_CHARS)}", style=self._style("dim"))
        return info

    def _summary(self) -> Text:
        if not self.events:
            return Text("No load yet.", style=self._style("dim"))
        if self.finished:
            return Text(
                f"critical path {self.critical_path_ms():,.1f} ms · total {self.now_ms:,.1f} ms",
                style=self._style("lane"),
            )
        running = [bar.name for bar in self.bars if bar.status == "running"]
        doing = f" · {', '.join(running)} running" if running else ""
        return Text(f"loading… {self.now_ms:,.1f} ms so far{doing}", style=self._style("running"))
