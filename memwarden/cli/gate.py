"""Front-end glue for `memwarden gate`: render the verdict, and in GitHub Actions also the
job summary ($GITHUB_STEP_SUMMARY) and step outputs ($GITHUB_OUTPUT)."""

from __future__ import annotations

import datetime as _dt
import os
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from memwarden.cli.options import (
    config_option,
    emit,
    format_option,
    infer_format,
    now_option,
    open_repo_here,
    output_option,
    parse_today,
    resolve_rev,
)

if TYPE_CHECKING:
    from memwarden.apply.gate import GateResult

# Text output lists this many would-evict entries; JSON lists them all.
EVICT_SHOWN = 5


@click.command("gate")
@click.argument("ref")
@click.option("--base", metavar="REV", help="The branch it would land on (default: "
              "main_branch; origin/main when there is no local one); its memwarden.toml is "
              "the policy.")
@format_option(["text", "json", "sarif", "github"], None,
               "Output format (default text, or the one --output's extension names).")
@output_option("Write the report to FILE instead of standard output.")
@click.option("--sarif-file", type=click.Path(dir_okay=False), metavar="FILE",
              help="With --format github: also write SARIF here (for code scanning).")
@config_option("Override the policy (default: memwarden.toml on the base branch).")
@now_option()
def gate_cmd(ref: str, base: str | None, fmt: str | None, output: str | None,
             sarif_file: str | None, config_path: str | None, now: str | None) -> None:
    """Gate a proposal branch REF: every rule on its tree and commits, path isolation, the
    auto-approve decision, an eviction preview and the Layer 1 token table.
    Exit 0 pass, 1 fail, 2 usage/config error."""
    code, text = run_gate(ref, base, config_path, infer_format(fmt, output), parse_today(now),
                          sarif_file)
    emit(text, output)
    raise SystemExit(code)


def run_gate(ref: str, base: str | None, config_path: str | None, fmt: str,
             today: _dt.date | None, sarif_file: str | None = None) -> tuple[int, str]:
    from memwarden.apply.gate import gate
    from memwarden.model.config import load_config
    from memwarden.model.findings import summarize
    from memwarden.policies.registry import all_rules
    from memwarden.report.findings import render

    repo = open_repo_here("gate")
    ref = resolve_rev(repo, ref)
    base = resolve_rev(repo, base or load_config(None, None).data["main_branch"], "--base")
    result = gate(repo, ref, base, config_path, today)
    summary = summarize(result.findings, result.files)
    rules = [r.to_doc() for r in all_rules()]
    extra = result.extra()
    if fmt == "text":
        text = render("text", result.findings, summary) + text_verdict(result)
    else:
        text = render(fmt, result.findings, summary, rules, extra)
    if fmt == "github":
        sarif_path = sarif_file
        if sarif_path:
            Path(sarif_path).write_text(render("sarif", result.findings, summary, rules),
                                        "utf-8")
        write_step_summary(result, summary)
        write_outputs({
            "result": extra["decision"],
            "verdict": result.verdict,
            "auto-approve": "true" if result.auto_eligible else "false",
            "findings": str(summary["errors"] + summary["warnings"]),
            "errors": str(summary["errors"]),
            "sarif": sarif_path or "",
        })
    return (0 if result.verdict == "pass" else 1), text


def text_verdict(r: GateResult) -> str:
    from memwarden.report.findings import printable

    lines = [f"verdict: {r.verdict} ({r.extra()['decision']}); agent: "
             f"{printable(r.agent or '?')}; diff {r.diff_bytes} bytes"]
    lines += [f"auto-approve: {'yes' if r.auto_eligible else 'no'} — " + "; ".join(
        printable(x) for x in r.auto_reasons)]
    for name, t in r.tokens.items():
        lines.append(f"tokens {printable(name)}: {t['before']} -> {t['after']} / {t['limit']}")
    for e in r.eviction_preview[:EVICT_SHOWN]:
        lines.append(f"would evict from {printable(e['file'] or '')}: "
                     f"{printable(str(e.get('id')))} ({e['tokens']} tokens) "
                     f"{printable((e.get('entry') or e.get('note') or '')[:80])}")
    if len(r.eviction_preview) > EVICT_SHOWN:
        more = r.eviction_preview[EVICT_SHOWN:]
        lines.append(f"would evict ... and {len(more)} more "
                     f"({sum(e.get('tokens') or 0 for e in more)} tokens; --format json "
                     "lists every one)")
    return "\n".join(lines) + "\n"


# The job summary lists this many findings and would-evict entries (a step's summary
# holds at most 1 MiB); the SARIF file and --format json list them all.
SUMMARY_ROWS = 200


def markdown_summary(r: GateResult, summary: dict[str, Any]) -> str:
    """The job summary: every agent-, path- or memory-derived value goes through md_text or
    md_code, so a fact or a file name cannot add HTML, links or table cells to the page."""
    from memwarden.report.markdown import md_code, md_text

    out = [f"## memwarden gate: {r.verdict.upper()} — {r.extra()['decision']}", "",
           f"Agent {md_code(r.agent or '?', in_table=False)}, diff {r.diff_bytes} bytes; "
           f"{summary['errors']} error(s), {summary['warnings']} warning(s), "
           f"{summary['waived']} waived.", "",
           "**Auto-approve:** " + ("yes" if r.auto_eligible else "no") + " — " +
           "; ".join(md_text(x) for x in r.auto_reasons), ""]
    if r.tokens:
        out += ["| file | before | after | limit |", "| --- | ---: | ---: | ---: |"]
        for name, t in r.tokens.items():
            over = " ⚠️" if (t["after"] or 0) > (t["limit"] or 0) else ""
            out.append(f"| {md_text(name)} | {t['before']} | {t['after']} | "
                       f"{t['limit']}{over} |")
        out.append("")
    if r.eviction_preview:
        out += ["**Eviction preview** (what apply would move out of Layer 1):", ""]
        out += [f"- {md_code(e['file'] or '', in_table=False)} {md_text(str(e.get('id')))}: "
                f"{md_text(e.get('entry') or e.get('note') or '')}"
                for e in r.eviction_preview[:SUMMARY_ROWS]]
        out += _more_rows(len(r.eviction_preview), "entries")
        out.append("")
    if r.findings:
        out += ["| rule | severity | where | message |", "| --- | --- | --- | --- |"]
        for f in r.findings[:SUMMARY_ROWS]:
            sev = "waived" if f.waived else f.severity
            out.append(f"| {md_text(f.rule)} | {sev} | {md_code(f'{f.path}:{f.line}')} | "
                       f"{md_text(f.message)} |")
        out += _more_rows(len(r.findings), "findings")
    return "\n".join(out) + "\n"


def _more_rows(total: int, what: str) -> list[str]:
    if total <= SUMMARY_ROWS:
        return []
    return ["", f"… and {total - SUMMARY_ROWS} more {what} (--format json or the SARIF file "
            "lists every one)."]


def write_step_summary(r: GateResult, summary: dict[str, Any]) -> None:
    path = os.environ.get("GITHUB_STEP_SUMMARY")
    if path:
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(markdown_summary(r, summary))


def write_outputs(values: dict[str, str]) -> None:
    """Step outputs in the multi-line delimiter form, safe for any value."""
    path = os.environ.get("GITHUB_OUTPUT")
    if not path:
        return
    with open(path, "a", encoding="utf-8") as fh:
        for key, value in values.items():
            delim = f"ghadelimiter_{uuid.uuid4()}"
            fh.write(f"{key}<<{delim}\n{value}\n{delim}\n")
