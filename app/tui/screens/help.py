"""F1: every key of the workbench, from the bindings themselves (so a remapped key shows as such)."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static


class HelpScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,f1,q", "dismiss", "Close", id="help-close")]

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help-body"):
            yield Static(Text("Memory Workbench: keys", style="bold"), id="help-title")
            yield Static(self._keys(), id="help-keys")

    def _keys(self) -> Text:
        text = Text()
        seen: set[tuple[str, str]] = set()
        screens = [self.app.screen_stack[-2]] if len(self.app.screen_stack) > 1 else []
        for node in (*screens, self.app):
            for bindings in node._bindings.key_to_bindings.values():  # the active keymap
                for binding in bindings:
                    if not binding.show and binding.id is None:
                        continue
                    shown = self.app.get_key_display(binding)
                    if (shown, binding.description) in seen or not binding.description:
                        continue
                    seen.add((shown, binding.description))
                    text.append(f"{shown:>14}  ", style="bold")
                    text.append(f"{binding.description}")
                    if binding.id:
                        text.append(f"   [{binding.id}]", style="dim")
                    text.append("\n")
        text.append("\nRemap a key by its id in config.yaml under `keymap:`, e.g. `mode-review: f9`.\n", style="dim")
        text.append("ctrl+p opens the command palette: jump to a memory by searching for it.", style="dim")
        return text

    async def action_dismiss(self, result: None = None) -> None:
        self.dismiss(None)
