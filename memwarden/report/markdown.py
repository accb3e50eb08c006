"""`memwarden report --format md`: the report's essentials as GitHub-flavoured Markdown,
sized for a job summary ($GITHUB_STEP_SUMMARY takes up to 1 MiB): the summary, the agents
nearest their limits, eviction loops, evictions per week, pending and rejected proposals,
waivers, repository size and findings. Every number names the command behind it; the
numbers are the JSON document's own.
"""

from __future__ import annotations

from typing import Any

TOP_AGENTS = 20
ROWS_MAX = 50


def _cell(value: Any) -> str:
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        return f"{value:,.1f}"
    return str(value).replace("|", "\\|").replace("\n", " ")


def _table(header: list[str], rows: list[list[Any]]) -> list[str]:
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    out += ["| " + " | ".join(_cell(v) for v in row) + " |" for row in rows]
    return out


def _pct(cell: dict[str, Any]) -> str:
    ratio = cell["ratio"]
    mark = " ⚠ over" if ratio is not None and ratio > 1 else " near" if (ratio or 0) >= 0.9 \
        else ""
    pct = "—" if ratio is None else f"{ratio * 100:.0f}%"
    return f"{cell['tokens']:,} / {cell['limit']:,} ({pct}){mark}"


def _more(n: int, what: str) -> list[str]:
    return ["", f"… and {n:,} more {what} (see the HTML or JSON report)."] if n > 0 else []


def render_markdown(doc: dict[str, Any]) -> str:
    at, rng, s, c = doc["at"], doc["range"], doc["summary"], doc["commands"]
    f = s["findings"]
    lines = [f"## memwarden report: {at['mainBranch']} at `{at['commit'][:12]}`", "",
             f"Range {rng['since']} to {rng['until']} (the commit's time): "
             f"{rng['commits']:,} commits (`{rng['command']}`).", ""]
    lines += _table(["what", "count", "detail"], [
        ["agents", s["agents"], "`memwarden read <agent> --mode wide`"],
        ["proposals applied", s["applied"], f"`{c['applied']}`"],
        ["proposals pending", s["pending"], f"`{c['pending']}`"],
        ["proposals rejected", s["rejected"], f"`{c['rejected']}`"],
        ["entries evicted", s["evictedEntries"], f"`{c['evictions']}`"],
        ["eviction commits", s["evictionCommits"], f"`{c['evictions']}`"],
        ["eviction loops", s["evictionLoops"], "`memwarden evicted <agent>`"],
        ["agents at ≥90% of a limit", s["agentsOverWarn"],
         "`git show <commit>:memory/<agent>/meta.json`"],
        ["agents over a HARD limit", s["agentsOverLimit"],
         "`git show <commit>:memory/<agent>/meta.json`"],
        ["waivers expired or expiring", s["waiversExpiring"], f"`{c['waivers']}`"],
        ["findings: errors", None if f is None else f["errors"], f"`{c['findings']}`"],
        ["findings: warnings", None if f is None else f["warnings"], f"`{c['findings']}`"],
    ])
    agents = doc["agents"]
    shown = min(TOP_AGENTS, len(agents))
    lines += ["", f"### Layer 1 budgets: the {shown} agents nearest a limit", "",
              "Tokens / HARD limit (share); ⚠ over = over the limit, near = at 90% or more. "
              f"Detail: `git show {at['commit'][:12]}:memory/<agent>/meta.json`.", ""]
    if agents:
        lines += _table(["agent", "Layer 1 total", "snapshot", "facts", "open loops",
                         "applies", "evicting applies"],
                        [[a["agentId"], _pct(a["layer1"]["layer1_total"]),
                          _pct(a["layer1"]["snapshot"]), _pct(a["layer1"]["facts"]),
                          _pct(a["layer1"]["open_loops"]), a["applies"], a["evictingApplies"]]
                         for a in agents[:TOP_AGENTS]])
        lines += _more(len(agents) - TOP_AGENTS, "agents")
    else:
        lines.append("No agents: main has no memory/<agent>/ folders.")
    lines += ["", "### Eviction loops", ""]
    loops = doc["evictionLoops"]
    if loops:
        lines += _table(["agent", "recent applies", "applies that evicted", "entries evicted",
                         "detail"],
                        [[x["agentId"], x["applies"], x["evictingApplies"], x["evictedEntries"],
                          f"`{x['command']}`"] for x in loops[:ROWS_MAX]])
        lines += _more(len(loops) - ROWS_MAX, "agents")
    else:
        lines.append("No agent evicted in most of its recent applies.")
    lines += ["", "### Evictions per week", ""]
    lines += _table(["week of (Monday)", "entries", "commits", "top agents"],
                    [[w["start"], w["entries"], w["commits"],
                      ", ".join(f"{a['agentId']} ({a['entries']:,})" for a in w["agents"][:5])
                      or "—"] for w in doc["evictions"]["weeks"]])
    lines += ["", "### Pending proposals", ""]
    if doc["pending"]:
        lines += _table(["proposal", "agent", "age (days)", "state", "gate decision", "detail"],
                        [[p["proposalId"], p["agentId"], p["ageDays"], p["state"],
                          p["decision"] or "not gated", f"`{p['command']}`"]
                         for p in doc["pending"][:ROWS_MAX]])
        lines += _more(len(doc["pending"]) - ROWS_MAX, "pending proposals")
    else:
        lines.append("No proposals are waiting.")
    lines += ["", "### Rejected proposals", ""]
    if doc["rejected"]:
        lines += _table(["proposal", "agent", "when", "reason", "message", "detail"],
                        [[r["proposalId"], r["agentId"], r["at"], r["reason"], r["message"],
                          f"`{r['command']}`"] for r in doc["rejected"][:ROWS_MAX]])
        lines += _more(len(doc["rejected"]) - ROWS_MAX, "rejected proposals")
    else:
        lines.append("No proposal was rejected in the range.")
    lines += ["", "### Waivers", ""]
    if doc["waivers"]:
        lines += _table(["rule", "path", "expires", "days left", "state", "reason"],
                        [[w["rule"], f"`{w['path']}`", w["expires"], w["daysLeft"], w["state"],
                          w["reason"]] for w in doc["waivers"][:ROWS_MAX]])
    else:
        lines.append("No waivers in memwarden.toml.")
    lines += ["", "### Repository size", ""]
    size = doc["repoSize"]
    if size:
        a, b = size[0], size[-1]
        lines.append(f"{a['bytes']:,} bytes in {a['files']:,} files on {a['date']} → "
                     f"{b['bytes']:,} bytes in {b['files']:,} files on {b['date']} "
                     f"(`{c['repoSize']}`).")
    else:
        lines.append("No data.")
    lines += ["", "### Findings", ""]
    if doc["findings"] is None:
        lines.append(f"Not computed (--no-findings); `{c['findings']}` checks the commit.")
    else:
        fd = doc["findings"]
        lines.append(f"{fd['errors']:,} errors, {fd['warnings']:,} warnings, {fd['waived']:,} "
                     f"waived in {fd['files']:,} files (`{fd['command']}`).")
        if fd["byRule"]:
            lines += [""] + _table(["rule", "findings"],
                                   [[r["rule"], r["count"]] for r in fd["byRule"]])
    return "\n".join(lines) + "\n"
