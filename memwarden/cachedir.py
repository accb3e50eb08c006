"""The per-user cache folder (parsed BPE ranks, validated configs): $MEMWARDEN_CACHE_DIR,
else $XDG_CACHE_HOME/memwarden, else ~/.cache/memwarden; None when there is no home.

Also the sealed cache file format the per-repository caches use (stat data, findings):
magic, crc32 of the payload, marshal payload. marshal reads and writes several times
faster than JSON; the checksum makes a torn or corrupt file read as missing, so it is
rebuilt, never trusted.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any


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
    """What changes whenever a file's bytes do: size, mtime and ctime (ns), inode, device.
    ctime cannot be set back by a process, so an unchanged identity means unchanged bytes
    (git trusts its index on the same grounds)."""
    return (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_dev)


def _seal(payload: bytes | memoryview) -> bytes:
    """The payload's crc32. It catches a torn or damaged file as surely as a sha256 did,
    in a fraction of the time (hashing the ~250 KB of caches a hook run reads cost ~1.5 ms
    with CPython's built-in sha256), and an unkeyed hash of either kind proves nothing
    against someone who can write the file."""
    import binascii  # zlib's crc32, one shared library less to load (the scanner needs it)

    return binascii.crc32(payload).to_bytes(4, "little")


def read_sealed(path: str | Path, magic: bytes) -> Any:
    """The object stored at `path` by write_sealed with the same `magic`; None when the
    file is missing, foreign, from another format version, or not intact. Files sealed
    with a sha256 (as earlier builds wrote them) are read too: another installed build
    sharing the cache folder must not make this one rebuild its caches on every run."""
    import marshal

    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError:
        return None
    head = len(magic)
    if data[:head] != magic:
        return None
    payload = memoryview(data)[head + 4:]
    if _seal(payload) != data[head:head + 4]:

        payload = memoryview(data)[head + 32:]
        if hashlib.sha256(payload).digest() != data[head:head + 32]:
            return None
    try:
        return marshal.loads(payload)
    except (ValueError, EOFError, TypeError):
        return None


def write_sealed(path: str | Path, magic: bytes, value: Any) -> bool:
    """Store `value` (marshal-able) atomically; False when it cannot (it is only a cache)."""
    import marshal

    try:
        payload = marshal.dumps(value)
    except ValueError:
        return False
    return atomic_write(path, magic + _seal(payload) + payload)


JSON_MAGIC = b"MWJSON\x01\x00"


def json_loads(text: str) -> Any:
    """json.loads(text) through a per-user cache of the parsed value, keyed by the text's
    sha256: the policy pack's JSON Schemas are read on every hook run, and importing `json`
    costs one ~2.5 ms. Texts that marshal cannot hold are simply parsed."""

    root = user_cache_dir()
    path = None
    if root is not None:
        key = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]
        path = os.path.join(root, f"json-{key}.marshal")
        found = read_sealed(path, JSON_MAGIC)
        if found is not None:
            return found[0]
    import json

    value = json.loads(text)
    if path is not None:
        write_sealed(path, JSON_MAGIC, (value,))  # a cache: may fail
    return value


def atomic_write(path: str | Path, data: bytes) -> bool:
    """Write `data` to `path` through a new file beside it and a rename, so a reader sees
    the old file or the new one, never a part; False when it cannot be written. (Not
    `tempfile`: importing it, with `random` and `shutil`, costs a hook run ~5 ms.)"""
    try:
        folder, name = os.path.split(os.fspath(path))
        if folder:
            os.makedirs(folder, exist_ok=True)
        stem = name.rsplit(".", 1)[0] if "." in name[1:] else name
        tmp = os.path.join(folder, f".{stem}-{os.getpid()}-{os.urandom(6).hex()}")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0),
                     0o600)
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
            os.replace(tmp, path)
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise
    except OSError:
        return False
    return True


SHARDS = 64
_OWNED = ("memory", "agents", "logic")
_SHARD_OF: dict[str, int] = {}


def shard_of(path: str) -> int:
    """The shard of a repo path: by its owner (the agent or logic id: `memory/<a>/...` and
    `agents/<a>/...` share one), so a one-file check reads and rewrites the one small shard
    its file and that file's context live in, not the whole repository's cache."""
    i = _SHARD_OF.get(path)
    if i is None:
        import binascii

        parts = path.split("/", 2)
        owner = parts[1] if len(parts) == 3 and parts[0] in _OWNED else parts[0]
        i = binascii.crc32(owner.encode("utf-8", "surrogateescape")) % SHARDS
        if len(_SHARD_OF) >= 200_000:
            _SHARD_OF.clear()
        _SHARD_OF[path] = i  # a check asks for each path's shard up to four times
    return i


class ShardedCache:
    """A path-keyed cache kept as SHARDS sealed files in `folder` (None: memory only),
    each loaded on first use and written back only when changed. `key` (e.g. version and
    config fingerprint) must match for a stored shard to be used; each shard remembers
    when it was saved (the stat cache's racy-timestamp rule needs that)."""

    def __init__(self, folder: str | Path | None, magic: bytes, key: str = "") -> None:
        self.folder = folder
        self.magic = magic
        self.key = key
        self.tables: dict[int, dict[str, Any]] = {}
        self.saved_at: dict[int, int] = {}
        self.dirty: set[int] = set()

    def table(self, path: str) -> tuple[int, dict[str, Any]]:
        """(shard number, its entries) for `path`, loading the shard if needed."""
        i = shard_of(path)
        found = self.tables.get(i)
        if found is None:
            found, at = {}, 0
            raw = read_sealed(os.path.join(self.folder, f"{i:02x}.marshal"), self.magic) \
                if self.folder is not None else None
            if (isinstance(raw, tuple) and len(raw) == 3 and raw[0] == self.key
                    and isinstance(raw[1], int) and isinstance(raw[2], dict)):
                at, found = raw[1], raw[2]
            self.tables[i] = found
            self.saved_at[i] = at
        return i, found

    def save(self) -> None:
        """Write the changed shards (a failed write only loses cache entries)."""
        if self.folder is None:
            return
        import time

        for i in sorted(self.dirty):
            write_sealed(os.path.join(self.folder, f"{i:02x}.marshal"), self.magic,
                         (self.key, time.time_ns(), self.tables[i]))
        self.dirty.clear()


def remove_legacy(cache_dir: str | Path | None, names: tuple[str, ...]) -> None:
    """Delete cache files of an older format (never read again) once the new one exists."""
    if cache_dir is None:
        return
    for name in names:
        try:
            os.unlink(os.path.join(cache_dir, name))
        except OSError:
            pass
