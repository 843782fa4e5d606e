"""Strict, bounded parsing primitives shared by the adapters (SECURITY.md sections 2.5-2.6)."""
