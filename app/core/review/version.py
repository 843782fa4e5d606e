"""The detector's version: findings kept from an earlier scan are served only while it is the same.

It is a fingerprint of what the detector's findings depend on: the review package's rule and model
files (the learned weights included) and the text helpers they render with, plus the Python and
Unicode versions its regular expressions and normalisation come from. Any change to them, a new
rule or retrained weights, makes a new version, and every content is scanned again. The modules
of the review package that decide nothing about findings (the ledger, the vault, the queue,
effective trust) are left out, so changing them keeps the findings.
"""

from __future__ import annotations

import hashlib
import sys
import unicodedata
from importlib import resources

# Raised by hand only for a change the files below do not show.
DETECTOR_SCHEME = "1"
_NOT_DETECTOR = frozenset(
    {"__init__.py", "ledger.py", "vault.py", "queue.py", "trust.py", "version.py"}
)


def _fingerprint() -> str:
    digest = hashlib.sha256(f"{sys.version_info[:2]}:{unicodedata.unidata_version}".encode())
    package = resources.files("app.core.review")
    parts = [
        item
        for item in package.iterdir()
        if item.name.endswith((".py", ".json")) and item.name not in _NOT_DETECTOR
    ]
    parts.append(resources.files("app.core").joinpath("inert.py"))
    for item in sorted(parts, key=lambda p: p.name):
        digest.update(item.name.encode() + b"\0")
        try:
            digest.update(item.read_bytes())
        except OSError:
            digest.update(b"unreadable")
        digest.update(b"\0")
    return digest.hexdigest()[:16]


DETECTOR_VERSION = f"{DETECTOR_SCHEME}:{_fingerprint()}"
