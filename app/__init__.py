"""Memory Workbench: see, search, review and curate AI agents' long-term memory."""

__version__ = "0.1.0"
