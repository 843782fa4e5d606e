"""The UI-free core. Nothing here imports Textual (tests/core/test_import_hygiene.py proves it)."""
