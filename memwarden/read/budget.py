"""Budgets for the read side: memory text cut into units (entries, headed blocks, diff
hunks), their token costs, fitting a document into a token budget, and the small helpers
(revisions, config, decoding) that read and diff share.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NamedTuple

from memwarden.model.errors import MemwardenError
from memwarden.model.layout import AGENT_ID_RE
from memwarden.model.times import iso_utc

_LINE_RE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")
_HEADING_RE = re.compile(r"^ {0,3}#{1,6}(?:[ \t]|$)")
_BLOCK_HEAD_RE = re.compile(r"^ {0,3}#{2,3}[ \t]")

_count_memo: dict[tuple[str, str], int] = {}  # (encoding, serialized text) -> tokens
_config_memo: dict[bytes | None, Any] = {}  # memwarden.toml bytes -> Config


# --------------------------------------------------------------------------- units

class Unit(NamedTuple):
    """The smallest piece of a file that is kept or dropped: a fact bullet with the lines
    before it, a loop line, a decision block, a snapshot line, a diff hunk. Units with the
    same rank are kept or dropped together; a lower rank is kept first."""

    text: str
    rank: int
    ids: tuple[str, ...] = ()


class Part:
    """One file of the response: its units in output order, and its key in the JSON object
    that holds it (default: its name). A plain class: dataclasses cost import time."""

    __slots__ = ("name", "units", "key")

    def __init__(self, name: str, units: list[Unit] | None = None, key: str | None = None):
        self.name = name
        self.units = units if units is not None else []
        self.key = key

    def kept(self, k: int) -> list[Unit]:
        return [u for u in self.units if u.rank < k]


def _heading_or_blank(line: str) -> bool:
    s = line.lstrip(" ")
    if not s or s[0] != "#":
        return not line.strip()
    return bool(_HEADING_RE.match(line))


def split_keepends(text: str) -> list[str]:
    """Lines with their endings; only CRLF, CR and LF end a line (as memfile and git do)."""
    return _LINE_RE.findall(text)


def strip_end(line: str) -> str:
    return line.rstrip("\r\n")


def frontmatter_end(lines: list[str]) -> int:
    """Index of the first line after a closed `---` frontmatter block (0 when none)."""
    if not lines or strip_end(lines[0]).rstrip() != "---":
        return 0
    for i in range(1, len(lines)):
        if strip_end(lines[i]).rstrip() in ("---", "..."):
            return i + 1
    return 0


def chunk(lines: list[str], starts: Iterable[int]) -> list[str]:
    """Cut `lines` at the given start indexes; a chunk of only headings and blank lines is
    joined to the chunk after it, so a cut never leaves a heading without its entries."""
    return [text for _, text in chunk_at(lines, starts)]


def chunk_at(lines: list[str], starts: Iterable[int]) -> list[tuple[int, str]]:
    """chunk(), with the index of each chunk's first line."""
    cuts = sorted({s for s in starts if 0 < s < len(lines)})
    bounds = [0, *cuts, len(lines)]
    out: list[tuple[int, str]] = []
    carry: int | None = None
    for i, (a, b) in enumerate(zip(bounds, bounds[1:], strict=False)):
        piece = lines[a:b]
        first = a if carry is None else carry
        heading_only = all(_heading_or_blank(ln) for ln in piece)
        if heading_only and i < len(bounds) - 2:
            carry = first
            continue
        out.append((first, "".join(lines[first:b])))
        carry = None
    return out


def snapshot_chunks(text: str) -> list[str]:
    """Whole lines (blank lines ride with the line before; frontmatter stays one piece)."""
    lines = split_keepends(text)
    body = frontmatter_end(lines)
    return chunk(lines, [i for i in range(body, len(lines)) if lines[i].strip()])


def heading_chunks(text: str) -> list[str]:
    """Blocks that start at `##`/`###` headings (changelog days and entries, timeline runs)."""
    lines = split_keepends(text)
    return chunk(lines, [i for i, ln in enumerate(lines) if _BLOCK_HEAD_RE.match(ln)])


def hunk_chunks(diff: str) -> list[str]:
    """A unified diff cut at its hunks; the file header rides with the first hunk."""
    lines = split_keepends(diff)
    hunks = [i for i, ln in enumerate(lines) if ln.startswith("@@")]
    return chunk(lines, hunks[1:])


# --------------------------------------------------------------------------- budgets

def serialize(doc: dict[str, Any]) -> str:
    """The exact text `read`/`diff --format json` print; budgets count this."""
    return json.dumps(doc, ensure_ascii=False, separators=(",", ":")) + "\n"


def _digit_tokens(n: int) -> int:
    """Tokens of a decimal number in cl100k/o200k: every 1-3 digit string is one token and
    digits are split in runs of three (tests check this for both encodings)."""
    return -(-len(str(n)) // 3)


def _count_serialized(text: str, encoding: str,
                      counter: Any = None) -> tuple[int, list[int] | None]:
    """Exact tokens of `text`, from the in-process memo, the counter's cache (keyed by the
    text's blob id) or tiktoken; the tokens themselves when it had to encode."""
    key = (encoding, text)
    n = _count_memo.get(key)
    if n is not None:
        return n, None
    blob = None
    tokens = None
    if counter is not None:
        from memwarden.git.repo import hash_blob

        blob = hash_blob(text.encode("utf-8"))
        n = counter.cached(blob)
    if n is None:
        from memwarden.tokens.counter import get_encoder

        tokens = get_encoder(encoding).encode_ordinary(text)
        n = len(tokens)
        if blob is not None:
            counter.merge({blob: n})
    if len(_count_memo) > 256:
        _count_memo.clear()
    _count_memo[key] = n
    return n, tokens


def _finish(doc: dict[str, Any], encoding: str,
            counter: Any) -> tuple[int, str, list[int] | None]:
    """finish_count(), plus the text counted (tokenCount 0) and its tokens if encoded."""
    doc["tokenCount"] = 0
    text = serialize(doc)
    total, tokens = _count_serialized(text, encoding, counter)
    rest = total - 1
    n = rest + 1
    while rest + _digit_tokens(n) != n:
        n = rest + _digit_tokens(n)
    doc["tokenCount"] = n
    return n, text, tokens


def finish_count(doc: dict[str, Any], encoding: str, counter: Any = None) -> int:
    """Set doc["tokenCount"] to the exact token count of serialize(doc), itself included.

    The number sits between `"tokenCount":` and `,`, so tiktoken's pre-tokenizer always
    cuts around it: count(with N) = count(with 0) - 1 + tokens(N), solved without
    re-encoding."""
    return _finish(doc, encoding, counter)[0]


def _unit_cost(unit: Unit, enc: Any) -> int:
    """Tokens a unit adds as JSON-escaped text plus its fact ids (fallback estimate)."""
    text = json.dumps(unit.text, ensure_ascii=False)[1:-1] + "".join(f" {i}" for i in unit.ids)
    return len(enc.encode_ordinary(text))


def fit(parts: list[Part], assemble: Callable[[int], dict[str, Any]], budget: int | None,
        encoding: str, counter: Any = None, anchor: str = '"content":{') -> dict[str, Any]:
    """The document with the most units (a prefix of the rank order) whose serialization
    fits `budget`, with an exact tokenCount. `assemble(k)` builds the document from the
    units of rank < k; the parts' texts follow `anchor` in the serialization, in order.
    Raises when even k = 0 does not fit.

    One exact count in the common case; otherwise per-unit estimates pick k and exact
    counts confirm it (a handful of encodes at most, all deterministic)."""
    ranks = sorted({u.rank for p in parts for u in p.units})
    top = (ranks[-1] + 1) if ranks else 0
    doc = assemble(top)
    n, text, tokens = _finish(doc, encoding, counter)
    if budget is None or n <= budget:
        return doc
    remembered = None
    if counter is not None:  # the cut chosen last time for this exact response and budget
        from memwarden.git.repo import hash_blob

        remembered = f"cut:{budget}:{hash_blob(text.encode('utf-8'))}"
        k = counter.cached(remembered)
        if k is not None and 0 <= k <= top:
            doc = assemble(k)
            if finish_count(doc, encoding, counter) <= budget:
                return doc
    k, doc = _search(ranks, top, n, (text, tokens), assemble, budget, encoding, counter,
                     parts, anchor)
    if remembered is not None:
        counter.merge({remembered: k})
    return doc


def _offset_costs(text: str, tokens: list[int] | None, parts: list[Part], anchor: str,
                  enc: Any) -> dict[int, int] | None:
    """Tokens each rank holds in the full response, from one encode: every token goes to
    the unit whose bytes it starts in (exact up to a token at each unit boundary). Fact ids
    in meta.factIds are charged at the list's average per id."""
    from bisect import bisect_left
    from itertools import accumulate

    data = text.encode("utf-8")
    if tokens is None:
        tokens = enc.encode_ordinary(text)
    starts = list(accumulate((len(b) for b in enc.decode_tokens_bytes(tokens)), initial=0))

    def tokens_in(a: int, b: int) -> int:
        return bisect_left(starts, b) - bisect_left(starts, a)

    pos = data.find(anchor.encode("utf-8"))
    if pos < 0:
        return None
    cost: dict[int, int] = {}
    n_ids = 0
    for p in parts:
        # An unescaped quote never occurs inside a JSON string, so this finds the key.
        key = (json.dumps(p.key or p.name, ensure_ascii=False) + ':"').encode("utf-8")
        at = data.find(key, pos)
        if at < 0:
            return None
        pos = at + len(key)
        for u in p.units:
            size = len(json.dumps(u.text, ensure_ascii=False).encode("utf-8")) - 2
            cost[u.rank] = cost.get(u.rank, 0) + tokens_in(pos, pos + size)
            pos += size
            n_ids += len(u.ids)
    if n_ids:
        at = data.find(b'"factIds":"')
        if at < 0:
            return None
        per_id = tokens_in(at + 11, data.find(b'"', at + 11) + 1) / n_ids
        for p in parts:
            for u in p.units:
                cost[u.rank] += round(per_id * len(u.ids))
    return cost


def _search(ranks: list[int], top: int, n: int, full: tuple[str, list[int] | None],
            assemble: Callable[[int], dict[str, Any]], budget: int, encoding: str,
            counter: Any, parts: list[Part], anchor: str) -> tuple[int, dict[str, Any]]:
    """fit()'s slow path: (the cut k, its document). `full` is the whole response as
    counted (text, tokens if already encoded)."""
    from memwarden.tokens.counter import get_encoder

    enc = get_encoder(encoding)
    cost = _offset_costs(full[0], full[1], parts, anchor, enc)
    if cost is None:  # cannot happen for our documents; estimate unit by unit instead
        cost = dict.fromkeys(ranks, 0)
        for p in parts:
            for u in p.units:
                cost[u.rank] += _unit_cost(u, enc)
    # Calibrate on the exact full count: est(k) = n - cost of the ranks dropped.
    margin = 8 + budget // 500
    est, k = n, top
    for r in reversed(ranks):
        if est <= budget - margin:
            break
        est -= cost[r]
        k = r
    best: dict[str, Any] | None = None
    for _ in range(8):
        doc = assemble(k)
        n = finish_count(doc, encoding, counter)
        if n <= budget:
            best = doc
            break
        if k == 0:
            raise MemwardenError(
                f"a budget of {budget} tokens is too small: the response without any file "
                f"content already takes {n} tokens")
        excess, lower = n - budget, [r for r in ranks if r < k]
        while lower and excess > 0:
            r = lower.pop()
            excess -= cost[r]
            k = r
    if best is None:  # estimates kept missing: walk down one rank at a time (exact)
        for r in reversed([r for r in ranks if r < k]):
            doc = assemble(r)
            if finish_count(doc, encoding, counter) <= budget:
                return r, doc
        raise MemwardenError(f"a budget of {budget} tokens is too small for any response")
    # Try to use the slack left by a pessimistic estimate (once; keep the best that fits).
    slack = budget - best["tokenCount"] - margin
    higher = [r for r in ranks if r >= k]
    k2 = k
    while higher and cost[higher[0]] <= slack:
        slack -= cost[higher[0]]
        k2 = higher.pop(0) + 1
    if k2 > k:
        doc = assemble(k2)
        if finish_count(doc, encoding, counter) <= budget:
            return k2, doc
    return k, best


def select(parts: list[Part], k: int) -> tuple[dict[str, str], list[str], list[str]]:
    """Texts of the kept units per file, and the files cut short / dropped whole."""
    texts: dict[str, str] = {}
    truncated: list[str] = []
    dropped: list[str] = []
    for p in parts:
        kept = p.kept(k)
        if not kept and p.units:
            dropped.append(p.name)
            continue
        texts[p.name] = "".join(u.text for u in kept)
        if len(kept) < len(p.units):
            truncated.append(p.name)
    return texts, truncated, dropped


@contextmanager
def counting_cache(encoding: str, cache_dir: Path | None) -> Iterator[Any]:
    """A TokenCounter over `cache_dir` keyed by the blob id of each serialized response, so
    reading the same commit again needs no tokenizer at all (the CLI's common case);
    saved on the way out. Yields None without a cache dir."""
    if cache_dir is None:
        yield None
        return
    from memwarden.tokens.counter import TokenCounter

    counter = TokenCounter(encoding, cache_dir)
    yield counter
    counter.save()


# --------------------------------------------------------------------------- repository

def resolve_rev(repo: Any, rev: str, flag: str) -> str:
    try:
        return repo.resolve_commit(rev)
    except MemwardenError:
        raise MemwardenError(f"{flag} {rev}: not a commit in this repository") from None


def main_commit(repo: Any, config: Any = None) -> str:
    """The main branch named by the config (memwarden.toml at HEAD by default), else HEAD."""
    if config is None:
        try:
            config = config_at(repo, repo.resolve_commit("HEAD"))
        except MemwardenError:
            config = None
    name = config.data["main_branch"] if config is not None else "main"
    for rev in (f"refs/heads/{name}", name, "HEAD"):
        try:
            return repo.resolve_commit(rev)
        except MemwardenError:
            continue
    raise MemwardenError("the repository has no commits yet: nothing to read")


def config_at(repo: Any, sha: str) -> Any:
    """The Config a committed tree declares (memoized by the file's bytes: parsing and
    validating memwarden.toml is the costly part)."""
    from memwarden.model.config import CONFIG_NAME, parse_config
    from memwarden.model.errors import ConfigError

    data = repo.read_path(sha, CONFIG_NAME)
    cfg = _config_memo.get(data)
    if cfg is None:
        text = None
        if data is not None:
            try:
                text = data.decode("utf-8-sig")
            except UnicodeDecodeError:
                raise ConfigError(f"{sha[:12]}:{CONFIG_NAME}: not valid UTF-8") from None
        cfg = parse_config(text, source=f"{sha[:12]}:{CONFIG_NAME}")
        if len(_config_memo) > 64:
            _config_memo.clear()
        _config_memo[data] = cfg
    return cfg


def decode(data: bytes) -> str | None:
    """UTF-8 text (BOM dropped), or None for binary or undecodable content."""
    if b"\x00" in data:
        return None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return None


def iso(ts: int) -> str:
    return iso_utc(ts)


def check_agent(agent: str) -> None:
    if not isinstance(agent, str) or not AGENT_ID_RE.match(agent):
        raise MemwardenError(f"agent {agent!r}: not an agent id (expected lowercase letters, "
                             "digits and '-', like archivist-violin)")


# --------------------------------------------------------------------------- read
