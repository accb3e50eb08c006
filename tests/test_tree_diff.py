"""Repo.changed_paths and patch_bytes give exactly libgit2's whole-tree diff (paths and
patch size) while reading only the entries two trees do not share (hypothesis, real
repositories with big folders, modes, symlinks and file/folder swaps)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pygit2
from conftest import git
from hypothesis import given, settings
from hypothesis import strategies as st

from memwarden.git.repo import open_repo, patch_bytes

BIG = [f"memory/agent-{i:03d}/facts.md" for i in range(120)]
SMALL = ["memory/a/x.md", "memory/a/sub/y.md", "agents/a/_agent.md", "top.md", "memory/b"]
PATHS = st.sampled_from(BIG + SMALL + ["memory/b/c.md", "memory/a/sub"])  # file <-> folder
CHANGE = st.sampled_from(["delete", "edit", "exec", "link", "same"])


def _write(root: Path, path: str, text: str, kind: str) -> None:
    target = root / path
    for parent in reversed(target.relative_to(root).parents[:-1]):
        p = root / parent
        if p.is_file() or p.is_symlink():
            p.unlink()  # a file becomes a folder
    if target.is_dir():
        subprocess.run(["rm", "-rf", str(target)], check=True)  # a folder becomes a file
    target.parent.mkdir(parents=True, exist_ok=True)
    if target.is_symlink() or target.exists():
        target.unlink()
    if kind == "link":
        os.symlink(text, target)
        return
    target.write_text(text)
    target.chmod(0o755 if kind == "exec" else 0o644)


def _commit(root: Path, msg: str) -> str:
    git(root, "add", "-A")
    git(root, "commit", "-q", "--allow-empty", "-m", msg)
    return git(root, "rev-parse", "HEAD").strip()


def _libgit2(root: Path, a: str, b: str) -> tuple[list[str], int]:
    r = pygit2.Repository(str(root))
    diff = r.diff(r.get(a).tree, r.get(b).tree)
    paths = {d.old_file.path for d in diff.deltas} | {d.new_file.path for d in diff.deltas}
    return sorted(paths), len((diff.patch or "").encode("utf-8", "surrogateescape"))


def _start(root: Path) -> str:
    git(root, "init", "-q", "-b", "main")
    for i, path in enumerate(BIG):
        _write(root, path, f"fact {i}\n", "edit")
    for path in SMALL:
        _write(root, path, f"{path}\n", "edit")
    return _commit(root, "start")


@settings(max_examples=30, deadline=None)
@given(steps=st.lists(st.tuples(PATHS, CHANGE, st.integers(0, 3)), min_size=1, max_size=8))
def test_changed_paths_and_diff_bytes_equal_libgit2(tmp_path_factory, steps):
    root = tmp_path_factory.mktemp("td")
    old = _start(root)
    for path, change, n in steps:
        target = root / path
        if change == "delete":
            if target.is_symlink() or target.is_file():
                target.unlink()
            continue
        if change == "same" and (target.is_file() or target.is_symlink()):
            continue
        _write(root, path, "line\n" * n + f"{path} {change}\n", change)
    new = _commit(root, "change")
    repo = open_repo(root)
    want_paths, want_bytes = _libgit2(root, old, new)
    assert repo.changed_paths(old, new) == want_paths
    assert repo.changed_paths(new, old) == want_paths
    assert patch_bytes(repo, old, new) == want_bytes
    assert patch_bytes(repo, new, old) == _libgit2(root, new, old)[1]


def test_a_shared_tail_that_is_not_entry_aligned(tmp_path: Path):
    """Entry "z" becomes "q100644 z" with the same blob: the new tree's last bytes repeat
    the old "z" entry whole, inside one longer entry. The diff must still see both."""
    root = tmp_path
    git(root, "init", "-q", "-b", "main")
    (root / "d").mkdir()
    for name in ("a", "z"):
        (root / "d" / name).write_text("same\n")
    old = _commit(root, "old")
    (root / "d" / "z").rename(root / "d" / "q100644 z")
    new = _commit(root, "new")
    repo = open_repo(root)
    want = ["d/q100644 z", "d/z"]
    assert _libgit2(root, old, new)[0] == want
    assert repo.changed_paths(old, new) == want
    assert repo.changed_paths(new, old) == want


def test_no_old_commit_lists_every_file(tmp_path: Path):
    root = tmp_path
    old = _start(root)
    repo = open_repo(root)
    assert repo.changed_paths(None, old) == sorted(BIG + SMALL)
