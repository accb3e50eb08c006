"""The read side: an agent's memory at one commit, in a mode's token budget (SPEC §5).

`read_memory` builds the `read` response of SPEC §8 / seed 000 §4.1 from committed blobs
only (never the working tree; bare repositories work). The same commit, mode and budget
always give byte-identical output: there is no wall-clock field, keys come in a fixed
order and `serialize` uses compact separators.

Modes (seed 000 §11.6; deep and temporal budgets from seed 000 §4.1 / seed 002 §4.3):
  basic    snapshot.md + open_loops.md                                   <= 4,100 tokens
  wide     basic + facts.md + the last 5 decisions of decisions.md      <= 13,000
  deep     wide + changelog.md + timeline/ of the 7 days ending on the commit's date
                                                                         <= 32,000
  temporal deep + git diffs of Layer 1 and decisions.md since --since
           (default: 7 days before the commit)                          <= 32,000
No other file is ever read: runs/, relationships.md and unknown files never load (an
agent whose mode files are all absent is recognised by a cheap existence lookup only).

Budgets count the whole serialized response (`serialize(doc)`, JSON plus its final newline)
with tiktoken, and `tokenCount` is that exact count. When the response would not fit, whole
entries are dropped from the end of the priority order snapshot > open_loops > facts >
decisions (newest first) > changelog > timeline (newest day first) > diffs: facts bullets,
loop lines, decision/changelog/timeline blocks, snapshot lines, diff hunks. Files cut short
are named in `truncated`, files dropped whole in `excluded` ({"file", "reason"}); a
temporal read's diffs appear there as `diff/<file>`.

Fact ids: `meta.factIds` lists the id (entries.Fact.id) of every fact bullet present in
`content["facts.md"]`, in file order, so a run can cite them in `Facts-Used` trailers. A
plain list costs about 7 tokens per fact and is counted in the budget like everything else.
"""

from __future__ import annotations

import datetime as _dt
import json
import re
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NamedTuple

from memwarden.errors import MemwardenError
from memwarden.layout import AGENT_ID_RE

MODES = ("basic", "wide", "deep", "temporal")
MODE_BUDGETS = {"basic": 4_100, "wide": 13_000, "deep": 32_000, "temporal": 32_000}
DECISIONS_SHOWN = 5
TIMELINE_DAYS = 7
TEMPORAL_DEFAULT_DAYS = 7
# Files whose history a temporal read shows (the logs changelog/timeline are already there).
TEMPORAL_DIFF_FILES = ("snapshot.md", "open_loops.md", "facts.md", "decisions.md")
META_FIELDS = ("lastUpdate", "lastRunId")  # copied from meta.json when they are short text
MAX_META_TEXT = 200
MAX_FILE_BYTES = 4 * 1024 * 1024  # memfile.MAX_FILE_BYTES (not imported: it pulls in YAML)
# Any of these at the commit means the agent exists (a mode may still find nothing to show).
_AGENT_FILES = ("facts.md", "decisions.md", "changelog.md", "relationships.md")

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


def _strip_end(line: str) -> str:
    return line.rstrip("\r\n")


def _frontmatter_end(lines: list[str]) -> int:
    """Index of the first line after a closed `---` frontmatter block (0 when none)."""
    if not lines or _strip_end(lines[0]).rstrip() != "---":
        return 0
    for i in range(1, len(lines)):
        if _strip_end(lines[i]).rstrip() in ("---", "..."):
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
    body = _frontmatter_end(lines)
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
        from memwarden.repo import hash_blob

        blob = hash_blob(text.encode("utf-8"))
        n = counter.cached(blob)
    if n is None:
        from memwarden.tokens import get_encoder

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
    text = json.dumps(unit.text, ensure_ascii=False)[1:-1] + "".join(f'"{i}",' for i in unit.ids)
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
        from memwarden.repo import hash_blob

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
        at = data.find(b'"factIds":[')
        if at < 0:
            return None
        per_id = tokens_in(at + 11, data.find(b"]", at) + 1) / n_ids
        for p in parts:
            for u in p.units:
                cost[u.rank] += round(per_id * len(u.ids))
    return cost


def _search(ranks: list[int], top: int, n: int, full: tuple[str, list[int] | None],
            assemble: Callable[[int], dict[str, Any]], budget: int, encoding: str,
            counter: Any, parts: list[Part], anchor: str) -> tuple[int, dict[str, Any]]:
    """fit()'s slow path: (the cut k, its document). `full` is the whole response as
    counted (text, tokens if already encoded)."""
    from memwarden.tokens import get_encoder

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
    from memwarden.tokens import TokenCounter

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
    from memwarden.config import CONFIG_NAME, parse_config
    from memwarden.errors import ConfigError

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
    return _dt.datetime.fromtimestamp(ts, _dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def check_agent(agent: str) -> None:
    if not isinstance(agent, str) or not AGENT_ID_RE.match(agent):
        raise MemwardenError(f"agent {agent!r}: not an agent id (expected lowercase letters, "
                             "digits and '-', like archivist-violin)")


# --------------------------------------------------------------------------- read

class Plan(NamedTuple):
    """How one file splits into units: chunks in output order, the fact ids each holds,
    the order to keep them in (most important first) and chunks that share a rank."""

    chunks: tuple[str, ...]
    ids: tuple[tuple[str, ...], ...] = ()
    keep_order: tuple[int, ...] | None = None
    tie: tuple[tuple[int, int], ...] = ()
    entries: int = 0


_plan_memo: dict[tuple[str, str], Plan] = {}


def plan_file(kind: str, text: str) -> Plan:
    """The Plan of a file's text (memoized: a file read again costs a dict lookup)."""
    key = (kind, text)
    plan = _plan_memo.get(key)
    if plan is None:
        plan = _PLANNERS[kind](text)
        if len(_plan_memo) > 4096:
            _plan_memo.clear()
        _plan_memo[key] = plan
    return plan


def _plan_snapshot(text: str) -> Plan:
    return Plan(tuple(snapshot_chunks(text)))


def _plan_headings(text: str) -> Plan:
    return Plan(tuple(heading_chunks(text)))


def _plan_facts(text: str) -> Plan:
    """One unit per fact bullet (with the headings and blank lines before it), each
    carrying its fact id."""
    from memwarden.entries import parse_facts

    lines = split_keepends(text)
    facts, _ = parse_facts([_strip_end(ln) for ln in lines], _frontmatter_end(lines))
    pieces = chunk_at(lines, [f.end_line for f in facts])
    ids: list[tuple[str, ...]] = [() for _ in pieces]
    j = 0
    for f in facts:
        while j + 1 < len(pieces) and pieces[j + 1][0] <= f.line - 1:
            j += 1
        ids[j] = (*ids[j], f.id)
    return Plan(tuple(t for _, t in pieces), tuple(ids), entries=len(facts))


def _plan_loops(text: str) -> Plan:
    from memwarden.entries import parse_loops

    lines = split_keepends(text)
    loops, _ = parse_loops([_strip_end(ln) for ln in lines], _frontmatter_end(lines))
    # Cut after each loop line (a 1-based line number is the 0-based index after it).
    return Plan(tuple(chunk(lines, [lp.line for lp in loops])), entries=len(loops))


def _plan_decisions(text: str) -> Plan:
    """The preamble and the last DECISIONS_SHOWN blocks by date, in file order; kept
    newest first when the budget is short (the preamble goes with the newest)."""
    from memwarden.entries import parse_decisions

    lines = split_keepends(text)
    decisions, _ = parse_decisions([_strip_end(ln) for ln in lines], _frontmatter_end(lines))
    if not decisions:
        return Plan((text,) if text else ())
    latest = sorted(decisions, key=lambda d: (d.date, d.line))[-DECISIONS_SHOWN:]
    shown = sorted(latest, key=lambda d: d.line)
    preamble = "".join(lines[:decisions[0].line - 1]).rstrip("\r\n")
    chunks = [preamble + "\n"] if preamble else []
    for d in shown:
        block = "".join(lines[d.line - 1:d.end_line]).rstrip("\r\n") + "\n"
        chunks.append(("\n" if chunks else "") + block)
    first = 1 if preamble else 0
    newest = sorted(range(first, len(chunks)),
                    key=lambda i: (shown[i - first].date, shown[i - first].line), reverse=True)
    if preamble:
        return Plan(tuple(chunks), keep_order=(newest[0], 0, *newest[1:]),
                    tie=((0, newest[0]),), entries=len(decisions))
    return Plan(tuple(chunks), keep_order=tuple(newest), entries=len(decisions))


_PLANNERS = {"snapshot": _plan_snapshot, "open_loops": _plan_loops, "facts": _plan_facts,
             "decisions": _plan_decisions, "log": _plan_headings}


class _Reader:
    """Collects the parts of one read, in priority order, assigning ranks as it goes."""

    def __init__(self, repo: Any, sha: str, root: str) -> None:
        self.repo = repo
        self.sha = sha
        self.root = root
        self.parts: list[Part] = []
        self.unreadable: list[dict[str, str]] = []
        self.rank = 0
        self.present = False

    def text(self, name: str) -> str | None:
        data = self.repo.read_path(self.sha, f"{self.root}/{name}")
        if data is None:
            return None
        self.present = True
        if len(data) > MAX_FILE_BYTES:  # as memfile: reported by check, never tokenized here
            self.unreadable.append({"file": name, "reason": "larger than 4 MiB"})
            return None
        text = decode(data)
        if text is None:
            self.unreadable.append({"file": name, "reason": "not UTF-8 text"})
        return text

    def load(self, name: str, kind: str) -> Plan | None:
        """Read, plan and add one file; None when it is absent or not text."""
        text = self.text(name)
        if text is None:
            return None
        plan = plan_file(kind, text)
        self.add(name, plan)
        return plan

    def add(self, name: str, plan: Plan, key: str | None = None) -> Part:
        """Rank the plan's chunks after everything added so far, in its keep order."""
        n = len(plan.chunks)
        order = plan.keep_order if plan.keep_order is not None else range(n)
        tie = dict(plan.tie)
        ranks: dict[int, int] = {}
        for i in order:
            if i in tie and tie[i] in ranks:
                ranks[i] = ranks[tie[i]]
                continue
            ranks[i] = self.rank
            self.rank += 1
        for i in range(n):  # chunks left out of keep_order come last
            if i not in ranks:
                ranks[i] = self.rank
                self.rank += 1
        ids = plan.ids
        part = Part(name, [Unit(c, ranks[i], ids[i] if ids else ()) for i, c in
                           enumerate(plan.chunks)], key)
        self.parts.append(part)
        return part


def _timeline_days(commit_ts: int) -> list[str]:
    day = _dt.datetime.fromtimestamp(commit_ts, _dt.UTC).date()
    return [(day - _dt.timedelta(days=n)).isoformat() for n in range(TIMELINE_DAYS)]


def read_memory(repo: Any, agent: str, mode: str = "basic", max_tokens: int | None = None,
                at: str | None = None, since: str | None = None, config: Any = None,
                cache_dir: Path | None = None) -> dict[str, Any]:
    """The `read` response for `agent` at `at` (default: the main branch, else HEAD).

    `config` overrides the memwarden.toml of the commit; `cache_dir` lets the CLI keep
    exact counts of whole responses across runs (see counting_cache)."""
    _check_args(agent, mode, max_tokens, since)
    sha = resolve_rev(repo, at, "--at") if at is not None else main_commit(repo, config)
    cfg = config if config is not None else config_at(repo, sha)
    budget = MODE_BUDGETS[mode] if max_tokens is None else min(max_tokens, MODE_BUDGETS[mode])
    commit_ts = repo.commit_time(sha)
    since_ts = None
    if mode == "temporal":
        from memwarden.memdiff import parse_since

        since_ts = parse_since(since) if since is not None else \
            commit_ts - TEMPORAL_DEFAULT_DAYS * 86_400
    rd = _Reader(repo, sha, f"memory/{agent}")
    meta = _meta(rd)
    meta["commitDate"] = iso(commit_ts)
    meta["budget"] = budget
    decisions_total, window = _load_mode_files(rd, mode, commit_ts)
    if not rd.present and not any(repo.entry_at(sha, f"{rd.root}/{n}") is not None
                                  for n in _AGENT_FILES):
        raise MemwardenError(f"agent {agent!r}: no memory/{agent}/ at {sha[:12]} (check the "
                             "agent id, or --at)")
    diff_info = _temporal(rd, agent, since_ts) if since_ts is not None else None
    head = {"agentId": agent, "version": meta.pop("version"), "commit": sha, "mode": mode}
    if decisions_total is not None:
        meta["decisionsTotal"] = decisions_total
    if window:
        meta["timeline"] = [window[-1], window[0]]
    assemble = _assembler(rd, head, meta, diff_info)
    with counting_cache(cfg.encoding, cache_dir) as counter:
        return fit(rd.parts, assemble, budget, cfg.encoding, counter)


def _check_args(agent: str, mode: str, max_tokens: int | None, since: str | None) -> None:
    if mode not in MODES:
        raise MemwardenError(f"--mode {mode!r}: expected one of {', '.join(MODES)}")
    check_agent(agent)
    if max_tokens is not None and (isinstance(max_tokens, bool) or not isinstance(
            max_tokens, int) or max_tokens < 1):
        raise MemwardenError(f"--max-tokens {max_tokens!r}: expected a positive integer")
    if since is not None and mode != "temporal":
        raise MemwardenError("--since applies to --mode temporal only")


def _load_mode_files(rd: _Reader, mode: str, commit_ts: int) -> tuple[int | None, list[str]]:
    """Add the mode's files in priority order; (decision blocks in the file, timeline
    days looked at)."""
    rd.load("snapshot.md", "snapshot")
    rd.load("open_loops.md", "open_loops")
    decisions_total = None
    if mode != "basic":
        rd.load("facts.md", "facts")
        plan = rd.load("decisions.md", "decisions")
        decisions_total = plan.entries if plan is not None else None
    window: list[str] = []
    if mode in ("deep", "temporal"):
        rd.load("changelog.md", "log")
        window = _timeline_days(commit_ts)
        for day in window:
            rd.load(f"timeline/{day}.md", "log")
    return decisions_total, window


def _assembler(rd: _Reader, head: dict[str, Any], meta: dict[str, Any],
               diff_info: dict[str, Any] | None) -> Callable[[int], dict[str, Any]]:
    """assemble(k) for fit(): the response holding the units of rank < k."""
    content_parts = [p for p in rd.parts if p.key is None]
    diff_parts = [p for p in rd.parts if p.key is not None]

    def assemble(k: int) -> dict[str, Any]:
        texts, truncated, dropped = select(rd.parts, k)
        content = {p.name: texts[p.name] for p in content_parts if p.name in texts}
        doc: dict[str, Any] = {**head, "tokenCount": 0, "content": content}
        if diff_info is not None:
            doc["diff"] = {**diff_info, "files": {p.key: texts[p.name] for p in diff_parts
                                                  if p.name in texts}}
        doc["truncated"] = truncated
        doc["excluded"] = [*rd.unreadable, *({"file": n, "reason": "budget"} for n in dropped)]
        m = dict(meta)
        if "facts.md" in content:
            m["factIds"] = [i for p in content_parts if p.name == "facts.md"
                            for u in p.kept(k) for i in u.ids]
        if "decisions.md" not in content:
            m.pop("decisionsTotal", None)
        doc["meta"] = m
        return doc

    return assemble


def _meta(rd: _Reader) -> dict[str, Any]:
    """version and the seed's meta fields from meta.json (short strings only; a broken
    meta.json gives version 0 and no fields, `check` reports it)."""
    data = rd.repo.read_path(rd.sha, f"{rd.root}/meta.json")
    out: dict[str, Any] = {"version": 0}
    if data is None:
        return out
    rd.present = True
    try:
        doc = json.loads(data.decode("utf-8-sig"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return out
    if not isinstance(doc, dict):
        return out
    v = doc.get("version")
    if isinstance(v, int) and not isinstance(v, bool) and 0 <= v < 10**15:
        out["version"] = v
    for key in META_FIELDS:
        val = doc.get(key)
        if isinstance(val, str) and len(val) <= MAX_META_TEXT and _utf8(val):
            out[key] = val
    return out


def _utf8(text: str) -> bool:
    """False for text UTF-8 cannot carry: lone surrogates, which JSON escapes like
    "\\ud800" produce and which the response (UTF-8) could not hold."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _temporal(rd: _Reader, agent: str, since_ts: int) -> dict[str, Any]:
    """Diff parts (one per changed file, cut at hunks) and the range's summary."""
    from memwarden import memdiff

    frm = memdiff.commit_at_or_before(rd.repo, rd.sha, since_ts)
    diffs = memdiff.file_diffs(rd.repo, agent, frm, rd.sha, list(TEMPORAL_DIFF_FILES))
    for d in diffs:
        rd.add(f"diff/{d.name}", Plan(tuple(hunk_chunks(d.text))), key=d.name)
    added = sum(d.added for d in diffs)
    removed = sum(d.removed for d in diffs)
    return {"from": frm, "fromDate": iso(rd.repo.commit_time(frm)) if frm else None,
            "since": iso(since_ts), "commits": memdiff.count_commits(rd.repo, agent, frm, rd.sha),
            "summary": f"+{added} -{removed}"}


# --------------------------------------------------------------------------- markdown

def _fence(text: str, info: str = "") -> str:
    """A code fence longer than any backtick run inside (CommonMark), so content that
    itself holds fences cannot close it early."""
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    ticks = "`" * max(3, longest + 1)
    body = text if text.endswith("\n") or not text else text + "\n"
    return f"{ticks}{info}\n{body}{ticks}\n"


def render_markdown(doc: dict[str, Any]) -> str:
    """One Markdown context block: a header line, then each file in a fence.

    Budgets are enforced on the JSON form; this form carries the same text unescaped and
    a shorter frame, so it is not larger in practice (the tests check it)."""
    meta = doc.get("meta", {})
    out = [f"# Memory of {doc['agentId']} ({doc['mode']}, version {doc['version']}, "
           f"commit {doc['commit'][:12]}, {meta.get('commitDate', '')})\n"]
    for name, text in doc["content"].items():
        out.append(f"\n## {name}\n")
        out.append(_fence(text, "markdown"))
    diff = doc.get("diff")
    if diff is not None:
        frm = (diff["from"] or "")[:12] or "start"
        out.append(f"\n## Changes {frm}..{doc['commit'][:12]} since {diff['since']}: "
                   f"{diff['commits']} commits, {diff['summary']}\n")
        for name, text in diff["files"].items():
            out.append(f"\n### {name}\n")
            out.append(_fence(text, "diff"))
    notes = []
    if doc["truncated"]:
        notes.append("truncated: " + ", ".join(doc["truncated"]))
    if doc["excluded"]:
        notes.append("excluded: " + ", ".join(f"{e['file']} ({e['reason']})"
                                              for e in doc["excluded"]))
    if meta.get("factIds"):
        notes.append("fact ids (in file order): " + " ".join(meta["factIds"]))
    if notes:
        out.append("\n" + "\n".join(notes) + "\n")
    return "".join(out)
