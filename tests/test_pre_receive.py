"""Server-side pre-receive hook: real pushes to a local bare repository."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from conftest import GIT_ENV, git, make_repo

from memwarden.hooks.pre_receive import install

CONFIG = '[server]\nallowed_pushers = ["alice"]\n'
PROPOSAL = ("memory-update: a / run_1 / p-1\n\nAgent-Id: a\nRun-Id: run_1\nProposal-Id: p-1\n"
            "Priority: normal\nExpected-Version: 0\n")
APPLY_ENV = {"GIT_COMMITTER_NAME": "memwarden-apply",
             "GIT_COMMITTER_EMAIL": "apply@memwarden.invalid"}


@pytest.fixture
def server(tmp_path):
    """(work clone, bare remote with the hook installed)."""
    work = make_repo(tmp_path, {"memwarden.toml": CONFIG,
                                "memory/a/facts.md": "# Facts\n\n## D\n- one\n",
                                "memory/b/facts.md": "# Facts\n\n## D\n- two\n"})
    bare = tmp_path / "remote.git"
    git(tmp_path, "clone", "-q", "--bare", str(work), str(bare))
    install(bare)
    git(work, "remote", "add", "origin", str(bare))
    git(work, "fetch", "-q", "origin")
    return work, bare


def push(work: Path, *args: str, env: dict[str, str] | None = None):
    return subprocess.run(["git", "push", "origin", *args], cwd=work, capture_output=True,
                          text=True, env={**os.environ, **GIT_ENV, **(env or {})})


def commit_file(work: Path, path: str, text: str, message: str, env=None) -> None:
    full = work / path
    full.parent.mkdir(parents=True, exist_ok=True)
    full.write_text(text)
    git(work, "add", "-A")
    subprocess.run(["git", "commit", "-qm", message], cwd=work, check=True,
                   env={**os.environ, **GIT_ENV, **(env or {})})


def test_good_proposal_branch_accepted(server):
    work, _ = server
    git(work, "checkout", "-qb", "proposals/a/p-1")
    commit_file(work, "memory/a/facts.md", "# Facts\n\n## D\n- one\n- three\n", PROPOSAL)
    proc = push(work, "proposals/a/p-1")
    assert proc.returncode == 0, proc.stderr


def test_proposal_touching_other_agent_rejected(server):
    work, _ = server
    git(work, "checkout", "-qb", "proposals/a/p-1")
    commit_file(work, "memory/b/facts.md", "# Facts\n\n- x\n",
                PROPOSAL.replace("memory-update", "memory-update"))
    proc = push(work, "proposals/a/p-1")
    assert proc.returncode != 0
    assert "remote: memwarden: refs/heads/proposals/a/p-1: memory/b/facts.md:1:1: MW501" \
        in proc.stderr
    assert "MW402" in proc.stderr  # Agent-Id a changes memory of b


def test_proposal_with_bad_trailers_or_apply_owned_file_rejected(server):
    work, _ = server
    git(work, "checkout", "-qb", "proposals/a/p-2")
    commit_file(work, "memory/a/meta.json", '{"agentId": "a", "version": 9, '
                '"schemaVersion": "1.0"}', PROPOSAL.replace("Priority: normal", "Priority: !"))
    proc = push(work, "proposals/a/p-2")
    assert proc.returncode != 0
    assert "MW503" in proc.stderr and "MW402" in proc.stderr


def test_bad_proposal_branch_name(server):
    work, _ = server
    git(work, "checkout", "-qb", "proposals/A_B/p-1")
    commit_file(work, "memory/a/facts.md", "# F\n", PROPOSAL)
    proc = push(work, "proposals/A_B/p-1")
    assert proc.returncode != 0 and "MW507" in proc.stderr


def test_main_only_from_apply_or_allowed_pusher(server):
    work, _ = server
    commit_file(work, "memory/a/facts.md", "# Facts\n\n- edited\n",
                "Edit facts\n\nHuman-Edit: true")
    proc = push(work, "main")
    assert proc.returncode != 0 and "not made by the apply step" in proc.stderr
    proc = push(work, "main", env={"REMOTE_USER": "alice"})
    assert proc.returncode == 0, proc.stderr


def test_allowed_pusher_still_needs_clean_commits(server):
    work, _ = server
    commit_file(work, "memory/a/notes.txt", "x", "Notes\n\nHuman-Edit: true")
    proc = push(work, "main", env={"REMOTE_USER": "alice"})
    assert proc.returncode != 0 and "MW506" in proc.stderr


def test_apply_identity_commit_accepted(server):
    work, _ = server
    commit_file(work, "memory/a/facts.md", "# Facts\n\n## D\n",
                "memory-evict: a / facts\n\nAgent-Id: a\nMemory-Eviction: overflow\n",
                env=APPLY_ENV)
    proc = push(work, "main")
    assert proc.returncode == 0, proc.stderr
    commit_file(work, "memory/a/facts.md", "# Facts\n\n## E\n",
                "memory-evict: a / facts\n\nAgent-Id: a\nMemory-Eviction: overflow\n")
    proc = push(work, "main")
    assert proc.returncode != 0 and "not the apply identity" in proc.stderr


def test_non_fast_forward_and_deletion_of_main_rejected(server):
    work, _ = server
    git(work, "commit", "-q", "--amend", "-m", "rewritten\n\nHuman-Edit: true")
    proc = push(work, "--force", "main", env={"REMOTE_USER": "alice"})
    assert proc.returncode != 0 and "fast-forward" in proc.stderr
    proc = push(work, ":main", env={"REMOTE_USER": "alice"})
    assert proc.returncode != 0 and "cannot be deleted" in proc.stderr


def test_new_and_deleted_proposal_refs(server):
    work, _ = server
    git(work, "checkout", "-qb", "proposals/a/p-3")
    commit_file(work, "memory/a/facts.md", "# Facts\n\n- new\n",
                PROPOSAL.replace("p-1", "p-3"))
    assert push(work, "proposals/a/p-3").returncode == 0
    proc = push(work, ":proposals/a/p-3")
    assert proc.returncode == 0, proc.stderr


def test_testing_mode_logs_and_accepts(tmp_path):
    work = make_repo(tmp_path, {"memwarden.toml": '[server]\nmode = "testing"\n',
                                "memory/a/facts.md": "# F\n"})
    bare = tmp_path / "r.git"
    git(tmp_path, "clone", "-q", "--bare", str(work), str(bare))
    install(bare)
    git(work, "remote", "add", "origin", str(bare))
    commit_file(work, "memory/a/facts.md", "# F\n\n- x\n", "Edit\n\nHuman-Edit: true")
    proc = push(work, "main")
    assert proc.returncode == 0
    assert "testing mode: would reject" in proc.stderr


def test_gitlab_prefix(server):
    work, _ = server
    commit_file(work, "memory/a/facts.md", "# F\n", "Edit\n\nHuman-Edit: true")
    proc = push(work, "main", env={"GL_USERNAME": "mallory", "GL_ID": "user-7"})
    assert proc.returncode != 0 and "GL-HOOK-ERR: memwarden:" in proc.stderr


def test_install_refuses_foreign_hook(tmp_path, mw):
    bare = tmp_path / "x.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    (bare / "hooks" / "pre-receive").write_text("#!/bin/sh\nexit 0\n")
    code, _, err = mw(tmp_path, "install-server-hooks", str(bare))
    assert code == 2 and "--force" in err
    code, out, _ = mw(tmp_path, "install-server-hooks", str(bare), "--force")
    assert code == 0 and (bare / "hooks" / "pre-receive.bak").exists()
    code, _, err = mw(tmp_path, "install-server-hooks", str(tmp_path))
    assert code == 2
