"""Batches plan proposals ahead in worker processes against the batch's start; a plan is
used at a later tip only while the agent's folders and the policy are unchanged there."""

from __future__ import annotations

import json

from conftest import git
from test_apply_push import propose, setup

from memwarden.apply.planpool import still_holds
from memwarden.repo import Writer, open_repo

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
