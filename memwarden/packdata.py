"""Package data (policy pack, schemas, BPE rank files) read as plain files.

Installed packages are folders on disk, where a file read is all it takes; importing
`importlib.resources` (zipfile, its readers) costs a one-file hook run ~5 ms. Packages
imported from elsewhere (a zip) still go through importlib.resources.
"""

from __future__ import annotations

import os
import sys


def path(package: str, *parts: str) -> str | None:
    """The file's path when `package` lives in a folder, else None."""
    if package not in sys.modules:
        __import__(package)
    origin = getattr(sys.modules[package], "__file__", None)
    if not origin:
        return None
    folder = os.path.dirname(origin)
    return os.path.join(folder, *parts) if os.path.isdir(folder) else None


def read_bytes(package: str, *parts: str) -> bytes:
    """The bytes of a package data file (OSError when it is missing)."""
    found = path(package, *parts)
    if found is not None:
        with open(found, "rb") as fh:
            return fh.read()
    from importlib import resources

    return resources.files(package).joinpath(*parts).read_bytes()


def read_text(package: str, *parts: str) -> str:
    return read_bytes(package, *parts).decode("utf-8")
