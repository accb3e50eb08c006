"""Cache folders and the one format of every sealed cache file.

The per-user folder (parsed BPE ranks, derived injection tables, validated configs) is
$MEMWARDEN_CACHE_DIR, else $XDG_CACHE_HOME/memwarden, else ~/.cache/memwarden; None when
there is no home. Per-repository caches (token counts, findings, stat data) live in
`<git dir>/memwarden/`.

A sealed file is MAGIC, the crc32 of the payload, then the payload: marshal of (tag, value).
The tag names what the value is and its format version; a file that is missing, torn,
damaged or tagged otherwise reads as None, so it is rebuilt, never trusted. Files are
replaced by rename, so a reader sees the old file or the new one. Per-user families (the
part of the name before the first "-") keep only their newest few files.
"""

from __future__ import annotations

import binascii
import functools
import marshal
import os
import tempfile
import time
from pathlib import Path
from typing import Any

MAGIC = b"MWCACHE\x01"
USER_KEEP = 4  # files kept per per-user family: one per install or edited input, a few


def user_cache_dir() -> str | None:
    own = os.environ.get("MEMWARDEN_CACHE_DIR")
    if own:
        return own
    base = os.environ.get("XDG_CACHE_HOME")
    if base:
        return os.path.join(base, "memwarden")
    home = os.path.expanduser("~")
    if home == "~" or not os.path.isdir(home):
        return None
    return os.path.join(home, ".cache", "memwarden")


def file_identity(st: os.stat_result) -> tuple[int, ...]:
    """What changes whenever a file's bytes do: size, mtime and ctime (ns), inode, device."""
    return (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_dev)


def read_sealed(path: str | Path, tag: Any) -> Any:
    """The value write_sealed stored at `path` under `tag`; None when there is none intact."""
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError:
        return None
    head = len(MAGIC)
    payload = memoryview(data)[head + 4:]
    if data[:head] != MAGIC or binascii.crc32(payload).to_bytes(4, "little") != data[head:head + 4]:
        return None
    try:
        stored_tag, value = marshal.loads(payload)
    except (ValueError, EOFError, TypeError):
        return None
    return value if stored_tag == tag else None


def write_sealed(path: str | Path, tag: Any, value: Any, keep: int | None = None) -> bool:
    """Store `value` (marshal-able) under `tag`, atomically; False when it cannot be written
    (it is only a cache). With `keep`, only the newest `keep` files of the file's family
    stay in its folder (see `prune`)."""
    try:
        payload = marshal.dumps((tag, value))
    except ValueError:
        return False
    ok = atomic_write(path, MAGIC + binascii.crc32(payload).to_bytes(4, "little") + payload)
    if keep is not None:
        folder, name = os.path.split(os.fspath(path))
        prune(folder, name.split("-", 1)[0] + "-", keep)
    return ok


def prune(folder: str | Path, prefix: str, keep: int = USER_KEEP) -> None:
    """Delete all but the `keep` newest files named `prefix`* in `folder` (best effort)."""
    try:
        with os.scandir(folder) as it:
            found = sorted(((e.stat().st_mtime_ns, e.path) for e in it
                            if e.name.startswith(prefix) and e.is_file()), reverse=True)
        for _, path in found[keep:]:
            os.unlink(path)
    except OSError:
        pass


def atomic_write(path: str | Path, data: bytes) -> bool:
    """Write `data` to `path` through a new file beside it and a rename; False when it
    cannot be written."""
    folder = os.path.dirname(os.fspath(path)) or "."
    try:
        os.makedirs(folder, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=folder, prefix=".tmp-", delete=False) as fh:
            fh.write(data)
        try:
            os.replace(fh.name, path)
        except OSError:
            os.unlink(fh.name)
            raise
    except OSError:
        return False
    return True


SHARDS = 64
_OWNED = ("memory", "agents", "logic")


@functools.lru_cache(maxsize=65536)
def shard_of(path: str) -> int:
    """The shard of a repo path: by its owner (the agent or logic id: `memory/<a>/...` and
    `agents/<a>/...` share one), so a one-file check reads and rewrites the one small shard
    its file and that file's context live in, not the whole repository's cache."""
    parts = path.split("/", 2)
    owner = parts[1] if len(parts) == 3 and parts[0] in _OWNED else parts[0]
    return binascii.crc32(owner.encode("utf-8", "surrogateescape")) % SHARDS


class ShardedCache:
    """A path-keyed cache kept as SHARDS sealed files in `folder` (None: memory only),
    each loaded on first use and written back only when changed. `tag` (e.g. format,
    version and config fingerprint) must match for a stored shard to be used; each shard
    remembers when it was saved (the stat cache's racy-timestamp rule needs that)."""

    def __init__(self, folder: str | Path | None, tag: Any) -> None:
        self.folder = folder
        self.tag = tag
        self.tables: dict[int, dict[str, Any]] = {}
        self.saved_at: dict[int, int] = {}
        self.dirty: set[int] = set()

    def _path(self, i: int) -> str:
        return os.path.join(self.folder, f"{i:02x}.marshal")  # type: ignore[arg-type]

    def table(self, path: str) -> tuple[int, dict[str, Any]]:
        """(shard number, its entries) for `path`, loading the shard if needed."""
        i = shard_of(path)
        found = self.tables.get(i)
        if found is None:
            found, at = {}, 0
            raw = read_sealed(self._path(i), self.tag) if self.folder is not None else None
            if (isinstance(raw, tuple) and len(raw) == 2 and isinstance(raw[0], int)
                    and isinstance(raw[1], dict)):
                at, found = raw
            self.tables[i] = found
            self.saved_at[i] = at
        return i, found

    def save(self) -> None:
        """Write the changed shards (a failed write only loses cache entries)."""
        if self.folder is not None:
            for i in sorted(self.dirty):
                write_sealed(self._path(i), self.tag, (time.time_ns(), self.tables[i]))
        self.dirty.clear()
