"""Front-end glue for `memwarden apply`."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from memwarden.apply.apply import apply_all, proposal_refs
from memwarden.cli.propose import _now
from memwarden.git.repo import open_repo
from memwarden.model.config import load_config, load_config_at
from memwarden.model.errors import MemwardenError


def run_apply(refs: list[str], all_refs: bool, approved_by: str | None, dry_run: bool,
              force: bool, now: str | None, remote: str | None = None,
              delete_branches: bool = False) -> tuple[int, dict[str, Any]]:
    repo = open_repo(Path.cwd())
    if repo is None:
        raise MemwardenError("apply: not inside a git repository")
    main = load_config(None, None).data["main_branch"]
    config = load_config_at(repo, repo.ref_target(f"refs/heads/{main}"))
    if all_refs:
        refs = refs + [r for r in proposal_refs(repo, config) if r not in refs]
    if not refs:
        raise MemwardenError("apply: name proposal refs or use --all")
    results = apply_all(repo, refs, config, approved_by, _now(now), dry_run, force, remote,
                        delete_branches=delete_branches)
    ok = all(r.status in ("applied", "already_applied") for r in results)
    return (0 if ok else 1), {"results": [r.to_json() for r in results]}


def github_report(code: int, doc: dict[str, Any]) -> str:
    """The github format: warning annotations for refused proposals, step outputs
    (result, per-status counts, results JSON) and a job summary table; returns the JSON
    document for the log."""
    import json

    from memwarden.cli.gate import write_outputs

    results = doc["results"]
    counts = {s: sum(1 for r in results if r["status"] == s)
              for s in ("applied", "already_applied", "rejected", "failed", "pending")}
    lines = [f"::warning title=memwarden apply::{r['proposalId']}: {r['status']} "
             f"({r['reason']})" for r in results if r["status"] in ("rejected", "failed")]
    write_outputs({"result": "applied" if code == 0 else "partial",
                   **{k.replace("_", "-"): str(v) for k, v in counts.items()},
                   "results": json.dumps(results, ensure_ascii=False)})
    summary = os.environ.get("GITHUB_STEP_SUMMARY")
    if summary:
        rows = ["## memwarden apply", "", "| proposal | status | reason | commits |",
                "| --- | --- | --- | --- |"]
        rows += [f"| {r['proposalId']} | {r['status']} | {r['reason'] or ''} | "
                 f"{', '.join(c[:12] for c in r['commits'])} |" for r in results]
        with open(summary, "a", encoding="utf-8") as fh:
            fh.write("\n".join(rows) + "\n")
    return "\n".join([*lines, json.dumps(doc, ensure_ascii=False, indent=2)])
