"""tiktoken's `encode_ordinary` in Python, for processes that count little text.

Building tiktoken's encoder costs more than most of a one-file hook run, so a process that
counts a few thousand pieces does tiktoken's own two steps here instead:

1. split the text with the encoding's pattern (tiktoken's `pat_str`) through the `regex`
   module, which tiktoken itself uses;
2. byte-pair merge each piece that is not itself a token, as tiktoken's `byte_pair_merge`
   does: repeatedly merge the adjacent pair whose concatenation has the lowest rank (the
   leftmost on a tie) until no adjacent pair is a token.

The merge keeps its candidate pairs in a heap ordered by (rank, position), so a long piece
(a 40 KB run of one letter) costs O(n log n), not O(n^2), and the result is the same:
the heap's least entry is the lowest rank, leftmost on a tie. tests/test_bpe.py proves the
counts and ids equal to tiktoken's on generated text and on the bench corpus.
"""

from __future__ import annotations

import heapq
import unicodedata
from collections.abc import Mapping

_MEMO_MAX = 50_000
# Longer pieces are left to tiktoken's encoder (the caller's): merging a long piece in
# Python is far slower than tiktoken's native merge.
MAX_PIECE_BYTES = 256


def merge_bounds(piece: bytes, ranks: Mapping[bytes, int]) -> list[int]:
    """Token boundaries of `piece` by tiktoken's byte-pair merge (0 and len(piece) included).

    Parts are a linked list of start offsets (`nxt`, `prv`); the heap holds (rank, start,
    end of the right part) for adjacent pairs, and an entry whose pair has since changed
    is skipped when it comes up."""
    n = len(piece)
    nxt = list(range(1, n + 2))
    prv = list(range(-1, n))
    heap = []
    for i in range(n - 1):
        r = ranks.get(piece[i:i + 2])
        if r is not None:
            heap.append((r, i, i + 2))
    heapq.heapify(heap)
    alive = [True] * (n + 1)
    while heap:
        _, start, end = heapq.heappop(heap)
        mid = nxt[start]
        if not alive[start] or mid >= n or nxt[mid] != end:
            continue  # stale: one of the two parts was merged since
        alive[mid] = False
        nxt[start] = end
        prv[end] = start
        if start > 0:
            left = prv[start]
            r = ranks.get(piece[left:end])
            if r is not None:
                heapq.heappush(heap, (r, left, end))
        if end < n:
            right = nxt[end]
            r = ranks.get(piece[start:right])
            if r is not None:
                heapq.heappush(heap, (r, start, right))
    bounds = [0]
    while bounds[-1] < n:
        bounds.append(nxt[bounds[-1]])
    return bounds


def _clean(text: str) -> str:
    """What tiktoken encodes when `text` holds lone surrogates: each becomes U+FFFD."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return text


def unassigned(text: str) -> bool:
    """Whether `text` holds a character this Python's Unicode database does not know. The
    `regex` module may be built on newer tables than tiktoken's: it can read such a
    character as a letter where tiktoken does not, and then the two split the text
    differently. Such text is left to tiktoken's encoder."""
    plain = text.replace("\n", "").replace("\r", "").replace("\t", "")
    if plain.isprintable():  # every unassigned character is a non-printable one
        return False
    return any(unicodedata.category(c) == "Cn" for c in plain if not c.isprintable())


class PureBPE:
    """tiktoken's `encode_ordinary` in Python: `pattern` split, then byte-pair merges."""

    def __init__(self, pattern: str, ranks: Mapping[bytes, int]) -> None:
        import regex

        self._split = regex.compile(pattern).findall
        self._ranks = ranks
        self._memo: dict[str, int] = {}

    def count(self, text: str) -> int | None:
        """len(encode_ordinary(text)), or None when a piece is longer than MAX_PIECE_BYTES
        or the text holds an unassigned character (see `unassigned`); pieces repeat a lot,
        so their counts are remembered."""
        if not text.isascii() and unassigned(text):
            return None
        memo, ranks = self._memo, self._ranks
        total = 0
        for piece in self._split(_clean(text)):
            n = memo.get(piece)
            if n is None:
                raw = piece.encode("utf-8")
                if raw in ranks:
                    n = 1
                elif len(raw) > MAX_PIECE_BYTES:
                    return None
                else:
                    n = len(merge_bounds(raw, ranks)) - 1
                if len(memo) >= _MEMO_MAX:
                    memo.clear()
                memo[piece] = n
            total += n
        return total

    def encode(self, text: str) -> list[int]:
        """The token ids, as tiktoken's `encode_ordinary` returns them (used by the tests)."""
        ranks = self._ranks
        out: list[int] = []
        for piece in self._split(_clean(text)):
            raw = piece.encode("utf-8")
            if raw in ranks:
                out.append(ranks[raw])
                continue
            bounds = merge_bounds(raw, ranks)
            out.extend(ranks[raw[a:b]] for a, b in zip(bounds, bounds[1:], strict=False))
        return out
