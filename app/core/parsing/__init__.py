"""Strict, bounded parsing primitives shared by the system readers
(docs/security.md sections 3.1-3.2)."""
