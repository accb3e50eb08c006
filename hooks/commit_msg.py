"""commit-msg hook: check the message being committed (MW401–MW404).

Reads what is really being committed: the message file git passes, and the index in
$GIT_INDEX_FILE (a temporary index for `git commit -a` / `git commit <path>`).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from pathlib import Path

from memwarden.git.repo import Repo, open_repo
from memwarden.model.config import load_config
from memwarden.model.errors import MemwardenError
from memwarden.model.findings import ERROR, Finding, summarize
from memwarden.model.trailers import cleanup_message
from memwarden.policies.rules.commits import CommitInfo, check_commit, decode_message
from memwarden.report.findings import render


def index_file(root: Path) -> str | None:
    """$GIT_INDEX_FILE resolved against the work tree (git may set it relative)."""
    value = os.environ.get("GIT_INDEX_FILE")
    if not value:
        return None
    p = Path(value)
    return str(p if p.is_absolute() else root / p)


def check_message_file(path: Path, repo: Repo) -> list[Finding]:
    """Findings for the message in `path` given what is staged in `repo`."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise MemwardenError(f"{path}: cannot read the commit message ({exc.strerror})") from None
    label = path.name
    text, problems = decode_message(raw, label)
    if text is None:
        return problems
    root = repo.root or Path.cwd()
    touched = repo.staged_paths(index_file(root))
    return check_commit(CommitInfo(cleanup_message(text), touched, label))


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args:
        raise MemwardenError("commit-msg: expected the commit message file as argument")
    repo = open_repo(Path.cwd())
    if repo is None:
        raise MemwardenError("commit-msg: not inside a git repository")
    config = load_config(None, repo.root)
    findings = [f for f in check_message_file(Path(args[0]), repo) if config.rule_enabled(f.rule)]
    sys.stdout.write(render("text", findings, summarize(findings, 1)) if findings else "")
    return 1 if any(f.severity == ERROR for f in findings) else 0
