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
    lines = [f"verdict: {r.verdict} ({r.extra()['decision']}); agent: {r.agent or '?'}; "
             f"diff {r.diff_bytes} bytes"]
    lines += [f"auto-approve: {'yes' if r.auto_eligible else 'no'} — " + "; ".join(
        r.auto_reasons)]
    for name, t in r.tokens.items():
        lines.append(f"tokens {name}: {t['before']} -> {t['after']} / {t['limit']}")
    for e in r.eviction_preview[:EVICT_SHOWN]:
        lines.append(f"would evict from {e['file']}: {e.get('id')} ({e['tokens']} tokens) "
                     f"{(e.get('entry') or e.get('note') or '')[:80]}")
    if len(r.eviction_preview) > EVICT_SHOWN:
        more = r.eviction_preview[EVICT_SHOWN:]
        lines.append(f"would evict ... and {len(more)} more "
                     f"({sum(e.get('tokens') or 0 for e in more)} tokens; --format json "
                     "lists every one)")
    return "\n".join(lines) + "\n"


def markdown_summary(r: GateResult, summary: dict[str, Any]) -> str:
    out = [f"## memwarden gate: {r.verdict.upper()} — {r.extra()['decision']}", "",
           f"Agent `{r.agent or '?'}`, diff {r.diff_bytes} bytes; "
           f"{summary['errors']} error(s), {summary['warnings']} warning(s), "
           f"{summary['waived']} waived.", "",
           "**Auto-approve:** " + ("yes" if r.auto_eligible else "no") + " — " +
           "; ".join(r.auto_reasons), ""]
    if r.tokens:
        out += ["| file | before | after | limit |", "| --- | ---: | ---: | ---: |"]
        for name, t in r.tokens.items():
            over = " ⚠️" if (t["after"] or 0) > (t["limit"] or 0) else ""
            out.append(f"| {name} | {t['before']} | {t['after']} | {t['limit']}{over} |")
        out.append("")
    if r.eviction_preview:
        out += ["**Eviction preview** (what apply would move out of Layer 1):", ""]
        out += [f"- `{e['file']}` {e.get('id')}: {(e.get('entry') or e.get('note') or '')}"
                for e in r.eviction_preview]
        out.append("")
    if r.findings:
        out += ["| rule | severity | where | message |", "| --- | --- | --- | --- |"]
        for f in r.findings:
            msg = f.message.replace("|", "\\|").replace("\n", " ")
            sev = "waived" if f.waived else f.severity
            out.append(f"| {f.rule} | {sev} | `{f.path}:{f.line}` | {msg} |")
    return "\n".join(out) + "\n"


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
