"""MW401–MW404, the commit-msg and prepare-commit-msg hooks (real git commits), check-commits."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import GIT_ENV, git, make_repo, rules_in

from memwarden.policies.rules.commits import (
    CommitInfo,
    check_commit,
    classify_commit,
    decode_message,
)

PROPOSAL = ("memory-update: a / run_1 / p-1\n\nAgent-Id: a\nRun-Id: run_1\nProposal-Id: p-1\n"
            "Priority: normal\nExpected-Version: 3\n")


def rule_ids(message: str, touched=("memory/a/facts.md",)) -> list[str]:
    return sorted({f.rule for f in check_commit(CommitInfo(message, list(touched), "MSG"))})


def test_good_proposal():
    assert rule_ids(PROPOSAL) == []
    assert classify_commit(PROPOSAL, ["memory/a/facts.md"]) == "proposal"


@pytest.mark.parametrize(("message", "rule"), [
    (PROPOSAL.replace("Priority: normal\n", ""), "MW401"),
    (PROPOSAL.replace("Expected-Version: 3", "Expected-Version: three"), "MW402"),
    (PROPOSAL.replace("Priority: normal", "Priority: urgent"), "MW402"),
    (PROPOSAL.replace("Run-Id: run_1", "Run-Id: ../x"), "MW402"),
    (PROPOSAL.replace("Agent-Id: a", "Agent-Id: b"), "MW402"),
    (PROPOSAL + "Agent-Id: b\n", "MW402"),
    (PROPOSAL.replace("Agent-Id: a", "Agent\u2010Id: a"), "MW402"),
    (PROPOSAL.replace("memory-update: a / run_1 / p-1", "memory-update: a/run_1/p-1"), "MW403"),
    ("memory-evict: a\n\nAgent-Id: a\nMemory-Eviction: overflow\n", "MW403"),
    ("memory-evict: a / facts\n\nAgent-Id: a\nMemory-Eviction: because\n", "MW402"),
    ("memory-evict: a / facts\n\nAgent-Id: a\n", "MW401"),
    ("Fix a typo in facts\n", "MW404"),
    ("Fix a typo\n\nHuman-Edit: yes\n", "MW402"),
    ("Fix a typo\n\nHuman-Edit: true\n\nSigned-off-by: x\nfree text\nmore text\nand more\n",
     "MW404"),
])
def test_bad_messages(message, rule):
    assert rule in rule_ids(message)


def test_proposal_touching_another_agent():
    assert "MW402" in rule_ids(PROPOSAL, ["memory/b/facts.md"])


def test_good_human_edit_and_unrelated():
    assert rule_ids("Fix typo\n\nHuman-Edit: true\n") == []
    assert rule_ids("Update README\n", ["README.md"]) == []
    assert classify_commit("Update README\n", ["README.md"]) == "unrelated"


def test_good_eviction():
    assert rule_ids("memory-evict: a / facts\n\nAgent-Id: a\nMemory-Eviction: stale-fact\n") == []


@pytest.mark.parametrize("raw", [b"subj\x00\n\nHuman-Edit: true\n", b"subj \xff\n",
                                 b"x" * (2 * 1024 * 1024)])
def test_undecodable_messages_are_findings(raw):
    text, problems = decode_message(raw, "MSG")
    assert text is None and problems[0].rule == "MW402"


def test_cr_only_message_is_not_a_forgery():
    msg = PROPOSAL.replace("\n", "\r")
    assert "MW403" in rule_ids(msg)


# --- hooks through real git commits -------------------------------------------------------

def install_hooks(root: Path) -> None:
    hooks = root / ".git" / "hooks"
    for name in ("commit-msg", "prepare-commit-msg"):
        script = hooks / name
        script.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m memwarden hook {name} "$@"\n')
        script.chmod(script.stat().st_mode | stat.S_IEXEC)


def commit(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", "commit", "-q", *args], cwd=root, capture_output=True,
                          text=True, env={**os.environ, **GIT_ENV})


def last_message(root: Path) -> str:
    return git(root, "log", "-1", "--format=%B")


@pytest.mark.parametrize("form", ["staged", "all", "path"])
def test_prepare_adds_human_edit_in_every_commit_form(tmp_path, form):
    root = make_repo(tmp_path, {"memory/a/facts.md": "# Facts\n", "README.md": "x\n"})
    install_hooks(root)
    (root / "memory/a/facts.md").write_text("# Facts\n\n## D\n- new fact\n")
    if form == "staged":
        git(root, "add", "memory/a/facts.md")
        proc = commit(root, "-m", "Add a fact")
    elif form == "all":
        proc = commit(root, "-a", "-m", "Add a fact")
    else:
        proc = commit(root, "-m", "Add a fact", "--", "memory/a/facts.md")
    assert proc.returncode == 0, proc.stderr + proc.stdout
    msg = last_message(root)
    assert msg.count("Human-Edit: true") == 1
    assert git(root, "interpret-trailers", "--parse", input=msg) == "Human-Edit: true\n"


def test_prepare_leaves_unrelated_and_proposals_alone(tmp_path):
    root = make_repo(tmp_path, {"memory/a/facts.md": "# Facts\n", "README.md": "x\n"})
    install_hooks(root)
    (root / "README.md").write_text("y\n")
    assert commit(root, "-am", "Docs").returncode == 0
    assert "Human-Edit" not in last_message(root)
    (root / "memory/a/facts.md").write_text("# Facts\n\n- f\n")
    proc = commit(root, "-a", "-m", PROPOSAL)
    assert proc.returncode == 0, proc.stdout
    assert "Human-Edit" not in last_message(root)


def test_prepare_never_duplicates_and_amend_keeps_one(tmp_path):
    root = make_repo(tmp_path, {"memory/a/facts.md": "# Facts\n"})
    install_hooks(root)
    (root / "memory/a/facts.md").write_text("# Facts\n\n- f\n")
    assert commit(root, "-am", "Edit\n\nHuman-Edit: true").returncode == 0
    assert last_message(root).count("Human-Edit") == 1
    (root / "memory/a/facts.md").write_text("# Facts\n\n- g\n")
    assert commit(root, "-a", "--amend", "--no-edit").returncode == 0
    assert last_message(root).count("Human-Edit") == 1


def test_commit_msg_rejects_bad_proposal_and_hook_env_does_not_leak(tmp_path):
    root = make_repo(tmp_path, {"memory/a/facts.md": "# Facts\n"})
    install_hooks(root)
    (root / "memory/a/facts.md").write_text("# Facts\n\n- f\n")
    proc = commit(root, "-a", "-m", PROPOSAL.replace("Priority: normal", "Priority: asap"))
    assert proc.returncode != 0
    assert "MW402" in proc.stdout + proc.stderr
    proc = commit(root, "-a", "-m", PROPOSAL.replace("Agent-Id: a", "Agent\u2010Id: a"))
    assert proc.returncode != 0 and "U+2010" in proc.stdout + proc.stderr


def test_commit_msg_checks_only_what_is_committed(tmp_path):
    """`git commit <path>` uses a temporary index: unstaged memory edits elsewhere do not
    make a README commit a human memory edit."""
    root = make_repo(tmp_path, {"memory/a/facts.md": "# Facts\n", "README.md": "x\n"})
    hooks = root / ".git" / "hooks"
    script = hooks / "commit-msg"
    script.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m memwarden hook commit-msg "$@"\n')
    script.chmod(0o755)
    (root / "memory/a/facts.md").write_text("# Facts\n\n- f\n")
    git(root, "add", "memory/a/facts.md")
    (root / "README.md").write_text("y\n")
    proc = commit(root, "-m", "Docs only", "--", "README.md")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    proc = commit(root, "-m", "Sneaky memory edit")
    assert proc.returncode != 0 and "MW404" in proc.stdout + proc.stderr


def test_check_commits_range(tmp_path, mw):
    root = make_repo(tmp_path, {"memory/a/facts.md": "# Facts\n"})
    base = git(root, "rev-parse", "HEAD").strip()
    (root / "memory/a/facts.md").write_text("# Facts\n\n- f\n")
    git(root, "commit", "-qam", "Edit\n\nHuman-Edit: true")
    code, out, _ = mw(root, "check-commits", f"{base}..HEAD")
    assert code == 0, out
    (root / "memory/a/notes.txt").write_text("x")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "Unmarked")
    code, out, _ = mw(root, "check-commits", f"{base}..HEAD")
    assert code == 1
    assert sorted(set(rules_in(out))) == ["MW404", "MW506"]
    code, out, _ = mw(root, "check-commits", "nope..HEAD")
    assert code == 2


def test_merge_and_squash_of_memory_changes(tmp_path):
    """A merge (and a squash) that brings memory changes is a human edit: the prepare hook
    marks it once and the commit-msg hook accepts it."""
    root = make_repo(tmp_path, {"memory/a/facts.md": "# Facts\n", "README.md": "x\n"})
    install_hooks(root)
    git(root, "checkout", "-qb", "side")
    (root / "memory/a/facts.md").write_text("# Facts\n\n- from side\n")
    assert commit(root, "-am", "Side edit").returncode == 0
    git(root, "checkout", "-q", "main")
    (root / "README.md").write_text("y\n")
    assert commit(root, "-am", "Docs").returncode == 0
    proc = subprocess.run(["git", "merge", "--no-ff", "--no-edit", "side"], cwd=root,
                          capture_output=True, text=True, env={**os.environ, **GIT_ENV})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert last_message(root).count("Human-Edit: true") == 1
    git(root, "checkout", "-qb", "side2", "side~1")
    (root / "memory/a/facts.md").write_text("# Facts\n\n- squashed\n")
    assert commit(root, "-am", "Side two").returncode == 0
    git(root, "checkout", "-q", "main")
    git(root, "merge", "--squash", "side2", "-X", "theirs")
    assert commit(root, "--no-edit").returncode == 0
    # the squash message quotes the squashed commits (indented); one real trailer is added
    assert git(root, "interpret-trailers", "--parse", input=last_message(root)) == \
        "Human-Edit: true\n"
