"""`memwarden verify-history`: main is linear, every commit passes every policy, and every
entry that left Layer 1 in an eviction commit is listed by that commit.

Uses the same per-commit checks as `check-commits`; findings about the history itself use
rule MW002.
"""

from __future__ import annotations

import datetime as _dt
import re

from memwarden.git.repo import Repo
from memwarden.git.source import TreeSource
from memwarden.model.config import load_config_at
from memwarden.model.entries import parse_facts, parse_loops
from memwarden.model.findings import ERROR, Finding, make
from memwarden.model.layout import classify
from memwarden.model.memfile import split_lines
from memwarden.model.trailers import parse_trailers
from memwarden.policies.engine import check
from memwarden.policies.rules.commits import CommitInfo, check_commit, decode_message
from memwarden.policies.rules.ownership import human_bookkeeping_findings
from memwarden.policies.rules.transitions import diff_findings


def _ids(data: bytes | None, kind: str) -> dict[str, str]:
    if data is None:
        return {}
    lines = split_lines(data.decode("utf-8", "replace"))
    if kind == "facts":
        return {f.id: f.text for f in parse_facts(lines)[0]}
    return {lp.id: lp.text for lp in parse_loops(lines)[0]}


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
            ci = CommitInfo(text, info["touched"], label)
            findings += check_commit(ci)
            findings += _diff_rules(repo, sha, info, ci)
        config = load_config_at(repo, sha, config_path)
        source = TreeSource(repo, sha)
        changed = [p for p in info["touched"] if source.entry(p) is not None]
        if changed:
            result = check(source, config, changed, cache_dir=repo.cache_dir, today=today)
            files += result.files
            findings += [f.replace(message=f"{f.message} (in {label})") for f in result.findings]
    return findings, len(commits), files


def _diff_rules(repo: Repo, sha: str, info: dict, ci: CommitInfo) -> list[Finding]:
    """What the server hook judges by comparing a commit with its parent: bookkeeping a
    human edit writes (MW503), append-only runs, immutable logic versions and status
    transitions (MW504, MW505, MW205); apply-made commits write bookkeeping by design."""
    if ci.kind not in ("human", "proposal") or not info["parents"]:
        return []  # a root commit is the repository's starting state (an import), no change
    parent = info["parents"][0]

    def before(path: str) -> bytes | None:
        return repo.read_path(parent, path)

    def after(path: str) -> bytes | None:
        return repo.read_path(sha, path)

    touched = list(info["touched"])
    out = human_bookkeeping_findings(ci.label, touched, before, after) \
        if ci.kind == "human" else []
    return out + diff_findings(touched, before, after, ci.kind)


def verify_history(repo: Repo, revision_range: str, config_path: str | None,
                   today: _dt.date) -> tuple[list[Finding], int, int]:
    """Findings, commits checked and files checked (summed over the commits)."""
    findings, n, files = check_commit_range(repo, revision_range, config_path, today)
    for sha in repo.rev_list(revision_range):
        info = repo.commit_info(sha)
        label = sha[:12]
        if len(info["parents"]) > 1:
            findings.append(make("MW002", ERROR, label, 1, 1, "merge commit on main: history "
                                 "must be linear (apply only fast-forwards)", f"merge:{sha}"))
        text = info["raw_message"].decode("utf-8", "replace")
        if not text.startswith(("memory-evict:", "memory-maintain:")) or not info["parents"]:
            continue
        keys = {t.key.lower() for t in parse_trailers(text)}
        if not keys & {"memory-eviction", "memory-maintenance"}:
            continue
        parent = info["parents"][0]
        for path in info["touched"]:
            fi = classify(path)
            if fi is None or fi.kind not in ("facts", "open_loops"):
                continue
            kind = "facts" if fi.kind == "facts" else "loops"
            before = _ids(repo.read_path(parent, path), kind)
            after = _ids(repo.read_path(sha, path), kind)
            for entry_id in sorted(set(before) - set(after)):
                if not re.search(rf"(?<![\w-]){re.escape(entry_id)}(?![\w-])", text):
                    findings.append(make(
                        "MW002", ERROR, label, 1, 1, f"eviction commit removes {entry_id} "
                        f"from {path} without listing it: the entry would be lost silently",
                        f"{sha}:{entry_id}"))
    return findings, n, files
