"""Concurrent appliers (issue 18 items 15 and 16), for real: several `memwarden apply`
processes started at once in one clone, and many clones pushing to one bare remote.
Afterwards the working tree is clean, main is linear and fsck-clean, each proposal landed
exactly once, every process printed its results, and `status` agrees with main.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from conftest import GIT_ENV, git, make_repo

from memwarden.apply.propose import propose
from memwarden.git.repo import Repo
from memwarden.model.config import load_config

NOW = "2026-02-17T14:30:00Z"


def seeded(tmp_path, n_agents):
    """A repository of `n_agents` agents, each with one pending proposal (proposals of one
    agent made on the same base conflict by design: one per agent lands)."""
    import datetime as dt

    agents = [f"agent-{i:02d}" for i in range(n_agents)]
    files = {f"memory/{x}/facts.md": f"# Facts: {x}\n\n## Domain\n- first fact of {x}\n"
             for x in agents}
    root = make_repo(tmp_path, files)
    repo = Repo(root / ".git", root)
    config = load_config(None, root)
    when = dt.datetime(2026, 2, 17, 14, 0, tzinfo=dt.UTC)
    pids = []
    for i, x in enumerate(agents):
        pid = f"p-{x}"
        propose(repo, config, {"agentId": x, "runId": "run_1", "proposalId": pid,
                               "updates": [{"file": "facts.md", "operation": "append",
                                            "section": "Domain",
                                            "content": f"second fact of {x}"}]},
                now=when + dt.timedelta(seconds=i))
        pids.append(pid)
    return root, pids, agents


def start(cwd, *args):
    return subprocess.Popen([sys.executable, "-m", "memwarden", *args], cwd=cwd,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, **GIT_ENV})


def finish(procs, timeout=300):
    out = []
    for p in procs:
        try:
            stdout, stderr = p.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            for q in procs:
                q.kill()
            pytest.fail("an applier hung")
        assert "Traceback" not in stderr and "internal error" not in stderr, stderr
        out.append((p.returncode, stdout, stderr))
    return out


def applied_ids(root):
    log = git(root, "log", "--first-parent", "--format=%(trailers:key=Applied-Proposal,"
              "valueonly)", "main")
    return [line for line in log.split("\n") if line.strip()]


def assert_sound(root, pids):
    assert git(root, "rev-list", "--merges", "main") == ""  # linear
    git(root, "fsck", "--strict", "--no-progress")
    ids = applied_ids(root)
    assert sorted(ids) == sorted(pids), ids  # each exactly once


def test_four_concurrent_appliers_in_one_clone_keep_the_worktree_consistent(tmp_path):
    root, pids, agents = seeded(tmp_path, 12)
    results = finish([start(root, "apply", "--all", "--now", NOW) for _ in range(4)])
    for code, out, err in results:
        assert code in (0, 1), err
        json.loads(out)  # every process printed its results
    assert git(root, "status", "--porcelain") == ""  # no staged reverse changes
    assert_sound(root, pids)
    for x in agents:  # the checked-out files are main's
        assert (root / f"memory/{x}/facts.md").read_bytes() == \
            git(root, "show", f"main:memory/{x}/facts.md").encode()
    assert_status_agrees(root, pids)


def assert_status_agrees(cwd, pids):
    """`memwarden status` (the overview and each proposal) says applied for all."""
    proc = subprocess.run([sys.executable, "-m", "memwarden", "status", "--format", "json"],
                          cwd=cwd, capture_output=True, text=True,
                          env={**os.environ, **GIT_ENV})
    assert proc.returncode == 0, proc.stderr
    rows = {r["proposalId"]: r["state"] for r in json.loads(proc.stdout)["proposals"]}
    assert {p: rows.get(p, "applied") for p in pids} == {p: "applied" for p in pids}
    for pid in pids[:3]:
        proc = subprocess.run([sys.executable, "-m", "memwarden", "status", pid,
                               "--format", "json"],
                              cwd=cwd, capture_output=True, text=True,
                              env={**os.environ, **GIT_ENV})
        assert json.loads(proc.stdout)["state"] == "applied"


def test_lock_is_released_when_an_applier_dies(tmp_path):
    from memwarden.apply.apply import applier_lock

    root, _, _ = seeded(tmp_path, 1)
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys, time\nfrom memwarden.git.repo import Repo\n"
         "from memwarden.apply.apply import applier_lock\n"
         f"from pathlib import Path\nr = Repo(Path({str(root / '.git')!r}), Path({str(root)!r}))\n"
         "with applier_lock(r):\n    print('held', flush=True)\n    time.sleep(60)\n"],
        stdout=subprocess.PIPE, text=True)
    assert holder.stdout.readline().strip() == "held"
    repo = Repo(root / ".git", root)
    from memwarden.model.errors import MemwardenError

    with pytest.raises(MemwardenError, match="another memwarden apply"):
        with applier_lock(repo, wait=0.2):
            pass
    holder.kill()  # a crash: no cleanup code runs
    holder.wait()
    with applier_lock(repo, wait=5):
        pass


def test_ten_appliers_across_clones_record_notes_and_agree_with_main(tmp_path):
    root, pids, _ = seeded(tmp_path, 10)
    bare = tmp_path / "origin.git"
    git(tmp_path, "clone", "-q", "--bare", str(root), str(bare))
    clones = []
    for i in range(10):
        c = tmp_path / f"clone{i}"
        git(tmp_path, "clone", "-q", str(bare), str(c))
        git(c, "fetch", "-q", "origin", "refs/heads/proposals/*:refs/heads/proposals/*")
        clones.append(c)
    procs = [start(c, "apply", "--all", "--push", "origin", "--now", NOW) for c in clones]
    results = finish(procs, timeout=600)
    for code, out, err in results:
        assert code in (0, 1), err
        doc = json.loads(out)  # results are always printed
        assert "moved while recording" not in err
        assert all(r["status"] in ("applied", "already_applied", "failed")
                   for r in doc["results"])
    check = tmp_path / "check"
    git(tmp_path, "clone", "-q", str(bare), str(check))
    git(check, "fetch", "-q", "origin", "refs/notes/memwarden:refs/notes/memwarden")
    assert_sound(check, pids)
    assert_status_agrees(bare, pids)
