"""What apply writes besides the proposal's own change: meta.json, changelog, timeline.

Pure functions over file texts and a clock, so the replay commit is deterministic for the
same inputs (and re-applying produces byte-identical bookkeeping).
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import re
from typing import Any

from memwarden.model.entries import parse_decisions, parse_loops
from memwarden.model.layout import LAYER1
from memwarden.model.memfile import split_lines
from memwarden.tokens.counter import count_text

CHANGELOG_DAY = re.compile(r"^## (\d{4}-\d{2}-\d{2})\s*$")
CHANGELOG_ENTRY = re.compile(r"^### ")


def meta_json(old: dict[str, Any] | None, agent: str, run: str, proposal: str,
              files: dict[str, str], encoding: str, now: _dt.datetime) -> str:
    """The next meta.json: version+1 and the counts apply always writes."""
    meta = dict(old or {})
    version = meta.get("version", 0)
    version = version if isinstance(version, int) and not isinstance(version, bool) else 0
    layer1 = "".join(files.get(name, "") for name in LAYER1)
    loops, _ = parse_loops(split_lines(files.get("open_loops.md", "")))
    decisions, _ = parse_decisions(split_lines(files.get("decisions.md", "")))
    meta.update({
        "agentId": agent,
        "version": version + 1,
        "schemaVersion": meta.get("schemaVersion", "1.0") if isinstance(
            meta.get("schemaVersion"), str) else "1.0",
        "lastUpdate": now.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "lastRunId": run,
        "lastProposalId": proposal,
        "snapshotTokenCount": count_text(files.get("snapshot.md", ""), encoding),
        "factsTokenCount": count_text(files.get("facts.md", ""), encoding),
        "openLoopsTokenCount": count_text(files.get("open_loops.md", ""), encoding),
        "openLoopsCount": sum(1 for lp in loops if not lp.closed),
        "decisionsCount": len(decisions),
        "layer1Hash": "sha256:" + hashlib.sha256(layer1.encode("utf-8")).hexdigest(),
        "encoding": encoding,
    })
    return json.dumps(meta, ensure_ascii=False, indent=2) + "\n"


# The trailers apply copies into the timeline, in the order it writes them.
TIMELINE_KEYS = ("Task", "Result", "Duration-Seconds")


def timeline_line(key: str, value: str) -> str:
    """The timeline line of one run trailer (Task, Result, Duration-Seconds)."""
    if key == "Duration-Seconds":
        return f"**Duration:** {value}s  "
    return f"**{key}:** {value}  "


def changelog_line(name: str, what: str) -> str:
    """The changelog line of one file a proposal changed (`name` inside the agent's folder)."""
    return f"- **{name}:** {what}"


def changelog(old: str, agent: str, run: str, proposal: str, changes: dict[str, str],
              now: _dt.datetime, keep: int) -> str:
    """Add `### HH:MM — run / proposal` under today's `## YYYY-MM-DD`; keep the last
    `keep` entries (older ones stay in git history)."""
    day = now.date().isoformat()
    entry = [f"### {now:%H:%M} — {run} / {proposal}"]
    entry += [changelog_line(name, what) for name, what in sorted(changes.items())]
    lines = split_lines(old) if old.strip() else [f"# Changelog: {agent}", ""]
    head_end = next((i for i, line in enumerate(lines) if CHANGELOG_DAY.match(line)),
                    len(lines))
    head = lines[:head_end]
    body = lines[head_end:]
    if body and CHANGELOG_DAY.match(body[0]) and CHANGELOG_DAY.match(body[0]).group(1) == day:
        body = [body[0], "", *entry, "", *body[1:]]
    else:
        body = [f"## {day}", "", *entry, "", *body]
    body = _keep_entries(body, keep)
    while head and not head[-1].strip():
        head.pop()
    return "\n".join([*head, "", *body]).rstrip("\n") + "\n"


def _keep_entries(body: list[str], keep: int) -> list[str]:
    out: list[str] = []
    seen = 0
    for line in body:
        if CHANGELOG_ENTRY.match(line):
            seen += 1
        if seen > keep:
            break
        out.append(line)
    # drop day headings left without entries
    cleaned: list[str] = []
    for i, line in enumerate(out):
        if CHANGELOG_DAY.match(line) and not any(CHANGELOG_ENTRY.match(x) for x in
                                                 _until_next_day(out, i)):
            continue
        cleaned.append(line)
    return cleaned


def _until_next_day(lines: list[str], i: int) -> list[str]:
    out = []
    for line in lines[i + 1:]:
        if CHANGELOG_DAY.match(line):
            break
        out.append(line)
    return out


def timeline(old: str, agent: str, run: str, proposal: str, extra: dict[str, str],
             status: str, now: _dt.datetime) -> str:
    """Append `### HH:MM — run` with Task/Result/Duration/Proposal to today's file."""
    day = now.date().isoformat()
    base = old.rstrip("\n") if old.strip() else f"# Timeline: {agent} / {day}\n\n## Runs"
    block = [f"### {now:%H:%M} — {run}"]
    block += [timeline_line(key, extra[key]) for key in TIMELINE_KEYS if key in extra]
    block += [f"**Proposal:** {proposal}  ", f"**Proposal status:** {status}"]
    return base + "\n\n" + "\n".join(block) + "\n"
