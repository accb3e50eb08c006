"""MW502 unsafe paths, MW506 unknown memory files, MW507 invalid agent ids; tree sources."""

from __future__ import annotations

import os

import pytest
from conftest import git, make_repo, rules_in

GOOD = "# Facts: a\n\n## Domain\n- memory is Markdown in git\n"


def test_symlink_in_worktree_and_in_commit(tmp_path, mw):
    root = make_repo(tmp_path, {"memory/a/facts.md": GOOD})
    os.symlink("facts.md", root / "memory/a/snapshot.md")
    code, out, _ = mw(root, "check", "--all")
    assert code == 1 and "MW502" in rules_in(out) and "symlink" in out
    git(root, "add", "-A")
    git(root, "commit", "-qm", "link")
    code, out, _ = mw(root, "check", "--rev", "HEAD")
    assert code == 1 and "memory/a/snapshot.md:1:1: MW502 symlink to 'facts.md'" in out


def test_submodule_gitlink_in_commit(tmp_path, mw):
    root = make_repo(tmp_path, {"memory/a/facts.md": GOOD})
    sha = git(root, "rev-parse", "HEAD").strip()
    git(root, "update-index", "--add", "--cacheinfo", f"160000,{sha},memory/a/sub")
    git(root, "commit", "-qm", "gitlink")
    code, out, _ = mw(root, "check", "--rev", "HEAD")
    assert code == 1 and "MW502" in rules_in(out) and "submodule" in out


@pytest.mark.parametrize("name", ["memory/a/%2e%2e/facts.md", "memory/a/x%2Fy.md"])
def test_url_encoded_names(tmp_path, mw, name):
    root = make_repo(tmp_path, {name: GOOD})
    code, out, _ = mw(root, "check", "--all")
    assert code == 1 and "URL-encoded" in out


def test_path_outside_repo_is_reported(tmp_path, mw):
    root = make_repo(tmp_path, {"memory/a/facts.md": GOOD})
    (tmp_path / "outside.md").write_text("x")
    code, out, _ = mw(root, "check", "../outside.md")
    assert code == 1 and "MW502" in out and "outside the repository" in out


@pytest.mark.parametrize("path", ["memory/a/notes.txt", "memory/README.md",
                                  "memory/a/timeline/today.md", "memory/a/runs/other.md",
                                  "memory/a/sub/facts.md"])
def test_unknown_memory_files(tmp_path, mw, path):
    root = make_repo(tmp_path, {path: "x\n"})
    code, out, _ = mw(root, "check", "--all")
    assert code == 1 and rules_in(out) == ["MW506"]


@pytest.mark.parametrize("path", ["memory/a/facts.md", "memory/a/decisions.md",
                                  "memory/a/timeline/2026-02-17.md", "memory/a/runs/run_42.md",
                                  "memory/a/runs/run_42/manifest.md", "memory/a/changelog.md",
                                  "memory/a/relationships.md"])
def test_known_memory_files(tmp_path, mw, path):
    root = make_repo(tmp_path, {path: "# Title\n"})
    code, out, _ = mw(root, "check", "--all")
    assert "MW506" not in out


@pytest.mark.parametrize("agent", ["Archivist", "a_b", "-a", "ü"])
def test_invalid_agent_ids(tmp_path, mw, agent):
    root = make_repo(tmp_path, {f"memory/{agent}/facts.md": GOOD})
    code, out, _ = mw(root, "check", "--all")
    assert code == 1 and "MW507" in rules_in(out)


def test_valid_agent_id(tmp_path, mw):
    root = make_repo(tmp_path, {"memory/archivist-violin/facts.md": GOOD})
    code, out, _ = mw(root, "check", "--all")
    assert "MW507" not in out


def test_non_memory_files_are_skipped(tmp_path, mw):
    root = make_repo(tmp_path, {"README.md": "# SYSTEM: hi\n", "src/x.bin": b"\x00\x01"})
    code, out, _ = mw(root, "check", "README.md", "src/x.bin")
    assert code == 0
    assert "0 file(s) checked" in out


def test_rev_works_in_a_bare_repo(tmp_path, mw):
    root = make_repo(tmp_path, {"memory/a/notes.txt": "x\n", "memory/a/facts.md": GOOD})
    bare = tmp_path / "bare.git"
    git(tmp_path, "clone", "-q", "--bare", str(root), str(bare))
    code, out, _ = mw(bare, "check", "--rev", "main")
    assert code == 1 and rules_in(out) == ["MW506"]


def test_rev_reads_config_from_the_tree(tmp_path, mw):
    root = make_repo(tmp_path, {"memory/a/notes.txt": "x\n",
                                "memwarden.toml": 'ignore = ["MW506"]\n'})
    (root / "memwarden.toml").write_text("")  # worktree differs from the commit
    code, out, _ = mw(root, "check", "--rev", "HEAD")
    assert code == 0, out
    code, out, _ = mw(root, "check", "--all")
    assert code == 1


def test_ignore_and_select_flags(tmp_path, mw):
    root = make_repo(tmp_path, {"memory/a/notes.txt": "x\n", "memory/B/facts.md": GOOD})
    code, out, _ = mw(root, "check", "--ignore", "MW506")
    assert rules_in(out) == ["MW507"]
    code, out, _ = mw(root, "check", "--select", "MW506")
    assert rules_in(out) == ["MW506"]


def test_gitignored_files_are_skipped_but_tracked_ones_are_not(tmp_path, mw):
    root = make_repo(tmp_path, {".gitignore": "memory/a/scratch/\nmemory/a/*.tmp\n",
                                "memory/a/facts.md": GOOD})
    (root / "memory/a/scratch").mkdir()
    (root / "memory/a/scratch/x.md").write_text("x")
    (root / "memory/a/y.tmp").write_text("x")
    code, out, _ = mw(root, "check", "--all")
    assert code == 0, out
    (root / "memory/a/z.txt").write_text("x")
    code, out, _ = mw(root, "check", "--all")
    assert code == 1 and "memory/a/z.txt" in out


def test_stat_cache_notices_same_size_rewrite(tmp_path, mw):
    root = make_repo(tmp_path, {"memory/a/facts.md": GOOD})
    mw(root, "check", "--all")
    code, out, _ = mw(root, "check", "--all")
    assert code == 0
    os.symlink("facts.md", root / "memory/a/snapshot.md")
    (root / "memory/a/facts.md").write_text(GOOD.replace("memory", "memorx"))
    code, out, _ = mw(root, "check", "--all", "--format", "json")
    assert code == 1 and "MW502" in out
