"""The per-user cache folder (parsed BPE ranks, validated configs): $MEMWARDEN_CACHE_DIR,
else $XDG_CACHE_HOME/memwarden, else ~/.cache/memwarden; None when there is no home."""

from __future__ import annotations

import os
from pathlib import Path


def user_cache_dir() -> Path | None:
    own = os.environ.get("MEMWARDEN_CACHE_DIR")
    if own:
        return Path(own)
    base = os.environ.get("XDG_CACHE_HOME")
    if base:
        return Path(base) / "memwarden"
    if not Path.home().is_dir():
        return None
    return Path.home() / ".cache" / "memwarden"
