"""Pushes of many refs go through a ref-less twin of the repository (objects by alternate,
config by include): same outcomes as a plain `git push`, hooks still run, nothing left."""

from __future__ import annotations

import os
import stat

from conftest import git, make_repo

from memwarden.git.repo import REFLESS_PUSH_MIN, Repo, Writer

WHO = ("Tester", "t@example.invalid")


def setup(tmp_path, n):
    work = make_repo(tmp_path, {"memory/a/facts.md": "- one\n"})
    git(tmp_path, "clone", "-q", "--bare", str(work), str(tmp_path / "origin.git"))
    git(work, "remote", "add", "origin", "../origin.git")  # relative: resolved as git does
    repo = Repo(work / ".git", work)
    head = repo.resolve_commit("HEAD")
    for i in range(n):
        git(work, "branch", f"proposals/p{i}", head)
    git(work, "push", "-q", "origin", "refs/heads/proposals/*:refs/heads/proposals/*")
    return work, repo, head


def test_many_refs_with_leases_land_and_run_the_pre_push_hook(tmp_path):
    n = REFLESS_PUSH_MIN + 6
    work, repo, head = setup(tmp_path, n)
    hook = work / ".git" / "hooks" / "pre-push"
    hook.write_text(f"#!/bin/sh\necho \"$GIT_DIR\" >> '{tmp_path}/pre-push-ran'\n")
    hook.chmod(hook.stat().st_mode | stat.S_IEXEC)
    new = Writer(repo).commit_changes(head, {"memory/a/facts.md": b"- two\n"}, "m", WHO, WHO)
    updates = {f"refs/heads/proposals/p{i}": (new, head) for i in range(n)}
    updates["refs/heads/main"] = (new, head)
    assert repo.push_refs("origin", updates)
    origin = tmp_path / "origin.git"
    assert git(origin, "rev-parse", "main").strip() == new
    assert {git(origin, "rev-parse", f"proposals/p{i}").strip() for i in range(n)} == {new}
    ran = (tmp_path / "pre-push-ran").read_text().splitlines()
    assert len(ran) == 1 and "/memwarden/push-" in ran[0]  # the hook ran, in the twin
    assert not list((work / ".git" / "memwarden").glob("push-*"))  # the twin is gone
    git(origin, "fsck", "--strict")


def test_a_stale_lease_among_many_refuses_them_all(tmp_path):
    n = REFLESS_PUSH_MIN
    work, repo, head = setup(tmp_path, n)
    other = Writer(repo).commit_changes(head, {"x.md": b"x\n"}, "other", WHO, WHO)
    git(work, "push", "-q", "-f", "origin", f"{other}:refs/heads/proposals/p3")  # moved
    new = Writer(repo).commit_changes(head, {"memory/a/facts.md": b"- two\n"}, "m", WHO, WHO)
    updates = {f"refs/heads/proposals/p{i}": (new, head) for i in range(n)}
    assert repo.push_refs("origin", updates) is False
    origin = tmp_path / "origin.git"
    assert git(origin, "rev-parse", "proposals/p0").strip() == head  # atomic: none moved
    assert git(origin, "rev-parse", "proposals/p3").strip() == other
    assert not os.listdir(work / ".git" / "memwarden") or \
        not list((work / ".git" / "memwarden").glob("push-*"))
