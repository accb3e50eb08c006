"""`memwarden check-commits A..B` and `memwarden verify-history`: every commit of a range,
its trailers and its own tree's policies (verify-history adds main's apply invariants)."""

from __future__ import annotations

import datetime as _dt

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
)

_FORMATS = ["text", "json", "sarif", "github"]


@click.command("check-commits")
@click.argument("revision_range")
@format_option(_FORMATS, None, "Output format (default text, or the one --output's "
               "extension names).")
@output_option("Write the report to FILE instead of standard output.")
@config_option()
@now_option()
def check_commits_cmd(revision_range: str, fmt: str | None, output: str | None,
                      config_path: str | None, now: str | None) -> None:
    """Check every commit in A..B: its trailers and its own tree's policies (for CI).
    Exit 0 clean, 1 findings, 2 usage/config error."""
    fmt = infer_format(fmt, output)
    code, text = run_check_commits(revision_range, config_path, fmt,
                                   parse_today(now) or _dt.date.today())
    emit(text, output)
    raise SystemExit(code)


def run_check_commits(revision_range: str, config_path: str | None, fmt: str,
                      today: _dt.date) -> tuple[int, str]:
    from memwarden.apply.verify import check_commit_range
    from memwarden.model.config import load_config
    from memwarden.model.findings import summarize
    from memwarden.policies.registry import all_rules
    from memwarden.report.findings import render

    repo = open_repo_here("check-commits")
    findings, n, files = check_commit_range(repo, revision_range, config_path, today)
    config = load_config(config_path, repo.root) if repo.root else load_config(config_path)
    findings = [f for f in findings if config.rule_enabled(f.rule)]
    summary = summarize(findings, files)
    summary["commits"] = n
    text = render(fmt, findings, summary, [r.to_doc() for r in all_rules()])
    failed = any(f.severity == "error" and not f.waived for f in findings)
    return (1 if failed else 0), text


@click.command("verify-history")
@click.argument("revision_range", required=False)
@format_option(_FORMATS, None, "Output format (default text, or the one --output's "
               "extension names).")
@output_option("Write the report to FILE instead of standard output.")
@config_option()
def verify_history_cmd(revision_range: str | None, fmt: str | None, output: str | None,
                       config_path: str | None) -> None:
    """Check main's history (default: all of main): linear, every commit passes every
    policy, every entry evicted from Layer 1 is listed by its eviction commit.
    Exit 0 clean, 1 findings, 2 usage/config error."""
    from memwarden.apply.verify import verify_history
    from memwarden.model.config import load_config
    from memwarden.model.findings import summarize
    from memwarden.policies.registry import all_rules
    from memwarden.report.findings import render

    repo = open_repo_here("verify-history")
    rng = revision_range or load_config(None, None).data["main_branch"]
    findings, n, files = verify_history(repo, rng, config_path, _dt.date.today())
    summary = summarize(findings, files)
    summary["commits"] = n
    fmt = infer_format(fmt, output)
    emit(render(fmt, findings, summary, [r.to_doc() for r in all_rules()]), output)
    raise SystemExit(1 if any(f.severity == "error" and not f.waived for f in findings)
                     else 0)
