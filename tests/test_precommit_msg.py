"""The commit-msg and prepare-commit-msg hooks through the real pre-commit, in all three
commit forms (staged, `commit -a`, `commit <path>`: the last two use a temporary index)."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import write_files
from test_precommit import PreCommit, pc  # noqa: F401  (session fixture)

MSG_HOOKS = ("memwarden-check", "memwarden-commit-msg", "memwarden-prepare-commit-msg")
FACTS = "# Facts: a\n\n## Domain\n- memory is Markdown in git\n"


@pytest.fixture
def repo(tmp_path: Path, pc: PreCommit) -> Path:  # noqa: F811
    root = tmp_path / "mem"
    root.mkdir()
    pc.git(root, "init", "-q", "-b", "main")
    write_files(root, {".pre-commit-config.yaml": pc.config(MSG_HOOKS), "README.md": "x\n",
                       "memory/a/facts.md": FACTS})
    pc.git(root, "add", "-A")
    pc.git(root, "commit", "-q", "-m", "start\n\nHuman-Edit: true")
    proc = pc.pre_commit(root, "install", "-t", "pre-commit", "-t", "commit-msg",
                         "-t", "prepare-commit-msg")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return root


@pytest.mark.parametrize("form", ["staged", "all", "path"])
def test_human_edit_added_and_accepted(pc, repo, form):  # noqa: F811
    (repo / "memory/a/facts.md").write_text(FACTS + "- another fact\n")
    if form == "staged":
        pc.git(repo, "add", "memory/a/facts.md")
        args = ["commit", "-m", "Add a fact"]
    elif form == "all":
        args = ["commit", "-a", "-m", "Add a fact"]
    else:
        args = ["commit", "-m", "Add a fact", "--", "memory/a/facts.md"]
    proc = pc.run(repo, "git", *args)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    msg = pc.git(repo, "log", "-1", "--format=%B")
    assert msg.count("Human-Edit: true") == 1


def test_unrelated_commit_gets_no_trailer(pc, repo):  # noqa: F811
    (repo / "README.md").write_text("y\n")
    proc = pc.run(repo, "git", "commit", "-am", "Docs")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Human-Edit" not in pc.git(repo, "log", "-1", "--format=%B")


def test_bad_proposal_message_is_rejected(pc, repo):  # noqa: F811
    (repo / "memory/a/facts.md").write_text(FACTS + "- x\n")
    msg = ("memory-update: a / run_1 / p-1\n\nAgent-Id: a\nRun-Id: run_1\nProposal-Id: p-1\n"
           "Priority: someday\nExpected-Version: 1\n")
    proc = pc.run(repo, "git", "commit", "-am", msg)
    assert proc.returncode != 0
    assert "MW402" in proc.stdout + proc.stderr
    msg = msg.replace("someday", "normal")
    proc = pc.run(repo, "git", "commit", "-am", msg)
    assert proc.returncode == 0, proc.stdout + proc.stderr
