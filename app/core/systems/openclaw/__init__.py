"""OpenClaw: everything the workbench knows about it lives in this package (see FORMAT.md)."""

NAME = "openclaw"
