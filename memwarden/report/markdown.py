"""`memwarden report --format md`: the report's essentials as GitHub-flavoured Markdown,
sized for a job summary ($GITHUB_STEP_SUMMARY takes up to 1 MiB): the summary, the agents
nearest their limits, eviction loops, evictions per week, pending and rejected proposals,
waivers, repository size and findings. Every number names the command behind it; the
numbers are the JSON document's own. Quoted values (reasons, messages, paths, agent
ids) go through `md_text`/`md_code`, which `memwarden gate`'s job summary uses too.
"""

from __future__ import annotations

import re
from typing import Any

from memwarden.report.findings import printable

TOP_AGENTS = 20
ROWS_MAX = 50
CELL_MAX = 300  # characters of one quoted value; a job summary holds 1 MiB in all

# Characters with a meaning inside a Markdown line (inline HTML, entities, emphasis, links,
# code, table cells, strikethrough, math); CommonMark lets any ASCII punctuation be
# backslash-escaped, so escaping these leaves the text as written. An `_` between two
# letters or digits can neither open nor close emphasis, so ids like p-run_7 stay legible.
_MD_SPECIAL = re.compile(r"[\\`*\[\]<>|!~&$]|(?<![^\W_])_|_(?![^\W_])")
_BACKTICKS = re.compile(r"`+")


class Markdown(str):
    """Text that is already Markdown built by memwarden (not quoted data): used as is."""


def _clip(value: str, limit: int) -> str:
    return value if len(value) <= limit else value[:limit] + "…"


def md_text(value: Any, limit: int = CELL_MAX) -> str:
    """`value` as literal Markdown text on one line: control, bidi and newline characters
    shown as escapes (printable), then every character Markdown or GitHub's HTML would act
    on backslash-escaped, so memory text cannot add HTML, links, images or table cells."""
    return _MD_SPECIAL.sub(lambda m: "\\" + m.group(), printable(_clip(str(value), limit)))


def md_code(value: Any, limit: int = CELL_MAX, in_table: bool = True) -> Markdown:
    """`value` as an inline code span that its own backticks cannot close; in a table a
    `|` would still end the cell, so it is escaped (GFM drops that backslash in code)."""
    text = printable(_clip(str(value), limit))
    if in_table:
        text = text.replace("|", "\\|")
    tick = "`" * (max((len(m) for m in _BACKTICKS.findall(text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") or not text.strip() else ""
    return Markdown(f"{tick}{pad}{text}{pad}{tick}")


def _cell(value: Any) -> str:
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        return f"{value:,.1f}"
    if isinstance(value, Markdown):
        return value
    return md_text(value)


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
    lines = [f"## memwarden report: {md_text(at['mainBranch'])} at `{at['commit'][:12]}`", "",
             f"Range {rng['since']} to {rng['until']} (the commit's time): "
             f"{rng['commits']:,} commits ({md_code(rng['command'], in_table=False)}).", ""]
    lines += _table(["what", "count", "detail"], [
        ["agents", s["agents"], Markdown("`memwarden read <agent> --mode wide`")],
        ["proposals applied", s["applied"], md_code(c["applied"])],
        ["proposals pending", s["pending"], md_code(c["pending"])],
        ["proposals rejected", s["rejected"], md_code(c["rejected"])],
        ["entries evicted", s["evictedEntries"], md_code(c["evictions"])],
        ["eviction commits", s["evictionCommits"], md_code(c["evictions"])],
        ["eviction loops", s["evictionLoops"], Markdown("`memwarden evicted <agent>`")],
        ["agents at ≥90% of a limit", s["agentsOverWarn"],
         Markdown("`git show <commit>:memory/<agent>/meta.json`")],
        ["agents over a HARD limit", s["agentsOverLimit"],
         Markdown("`git show <commit>:memory/<agent>/meta.json`")],
        ["waivers expired or expiring", s["waiversExpiring"], md_code(c["waivers"])],
        ["findings: errors", None if f is None else f["errors"], md_code(c["findings"])],
        ["findings: warnings", None if f is None else f["warnings"], md_code(c["findings"])],
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
                          md_code(x["command"])] for x in loops[:ROWS_MAX]])
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
                          p["decision"] or "not gated", md_code(p["command"])]
                         for p in doc["pending"][:ROWS_MAX]])
        lines += _more(len(doc["pending"]) - ROWS_MAX, "pending proposals")
    else:
        lines.append("No proposals are waiting.")
    lines += ["", "### Rejected proposals", ""]
    if doc["rejected"]:
        lines += _table(["proposal", "agent", "when", "reason", "message", "detail"],
                        [[r["proposalId"], r["agentId"], r["at"], r["reason"], r["message"],
                          md_code(r["command"])] for r in doc["rejected"][:ROWS_MAX]])
        lines += _more(len(doc["rejected"]) - ROWS_MAX, "rejected proposals")
    else:
        lines.append("No proposal was rejected in the range.")
    lines += ["", "### Waivers", ""]
    if doc["waivers"]:
        lines += _table(["rule", "path", "expires", "days left", "state", "reason"],
                        [[w["rule"], md_code(w["path"]), w["expires"], w["daysLeft"],
                          w["state"],
                          w["reason"]] for w in doc["waivers"][:ROWS_MAX]])
    else:
        lines.append("No waivers in memwarden.toml.")
    lines += ["", "### Repository size", ""]
    size = doc["repoSize"]
    if size:
        a, b = size[0], size[-1]
        lines.append(f"{a['bytes']:,} bytes in {a['files']:,} files on {a['date']} → "
                     f"{b['bytes']:,} bytes in {b['files']:,} files on {b['date']} "
                     f"({md_code(c['repoSize'], in_table=False)}).")
    else:
        lines.append("No data.")
    lines += ["", "### Findings", ""]
    if doc["findings"] is None:
        lines.append(f"Not computed (--no-findings); {md_code(c['findings'], in_table=False)} "
                     "checks the commit.")
    else:
        fd = doc["findings"]
        lines.append(f"{fd['errors']:,} errors, {fd['warnings']:,} warnings, {fd['waived']:,} "
                     f"waived in {fd['files']:,} files "
                     f"({md_code(fd['command'], in_table=False)}).")
        if fd["byRule"]:
            lines += [""] + _table(["rule", "findings"],
                                   [[r["rule"], r["count"]] for r in fd["byRule"]])
    return "\n".join(lines) + "\n"
