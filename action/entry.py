"""Entry point of the memwarden GitHub Action (action.yml): map inputs to the CLI.

Inputs arrive as MW_* environment variables; the ref defaults to the one that triggered
the workflow (GITHUB_HEAD_REF for pull requests, GITHUB_REF otherwise, or the PR head from
GITHUB_EVENT_PATH). Annotations go to stdout, the summary to $GITHUB_STEP_SUMMARY, outputs
to $GITHUB_OUTPUT (all written by `memwarden gate --format github`). Mode report writes
the Markdown report to the summary and the HTML one to a file.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Sequence


def event_ref(env: dict[str, str]) -> str | None:
    path = env.get("GITHUB_EVENT_PATH")
    if not path:
        return None
    try:
        with open(path, encoding="utf-8") as fh:
            event = json.load(fh)
    except (OSError, ValueError):
        return None
    pr = event.get("pull_request") if isinstance(event, dict) else None
    if isinstance(pr, dict) and isinstance(pr.get("head"), dict):
        ref = pr["head"].get("ref")
        return f"origin/{ref}" if ref else None
    return None


def gate_args(env: dict[str, str]) -> list[str]:
    ref = env.get("MW_REF") or event_ref(env) or env.get("GITHUB_HEAD_REF") or \
        env.get("GITHUB_REF", "HEAD")
    if env.get("GITHUB_HEAD_REF") and ref == env["GITHUB_HEAD_REF"]:
        ref = f"origin/{ref}"
    base = env.get("MW_BASE") or "main"
    if not base.startswith(("origin/", "refs/")) and env.get("GITHUB_ACTIONS"):
        base = f"origin/{base}"
    args = ["gate", ref, "--base", base, "--format", "github"]
    if env.get("MW_CONFIG"):
        args += ["--config", env["MW_CONFIG"]]
    if env.get("MW_SARIF"):
        args += ["--sarif-file", env["MW_SARIF"]]
    return args


def run_apply(env: dict[str, str]) -> int:
    """mode apply: land every approved proposal, push, and report for GitHub."""
    from memwarden.cli.apply import github_report
    from memwarden.cli.apply import run_apply as apply_cli
    from memwarden.model.errors import MemwardenError

    remote = env.get("MW_REMOTE") or "origin"
    delete = env.get("MW_DELETE_BRANCHES", "").lower() in ("1", "true", "yes")
    try:
        code, doc = apply_cli([], True, env.get("MW_APPROVED_BY") or None, False, False, None,
                              remote, delete_branches=delete)
    except MemwardenError as exc:
        print(f"::error title=memwarden apply::{exc}")
        return 2
    if env.get("GITHUB_OUTPUT"):
        os.environ["GITHUB_OUTPUT"] = env["GITHUB_OUTPUT"]
    if env.get("GITHUB_STEP_SUMMARY"):
        os.environ["GITHUB_STEP_SUMMARY"] = env["GITHUB_STEP_SUMMARY"]
    print(github_report(code, doc))
    return code


def run_report(env: dict[str, str]) -> int:
    """mode report: the Markdown report appended to the job summary, the HTML one written
    to MW_REPORT_FILE (its path is the `report` output, for actions/upload-artifact)."""
    from memwarden.cli.report import build_report, render
    from memwarden.model.errors import MemwardenError

    html_path = env.get("MW_REPORT_FILE") or "memwarden-report.html"
    try:
        doc = build_report(env.get("MW_SINCE") or None, env.get("MW_AT") or None,
                           env.get("MW_CONFIG") or None)
        with open(html_path, "w", encoding="utf-8") as fh:
            fh.write(render(doc, "html"))
    except (MemwardenError, OSError) as exc:
        print(f"::error title=memwarden report::{exc}")
        return 2
    md = render(doc, "md")
    if env.get("GITHUB_STEP_SUMMARY"):
        with open(env["GITHUB_STEP_SUMMARY"], "a", encoding="utf-8") as fh:
            fh.write(md)
    else:
        print(md, end="")
    write_outputs(env, {"report": html_path})
    print(f"memwarden report: {html_path}")
    return 0


def write_outputs(env: dict[str, str], values: dict[str, str]) -> None:
    from memwarden.cli.gate import write_outputs as write

    if env.get("GITHUB_OUTPUT"):
        os.environ["GITHUB_OUTPUT"] = env["GITHUB_OUTPUT"]
        write(values)


def main(argv: Sequence[str] | None = None) -> int:
    from memwarden.cli.main import main as cli_main

    env = dict(os.environ)
    mode = env.get("MW_MODE", "gate")
    if mode == "apply":
        return run_apply(env)
    if mode == "report":
        return run_report(env)
    if mode != "gate":
        print(f"::error title=memwarden::unknown mode {mode!r}: expected gate, apply or "
              "report")
        return 2
    return cli_main(gate_args(env))


if __name__ == "__main__":
    sys.exit(main())
