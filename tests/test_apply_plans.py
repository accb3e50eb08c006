"""Batches plan proposals ahead in worker processes against the batch's start; a plan is
used at a later tip only while the agent's folders and the policy are unchanged there."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from conftest import GIT_ENV, git, make_repo

from memwarden.apply.planpool import still_holds
from memwarden.repo import Writer, open_repo

FACTS = "# Facts: {a}\n\n## Domain\n- one fact\n"
META = '{{"agentId": "{a}", "version": 1, "schemaVersion": "1.0"}}\n'
IDENT = ("t", "t@example.invalid")


def _setup(tmp_path, agents):
    files = {}
    for a in agents:
        files[f"memory/{a}/facts.md"] = FACTS.format(a=a)
        files[f"memory/{a}/meta.json"] = META.format(a=a)
    work = make_repo(tmp_path, files)
    bare = tmp_path / "origin.git"
    git(tmp_path, "clone", "-q", "--bare", str(work), str(bare))
    git(work, "remote", "add", "origin", str(bare))
    git(work, "fetch", "-q", "origin")
    return work, bare


def _propose(root, tmp_path, agent, pid):
    req = tmp_path / f"{pid}.json"
    req.write_text(json.dumps({"agentId": agent, "runId": f"run_{pid}", "proposalId": pid,
                               "updates": [{"file": "facts.md", "operation": "append",
                                            "section": "Domain", "content": f"new {pid}"}]}))
    proc = subprocess.run([sys.executable, "-m", "memwarden", "propose", str(req), "--push"],
                          cwd=root, capture_output=True, text=True,
                          env={**os.environ, **GIT_ENV})
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)["branch"]


def test_second_proposal_of_an_agent_in_a_batch_is_stale(tmp_path, mw):
    """Both were planned against the start, where neither is stale; once the first lands,
    the second's plan no longer holds and the applier finds the version conflict."""
    agents = [f"ag{i}" for i in range(9)]
    work, bare = _setup(tmp_path, agents)
    branches = [_propose(work, tmp_path, a, f"p-{a}") for a in agents]
    branches.append(_propose(work, tmp_path, "ag0", "p-ag0-second"))
    code, out, err = mw(work, "apply", *branches, "--push", "origin")
    results = {r["proposalId"]: r for r in json.loads(out)["results"]}
    assert code == 1, out + err
    assert results["p-ag0-second"]["status"] == "rejected"
    assert results["p-ag0-second"]["reason"] == "version_conflict"
    assert all(results[f"p-{a}"]["status"] == "applied" for a in agents)
    assert git(bare, "rev-list", "--merges", "main") == ""


def test_still_holds_only_while_the_agent_and_the_policy_are_unchanged(tmp_path):
    work, _ = _setup(tmp_path, ["a", "b"])
    repo = open_repo(work)
    start = repo.resolve_commit("HEAD")
    planned = ("h" * 40, "a", None)

    def tip(changes):
        return Writer(repo).commit_changes(start, changes, "x\n", IDENT, IDENT)

    assert still_holds(repo, planned, "h" * 40, start, start)
    assert still_holds(repo, planned, "h" * 40, start, tip({"memory/b/facts.md": b"- x\n"}))
    assert not still_holds(repo, planned, "h" * 40, start, tip({"memory/a/facts.md": b"- x\n"}))
    assert not still_holds(repo, planned, "h" * 40, start, tip({"agents/a/_agent.md": b"x\n"}))
    assert not still_holds(repo, planned, "h" * 40, start, tip({"memwarden.toml": b"\n"}))
    assert not still_holds(repo, planned, "e" * 40, start, start)  # another head
    assert not still_holds(repo, None, "h" * 40, start, start)  # the worker failed
