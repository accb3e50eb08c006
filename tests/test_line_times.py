"""Repo.line_times (first-parent blame by blob versions) agrees with `git blame`.

Lines are unique here: where a file repeats a line, difflib and git's diff may pick
different copies as unchanged, and both answers are a valid blame."""

from __future__ import annotations

import os
import random
import subprocess

import pytest
from conftest import GIT_ENV

from memwarden.git.repo import open_repo


def _git(root, *args, when=None):
    env = {**os.environ, **GIT_ENV}
    if when is not None:
        env["GIT_AUTHOR_DATE"] = env["GIT_COMMITTER_DATE"] = f"@{when} +0000"
    return subprocess.run(["git", *args], cwd=root, env=env, check=True, capture_output=True,
                          text=True).stdout


@pytest.mark.parametrize("seed", range(6))
def test_line_times_match_git_blame(tmp_path, seed):
    rnd = random.Random(seed)
    _git(tmp_path, "init", "-q")
    lines: list[str] = []
    when = 1_700_000_000
    for i in range(30):
        when += 600
        op = rnd.random()
        if op < 0.5 or not lines:
            lines.insert(rnd.randint(0, len(lines)), f"- fact {i}")
        elif op < 0.8:
            lines[rnd.randrange(len(lines))] = f"- edited {i}"
        else:
            lines.pop(rnd.randrange(len(lines)))
        (tmp_path / "facts.md").write_text("\n".join(lines) + "\n")
        (tmp_path / "other.md").write_text(str(i))  # commits that leave the file alone
        _git(tmp_path, "add", "-A")
        _git(tmp_path, "commit", "-qm", f"c{i}", when=when)
    porcelain = _git(tmp_path, "blame", "--line-porcelain", "facts.md")
    expected = [int(ln.split()[1]) for ln in porcelain.splitlines()
                if ln.startswith("committer-time ")]
    repo = open_repo(tmp_path)
    assert repo.line_times("HEAD", "facts.md") == expected
    assert repo.line_times("HEAD", "missing.md") == []


def test_line_times_over_commits_written_in_process(tmp_path):
    """Commits this process wrote are walked without tree lookups where they left the
    file alone; the answer must still be git's."""
    from memwarden.git.repo import Writer

    _git(tmp_path, "init", "-q")
    (tmp_path / "facts.md").write_text("- first\n")
    _git(tmp_path, "add", "-A")
    _git(tmp_path, "commit", "-qm", "root", when=1_700_000_000)
    repo = open_repo(tmp_path)
    tip = repo.resolve_commit("HEAD")
    rnd = random.Random(11)
    lines = ["- first"]
    ident = ("t", "t@example.invalid")
    for i in range(40):
        if rnd.random() < 0.3:
            lines.insert(rnd.randint(0, len(lines)), f"- fact {i}")
            changes = {"facts.md": ("\n".join(lines) + "\n").encode()}
        else:
            changes = {f"other/{i % 5}.md": str(i).encode()}
        tip = Writer(repo).commit_changes(tip, changes, f"c{i} ünï\n", ident, ident,
                                          1_700_000_000 + 600 * (i + 1))
    _git(tmp_path, "update-ref", "refs/heads/main", tip)
    porcelain = _git(tmp_path, "blame", "--line-porcelain", "main", "--", "facts.md")
    expected = [int(ln.split()[1]) for ln in porcelain.splitlines()
                if ln.startswith("committer-time ")]
    assert repo.line_times(tip, "facts.md") == expected
    assert open_repo(tmp_path).line_times(tip, "facts.md") == expected  # no shortcut
    # the in-memory walk of those commits gives what libgit2 reads back
    fresh = open_repo(tmp_path)
    assert list(repo.first_parent_log(tip)) == list(fresh.first_parent_log(tip))
    assert list(repo.first_parent_log(tip, limit=7)) == list(fresh.first_parent_log(tip, 7))
    assert [c[:2] for c in repo._first_parents(tip)] == [c[:2] for c in
                                                         fresh._first_parents(tip)]
