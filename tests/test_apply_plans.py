"""Batches plan proposals ahead in worker processes against the batch's start; a plan is
used at a later tip only while the agent's folders and the policy are unchanged there."""

from __future__ import annotations

import json

from conftest import git
from test_apply_push import propose, setup

from memwarden.apply.planpool import still_holds
from memwarden.git.repo import Writer, open_repo

IDENT = ("t", "t@example.invalid")


def test_second_proposal_of_an_agent_in_a_batch_is_stale(tmp_path, mw):
    """Both were planned against the start, where neither is stale; once the first lands,
    the second's plan no longer holds and the applier finds the version conflict."""
    agents = [f"ag{i}" for i in range(9)]
    work, bare = setup(tmp_path, agents)
    branches = [propose(work, tmp_path, a)["branch"] for a in agents]
    branches.append(propose(work, tmp_path, "ag0", "p-ag0-second")["branch"])
    code, out, err = mw(work, "apply", *branches, "--push", "origin")
    results = {r["proposalId"]: r for r in json.loads(out)["results"]}
    assert code == 1, out + err
    assert results["p-ag0-second"]["status"] == "rejected"
    assert results["p-ag0-second"]["reason"] == "version_conflict"
    assert all(results[f"p-{a}"]["status"] == "applied" for a in agents)
    assert git(bare, "rev-list", "--merges", "main") == ""


def test_still_holds_only_while_the_agent_and_the_policy_are_unchanged(tmp_path):
    work, _ = setup(tmp_path, ["a", "b"])
    repo = open_repo(work)
    start = repo.resolve_commit("HEAD")
    planned = ("h" * 40, "a", "p-1", None)

    def tip(changes):
        return Writer(repo).commit_changes(start, changes, "x\n", IDENT, IDENT)

    assert still_holds(repo, planned, "h" * 40, start, start)
    assert still_holds(repo, planned, "h" * 40, start, tip({"memory/b/facts.md": b"- x\n"}))
    assert not still_holds(repo, planned, "h" * 40, start, tip({"memory/a/facts.md": b"- x\n"}))
    assert not still_holds(repo, planned, "h" * 40, start, tip({"agents/a/_agent.md": b"x\n"}))
    assert not still_holds(repo, planned, "h" * 40, start, tip({"memwarden.toml": b"\n"}))
    assert not still_holds(repo, planned, "e" * 40, start, start)  # another head
    assert not still_holds(repo, None, "h" * 40, start, start)  # the worker failed


def test_applied_index_learns_a_landed_proposal_only_when_that_is_exact(tmp_path):
    """The batch tells the index what it landed instead of reading the commit back; a
    message naming another proposal too, or an index behind the tip, is read the usual
    way (the walk), so the index stays what a fresh walk would find."""
    from memwarden.apply.apply import AppliedIndex

    work, _ = setup(tmp_path, ["a"])
    repo = open_repo(work)
    start = repo.resolve_commit("HEAD")
    one = "memory-update: a\n\nAgent-Id: a\nApplied-Proposal: p-1\n"
    two = "memory-update: a\n\nAgent-Id: a\nApplied-Proposal: p-2\nApplied-Proposal: p-3\n"
    c1 = Writer(repo).commit_changes(start, {"x.md": b"1\n"}, one, IDENT, IDENT)
    c2 = Writer(repo).commit_changes(c1, {"x.md": b"2\n"}, two, IDENT, IDENT)
    index = AppliedIndex(repo)
    assert index.lookup(start, "p-1") is None
    index.landed(start, c1, one, "p-1", c1)
    assert index.tip == c1 and index.lookup(c1, "p-1", "a") == c1
    assert index.lookup(c1, "p-1", "b") is None  # the same id of another agent
    index.landed(c1, c2, two, "p-2", c2)  # names two: not taken on trust
    assert index.tip == c1
    fresh = AppliedIndex(repo)
    assert index.lookup(c2, "p-3") == c2
    for agent in ("a", "b", None):
        for pid in ("p-1", "p-2", "p-3", "p-4"):
            assert index.lookup(c2, pid, agent) == fresh.lookup(c2, pid, agent), (agent, pid)
