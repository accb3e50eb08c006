"""`diff`: what changed in one agent's memory between two commits.

Per-file unified diffs computed with difflib on the blobs of the two commits (git's
`a/` `b/` labels, paths relative to `memory/<agent>/`), `+N -M` per file and in total,
how many commits in the range touched the agent, and the dates of both ends. `--since
DATE` picks as `from` the newest commit on the first-parent history of `to` at or before
DATE (a date means 00:00 UTC that day); with no such commit `from` is the empty tree.
Output is capped like `read`: hunks are dropped from the end of a fixed file order
(Layer 1, decisions, other top files, timeline newest first, runs) and the files cut
short or dropped are listed. Same inputs, same bytes.
"""

from __future__ import annotations

import datetime as _dt
import difflib
import re
from pathlib import Path
from typing import Any, NamedTuple

from memwarden.model.errors import MemwardenError
from memwarden.read.budget import (
    Part,
    Unit,
    check_agent,
    config_at,
    counting_cache,
    decode,
    fit,
    hunk_chunks,
    iso,
    main_commit,
    resolve_rev,
    select,
    split_keepends,
)

_ORDER = ("snapshot.md", "open_loops.md", "facts.md", "decisions.md", "relationships.md",
          "changelog.md", "meta.json")
_NAME_RE = re.compile(r"^[A-Za-z0-9._-][A-Za-z0-9._/-]*$")


class FileDiff(NamedTuple):
    name: str  # relative to memory/<agent>/
    text: str  # unified diff (or a one-line note for binary content)
    added: int
    removed: int


def parse_since(value: str) -> int:
    """A UNIX time from YYYY-MM-DD (00:00 UTC) or an ISO date-time (UTC when no zone)."""
    text = value.strip()
    try:
        if re.fullmatch(r"\d{4}-\d{2}-\d{2}", text):
            day = _dt.date.fromisoformat(text)
            when = _dt.datetime(day.year, day.month, day.day, tzinfo=_dt.UTC)
        else:
            when = _dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
            if when.tzinfo is None:
                when = when.replace(tzinfo=_dt.UTC)
        # in UTC too: "0001-01-01T00:00:00+01:00" is a time before the calendar's first day
        when.astimezone(_dt.UTC)
    except (ValueError, OverflowError):
        raise MemwardenError(f"--since {value}: expected a date like 2026-02-10 or an ISO "
                             "date-time like 2026-02-10T08:00:00Z, between the years 1 and "
                             "9999") from None
    return int(when.timestamp())


def commit_at_or_before(repo: Any, tip: str, ts: int) -> str | None:
    """The newest commit on tip's first-parent history committed at or before `ts`."""
    for sha, _ in repo.first_parent_log(tip):
        if repo.commit_time(sha) <= ts:
            return sha
    return None


def _sort_key(name: str) -> tuple[int, str]:
    if name in _ORDER:
        return _ORDER.index(name), ""
    if "/" not in name:
        return len(_ORDER), name
    if name.startswith("timeline/"):  # newest day first
        return len(_ORDER) + 1, "".join(chr(0x10FFFF - ord(c)) for c in name)
    if name.startswith("runs/"):
        return len(_ORDER) + 2, name
    return len(_ORDER) + 3, name


def _wanted(name: str, files: list[str] | None) -> bool:
    if not files:
        return True
    return any(name == f or (f.endswith("/") and name.startswith(f)) for f in files)


def unified(name: str, old: bytes | None, new: bytes | None) -> FileDiff:
    """git-style unified diff of one file (3 lines of context)."""
    a_label = f"a/{name}" if old is not None else "/dev/null"
    b_label = f"b/{name}" if new is not None else "/dev/null"
    a_text = decode(old) if old is not None else ""
    b_text = decode(new) if new is not None else ""
    if a_text is None or b_text is None:
        return FileDiff(name, f"Binary files {a_label} and {b_label} differ\n", 0, 0)
    a, b = split_keepends(a_text), split_keepends(b_text)
    out: list[str] = []
    added = removed = 0
    for n, line in enumerate(difflib.unified_diff(a, b, a_label, b_label, n=3,
                                                  lineterm="\n")):
        if n >= 2:
            if line[:1] == "+":
                added += 1
            elif line[:1] == "-":
                removed += 1
        out.append(line)
        if not line.endswith(("\n", "\r")):
            out.append("\n\\ No newline at end of file\n")
    if not out:  # same lines, different bytes (a BOM): say so rather than show nothing
        out = [f"--- {a_label}\n", f"+++ {b_label}\n", "(byte-level change only)\n"]
    return FileDiff(name, "".join(out), added, removed)


def file_diffs(repo: Any, agent: str, frm: str | None, to: str,
               files: list[str] | None = None) -> list[FileDiff]:
    """Diffs of every file under memory/<agent>/ that differs between the two commits, in
    the stable order of _sort_key (restricted to `files` when given)."""
    if frm == to:
        return []
    prefix = f"memory/{agent}/"
    names = sorted({p[len(prefix):] for p in repo.changed_paths(frm, to)
                    if p.startswith(prefix)}, key=_sort_key)
    out = []
    for name in names:
        if not _wanted(name, files):
            continue
        old = repo.read_path(frm, prefix + name) if frm is not None else None
        new = repo.read_path(to, prefix + name)
        if old is None and new is None:
            continue  # a submodule or a tree/file swap: nothing textual to show
        out.append(unified(name, old, new))
    return out


def count_commits(repo: Any, agent: str, frm: str | None, to: str) -> int:
    """Commits in frm..to that changed anything under memory/<agent>/ (vs first parent)."""
    if frm == to:
        return 0
    prefix = f"memory/{agent}/"
    shas = repo.rev_list(f"{frm}..{to}" if frm else to)
    return sum(1 for sha in shas
               if any(p.startswith(prefix) for p in repo.commit_info(sha)["touched"]))


def _has_memory(repo: Any, sha: str | None, agent: str) -> bool:
    if sha is None:
        return False
    root = f"memory/{agent}/"
    return any(repo.entry_at(sha, root + n) is not None
               for n in ("meta.json", "snapshot.md", "facts.md", "open_loops.md",
                         "decisions.md", "changelog.md"))


def memory_diff(repo: Any, agent: str, since: str | None = None, frm: str | None = None,
                to: str | None = None, files: list[str] | None = None,
                max_tokens: int | None = None, config: Any = None,
                cache_dir: Path | None = None) -> dict[str, Any]:
    """The `diff` response: {agentId, from, to, fromDate, toDate, commits, tokenCount,
    summary, files{name: "+N -M"}, diff{name: text}, truncated, excluded} (+ since)."""
    check_agent(agent)
    if (since is None) == (frm is None):
        raise MemwardenError("diff: give either --since DATE or --from REV (with --to REV)")
    if max_tokens is not None and (isinstance(max_tokens, bool) or not isinstance(
            max_tokens, int) or max_tokens < 1):
        raise MemwardenError(f"--max-tokens {max_tokens!r}: expected a positive integer")
    for f in files or []:
        if not _NAME_RE.match(f) or ".." in f.split("/"):
            raise MemwardenError(f"--files {f}: expected a file name inside memory/{agent}/ "
                                 "like facts.md or timeline/")
    to_sha = resolve_rev(repo, to, "--to") if to is not None else main_commit(repo, config)
    since_ts = parse_since(since) if since is not None else None
    if since_ts is not None:
        from_sha = commit_at_or_before(repo, to_sha, since_ts)
    else:
        from_sha = resolve_rev(repo, frm, "--from")
    if not _has_memory(repo, to_sha, agent) and not _has_memory(repo, from_sha, agent):
        raise MemwardenError(f"agent {agent!r}: no memory/{agent}/ at {to_sha[:12]} or at "
                             "the start of the range (check the agent id)")
    cfg = config if config is not None else config_at(repo, to_sha)
    diffs = file_diffs(repo, agent, from_sha, to_sha, files)
    parts: list[Part] = []
    rank = 0
    for d in diffs:
        units = []
        for text in hunk_chunks(d.text):
            units.append(Unit(text, rank))
            rank += 1
        parts.append(Part(d.name, units))
    added = sum(d.added for d in diffs)
    removed = sum(d.removed for d in diffs)
    commits = count_commits(repo, agent, from_sha, to_sha)
    head: dict[str, Any] = {
        "agentId": agent, "from": from_sha, "to": to_sha,
        "fromDate": iso(repo.commit_time(from_sha)) if from_sha else None,
        "toDate": iso(repo.commit_time(to_sha)),
    }
    if since_ts is not None:
        head["since"] = iso(since_ts)
    head["commits"] = commits
    stats = {d.name: f"+{d.added} -{d.removed}" for d in diffs}
    summary = (f"{commits} commit{'s' if commits != 1 else ''}, {len(diffs)} "
               f"file{'s' if len(diffs) != 1 else ''} changed, +{added} -{removed}")

    def assemble(k: int) -> dict[str, Any]:
        texts, truncated, dropped = select(parts, k)
        return {**head, "tokenCount": 0, "summary": summary, "files": stats,
                "diff": {p.name: texts[p.name] for p in parts if p.name in texts},
                "truncated": truncated,
                "excluded": [{"file": n, "reason": "budget"} for n in dropped]}

    with counting_cache(cfg.encoding, cache_dir) as counter:
        return fit(parts, assemble, max_tokens, cfg.encoding, counter, anchor='"diff":{')


def render_text(doc: dict[str, Any]) -> str:
    """Human-readable form: a summary line, a stat table, then the diffs."""
    frm = (doc["from"] or "")[:12] or "(empty)"
    out = [f"memory/{doc['agentId']}: {frm}..{doc['to'][:12]} "
           f"({doc['fromDate'] or 'start'} .. {doc['toDate']}): {doc['summary']}\n"]
    width = max((len(n) for n in doc["files"]), default=0)
    for name, stat in doc["files"].items():
        out.append(f" {name:<{width}} | {stat}\n")
    for text in doc["diff"].values():
        out.append("\n" + text)
    if doc["truncated"]:
        out.append("\ntruncated to the token budget: " + ", ".join(doc["truncated"]) + "\n")
    if doc["excluded"]:
        out.append("left out (budget): " + ", ".join(e["file"] for e in doc["excluded"]) + "\n")
    return "".join(out)
