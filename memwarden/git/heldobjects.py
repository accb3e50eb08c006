"""New git objects held in memory during a batch, then stored as ONE pack of deltas.

Why: an apply batch of 1,000 proposals writes ~8,000 objects, among them 1,100 versions of
a 47 KB `memory/` tree. Written loose, each is zlib-compressed into its own file,
and `git push` then inflates them all again and searches for deltas. Held here,
libgit2 still computes every id and reads the objects back through this backend; at the
end they go to disk as one pack in which each new version of a tree or file is a delta
against the version it replaced (the writer says which: no delta search), so the push
reuses those deltas. Nothing may reference a held object before `store()`: refs move only
after it (a killed run leaves nothing behind that a ref needs).
"""

from __future__ import annotations

import hashlib
import os
import struct
import tempfile
import zlib
from pathlib import Path
from typing import Any

import pygit2

from memwarden.git.files import common_prefix, common_suffix

_OFS_DELTA = 6
_MAX_DEPTH = 50  # git's default pack.depth: readers apply at most this many deltas
_COPY_MAX = 0x10000  # the copy size every delta reader accepts in one instruction


class HeldObjects(pygit2.OdbBackend):
    """A libgit2 object backend (the first one asked): while holding, every object written
    stays in memory; otherwise writes go on to the repository's own object store."""

    def __init__(self, objects_dir: Path) -> None:
        super().__init__()
        self.objects_dir = objects_dir
        self.holding = False
        self._objects: dict[str, tuple[int, bytes]] = {}  # id -> (type, raw), in write order
        self._bases: dict[str, str] = {}  # id -> the id of the version it replaced
        self._bytes = 0
        self._disk: Any = None

    # A batch holding more than this stores what it holds as a pack and goes on holding:
    # memory stays bounded for any batch (~50 MB per 1,000 proposals at 1,000 agents).
    SPILL_BYTES = 256 << 20

    # -- libgit2's callbacks ---------------------------------------------------------------

    def read_cb(self, oid: Any) -> tuple[int, bytes]:
        return self._objects[str(oid)]

    def read_prefix_cb(self, short: str) -> tuple[int, bytes, Any]:
        oid = self._expand(short)
        kind, data = self._objects[oid]
        return kind, data, pygit2.Oid(hex=oid)

    def read_header_cb(self, oid: Any) -> tuple[int, int]:
        kind, data = self._objects[str(oid)]
        return kind, len(data)

    def exists_cb(self, oid: Any) -> bool:
        return str(oid) in self._objects

    def exists_prefix_cb(self, short: str) -> Any:
        return pygit2.Oid(hex=self._expand(short))

    def refresh_cb(self) -> None:
        return None

    def write_cb(self, oid: Any, data: bytes, kind: int) -> None:
        if self.holding:
            self.put(str(oid), int(kind), bytes(data))
            return
        if self._disk is None:
            self._disk = pygit2.Odb(str(self.objects_dir))
        self._disk.write(int(kind), data)

    def _expand(self, short: str) -> str:
        if len(short) == 40:
            if short not in self._objects:
                raise KeyError(short)
            return short
        found = [oid for oid in self._objects if oid.startswith(short)]
        if not found:
            raise KeyError(short)
        if len(found) > 1:
            raise ValueError(f"ambiguous object id {short}")
        return found[0]

    # -- the batch -------------------------------------------------------------------------

    def hold(self) -> None:
        self.holding = True

    def put(self, oid: str, kind: int, data: bytes) -> None:
        """Hold an object (libgit2 hashed it, or the caller did: trees spliced in Python)."""
        if oid in self._objects:
            return
        if self._bytes + len(data) > self.SPILL_BYTES and self._objects:
            write_pack(self.objects_dir / "pack", self._objects, self._bases)
            self._objects, self._bases, self._bytes = {}, {}, 0  # now read from that pack
        self._objects[oid] = (kind, data)
        self._bytes += len(data)

    def based_on(self, new: str, old: str) -> None:
        """`new` is a new version of `old` (same path): a cheap delta base."""
        if new != old and new in self._objects:
            self._bases[new] = old

    def drop(self) -> None:
        """Forget what is held and write through again (unreferenced: nothing is lost)."""
        self.holding = False
        self._objects, self._bases, self._bytes = {}, {}, 0

    def store(self) -> Path | None:
        """Write the held objects as one pack (+ index) and stop holding; the pack's path,
        or None when nothing was held."""
        objects, bases = self._objects, self._bases
        self.holding = False
        if not objects:
            return None
        path = write_pack(self.objects_dir / "pack", objects, bases)
        self.drop()
        return path


# --- the pack format (git's Documentation/gitformat-pack.txt) ---------------------------


def _entry_header(kind: int, size: int) -> bytes:
    out = bytearray()
    byte = (kind << 4) | (size & 0x0F)
    size >>= 4
    while size:
        out.append(byte | 0x80)
        byte = size & 0x7F
        size >>= 7
    out.append(byte)
    return bytes(out)


def _ofs_bytes(distance: int) -> bytes:
    out = bytearray([distance & 0x7F])
    distance >>= 7
    while distance:
        distance -= 1
        out.insert(0, 0x80 | (distance & 0x7F))
        distance >>= 7
    return bytes(out)


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        byte = n & 0x7F
        n >>= 7
        if n:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _copy(offset: int, size: int) -> bytes:
    out = bytearray()
    while size > 0:
        n = min(size, _COPY_MAX)
        cmd, args = 0x80, bytearray()
        for i in range(4):
            b = (offset >> (8 * i)) & 0xFF
            if b:
                cmd |= 1 << i
                args.append(b)
        sz = 0 if n == _COPY_MAX else n
        for i in range(3):
            b = (sz >> (8 * i)) & 0xFF
            if b:
                cmd |= 0x10 << i
                args.append(b)
        out.append(cmd)
        out += args
        offset += n
        size -= n
    return bytes(out)


def _insert(data: bytes) -> bytes:
    out = bytearray()
    for i in range(0, len(data), 0x7F):
        chunk = data[i:i + 0x7F]
        out.append(len(chunk))
        out += chunk
    return bytes(out)


def delta(base: bytes, target: bytes) -> bytes:
    """A git delta turning `base` into `target`: copy the shared head, insert the middle,
    copy the shared tail (a new version of a tree or a memory file differs in one place)."""
    head = common_prefix(base, target, min(len(base), len(target)))
    tail = common_suffix(base, target, min(len(base), len(target)) - head)
    out = bytearray(_varint(len(base)) + _varint(len(target)))
    if head:
        out += _copy(0, head)
    out += _insert(target[head:len(target) - tail])
    if tail:
        out += _copy(len(base) - tail, tail)
    return bytes(out)


def write_pack(pack_dir: Path, objects: dict[str, tuple[int, bytes]],
               bases: dict[str, str]) -> Path:
    """Write `objects` (id -> (type, raw), bases before the versions made from them) as
    pack-<sha>.pack and .idx in `pack_dir`, fsynced, the index last (git and libgit2 see a
    pack once its index exists). Each object is a delta against its base when the base is
    in this pack, the chain stays within git's depth, and the delta is worth it."""
    pack_dir.mkdir(parents=True, exist_ok=True)
    fd, tmp_pack = tempfile.mkstemp(dir=pack_dir, prefix="tmp_pack_")
    offsets: dict[str, int] = {}
    depth: dict[str, int] = {}
    crcs: dict[str, int] = {}
    sha = hashlib.sha1()
    try:
        with os.fdopen(fd, "wb") as out:
            head = b"PACK" + struct.pack(">II", 2, len(objects))
            out.write(head)
            sha.update(head)
            pos = len(head)
            for oid, (kind, raw) in objects.items():
                base = bases.get(oid)
                entry = None
                if base is not None and base in offsets and depth[base] < _MAX_DEPTH:
                    d = delta(objects[base][1], raw)
                    if len(d) < len(raw) // 2:
                        entry = (_entry_header(_OFS_DELTA, len(d)) +
                                 _ofs_bytes(pos - offsets[base]) + zlib.compress(d))
                        depth[oid] = depth[base] + 1
                if entry is None:
                    entry = _entry_header(kind, len(raw)) + zlib.compress(raw, 1)
                    depth[oid] = 0
                offsets[oid] = pos
                crcs[oid] = zlib.crc32(entry)
                out.write(entry)
                sha.update(entry)
                pos += len(entry)
            digest = sha.digest()
            out.write(digest)
            out.flush()
            os.fsync(out.fileno())
        name = pack_dir / f"pack-{digest.hex()}"
        os.replace(tmp_pack, name.with_suffix(".pack"))
    except BaseException:
        _remove(tmp_pack)
        raise
    _write_index(name.with_suffix(".idx"), offsets, crcs, digest)
    return name.with_suffix(".pack")


def _write_index(path: Path, offsets: dict[str, int], crcs: dict[str, int],
                 pack_sha: bytes) -> None:
    """A version 2 pack index: fan-out table, sorted ids, CRC32s, offsets."""
    ids = sorted(offsets)
    raw_ids = [bytes.fromhex(i) for i in ids]
    fanout = [0] * 256
    for rid in raw_ids:
        fanout[rid[0]] += 1
    total = 0
    for i in range(256):
        total += fanout[i]
        fanout[i] = total
    small, large = bytearray(), bytearray()
    for oid in ids:
        off = offsets[oid]
        if off < 0x80000000:
            small += struct.pack(">I", off)
        else:
            small += struct.pack(">I", 0x80000000 | (len(large) // 8))
            large += struct.pack(">Q", off)
    body = (b"\xfftOc" + struct.pack(">I", 2) + struct.pack(">256I", *fanout) +
            b"".join(raw_ids) + b"".join(struct.pack(">I", crcs[i]) for i in ids) +
            bytes(small) + bytes(large) + pack_sha)
    body += hashlib.sha1(body).digest()
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix="tmp_idx_")
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(body)
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, path)
    except BaseException:
        _remove(tmp)
        raise


def _remove(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass
