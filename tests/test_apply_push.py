"""apply --push: the proposal branch becomes what lands, main follows, both with a lease;
concurrent appliers against one bare remote both land (one refetches and retries)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from conftest import GIT_ENV, git, make_repo

from memwarden.hooks.pre_receive import install

FACTS = "# Facts: {a}\n\n## Domain\n- one fact\n"
META = '{{"agentId": "{a}", "version": 1, "schemaVersion": "1.0"}}\n'


def setup(tmp_path, agents):
    files = {}
    for a in agents:
        files[f"memory/{a}/facts.md"] = FACTS.format(a=a)
        files[f"memory/{a}/meta.json"] = META.format(a=a)
    work = make_repo(tmp_path, files)
    bare = tmp_path / "origin.git"
    git(tmp_path, "clone", "-q", "--bare", str(work), str(bare))
    install(bare)
    git(work, "remote", "add", "origin", str(bare))
    git(work, "fetch", "-q", "origin")
    return work, bare


def propose(root, tmp_path, agent, pid=None):
    """A proposal appending "new <agent>" (or "new <pid>" for an explicit `pid`)."""
    run, text = ("run_2", f"new {pid}") if pid else ("run_1", f"new {agent}")
    pid = pid or f"p-{agent}"
    req = tmp_path / f"{pid}.json"
    req.write_text(json.dumps({"agentId": agent, "runId": run, "proposalId": pid,
                               "updates": [{"file": "facts.md", "operation": "append",
                                            "section": "Domain", "content": text}]}))
    proc = subprocess.run([sys.executable, "-m", "memwarden", "propose", str(req), "--push"],
                          cwd=root, capture_output=True, text=True,
                          env={**os.environ, **GIT_ENV})
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_push_lands_branch_then_main(tmp_path, mw):
    work, bare = setup(tmp_path, ["a"])
    p = propose(work, tmp_path, "a")
    code, out, err = mw(work, "apply", p["branch"], "--push", "origin")
    assert code == 0, out + err
    (res,) = json.loads(out)["results"]
    landed = res["commits"][-1]
    assert git(bare, "rev-parse", "main").strip() == landed
    assert git(bare, "rev-parse", p["branch"]).strip() == landed  # the PR shows as merged


def test_concurrent_appliers_both_land(tmp_path):
    agents = [f"ag{i}" for i in range(4)]
    work, bare = setup(tmp_path, agents)
    branches = [propose(work, tmp_path, a)["branch"] for a in agents]
    clones = []
    for i in range(2):
        c = tmp_path / f"applier{i}"
        git(tmp_path, "clone", "-q", "--bare", str(bare), str(c))
        clones.append(c)
    procs = [subprocess.Popen([sys.executable, "-m", "memwarden", "apply", *branches[i::2],
                               "--push", str(bare)], cwd=c, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, env={**os.environ, **GIT_ENV})
             for i, c in enumerate(clones)]
    outs = [p.communicate(timeout=300) for p in procs]
    statuses = [r["status"] for out, _ in outs for r in json.loads(out)["results"]]
    assert statuses == ["applied"] * 4, outs
    log = git(bare, "log", "--first-parent", "--format=%s", "main").splitlines()
    assert sum(s.startswith("memory-update:") for s in log) == 4
    assert git(bare, "rev-list", "--merges", "main") == ""  # linear
    for a in agents:
        assert f"- new {a}" in git(bare, "show", f"main:memory/{a}/facts.md")
