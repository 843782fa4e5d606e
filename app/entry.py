"""The `memwb` console command: `memwb --version` is answered here, before the command line's parser
(argparse, pathlib and what they import) is loaded; everything else goes to `app.cli.main`."""

from __future__ import annotations

import sys


def main() -> int:
    argv = sys.argv[1:]
    if argv == ["--version"]:
        from app import __version__

        print(f"memwb {__version__}")
        return 0
    from app.cli import main as run

    return run(argv)
