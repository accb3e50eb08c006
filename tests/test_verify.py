"""verify-history: linear main, every commit clean, no silent loss of Layer 1 entries."""

from __future__ import annotations

import os
import subprocess

from conftest import GIT_ENV, git, make_repo, rules_in

FACTS = "# Facts: a\n\n## Domain\n- fact one\n- fact two\n"


def commit(root, message):
    subprocess.run(["git", "commit", "-qam", message], cwd=root, check=True,
                   env={**os.environ, **GIT_ENV})


def test_clean_history_passes(tmp_path, mw):
    root = make_repo(tmp_path, {"memory/a/facts.md": FACTS})
    (root / "memory/a/facts.md").write_text(FACTS + "- fact three\n")
    commit(root, "Add\n\nHuman-Edit: true")
    code, out, _ = mw(root, "verify-history")
    assert code == 0, out


def test_silent_eviction_and_merges_are_reported(tmp_path, mw):
    root = make_repo(tmp_path, {"memory/a/facts.md": FACTS})
    (root / "memory/a/facts.md").write_text("# Facts: a\n\n## Domain\n- fact two\n")
    commit(root, "memory-evict: a / facts\n\nMade room.\n\nAgent-Id: a\n"
                 "Memory-Eviction: overflow\n")
    code, out, _ = mw(root, "verify-history")
    assert code == 1 and rules_in(out) == ["MW002"] and "without listing it" in out
    git(root, "checkout", "-qb", "side", "HEAD~1")
    (root / "README.md").write_text("x\n")
    git(root, "add", "README.md")
    commit(root, "Docs")
    git(root, "checkout", "-q", "main")
    subprocess.run(["git", "merge", "-q", "--no-ff", "--no-edit", "side"], cwd=root,
                   check=True, env={**os.environ, **GIT_ENV})
    code, out, _ = mw(root, "verify-history")
    assert "merge commit on main" in out
