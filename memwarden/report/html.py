"""`memwarden report --format html`: ONE self-contained page (inline CSS and SVG, no script,
no external asset), readable on a laptop screen and in print.

Charts are honest: budget axes start at zero with the HARD limit and the 90% line drawn,
every value is also written as text (nothing is told by colour alone), every chart has a
title and a text alternative, and a missing series says "no data" instead of a line.
Every number names the command that shows its detail.
"""

from __future__ import annotations

from html import escape as _html_escape
from typing import Any

from memwarden.report.findings import printable
from memwarden.version import __version__

# No script, no fetch, no form: quoted memory text that ever slipped past escaping could
# still not run code or call out, and the page needs nothing but its own inline CSS.
CSP = ("default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; "
       "form-action 'none'")

LABELS = {"snapshot": "snapshot", "facts": "facts", "open_loops": "open loops",
          "layer1_total": "Layer 1 total"}

CSS = """
:root{--ink:#1b1f24;--mute:#57606a;--line:#d0d7de;--ok:#2f6f44;--warn:#9a6700;--bad:#b42318;
--bar:#3b6ea8;--bg:#fff}
*{box-sizing:border-box}
body{font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--ink);
background:var(--bg);margin:0 auto;max-width:1180px;padding:16px 24px}
h1{font-size:1.5rem;margin:.2em 0}h2{font-size:1.2rem;margin:1.6em 0 .4em;
border-bottom:1px solid var(--line);padding-bottom:.2em}
code{font:12.5px ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;background:#f3f4f6;
padding:0 .25em;border-radius:3px;overflow-wrap:anywhere}
.meta{color:var(--mute)}
nav ul{list-style:none;padding:0;display:flex;flex-wrap:wrap;gap:.3em 1em;margin:.4em 0}
.strip{display:grid;grid-template-columns:repeat(auto-fit,minmax(150px,1fr));gap:8px;
list-style:none;padding:0}
.strip li{border:1px solid var(--line);border-radius:6px;padding:8px 10px}
.strip a.n{display:block;font-size:1.7rem;font-weight:600;color:var(--ink);
text-decoration:none}
.strip a.n:hover,.strip a.n:focus{text-decoration:underline}
.strip .l{font-weight:600}.strip code{font-size:11px}
table{border-collapse:collapse;width:100%;margin:.4em 0}
th,td{border-bottom:1px solid var(--line);padding:3px 6px;text-align:left;
vertical-align:middle}
th{background:#f6f8fa;font-weight:600}td code,td.d{white-space:nowrap}td.r,th.r{text-align:right}
caption{text-align:left;color:var(--mute);padding:.2em 0;caption-side:top}
.bar{width:84px;height:11px;vertical-align:middle}
table.budgets{font-size:13px}
table.budgets th[scope=row]{white-space:normal;overflow-wrap:anywhere;min-width:8em}
.k{fill:#eef1f4}.v{fill:var(--bar)}.v.w{fill:var(--warn)}.v.o{fill:var(--bad)}
.n9{stroke:var(--warn);stroke-width:1.2;stroke-dasharray:2 1.5}
.hl{stroke:var(--ink);stroke-width:1.6}
.spark{width:96px;height:22px;vertical-align:middle}
.spark polyline{fill:none;stroke:var(--bar);stroke-width:1.4}
.spark circle{fill:var(--bar)}
.tag{font-size:12px;font-weight:600;padding:0 .3em;border-radius:3px;border:1px solid}
.tag.w{color:var(--warn)}.tag.o{color:var(--bad)}
.chart{width:100%;max-width:1100px;height:auto}
.chart text{font:11px system-ui,sans-serif;fill:var(--ink)}
.chart path,.bar path,.spark path,#sl path,#bl path{fill:none}
.chart .axis{stroke:var(--mute);stroke-width:1}
.grid{stroke:var(--line);stroke-width:1}
.chart rect.wk{fill:var(--bar)}.chart a:hover rect.wk,.chart a:focus rect.wk{fill:var(--bad)}
.chart polyline{fill:none;stroke:var(--bar);stroke-width:2}
.nodata{color:var(--mute);font-style:italic}
.week:target{outline:2px solid var(--bar);outline-offset:4px}
.week h3{font-size:1rem;margin:1em 0 .2em}
.wrap{overflow-x:auto}
footer{margin-top:2em;color:var(--mute);font-size:13px}
@media print{body{max-width:none;padding:0;font-size:11px}nav{display:none}
a{color:inherit;text-decoration:none}h2{break-after:avoid}tr,li,.week{break-inside:avoid}
.strip{grid-template-columns:repeat(4,1fr)}}
"""


def escape(value: str) -> str:
    """HTML-escaped text (quotes too, for attributes) with control, bidi and zero-width
    characters shown as visible escapes, so a right-to-left override in a fact cannot
    reorder what a table cell shows."""
    return _html_escape(printable(value))


def _n(value: int | float | None) -> str:
    if value is None:
        return "no data"
    return f"{value:,}" if isinstance(value, int) else f"{value:,.1f}"


def _plural(n: int, word: str) -> str:
    return f"{n:,} {word}{'' if n == 1 else 's'}"


def _cmd(text: str) -> str:
    return f"<code>{escape(text)}</code>"


def _pct(ratio: float | None) -> str:
    return "no limit" if ratio is None else f"{ratio * 100:.0f}%"


# Drawn once and reused by every bar and trend (<use>): a 1,000-agent page stays small.
SHARED = ('<svg width="0" height="0" style="position:absolute" aria-hidden="true"><defs>'
          '<g id="bk"><rect class="k" width="110" height="12"/></g>'
          '<g id="bl"><path class="n9" d="M90 0v12"/><path class="hl" d="M100 0v12"/></g>'
          '<g id="sl"><path class="hl" d="M0 4H120"/><path class="n9" d="M0 6H120"/>'
          '<path class="grid" d="M0 24H120"/></g></defs></svg>')


def _budget_bar(label: str, cell: dict[str, Any], warn: float) -> str:
    """A bar from zero to 110% of the HARD limit: the limit and the 90% line drawn, the
    value in text beside it (and a word, not a colour, when near or over)."""
    tokens, limit, ratio = cell["tokens"], cell["limit"], cell["ratio"]
    width = min(110.0, 100.0 * tokens / limit) if limit else 0.0
    over = ratio is not None and ratio > 1
    near = not over and (ratio or 0) >= warn
    cls = "v o" if over else "v w" if near else "v"
    aria = f"{label} {tokens:,} of {limit:,} ({_pct(ratio)}{', over' if over else ''})"
    tag = '<span class="tag o">over</span>' if over else \
        '<span class="tag w">≥90%</span>' if near else ""
    return (f'<svg class="bar" viewBox="0 0 110 12" role="img" aria-label="{escape(aria)}">'
            f'<use href="#bk"/><rect class="{cls}" y="2" width="{width:.4g}" height="8"/>'
            f'<use href="#bl"/></svg><br>{tokens:,}/{limit:,} {tag}')


def _spark(trend: list[dict[str, Any]], limit: int, since: int, until: int,
           agent: str) -> str:
    """Layer 1 tokens after each apply in the range, y from zero to 110% of the HARD total
    (the solid line is the limit, the dashed one 90%)."""
    if not trend:
        return '<span class="nodata">no applies in range</span>'
    span = max(1, until - since)
    from memwarden.report.health import parse_iso

    pts = []
    for p in trend:
        t = parse_iso(p["date"]) or since
        x = 2 + 116 * (t - since) / span
        y = 24 - 22 * min(1.1, p["tokens"] / limit if limit else 0) / 1.1
        pts.append((round(x, 1), round(y, 1)))
    first, last = trend[0]["tokens"], trend[-1]["tokens"]
    aria = f"{agent}: {len(trend)} applies, {first:,} to {last:,} of {limit:,}"
    shape = (f'<polyline points="{" ".join(f"{x:g},{y:g}" for x, y in pts)}"/>'
             if len(pts) > 1 else f'<circle cx="{pts[0][0]:g}" cy="{pts[0][1]:g}" r="2"/>')
    return (f'<svg class="spark" viewBox="0 0 120 26" role="img" aria-label="{escape(aria)}">'
            f'<use href="#sl"/>{shape}</svg><br>{last:,}')


def _summary(doc: dict[str, Any]) -> str:
    s = doc["summary"]
    c = doc["commands"]
    f = s["findings"]
    items = [
        ("agents", s["agents"], "#agents", "agents", "memwarden read <agent> --mode wide"),
        ("applied", s["applied"], "#agents", "proposals applied", c["applied"]),
        ("pending", s["pending"], "#pending", "proposals pending", c["pending"]),
        ("rejected", s["rejected"], "#rejected", "proposals rejected", c["rejected"]),
        ("evicted", s["evictedEntries"], "#evictions",
         f"entries evicted in {_plural(s['evictionCommits'], 'commit')}", c["evictions"]),
        ("loops", s["evictionLoops"], "#loops", "eviction loops",
         "memwarden evicted <agent>"),
        ("near", s["agentsOverWarn"], "#agents", "agents at ≥90% of a limit",
         "git show <commit>:memory/<agent>/meta.json"),
        ("waivers", s["waiversExpiring"], "#waivers", "waivers expired or expiring ≤30 days",
         c["waivers"]),
    ]
    if f is None:
        items.append(("findings", None, "#findings", "findings (not computed)",
                      c["findings"]))
    else:
        items.append(("findings", f["errors"] + f["warnings"], "#findings",
                      f"findings: {f['errors']:,} errors, {f['warnings']:,} warnings",
                      c["findings"]))
    out = ['<ul class="strip" aria-label="Summary">']
    for key, value, href, label, cmd in items:
        out.append(f'<li id="s-{key}"><a class="n" href="{href}">{_n(value)}</a>'
                   f'<span class="l">{escape(label)}</span><br>{_cmd(cmd)}</li>')
    out.append("</ul>")
    return "\n".join(out)


def _agents(doc: dict[str, Any]) -> str:
    since = doc["range"]["since"][:10]
    warn = doc["warnRatio"]
    rows = []
    from memwarden.report.health import parse_iso

    t0, t1 = parse_iso(doc["range"]["since"]) or 0, parse_iso(doc["range"]["until"]) or 0
    loops = {x["agentId"] for x in doc["evictionLoops"]}
    for a in doc["agents"]:
        L = a["layer1"]
        loop = ' <a class="tag w" href="#loops">loop</a>' if a["agentId"] in loops else ""
        rows.append(
            f'<tr id="a-{escape(a["agentId"])}"><th scope="row">{escape(a["agentId"])}{loop}'
            f'</th><td>{_budget_bar("Layer 1 total", L["layer1_total"], warn)}</td>'
            f'<td>{_budget_bar("snapshot", L["snapshot"], warn)}</td>'
            f'<td>{_budget_bar("facts", L["facts"], warn)}</td>'
            f'<td>{_budget_bar("open loops", L["open_loops"], warn)}</td>'
            f'<td>{_spark(a["trend"], L["layer1_total"]["limit"], t0, t1, a["agentId"])}</td>'
            f'<td class="r">{a["applies"]:,}</td><td class="r">{a["evictingApplies"]:,}</td>'
            f'<td class="r">{a["evicted"]:,}</td><td>{escape(a["source"])}</td></tr>')
    if not rows:
        return '<p class="nodata">No agents: main has no memory/&lt;agent&gt;/ folders.</p>'
    at = doc["at"]["commit"][:12]
    return (
        '<p class="meta">Layer 1 tokens at the report\'s commit against '
        "each agent's HARD limits (bars run from zero; the solid line is the HARD limit, the "
        "dashed one 90%), nearest to any of its limits first. Tokens: "
        f"{_cmd(f'git show {at}:memory/<agent>/meta.json')} (source column: counted when "
        f"meta.json does not match the files); content: "
        f"{_cmd(f'memwarden read <agent> --mode wide --at {at}')}; trend: Layer 1 total "
        f"after each apply in the range, from zero to the HARD total; evictions: "
        f"{_cmd(f'memwarden evicted <agent> --since {since}')}.</p>"
        '<div class="wrap"><table class="budgets"><thead><tr><th scope="col">agent</th>'
        '<th scope="col">Layer 1 total</th>'
        '<th scope="col">snapshot</th><th scope="col">facts</th><th scope="col">open loops'
        '</th><th scope="col">trend (range)</th><th scope="col" class="r">applies</th>'
        '<th scope="col" class="r">evicting applies</th><th scope="col" class="r">entries '
        'evicted</th><th scope="col">source</th></tr></thead><tbody>'
        + "\n".join(rows) + "</tbody></table></div>")


def _weeks_chart(doc: dict[str, Any]) -> str:
    weeks = doc["evictions"]["weeks"]
    if not weeks:
        return '<p class="nodata">no data: the range has no weeks</p>'
    top = max(1, max(w["entries"] for w in weeks))
    w_bar = max(18, min(60, 900 // len(weeks)))
    left, base, height = 50, 160, 200
    width = left_w = left + 10 + len(weeks) * (w_bar + 8)
    desc = "; ".join(f"week of {w['start']}: {w['entries']:,} entries in {w['commits']:,} "
                     "commits" for w in weeks)
    out = [f'<svg class="chart" viewBox="0 0 {left_w} {height}" role="img" '
           f'aria-labelledby="evt evd" style="max-width:{left_w}px">'
           '<title id="evt">Entries evicted from Layer 1 per week</title>'
           f'<desc id="evd">{escape(desc)}</desc>']
    for frac in (0, 0.5, 1):
        y = base - 140 * frac
        out.append(f'<path class="grid" d="M{left} {y:.0f}H{width}"/><text x="{left - 4}" '
                   f'y="{y + 4:.0f}" text-anchor="end">{int(top * frac):,}</text>')
    out.append(f'<path class="axis" d="M{left} 10V{base}H{width}"/>')
    for i, w in enumerate(weeks):
        x = left + 6 + i * (w_bar + 8)
        h = 140 * w["entries"] / top
        label = f"week of {w['start']}: {w['entries']:,} entries evicted"
        out.append(f'<a href="#week-{w["start"]}" aria-label="{escape(label)}">'
                   f'<rect class="wk" x="{x}" y="{base - h:.1f}" width="{w_bar}" '
                   f'height="{max(h, 0.5):.1f}"/>'
                   f'<text x="{x + w_bar / 2:.0f}" y="{base - h - 4:.0f}" '
                   f'text-anchor="middle">{w["entries"]:,}</text></a>'
                   f'<text x="{x + w_bar / 2:.0f}" y="{base + 14}" text-anchor="middle">'
                   f'{w["start"][5:]}</text>')
    out.append("</svg><p class=\"meta\">Weeks start on Monday (UTC); select a bar for the "
               "week's entries.</p>")
    return "".join(out)


def _week_lists(doc: dict[str, Any]) -> str:
    ev = doc["evictions"]
    listed: dict[str, list[dict[str, Any]]] = {}
    from memwarden.report.health import _week_start, parse_iso

    for e in ev["entries"]:
        listed.setdefault(_week_start(parse_iso(e["date"]) or 0).isoformat(), []).append(e)
    out = []
    for w in reversed(ev["weeks"]):
        mine = listed.get(w["start"], [])
        out.append(f'<section class="week" id="week-{w["start"]}"><h3>Week of {w["start"]}: '
                   f'{w["entries"]:,} entries in {_plural(w["commits"], "commit")}</h3>')
        if not w["entries"]:
            out.append("<p>Nothing was evicted this week.</p></section>")
            continue
        agents = ", ".join(f'<a href="#a-{escape(a["agentId"])}">{escape(a["agentId"])}</a> '
                           f'{a["entries"]:,}' for a in w["agents"][:40])
        more = len(w["agents"]) - 40
        out.append(f"<p>By agent: {agents}{f' … and {more:,} more agents' if more > 0 else ''}"
                   "</p>")
        if mine:
            out.append('<table><thead><tr><th scope="col">date</th><th scope="col">agent</th>'
                       '<th scope="col">file</th><th scope="col">id</th><th scope="col">reason'
                       '</th><th scope="col">entry (as listed by the commit)</th></tr></thead>'
                       "<tbody>")
            for e in mine:
                out.append(f'<tr><td class="d">{e["date"][:10]}</td>'
                           f'<td>{escape(e["agentId"] or "")}</td>'
                           f'<td>{escape(e["file"])}</td><td><code>{escape(e["id"])}</code>'
                           f'</td><td>{escape(e["reason"])}</td><td>{escape(e["entry"])}</td>'
                           "</tr>")
            out.append("</tbody></table>")
        if len(mine) < w["entries"]:
            out.append(f"<p>{w['entries'] - len(mine):,} entries of this week are not listed "
                       f"here (the report lists the newest {len(ev['entries']):,}); "
                       f"{_cmd('memwarden evicted <agent> --since ' + w['start'])} shows "
                       "each agent's in full.</p>")
        out.append("</section>")
    return "\n".join(out)


def _table(rows: list[dict[str, Any]], cols: list[tuple[str, str, str]], empty: str,
           caption: str) -> str:
    if not rows:
        return f'<p class="nodata">{escape(empty)}</p>'
    head = "".join(f'<th scope="col"{" class=r" if kind == "n" else ""}>{escape(label)}</th>'
                   for _, label, kind in cols)
    body = []
    for r in rows:
        cells = []
        for key, _, kind in cols:
            v = r.get(key)
            if kind == "n":
                cells.append(f'<td class="r">{_n(v)}</td>')
            elif kind == "code":
                cells.append(f"<td>{_cmd(str(v)) if v else ''}</td>")
            else:
                cells.append(f"<td>{escape('' if v is None else str(v))}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    return (f'<div class="wrap"><table><caption>{caption}</caption><thead><tr>{head}</tr>'
            f'</thead><tbody>{"".join(body)}</tbody></table></div>')


def _size_chart(doc: dict[str, Any]) -> str:
    pts = doc["repoSize"]
    if len(pts) < 2:
        if pts:
            return (f"<p>One point only: {pts[0]['bytes']:,} bytes in {pts[0]['files']:,} "
                    f"files on {pts[0]['date']} (no data for a trend).</p>")
        return '<p class="nodata">no data</p>'
    top = max(p["bytes"] for p in pts) or 1
    width, left, base = 900, 80, 160
    from memwarden.report.health import parse_iso

    times = [parse_iso(p["date"] + "T00:00:00Z") or 0 for p in pts]
    span = max(1, times[-1] - times[0])
    coords = " ".join(f"{left + (width - left - 20) * (t - times[0]) / span:.1f},"
                      f"{base - 140 * p['bytes'] / top:.1f}" for t, p in zip(times, pts,
                                                                                strict=True))
    first, last = pts[0], pts[-1]
    desc = (f"From {first['bytes']:,} bytes ({first['files']:,} files) on {first['date']} to "
            f"{last['bytes']:,} bytes ({last['files']:,} files) on {last['date']}, "
            f"{len(pts)} days with commits.")
    out = [f'<svg class="chart" viewBox="0 0 {width} 200" role="img" aria-labelledby="szt '
           'szd"><title id="szt">Size of the tree on main (bytes of all files), by day</title>'
           f'<desc id="szd">{escape(desc)}</desc>']
    for frac in (0, 0.5, 1):
        y = base - 140 * frac
        out.append(f'<path class="grid" d="M{left} {y:.0f}H{width - 10}"/><text x="{left - 4}"'
                   f' y="{y + 4:.0f}" text-anchor="end">{_mb(top * frac)}</text>')
    out.append(f'<path class="axis" d="M{left} 10V{base}H{width - 10}"/>'
               f'<polyline points="{coords}"/>'
               f'<text x="{left}" y="{base + 16}">{first["date"]}</text>'
               f'<text x="{width - 10}" y="{base + 16}" text-anchor="end">{last["date"]}</text>'
               "</svg>")
    out.append(f"<p>{escape(desc)} Detail: {_cmd(doc['commands']['repoSize'])}.</p>")
    return "".join(out)


def _mb(n: float) -> str:
    return f"{n / 1e6:,.1f} MB" if n >= 1e5 else f"{n / 1e3:,.1f} kB"


def _findings(doc: dict[str, Any]) -> str:
    f = doc["findings"]
    if f is None:
        return (f'<p class="nodata">Not computed for this report (--no-findings); '
                f"{_cmd(doc['commands']['findings'])} checks the commit.</p>")
    rows = f["byRule"]
    text = (f"<p>{f['errors']:,} errors, {f['warnings']:,} warnings, {f['waived']:,} waived "
            f"findings in {f['files']:,} files ({_cmd(f['command'])}).</p>")
    return text + _table(rows, [("rule", "rule", "s"), ("count", "findings", "n")],
                         "No findings.", f"By rule; {_cmd('memwarden rule <id>')} explains "
                         "one.")


def render_html(doc: dict[str, Any]) -> str:
    at = doc["at"]
    rng = doc["range"]
    title = f"memwarden report: {at['mainBranch']} at {at['commit'][:12]}"
    loops = _table(doc["evictionLoops"], [
        ("agentId", "agent", "s"), ("applies", "recent applies", "n"),
        ("evictingApplies", "applies that evicted", "n"),
        ("evictedEntries", "entries evicted", "n"), ("command", "detail", "code")],
        "No eviction loops: no agent evicted in most of its recent applies.",
        "Agents that evicted in more than half of their last applies (at least 3) in the "
        "range: their memory fits only by throwing something out each run.")
    pending = _table([{**p, "decision": p["decision"] or "not gated"} for p in doc["pending"]], [
        ("proposalId", "proposal", "s"), ("agentId", "agent", "s"),
        ("ageDays", "age (days)", "n"), ("state", "state", "s"),
        ("decision", "gate decision", "s"), ("decisionSource", "decided by", "s"),
        ("command", "detail", "code")],
        "No proposals are waiting.",
        "Proposal branches not yet applied or rejected, oldest first; age at the latest of "
        "the report's commit time, the newest proposal and the newest lifecycle event. Gate: "
        f"{_cmd('memwarden gate <branch>')}.")
    rejected = _table(doc["rejected"], [
        ("proposalId", "proposal", "s"), ("agentId", "agent", "s"), ("at", "when", "s"),
        ("reason", "reason", "s"), ("resolution", "resolution", "s"),
        ("message", "message", "s"), ("by", "by", "s"), ("command", "detail", "code")],
        "No proposal was rejected in the range.",
        "Rejections recorded in the lifecycle notes since the range's start, newest first.")
    waivers = _table(doc["waivers"], [
        ("rule", "rule", "s"), ("path", "path", "s"), ("expires", "expires", "s"),
        ("daysLeft", "days left", "n"), ("state", "state", "s"), ("reason", "reason", "s")],
        "No waivers in memwarden.toml.",
        f"Waivers of the policy at the report's commit, soonest first ({_cmd('memwarden config')}"
        ").")
    sections = [
        ("agents", "Layer 1 budgets", _agents(doc)),
        ("evictions", "Evictions per week",
         _weeks_chart(doc) + f"<p>Per agent: {_cmd(doc['commands']['evictions'])}.</p>"
         + _week_lists(doc)),
        ("loops", "Eviction loops", loops),
        ("pending", "Pending proposals", pending),
        ("rejected", "Rejected proposals", rejected),
        ("waivers", "Waivers", waivers),
        ("size", "Repository size", _size_chart(doc)),
        ("findings", "Findings", _findings(doc)),
    ]
    nav = "".join(f'<li><a href="#{k}">{escape(t)}</a></li>' for k, t, _ in sections)
    body = "\n".join(f'<section id="{k}" aria-labelledby="h-{k}"><h2 id="h-{k}">{escape(t)}'
                     f"</h2>\n{html}</section>" for k, t, html in sections)
    return (
        f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{_html_escape(CSP)}">'
        f'<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{escape(title)}</title><style>{CSS}</style></head><body>{SHARED}\n"
        f"<header><h1>{escape(title)}</h1><p class=\"meta\">Range {escape(rng['since'])} to "
        f"{escape(rng['until'])} (the commit's time): {rng['commits']:,} commits on the first-"
        f"parent history ({_cmd(rng['command'])}). Commit <code>{escape(at['commit'])}</code>"
        f"; token encoding {escape(doc['encoding'])}.</p></header>\n"
        f'<nav aria-label="Sections"><ul>{nav}</ul></nav>\n'
        f'<main><section id="summary" aria-label="Summary">{_summary(doc)}</section>\n'
        f"{body}</main>\n"
        f"<footer>Generated by memwarden {escape(__version__)} from git alone: the same "
        f"commit and range give the same page. Data: {_cmd('memwarden report --format json')}"
        "</footer>\n</body></html>\n")
