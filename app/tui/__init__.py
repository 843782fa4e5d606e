"""The Textual face of the workbench. It talks to app.core.workbench.Workbench only."""
