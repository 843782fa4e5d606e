"""memory-mcp: everything the workbench knows about it lives in this package (see FORMAT.md)."""

NAME = "memory-mcp"
