"""Front-end glue for `memwarden check-commits A..B`: trailers and tree policies per commit."""

from __future__ import annotations

import datetime as _dt
from dataclasses import replace
from pathlib import Path

from memwarden.config import load_config, load_config_at
from memwarden.errors import MemwardenError
from memwarden.findings import Finding, summarize
from memwarden.policies.commits import CommitInfo, check_commit, decode_message
from memwarden.policies.engine import check
from memwarden.policies.registry import all_rules
from memwarden.repo import Repo, open_repo
from memwarden.report import render
from memwarden.source import TreeSource


def check_commit_range(repo: Repo, revision_range: str, config_path: str | None,
                       today: _dt.date) -> tuple[list[Finding], int, int]:
    """Findings for every commit in the range: MW4xx on its message, all file rules on the
    governed files it changed (checked in its own tree)."""
    findings: list[Finding] = []
    files = 0
    commits = repo.rev_list(revision_range)
    for sha in commits:
        info = repo.commit_info(sha)
        label = sha[:12]
        text, problems = decode_message(info["raw_message"], label)
        findings += problems
        if text is not None:
            findings += check_commit(CommitInfo(text, info["touched"], label))
        config = load_config_at(repo, sha, config_path)
        changed = [p for p in info["touched"] if TreeSource(repo, sha).entry(p) is not None]
        if changed:
            result = check(TreeSource(repo, sha), config, changed, cache_dir=repo.cache_dir,
                           today=today)
            files += result.files
            findings += [replace(f, message=f"{f.message} (in {label})") for f in result.findings]
    return findings, len(commits), files


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
