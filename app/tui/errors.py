"""What went wrong, said in words: an error's own message, never its Python class name."""

from __future__ import annotations

from app.core.inert import one_line


def error_text(error: BaseException, limit: int = 400) -> str:
    """The error's message as a person reads it: an OSError as `path: reason`, a bare KeyError as
    what was not found, anything without a message as an unexpected error."""
    if isinstance(error, OSError) and error.strerror:
        text = f"{error.filename}: {error.strerror}" if error.filename else error.strerror
    elif type(error) is KeyError and error.args:
        text = f"not found: {error.args[0]}"
    else:
        text = str(error).strip()
    return one_line(text or "an unexpected error, with no message", limit)
