"""Exact tiktoken token counts for small texts, without building tiktoken's CoreBPE.

Building tiktoken's Rust encoder costs 60-110 ms (plus ~30 ms to load 100k ranks), a third
of a one-file `memwarden check`. A pre-commit hook counts one edited file, a few thousand
pieces, so this module does tiktoken's own two steps in Python instead:

1. split the text with the encoding's own pattern (tiktoken's `pat_str`), exactly as
   `encode_ordinary` does: through Python's `re`, with the pattern's Unicode classes
   spelled out as the `regex` module (a tiktoken dependency) gives them
   (memwarden/splitpattern.py), or through `regex` itself where that is not possible;
2. byte-pair merge each piece that is not itself a token, as tiktoken's Rust
   `byte_pair_merge` does: repeatedly merge the adjacent pair whose concatenation has the
   lowest rank (the leftmost on a tie) until no adjacent pair is a token.

The ranks are not loaded into a dict: a `RankTable` is an open-addressing hash table (crc32,
linear probing) over the rank bytes, written once per user from the verified ranks and read
back as one file sealed with a crc32 (~2 ms), so a lookup touches only the slots it needs. The
table also stores the pattern tiktoken gave when it was built (these encodings are frozen:
a changed pattern would change the token ids of every user). tests/test_bpe.py proves the
result equal to tiktoken's on generated Unicode text and on the bench corpus, for
cl100k_base and o200k_base.
"""

from __future__ import annotations

import os
import sys
from binascii import crc32  # zlib's crc32: one shared library less for a hook to load
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TypeAlias

MAGIC = b"MWBPE\x02\x00\x00"
# After MAGIC: the seal (crc32 of the payload, reserved), then the payload's header
# (entries, slots, pattern bytes, reserved); little-endian uint32s. Read with
# int.from_bytes: `struct` and `array` are shared libraries a hook run need not load.
_SEAL_SIZE = 8
_HEADER_SIZE = 16
_NO_RANK = 1 << 62  # above every rank: "this pair is not a token"
_MEMO_MAX = 50_000

Lookup: TypeAlias = "Callable[[bytes, int], int]"  # names: type checkers only


class RankTable:
    """Read-only map token bytes -> rank over one bytes buffer (see the module doc)."""

    def __init__(self, pattern: str, offsets: Any, ranks: Any, slots: Any,
                 blob: bytes | memoryview) -> None:
        self.pattern = pattern
        self._offsets = offsets  # entry i spans blob[offsets[i]:offsets[i + 1]]
        self._ranks = ranks
        self._slots = slots  # entry index + 1, 0 = empty
        self._mask = len(slots) - 1
        self._blob = blob
        self.identity: tuple[int, ...] | None = None  # of the file read (see read_table)

    def __len__(self) -> int:
        return len(self._ranks)

    def get(self, key: bytes, default: int) -> int:
        """The rank of `key`, or `default` when it is not a token (the hot path)."""
        slots, offsets, blob, mask = self._slots, self._offsets, self._blob, self._mask
        h = crc32(key) & mask
        while True:
            v = slots[h]
            if not v:
                return default
            v -= 1
            if blob[offsets[v]:offsets[v + 1]] == key:
                return self._ranks[v]  # type: ignore[no-any-return]
            h = (h + 1) & mask

    @staticmethod
    def serialize(pattern: str, ranks: Mapping[bytes, int]) -> bytes:
        """The table file for `ranks` (native byte order, see `table_path`), sealed with a
        crc32: it catches a torn or damaged file as a sha256 would, in a fifth of the time
        and without loading OpenSSL (it is a cache of verified ranks, not a trust anchor)."""
        import array
        import struct

        items = sorted(ranks.items(), key=lambda kv: kv[1])
        offsets = array.array("I", [0])
        pos = 0
        for key, _ in items:
            pos += len(key)
            offsets.append(pos)
        n_slots = 1
        while n_slots < 2 * len(items):
            n_slots *= 2
        mask = n_slots - 1
        slots = array.array("I", bytes(4 * n_slots))
        for i, (key, _) in enumerate(items):
            h = crc32(key) & mask
            while slots[h]:
                h = (h + 1) & mask
            slots[h] = i + 1
        pat = pattern.encode("utf-8")
        pad = b"\0" * (-len(pat) % 4)
        payload = b"".join([
            struct.pack("<IIII", len(items), n_slots, len(pat), 0), pat, pad, offsets.tobytes(),
            array.array("I", [r for _, r in items]).tobytes(), slots.tobytes(),
            b"".join(k for k, _ in items),
        ])
        return MAGIC + struct.pack("<II", crc32(payload), 0) + payload

    @classmethod
    def parse(cls, data: bytes | Any, check: bool = True) -> RankTable | None:
        """The table in `data`, or None when it is not one or (`check`) its checksum fails."""
        head = len(MAGIC) + _SEAL_SIZE
        if data[:8] != MAGIC or len(data) < head + _HEADER_SIZE:
            return None
        payload = memoryview(data)[head:]
        if check and crc32(payload) != int.from_bytes(data[8:12], "little"):
            return None
        n, n_slots, n_pat = (int.from_bytes(payload[i:i + 4], "little") for i in (0, 4, 8))
        pos = _HEADER_SIZE
        pattern = bytes(payload[pos:pos + n_pat]).decode("utf-8")
        pos += n_pat + (-n_pat % 4)
        offsets = payload[pos:pos + 4 * (n + 1)].cast("I")
        pos += 4 * (n + 1)
        ranks = payload[pos:pos + 4 * n].cast("I")
        pos += 4 * n
        slots = payload[pos:pos + 4 * n_slots].cast("I")
        pos += 4 * n_slots
        blob = payload[pos:]  # a view: slices of it compare equal to bytes
        if n_slots & (n_slots - 1) or len(blob) != offsets[n]:
            return None
        return cls(pattern, offsets, ranks, slots, blob)


def table_path(cache_dir: str | Path, official: str) -> str:
    """Where the table of the rank file with sha256 `official` is kept."""
    order = "le" if sys.byteorder == "little" else "be"
    return os.path.join(cache_dir, f"bpe-{official[:16]}-{order}-{MAGIC[5]}.table")  # per format


def read_table(path: str | Path, known: tuple[int, ...] | None = None) -> RankTable | None:
    """The table at `path`, mapped rather than read: reading copied its 2.5-5 MB (~2 ms of
    a hook run); mapped, nothing is copied. Tables are replaced by rename, never rewritten
    in place, so a mapping stays valid.

    `known` is the identity (cachedir.file_identity) the file had when its crc32 last
    matched: a file that still has it is not checked again (~1 ms of a hook run, the
    crc32 paging in all of the table). The table's `identity` is what was read, taken
    from the open file itself, so a file swapped in after a stat is never trusted."""
    import mmap

    from memwarden.cachedir import file_identity

    try:
        with open(path, "rb") as fh:
            ident = file_identity(os.fstat(fh.fileno()))
            data = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
    except (OSError, ValueError):  # missing, unreadable, empty
        return None
    table = RankTable.parse(data, check=known is None or ident != known)
    if table is not None:
        table.identity = ident
    return table


def write_table(path: str | Path, pattern: str, ranks: Mapping[bytes, int]) -> RankTable | None:
    """Build, write (atomically) and return the table; None if it cannot be built here."""
    import array

    if array.array("I").itemsize != 4:
        return None
    from memwarden.cachedir import atomic_write

    data = RankTable.serialize(pattern, ranks)
    atomic_write(path, data)  # a cache: the table in memory still counts
    return RankTable.parse(data)


class _Ranks(dict):  # type: ignore[type-arg]
    """Ranks looked up so far, `_NO_RANK` for non-tokens: a dict hit costs ~50 ns, a table
    probe ~1 us, and a text asks for the same few thousand byte pairs over and over."""

    def __init__(self, rank: Lookup) -> None:
        super().__init__()
        self._rank = rank

    def __missing__(self, key: bytes) -> int:
        r = self[key] = self._rank(key, _NO_RANK)
        return r


def merge_bounds(piece: bytes, ranks: Mapping[bytes, int]) -> list[int]:
    """Token boundaries of `piece` (len >= 2) by tiktoken's byte_pair_merge; `ranks` gives
    `_NO_RANK` for byte strings that are not tokens.

    `pair[j]` is the rank of parts j and j+1 joined; each round merges the lowest (leftmost
    on a tie, as `min` and `index` find it) and re-ranks only its two neighbours."""
    bounds = list(range(len(piece) + 1))
    pair = [ranks[piece[i:i + 2]] for i in range(len(piece) - 1)]
    while pair:
        best = min(pair)
        if best == _NO_RANK:
            break
        i = pair.index(best)
        del bounds[i + 1]
        del pair[i]
        if i > 0:
            pair[i - 1] = ranks[piece[bounds[i - 1]:bounds[i + 1]]]
        if i < len(pair):
            pair[i] = ranks[piece[bounds[i]:bounds[i + 2]]]
    return bounds


def _clean(text: str) -> str:
    """What tiktoken encodes when `text` holds lone surrogates: each becomes U+FFFD."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return text


class PureBPE:
    """tiktoken's `encode_ordinary` in Python: `pattern` split, then byte-pair merges."""

    def __init__(self, pattern: str, rank: Lookup,
                 split: Callable[[str], list[str]] | None = None) -> None:
        """`split` splits as `pattern` does (memwarden/splitpattern.py: through `re`, ~14 ms
        of importing `regex` saved); without it the `regex` module runs the pattern."""
        if split is None:
            import regex

            split = regex.compile(pattern).findall
        self._split = split
        self._rank = rank
        self._ranks = _Ranks(rank)
        self._memo: dict[str, int] = {}

    def count(self, text: str) -> int:
        """len(encode_ordinary(text)); pieces repeat a lot, so their counts are remembered."""
        memo, ranks = self._memo, self._ranks
        total = 0
        for piece in self._split(_clean(text)):
            n = memo.get(piece)
            if n is None:
                raw = piece.encode("utf-8")
                n = 1 if ranks[raw] != _NO_RANK else len(merge_bounds(raw, ranks)) - 1
                if len(memo) >= _MEMO_MAX or len(ranks) >= 4 * _MEMO_MAX:
                    memo.clear()
                    ranks.clear()
                memo[piece] = n
            total += n
        return total

    def encode(self, text: str) -> list[int]:
        """The token ids, as tiktoken's `encode_ordinary` returns them (used by the tests)."""
        ranks = self._ranks
        out: list[int] = []
        for piece in self._split(_clean(text)):
            raw = piece.encode("utf-8")
            if ranks[raw] != _NO_RANK:
                out.append(ranks[raw])
                continue
            bounds = merge_bounds(raw, ranks)
            out.extend(ranks[raw[a:b]] for a, b in zip(bounds, bounds[1:], strict=False))
        return out
