"""MW1xx: token limits. HARD limits on Layer 1 files and their total, soft limits on Layer 2.

Counts come from tiktoken with the configured encoding (never an approximation). A
warning fires at `near_limit_ratio` (default 90%) of a HARD limit so owners see an
eviction coming before a proposal is rejected.
"""

from __future__ import annotations

from collections.abc import Iterator

from memwarden.model.findings import ERROR, WARNING, Finding, make
from memwarden.model.memfile import MemFile
from memwarden.policies.registry import TREE, rule
from memwarden.policies.rulecontext import FileContext, TreeContext
from memwarden.tokens.counter import count_text, get_encoder

_HARD_HINTS = {
    "snapshot": "snapshot.md is replace-only: rewrite it shorter (apply rejects, never evicts).",
    "facts": "Remove or merge stale facts (or move them under '## Deprecated'); apply evicts "
             "least recently used facts when a proposal overflows.",
    "open_loops": "Close finished loops and drop closed ones older than 7 days.",
}


def crossing_line(mf: MemFile, limit: int, encoding: str) -> int:
    """The line holding token number limit+1: decode the first limit+1 tokens of a prefix
    that holds them (found by doubling, so a long file is not encoded whole), count lines."""
    text = mf.text or ""
    end = 4 * (limit + 1)
    while end < len(text) and count_text(text[:end], encoding) <= limit:
        end *= 2
    ids = get_encoder(encoding).encode_ordinary(text[:end])[: limit + 1]
    prefix = get_encoder(encoding).decode_bytes(ids)
    return prefix.count(b"\n") + 1


def _hard(rule_id: str, key: str, mf: MemFile, ctx: FileContext) -> Iterator[Finding]:
    limit = ctx.config.limit(key, mf.info.agent)
    name = mf.path.rsplit("/", 1)[-1]
    if mf.unreadable is not None:
        return  # MW206 (and MW502 for special files) report it
    if mf.too_large:
        yield make(rule_id, ERROR, mf.path, 1, 1,
                   f"{name} is {mf.size} bytes, far over its HARD limit of {limit} tokens "
                   "(too large to count)", f"{mf.path}:{mf.size}", _HARD_HINTS[key])
        return
    if mf.text is None:
        return
    n = ctx.tokens(mf)
    if n > limit:
        line = crossing_line(mf, limit, ctx.config.encoding)
        yield make(rule_id, ERROR, mf.path, line, 1,
                   f"{name} has {n} tokens, over its HARD limit of {limit} "
                   f"({ctx.config.encoding}; the limit is passed near line {line})",
                   mf.text, _HARD_HINTS[key])
    elif n >= limit * ctx.config.data["near_limit_ratio"]:
        yield make(rule_id, WARNING, mf.path, 1, 1,
                   f"{name} has {n} tokens, {n * 100 // limit}% of its HARD limit of {limit}",
                   mf.text, _HARD_HINTS[key])


@rule("MW101", name="snapshot-over-limit", severity=ERROR, kinds={"snapshot"},
      summary="snapshot.md exceeds its HARD token limit (default 2,000).",
      why="The snapshot is loaded on every run; over the limit it crowds out the task. It is "
          "replace-only, so apply rejects an oversized snapshot instead of evicting.",
      bad="memory/a/snapshot.md with 2,600 tokens of accumulated notes",
      good="memory/a/snapshot.md rewritten to the current role, context and top facts (<2,000)",
      fix="Rewrite the snapshot shorter; move history to decisions.md or facts.md.")
def check_snapshot(mf: MemFile, ctx: FileContext) -> Iterator[Finding]:
    yield from _hard("MW101", "snapshot", mf, ctx)


@rule("MW102", name="facts-over-limit", severity=ERROR, kinds={"facts"},
      summary="facts.md exceeds its HARD token limit (default 8,000).",
      why="Facts are loaded in wide reads; unbounded growth makes every run slower and costlier "
          "and pushes real context out of the window.",
      bad="memory/a/facts.md with 9,100 tokens",
      good="memory/a/facts.md under 8,000 tokens; old facts live on in git history",
      fix="Delete or merge facts, or let apply evict least recently used ones.")
def check_facts(mf: MemFile, ctx: FileContext) -> Iterator[Finding]:
    yield from _hard("MW102", "facts", mf, ctx)


@rule("MW103", name="open-loops-over-limit", severity=ERROR, kinds={"open_loops"},
      summary="open_loops.md exceeds its HARD token limit (default 2,000).",
      why="Open loops are in every basic read; too many loops means none gets attention.",
      bad="memory/a/open_loops.md with 40 closed loops from last quarter",
      good="open loops only, closed ones dropped after 7 days",
      fix="Close or drop loops; apply freezes stale low-priority loops into decisions.md.")
def check_loops(mf: MemFile, ctx: FileContext) -> Iterator[Finding]:
    yield from _hard("MW103", "open_loops", mf, ctx)


@rule("MW104", name="layer1-total-over-limit", severity=ERROR, scope=TREE,
      summary="An agent's Layer 1 (snapshot + facts + open_loops) exceeds 12,000 tokens.",
      why="Layer 1 is what every run loads; its total is the real budget the runtime pays.",
      bad="snapshot 1,900 + facts 7,900 + open_loops 1,900 with layer1_total = 11,000",
      good="the three files together under layer1_total",
      fix="Shrink facts.md first (it is the evictable one).")
def check_layer1_total(ctx: TreeContext) -> Iterator[Finding]:
    by_agent: dict[str, list[str]] = {}
    for info in ctx.files():
        if info.layer == 1 and info.agent:
            by_agent.setdefault(info.agent, []).append(info.path)
    for agent, paths in sorted(by_agent.items()):
        focused = [p for p in paths if ctx.in_focus(p)]
        if not focused:
            continue
        counts = {p: ctx.tokens(p) for p in paths}
        total = sum(n for n in counts.values() if n is not None)
        limit = ctx.config.limit("layer1_total", agent)
        if total > limit:
            parts = ", ".join(f"{p.rsplit('/', 1)[-1]} {n}" for p, n in sorted(counts.items()))
            target = sorted(focused, key=lambda p: (not p.endswith("facts.md"), p))[0]
            yield make("MW104", ERROR, target, 1, 1,
                       f"Layer 1 of {agent} has {total} tokens, over its HARD total of {limit} "
                       f"({parts})", f"{agent}:{total}",
                       "Shrink facts.md (evictable) or the snapshot.")


_SOFT_KINDS = {"changelog", "timeline", "run", "relationships", "agent_contract"}


@rule("MW105", name="layer2-soft-limit", severity=WARNING, kinds=_SOFT_KINDS,
      summary="A Layer 2 file (changelog, timeline day, run report, relationships, _agent.md) "
              "is over its soft token limit.",
      why="Layer 2 is read only on request, but oversized files make deep reads and audits "
          "expensive and usually mean rotation is not running.",
      bad="memory/a/changelog.md with 6,000 tokens (60 entries)",
      good="changelog rotated to its last 30 entries (apply does this)",
      fix="Rotate or summarise; `memwarden maintain` applies retention.")
def check_soft(mf: MemFile, ctx: FileContext) -> Iterator[Finding]:
    key = mf.info.limit_key
    if key is None:
        return
    limit = ctx.config.limit(key, mf.info.agent)
    if mf.unreadable is not None:
        return  # MW206 reports it
    if mf.too_large:
        yield make("MW105", WARNING, mf.path, 1, 1,
                   f"{mf.path.rsplit('/', 1)[-1]} is {mf.size} bytes (too large to count), over "
                   f"its soft limit of {limit} tokens", f"{mf.path}:{mf.size}")
        return
    if mf.size <= limit or mf.text is None:
        return  # every token is at least one byte of the text: no count can pass the limit
    n = ctx.tokens(mf)
    if n > limit:
        yield make("MW105", WARNING, mf.path, 1, 1,
                   f"{mf.path.rsplit('/', 1)[-1]} has {n} tokens, over its soft limit of {limit}",
                   mf.text, "Rotate or summarise this file.")
