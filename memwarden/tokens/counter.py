"""Token counting with tiktoken, offline and hash-verified, with a per-blob cache.

The BPE rank files ship inside memwarden (see encodings/NOTICE.md) and are checked against
the sha256 that tiktoken itself expects before they are used; nothing is ever downloaded
and nothing is ever approximated. Counts are cached by (git blob id, encoding) in
`<git dir>/memwarden/`, so an unchanged file is never tokenized twice; a cache that does
not parse is rebuilt, never trusted. A process that counts little (a pre-commit hook, a
gate) counts with tiktoken's own pattern and merge rule in Python (bpe.py, proven
token-for-token equal) instead of paying to build tiktoken's encoder.
"""

from __future__ import annotations

import hashlib
import os
import re
import threading
from collections.abc import Iterable
from importlib import resources
from pathlib import Path
from typing import Any

from memwarden.cachedir import read_sealed, user_cache_dir, write_sealed
from memwarden.model.errors import EncodingUnavailable

# The official sha256 of each rank file (tiktoken_ext/openai_public.py).
OFFICIAL_SHA256 = {
    "cl100k_base": "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
    "o200k_base": "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
}

MAX_CACHED_COUNTS = 200_000
_lock = threading.Lock()
_encoders: dict[str, Any] = {}
_pure: dict[str, Any] = {}
_verified: set[str] = set()  # rank files whose checksum this process has checked
_pure_chars = 0
# Characters a process counts in pure Python before it builds tiktoken's encoder instead:
# about where building the encoder once becomes the cheaper way on (bench/check.py).
PURE_BUDGET = {"cl100k_base": 128 * 1024, "o200k_base": 256 * 1024}


def _rank_file(name: str) -> bytes:
    """The shipped rank file's bytes ($MEMWARDEN_ENCODINGS_DIR overrides the folder)."""
    override = os.environ.get("MEMWARDEN_ENCODINGS_DIR")
    try:
        if override:
            with open(os.path.join(override, f"{name}.tiktoken"), "rb") as fh:
                return fh.read()
        return (resources.files("memwarden.tokens") / "encodings"
                / f"{name}.tiktoken").read_bytes()
    except OSError as exc:
        raise EncodingUnavailable(
            f"encoding {name!r}: rank file not found ({exc.strerror}); memwarden ships "
            "cl100k_base and o200k_base, reinstall memwarden if they are missing"
        ) from None


def _verify_rank_file(name: str) -> bytes:
    """The rank file's bytes, refused unless their sha256 is the official one."""
    data = _rank_file(name)
    digest = hashlib.sha256(data).hexdigest()
    official = OFFICIAL_SHA256[name]
    if digest != official:
        raise EncodingUnavailable(
            f"encoding {name!r}: rank file sha256 {digest} does not match the official "
            f"{official}; refusing to count with a modified vocabulary"
        )
    _verified.add(name)
    return data


def _cache_path(name: str) -> str | None:
    root = user_cache_dir()
    return os.path.join(root, f"ranks-{OFFICIAL_SHA256[name][:16]}.marshal") if root else None


# The official split pattern of each encoding and its number of ranks: a cached copy must
# match them (a pattern that splits every text into one piece would count it as 1 token).
OFFICIAL_PATTERN_SHA256 = {
    "cl100k_base": "f021c3d976978e62ee64cdad150cc3405c2e3d6e3b40407850bb9e8d9eb65899",
    "o200k_base": "2d1b8dc11e89af71459b36004f698ab3693f59fd84f63e8ec2b49564ab857420",
}
OFFICIAL_RANKS = {"cl100k_base": 100256, "o200k_base": 199998}


def _cached(name: str) -> tuple[str, dict[bytes, int]] | None:
    """(pattern, ranks) of `name` from the user cache: tiktoken's pattern and the parsed
    verified ranks (marshal reads them ~5x faster than parsing the rank file). Callers
    have verified the rank file first, so the cache serves only an official, present file;
    a copy whose pattern or number of ranks is not the official one is not used."""
    path = _cache_path(name)
    found = read_sealed(path, ("ranks", OFFICIAL_SHA256[name])) if path else None
    if (isinstance(found, tuple) and len(found) == 2 and isinstance(found[0], str)
            and isinstance(found[1], dict) and len(found[1]) == OFFICIAL_RANKS[name]
            and hashlib.sha256(found[0].encode("utf-8", "surrogatepass")).hexdigest()
            == OFFICIAL_PATTERN_SHA256[name]):
        return found
    return None


def _load_ranks(name: str, expected_hash: str | None, parsed: list[bool] | None = None
                ) -> dict[bytes, int]:
    official = OFFICIAL_SHA256[name]
    if expected_hash is not None and expected_hash != official:
        raise EncodingUnavailable(
            f"encoding {name!r}: tiktoken expects sha256 {expected_hash}, memwarden knows "
            f"{official}; this tiktoken version is not supported"
        )
    data = _verify_rank_file(name)
    hit = _cached(name)
    if hit is not None:
        return hit[1]
    import base64

    if parsed is not None:
        parsed.append(True)  # not from the user cache: the caller stores them there
    return {
        base64.b64decode(token): int(rank)
        for token, rank in (line.split() for line in data.splitlines() if line)
    }


def _check_name(name: str) -> None:
    if name not in OFFICIAL_SHA256:
        raise EncodingUnavailable(
            f"encoding {name!r} is not available offline; choose one of "
            f"{', '.join(sorted(OFFICIAL_SHA256))}"
        )


def _spec(name: str) -> dict[str, Any]:
    """tiktoken's own constructor arguments for `name` (pattern, special tokens), with our
    verified ranks handed in instead of letting it fetch them over the network; the
    pattern and ranks are then kept in the user cache (see _cached)."""
    import tiktoken_ext.openai_public as public

    original = public.load_tiktoken_bpe
    parsed: list[bool] = []
    public.load_tiktoken_bpe = lambda _url, expected_hash=None: _load_ranks(
        name, expected_hash, parsed)
    try:
        spec: dict[str, Any] = public.ENCODING_CONSTRUCTORS[name]()
    finally:
        public.load_tiktoken_bpe = original
    path = _cache_path(name)
    if path is not None and parsed:
        write_sealed(path, ("ranks", OFFICIAL_SHA256[name]),
                     (spec["pat_str"], spec["mergeable_ranks"]), keep=len(OFFICIAL_SHA256))
    return spec


def get_encoder(name: str) -> Any:
    """The tiktoken Encoding `name`, built from the verified local rank file."""
    with _lock:
        enc = _encoders.get(name)
        if enc is not None:
            return enc
        _check_name(name)
        import tiktoken

        enc = tiktoken.Encoding(**_spec(name))
        _encoders[name] = enc
        return enc


_LENGTHS: dict[str, tuple[Any, Any]] = {}  # name -> (the encoder, its length function)


# tiktoken's merge is superlinear in the length of one piece of its pre-split (a 1 MB run
# of one letter is one piece), so a piece longer than this is counted as one token per
# byte: an upper bound (every token is at least one byte), never an under-count, so a
# HARD limit fails closed. Shorter pieces, and so every ordinary text, count exactly.
MAX_PIECE_CHARS = 128 * 1024


def token_length(name: str) -> Any:
    """A function text -> len(encoding.encode_ordinary(text)) that does not build the list
    of token ids (tiktoken's u32 buffer: `encode_ordinary`'s semantics, 15-30% faster),
    except that a piece longer than MAX_PIECE_CHARS counts its UTF-8 bytes."""
    enc = get_encoder(name)
    known = _LENGTHS.get(name)
    if known is not None and known[0] is enc:
        return known[1]
    core = enc._core_bpe
    none: set[str] = set()
    split: list[Any] = []

    def exact(text: str) -> int:
        try:
            return memoryview(core.encode_to_tiktoken_buffer(text, none)).nbytes // 4
        except UnicodeEncodeError:  # lone surrogates: tiktoken's own fix-up path
            return len(enc.encode_ordinary(text))

    def fn(text: str) -> int:
        if len(text) <= MAX_PIECE_CHARS:
            return exact(text)
        from memwarden.tokens.bpe import _clean

        if not split:
            import regex

            split.append(regex.compile(enc._pat_str).findall)
        pieces = split[0](_clean(text))
        if max(map(len, pieces)) <= MAX_PIECE_CHARS:
            return exact(text)
        ranks = enc._mergeable_ranks
        total = 0
        for piece in pieces:
            raw = piece.encode("utf-8")
            if len(piece) > MAX_PIECE_CHARS:
                total += len(raw)
            else:
                total += 1 if raw in ranks else len(core.encode_single_piece(raw))
        return total

    _LENGTHS[name] = (enc, fn)
    return fn


def _pure_counter(name: str) -> Any:
    """The pure-Python counter of `name` (bpe.py) over tiktoken's pattern and the verified
    ranks, from the user cache when they are there (no tiktoken import then)."""
    with _lock:
        pure = _pure.get(name)
        if pure is not None:
            return pure
        _check_name(name)
        from memwarden.tokens.bpe import PureBPE

        _verify_rank_file(name)
        hit = _cached(name)
        if hit is None:
            spec = _spec(name)
            hit = spec["pat_str"], spec["mergeable_ranks"]
        pure = _pure[name] = PureBPE(*hit)
        return pure


def verify_encoding(name: str) -> None:
    """Fail now, with a clear error, if `name` cannot be counted: the checks of
    `get_encoder` without building anything, so a check can verify before its work."""
    with _lock:
        if name in _encoders or name in _verified:
            return
        _check_name(name)
        _verify_rank_file(name)


# A newline followed by a character that is neither whitespace nor "/" always ends a piece
# of tiktoken's pre-split (cl100k_base and o200k_base; o200k lets "/" follow newlines
# inside a punctuation piece), so a text's token count is the sum of its parts' counts
# (proven by tests/test_evict_parts.py): two versions of a file that differ in a few lines
# differ only in the counts of a few parts.
PART = re.compile(r"(?<=\n)(?=[^\s/])")


def count_edited(text: str, known: str, known_count: int, encoding: str) -> int:
    """Tokens in `text`, a version of `known` (which has `known_count` tokens): only the
    parts between their shared leading and trailing parts are counted. Exact (see PART);
    when most of the text changed it simply counts `text`."""
    if text == known:
        return known_count
    new, old = PART.split(text), PART.split(known)
    head = 0
    limit = min(len(new), len(old))
    while head < limit and new[head] == old[head]:
        head += 1
    tail = 0
    while tail < limit - head and new[-1 - tail] == old[-1 - tail]:
        tail += 1
    old_mid = "".join(old[head:len(old) - tail])
    if 2 * len(old_mid) > len(known):
        return count_text(text, encoding)
    new_mid = "".join(new[head:len(new) - tail])
    return known_count - count_text(old_mid, encoding) + count_text(new_mid, encoding)


_MEMO: dict[tuple[str, str], int] = {}
_MEMO_MAX = 4096


def count_text(text: str, encoding: str) -> int:
    """Tokens in `text`; special-token strings count as ordinary text. Recent texts are
    remembered: apply and gate count the same file before, after and for bookkeeping."""
    key = (encoding, text)
    n = _MEMO.get(key)
    if n is None:
        n = _count(text, encoding)
        if len(_MEMO) >= _MEMO_MAX:
            _MEMO.clear()
        _MEMO[key] = n
    return n


def _count(text: str, encoding: str) -> int:
    """Exact count (see MAX_PIECE_CHARS): tiktoken's encoder once it is built, else the
    pure-Python merge (bpe.py, proven equal) until this process has counted PURE_BUDGET
    characters that way or meets a long piece; past that, building the encoder
    once is the cheaper way on."""
    global _pure_chars
    enc = _encoders.get(encoding)
    if enc is None and _pure_chars + len(text) <= PURE_BUDGET.get(encoding, 0):
        n = _pure_counter(encoding).count(text)
        if n is not None:
            _pure_chars += len(text)
            return int(n)
    return int(token_length(encoding)(text))


def read_counts(path: str | Path) -> dict[str, int]:
    """The counts stored at `path`; {} when missing or not intact (rebuilt, never trusted)."""
    counts = read_sealed(path, ("tokens", 2))
    return counts if isinstance(counts, dict) else {}


def write_counts(path: str | Path, counts: dict[str, int]) -> bool:
    """Store `counts` atomically; False when it cannot be written (it is only a cache)."""
    return write_sealed(path, ("tokens", 2), counts)


PARTS_MAX_CHARS = 256 * 1024  # a few Layer 1 files' worth: the files a hook run checks


class PartCounts:
    """Exact token counts of texts that share most of their lines, each part (see PART)
    counted once: a text's count is the sum of its parts' counts (tests/test_evict_parts.py).
    Eviction re-counts a file with a few entries removed, over and over (in memory only,
    with tiktoken's encoder: `encoder`). A hook run counts the file just edited, and all
    of it but the edited lines was counted by the run before: with a `folder` (the
    repository's cache folder) the counts are kept in one small file there, so only new
    parts are counted.

    The file is tagged with the encoding, its official sha256 and memwarden's version (a
    file tagged otherwise, torn or damaged reads as empty). It keeps the parts this process
    used, then older ones, up to PARTS_MAX_CHARS."""

    def __init__(self, encoding: str, folder: str | Path | None = None,
                 encoder: bool = False) -> None:
        self.path = (os.path.join(folder, f"parts-{encoding}.marshal") if folder is not None
                     else None)
        self.encoding = encoding
        self._encoder = encoder
        self._old: dict[str, int] | None = None if self.path is not None else {}
        self._used: dict[str, int] = {}
        self._added = False

    def _tag(self) -> tuple[str, str, str, str]:
        from memwarden.version import __version__

        return ("parts", self.encoding, OFFICIAL_SHA256.get(self.encoding, ""), __version__)

    def _load(self) -> dict[str, int]:
        if self._old is None:
            raw = read_sealed(self.path, self._tag())  # type: ignore[arg-type]
            self._old = raw if isinstance(raw, dict) else {}
        return self._old

    def __call__(self, text: str) -> int:
        """count_text(text, encoding), counting only the parts not known already."""
        old, used = self._load(), self._used
        total = 0
        missing = []
        for part in PART.split(text):
            n = used.get(part)
            if n is None:
                n = old.get(part)
                if not isinstance(n, int):
                    missing.append(part)
                    continue
                used[part] = n
            total += n
        if missing:
            self._added = True
            length = token_length(self.encoding) if self._encoder else None
            for part in missing:
                n = used.get(part)
                if n is None:
                    n = used[part] = length(part) if length else _count(part, self.encoding)
                total += n
        return total

    def save(self) -> None:
        """Store the parts used now, then the older ones that fit; only when some part was
        new (a failed write only loses the cache)."""
        if not self._added or self.path is None:
            return
        keep = dict(self._used)
        size = sum(map(len, keep))
        for part, n in (self._old or {}).items():
            if size >= PARTS_MAX_CHARS:
                break
            if part not in keep:
                keep[part] = n
                size += len(part)
        if write_sealed(self.path, self._tag(), keep):
            self._added = False


class TokenCounter:
    """Counts tokens per git blob, remembering counts across runs in the cache dir.
    `parts_dir` (a hook's small check): count edited texts part by part (PartCounts)."""

    def __init__(self, encoding: str, cache_dir: str | Path | None = None,
                 parts_dir: str | Path | None = None) -> None:
        self.encoding = encoding
        self.cache_path = (os.path.join(cache_dir, f"tokens-{encoding}.marshal") if cache_dir
                           else None)
        self._counts: dict[str, int] = read_counts(self.cache_path) if self.cache_path else {}
        self._used: set[str] = set()
        self._dirty = False
        self._parts = PartCounts(encoding, parts_dir) if parts_dir is not None else None

    def cached(self, blob_id: str) -> int | None:
        self._used.add(blob_id)
        return self._counts.get(blob_id)

    def count(self, blob_id: str, text: str) -> int:
        self._used.add(blob_id)
        n = self._counts.get(blob_id)
        if n is None:
            parts = self._parts
            n = count_text(text, self.encoding) if parts is None else parts(text)
            self._counts[blob_id] = n
            self._dirty = True
        return n

    def merge(self, counts: dict[str, int]) -> None:
        """Take counts computed elsewhere (a worker process)."""
        for blob, n in counts.items():
            if self._counts.get(blob) != n:
                self._counts[blob] = n
                self._dirty = True
            self._used.add(blob)

    def count_many(self, items: Iterable[tuple[str, str]], workers: int | None = None) -> None:
        """Count (blob_id, text) pairs not yet known, on all cores (tiktoken drops the GIL)."""
        todo = [(b, t) for b, t in items if b not in self._counts]
        if not todo:
            return
        length = token_length(self.encoding)
        workers = workers or min(8, os.cpu_count() or 1)
        if len(todo) == 1 or workers == 1:
            results = [length(t) for _, t in todo]
        else:
            from concurrent.futures import ThreadPoolExecutor

            with ThreadPoolExecutor(workers) as pool:
                results = list(pool.map(lambda bt: length(bt[1]), todo))
        for (blob, _), n in zip(todo, results, strict=True):
            self._counts[blob] = n
            self._used.add(blob)
        self._dirty = True

    def save(self) -> None:
        """Write the cache atomically; a failure to write is not an error (it is a cache)."""
        if self._parts is not None:
            self._parts.save()
        if not self._dirty or self.cache_path is None:
            return
        if len(self._counts) > MAX_CACHED_COUNTS:  # forget blobs this run did not need
            self._counts = {b: n for b, n in self._counts.items() if b in self._used}
        if write_counts(self.cache_path, self._counts):
            self._dirty = False
