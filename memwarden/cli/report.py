"""`memwarden report`: the memory's health over a range of main, as HTML, Markdown or JSON."""

from __future__ import annotations

import datetime as _dt
from pathlib import Path
from typing import Any

import click

from memwarden.cli.options import emit
from memwarden.model.errors import MemwardenError

FORMATS = {".html": "html", ".htm": "html", ".md": "md", ".markdown": "md", ".json": "json"}


def parse_since(value: str | None) -> int | None:
    if not value:
        return None
    try:
        when = _dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise MemwardenError(f"--since {value}: expected an ISO date or date-time, like "
                             "2026-02-01") from None
    return int((when if when.tzinfo else when.replace(tzinfo=_dt.UTC)).timestamp())


def build_report(since: str | None, at: str | None, config_path: str | None,
                 use_cache: bool = True, findings: bool = True, gate: bool = True,
                 cwd: Path | None = None) -> dict[str, Any]:
    from memwarden.git.repo import open_repo
    from memwarden.report.health import build

    repo = open_repo(cwd or Path.cwd())
    if repo is None:
        raise MemwardenError("report: not inside a git repository")
    return build(repo, at, parse_since(since), config_path, use_cache, findings, gate)


def render(doc: dict[str, Any], fmt: str) -> str:
    if fmt == "html":
        from memwarden.report.html import render_html

        return render_html(doc)
    if fmt == "md":
        from memwarden.report.markdown import render_markdown

        return render_markdown(doc)
    from memwarden.report.health import write_json

    return write_json(doc)


@click.command("report")
@click.option("--since", metavar="DATE", help="Start of the range: an ISO date or date-time "
              "(UTC unless it says otherwise). Default: 30 days before the --at commit's "
              "time (not the wall clock, so the same commit gives the same report).")
@click.option("--at", "at", metavar="REV", help="The commit the report is about (default: "
              "main_branch).")
@click.option("--format", "fmt", type=click.Choice(["text", "json", "md", "html"]),
              default=None, help="Output format (default from --output's extension, else "
              "text, which is the Markdown form).")
@click.option("--output", "-o", type=click.Path(dir_okay=False), help="Write the report "
              "here instead of standard output.")
@click.option("--config", "config_path", type=click.Path(), help="memwarden.toml to use "
              "(default: the one in the --at commit).")
@click.option("--no-findings", is_flag=True, help="Skip running every rule on the commit "
              "(the findings count); the slowest part of a cold report on a large repo.")
@click.option("--no-gate", is_flag=True, help="Do not run the gate on pending proposals "
              "that have no recorded decision (they show 'not gated').")
@click.option("--no-cache", is_flag=True, help="Do not read or write "
              ".git/memwarden/report-cache/.")
def report_cmd(since: str | None, at: str | None, fmt: str | None, output: str | None,
               config_path: str | None, no_findings: bool, no_gate: bool,
               no_cache: bool) -> None:
    """How the memory on main is doing: Layer 1 budgets per agent with trends, evictions
    per week and eviction loops, pending and rejected proposals, expiring waivers, the
    repository's size and the findings at the commit. Built from git alone; the same
    commit and range always give the same report.

    Exit 0, or 2 for usage errors (an unknown --at, a bad date)."""
    if fmt is None:
        fmt = FORMATS.get(Path(output).suffix.lower(), "md") if output else "md"
    doc = build_report(since, at, config_path, not no_cache, not no_findings, not no_gate)
    emit(render(doc, "md" if fmt == "text" else fmt), output)
    raise SystemExit(0)
