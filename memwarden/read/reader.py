"""The read side: an agent's memory at one commit, in a mode's token budget.

`read_memory` builds the `read` response (README, Read side) from committed blobs
only (never the working tree; bare repositories work). The same commit, mode and budget
always give byte-identical output: there is no wall-clock field, keys come in a fixed
order and `serialize` uses compact separators.

Modes:
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

Fact ids: `meta.factIds` is one string naming every fact bullet present in
`content["facts.md"]`, in file order, separated by spaces, so a run can cite them in
`Facts-Used` trailers: each fact's short id (model/factids.py: one word, one token), or its
full id (entries.Fact.id) where another fact of the file has the same word. About one token
a fact (a list of full ids cost about 7, ~7% of a wide read near the Layer 1 limits); it is
counted in the budget like everything else.
"""

from __future__ import annotations

import datetime as _dt
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

from memwarden.model.errors import MemwardenError
from memwarden.read.budget import (
    Part,
    Unit,
    check_agent,
    chunk,
    chunk_at,
    config_at,
    counting_cache,
    decode,
    fit,
    frontmatter_end,
    heading_chunks,
    hunk_chunks,
    iso,
    main_commit,
    resolve_rev,
    select,
    snapshot_chunks,
    split_keepends,
    strip_end,
)

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
    from memwarden.model.entries import parse_facts

    lines = split_keepends(text)
    facts, _ = parse_facts([strip_end(ln) for ln in lines], frontmatter_end(lines))
    pieces = chunk_at(lines, [f.end_line for f in facts])
    ids: list[tuple[str, ...]] = [() for _ in pieces]
    j = 0
    for f in facts:
        while j + 1 < len(pieces) and pieces[j + 1][0] <= f.line - 1:
            j += 1
        ids[j] = (*ids[j], f.id)
    return Plan(tuple(t for _, t in pieces), tuple(ids), entries=len(facts))


def _plan_loops(text: str) -> Plan:
    from memwarden.model.entries import parse_loops

    lines = split_keepends(text)
    loops, _ = parse_loops([strip_end(ln) for ln in lines], frontmatter_end(lines))
    # Cut after each loop line (a 1-based line number is the 0-based index after it).
    return Plan(tuple(chunk(lines, [lp.line for lp in loops])), entries=len(loops))


def _plan_decisions(text: str) -> Plan:
    """The preamble and the last DECISIONS_SHOWN blocks by date, in file order; kept
    newest first when the budget is short (the preamble goes with the newest)."""
    from memwarden.model.entries import parse_decisions

    lines = split_keepends(text)
    decisions, _ = parse_decisions([strip_end(ln) for ln in lines], frontmatter_end(lines))
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
        from memwarden.read.diff import parse_since

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
    # Short ids over the whole file, so a fact's id does not depend on the budget.
    all_ids = [i for p in content_parts if p.name == "facts.md" for u in p.units for i in u.ids]
    short: dict[str, str] = {}
    if all_ids:
        from memwarden.model.factids import short_ids

        short = dict(zip(all_ids, short_ids(all_ids), strict=True))

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
            m["factIds"] = " ".join(short[i] for p in content_parts if p.name == "facts.md"
                                    for u in p.kept(k) for i in u.ids)
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
    from memwarden.read import diff as memdiff
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
        notes.append("fact ids (in file order): " + meta["factIds"])
    if notes:
        out.append("\n" + "\n".join(notes) + "\n")
    return "".join(out)
