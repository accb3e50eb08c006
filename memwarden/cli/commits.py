"""Front-end glue for `memwarden check-commits A..B`: trailers and tree policies per commit."""

from __future__ import annotations

import datetime as _dt
from pathlib import Path

from memwarden.apply.verify import check_commit_range
from memwarden.git.repo import open_repo
from memwarden.model.config import load_config
from memwarden.model.errors import MemwardenError
from memwarden.model.findings import summarize
from memwarden.policies.registry import all_rules
from memwarden.report.findings import render


def run_check_commits(revision_range: str, config_path: str | None, fmt: str,
                      today: _dt.date) -> tuple[int, str]:
    repo = open_repo(Path.cwd())
    if repo is None:
        raise MemwardenError("check-commits: not inside a git repository")
    findings, n, files = check_commit_range(repo, revision_range, config_path, today)
    config = load_config(config_path, repo.root) if repo.root else load_config(config_path)
    findings = [f for f in findings if config.rule_enabled(f.rule)]
    summary = summarize(findings, files)
    summary["commits"] = n
    text = render(fmt, findings, summary, [r.to_doc() for r in all_rules()])
    failed = any(f.severity == "error" and not f.waived for f in findings)
    return (1 if failed else 0), text
