"""`memwarden apply`: land approved proposals on main (and the github report of it)."""

from __future__ import annotations

import json
import os
from typing import Any

import click

from memwarden.cli.options import (
    TEXT,
    emit,
    format_option,
    open_repo_here,
    output_option,
    parse_now,
    push_option,
)
from memwarden.model.errors import MemwardenError

STATUSES = ("applied", "already_applied", "rejected", "failed", "pending")


@click.command("apply")
@click.argument("refs", nargs=-1)
@click.option("--all", "all_refs", is_flag=True, help="Every proposal branch, oldest first "
              "(with --push, the remote's too: they are fetched first).")
@click.option("--approved-by", metavar="WHO", type=TEXT, help="Apply proposals that need "
              "human review too, recording who approved them (Approved-By trailer).")
@click.option("--dry-run", is_flag=True, help="Build the commits but do not move main.")
@click.option("--force", is_flag=True, help="Owner override: skip the stale check (never "
              "a policy). The proposal's changes are merged three-way into main's current "
              "files, keeping what main gained since the proposal's base; a file where both "
              "changed the same lines is refused (merge_conflict), never overwritten.")
@click.option("--now", metavar="ISO", help="Clock for bookkeeping (default: now, UTC).")
@push_option("Fetch REMOTE's main (and with --all its proposal branches) first, then push "
             "each landed proposal (branch, then main, both with a lease) to REMOTE; a push "
             "rejected because main moved refetches and retries.")
@click.option("--delete-branches", is_flag=True, help="Delete each applied proposal branch "
              "(locally and on the --push remote) unless it moved on.")
@format_option(["text", "json", "github"], "json", "text: one line a proposal; json: "
               "{\"results\": [...]}; github: annotations, step outputs and a job summary "
               "(in GitHub Actions) besides the JSON.")
@output_option()
def apply_cmd(refs: tuple[str, ...], all_refs: bool, approved_by: str | None, dry_run: bool,
              force: bool, now: str | None, push: str | None, delete_branches: bool,
              fmt: str, output: str | None) -> None:
    """Land approved proposals on main by fast-forward, one commit each with bookkeeping.

    A checked-out main moves only when its files can follow: a landing that would change
    a file with local edits (or an untracked file) fails `local_edits`, naming the files,
    and main stays where it was.

    Exit 0 when this run failed or newly rejected nothing (proposals waiting for review and
    rejections recorded by earlier runs are reported, not failures), 1 otherwise, 2 usage
    or configuration errors."""
    code, doc = run_apply(list(refs), all_refs, approved_by, dry_run, force, now, push,
                          delete_branches)
    if doc.get("message"):
        click.echo(f"memwarden: {doc['message']}", err=True)
    if fmt == "github":
        text = github_report(code, doc) + "\n"
    elif fmt == "text":
        text = text_report(doc)
    else:
        text = json.dumps(doc, ensure_ascii=False, indent=2) + "\n"
    emit(text, output)
    raise SystemExit(code)


def run_apply(refs: list[str], all_refs: bool, approved_by: str | None, dry_run: bool,
              force: bool, now: str | None, remote: str | None = None,
              delete_branches: bool = False) -> tuple[int, dict[str, Any]]:
    from memwarden.apply.apply import apply_all, exit_code, looked_in, proposal_refs
    from memwarden.model.config import load_config, load_config_at

    repo = open_repo_here("apply")
    main = load_config(None, None).data["main_branch"]
    config = load_config_at(repo, repo.ref_target(f"refs/heads/{main}"))
    if all_refs:
        found = proposal_refs(repo, config, remote)
        refs = refs + [r for r in found if r not in refs]
        if not refs:
            where = looked_in(repo, config, remote)
            return 0, {"results": [], "message": f"no proposal branches (looked in {where})"}
    if not refs:
        raise MemwardenError("apply: name proposal branches (REFS) or pass --all")
    results = apply_all(repo, refs, config, approved_by, parse_now(now), dry_run, force, remote,
                        delete_branches=delete_branches)
    return exit_code(results), {"results": [r.to_json() for r in results]}


def counts(results: list[dict[str, Any]]) -> dict[str, int]:
    return {s: sum(1 for r in results if r["status"] == s) for s in STATUSES}


def text_report(doc: dict[str, Any]) -> str:
    """One line a proposal, then the counts; reasons and messages can quote memory text or
    an owner's words, so they are shown with control and bidi characters escaped."""
    from memwarden.report.findings import not_a_command, printable

    lines = []
    for r in doc["results"]:
        why = r.get("reason") or ""
        if r.get("recordedEarlier"):
            why += ", recorded earlier"
        commits = " ".join(c[:12] for c in r.get("commits") or [])
        line = f"{r['status']:<15} {printable(str(r['proposalId'] or r['ref']))}"
        line += f" ({printable(why)})" if why else ""
        line += f" -> {commits}" if commits and r["status"] == "applied" else ""
        if r.get("evicted"):
            line += f"; evicted {len(r['evicted'])} entries"
        lines.append(line)
        msg = r.get("message") or r.get("warning")
        if msg:
            lines.append(not_a_command(f"  {printable(str(msg))}"))
    c = counts(doc["results"])
    lines.append(", ".join(f"{n} {s.replace('_', ' ')}" for s, n in c.items()))
    return "\n".join(lines) + "\n"


def github_report(code: int, doc: dict[str, Any]) -> str:
    """The github format: warning annotations for refused proposals, step outputs
    (result, per-status counts, results JSON) and a job summary table; returns the JSON
    document for the log. Reasons are escaped for the workflow command and for Markdown."""
    from memwarden.cli.gate import write_outputs
    from memwarden.report.findings import dump_json, escape_data, printable
    from memwarden.report.markdown import md_text

    results = doc["results"]
    lines = ["::warning title=memwarden apply::" + escape_data(printable(
        f"{r['proposalId']}: {r['status']} ({r['reason']})", keep_newlines=True))
        for r in results if r["status"] in ("rejected", "failed")]
    write_outputs({"result": "applied" if code == 0 else "partial",
                   **{k.replace("_", "-"): str(v) for k, v in counts(results).items()},
                   "results": dump_json(results, indent=None)})
    summary = os.environ.get("GITHUB_STEP_SUMMARY")
    if summary:
        rows = ["## memwarden apply", "", "| proposal | status | reason | commits |",
                "| --- | --- | --- | --- |"]
        rows += [f"| {md_text(r['proposalId'])} | {md_text(r['status'])} | "
                 f"{md_text(r['reason'] or '')} | "
                 f"{md_text(', '.join(c[:12] for c in r['commits']))} |" for r in results]
        with open(summary, "a", encoding="utf-8") as fh:
            fh.write("\n".join(rows) + "\n")
    return "\n".join([*lines, dump_json(doc)])
