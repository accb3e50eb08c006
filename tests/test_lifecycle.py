"""Proposal lifecycle: notes on the proposal head, `status`, `reject`, --delete-branches,
agent_inactive / agent_readonly refusals."""

from __future__ import annotations

import json

import pytest
from conftest import git, make_repo
from test_apply import META, NOW, apply, propose
from test_apply_push import propose as propose_pushed
from test_apply_push import setup as setup_remote

from memwarden.apply import lifecycle

FACTS = "# Facts: a\n\n## Domain\n- one fact\n"


@pytest.fixture
def repo(tmp_path):
    return make_repo(tmp_path, {"memory/a/facts.md": FACTS, "memory/a/meta.json": META})


def status(mw, root, *args):
    code, out, err = mw(root, "status", "--format", "json", *args)
    assert code == 0, err
    return json.loads(out)


def states(doc):
    return [e["state"] for e in doc["history"]]


def test_route_follows_the_spec_and_refuses_the_rest():
    assert lifecycle.route(None, "applied", avoid={"needs_human_review"}) == [
        "pending", "auto_approved", "approved", "applying", "applied"]
    assert lifecycle.route("needs_human_review", "approved") == ["approved"]
    assert lifecycle.route("failed", "applied") == ["applying", "applied"]
    assert lifecycle.route("approved", "rejected") == ["rejected"]
    for start, target in (("applied", "rejected"), ("rejected", "approved"),
                          ("applied", "pending"), ("rejected", "rejected")):
        with pytest.raises(lifecycle.IllegalTransition, match="illegal lifecycle"):
            lifecycle.route(start, target)
    with pytest.raises(lifecycle.IllegalTransition):  # only via a recorded failure
        lifecycle.route("applying", "rejected", avoid={"failed"})


def test_applied_proposal_has_history_and_links(repo, tmp_path, mw):
    p = propose(mw, repo, tmp_path)
    code, (res,) = apply(mw, repo, "--all")
    assert code == 0
    doc = status(mw, repo, p["proposalId"])
    assert doc["state"] == "applied"
    assert states(doc) == ["pending", "auto_approved", "approved", "applying", "applied"]
    assert doc["history"][0]["proposalId"] == p["proposalId"]
    assert doc["history"][0]["at"] == "2026-02-17T14:30:00Z"  # the proposal's own time
    assert doc["history"][-1]["commit"] == res["commits"][-1]
    links = doc["links"]
    assert links["commit"] == res["commits"][-1]
    assert links["proposal"]["head"] == p["commit"]
    assert links["changelog"]["path"] == "memory/a/changelog.md" and links["changelog"]["line"]
    assert links["timeline"]["path"] == "memory/a/timeline/2026-02-17.md"
    assert links["run"]["id"] == "run_7"
    # the notes are plain git notes: git shows them
    shown = git(repo, "notes", "--ref", "memwarden", "show", p["commit"])
    assert '"state": "applied"' in shown
    # a second apply (already_applied) adds nothing
    apply(mw, repo, p["branch"])
    assert states(status(mw, repo, p["proposalId"])) == states(doc)


def test_needs_review_then_approved(repo, tmp_path, mw):
    p = propose(mw, repo, tmp_path, priority="high")
    code, (res,) = apply(mw, repo, p["branch"])
    assert code == 0 and res["status"] == "pending"  # waiting is not a failure
    assert states(status(mw, repo, p["proposalId"])) == ["pending", "needs_human_review"]
    apply(mw, repo, p["branch"])  # still waiting: no duplicate event
    assert states(status(mw, repo, p["proposalId"])) == ["pending", "needs_human_review"]
    code, (res,) = apply(mw, repo, p["branch"], "--approved-by", "Olena")
    assert code == 0
    doc = status(mw, repo, p["proposalId"])
    assert states(doc) == ["pending", "needs_human_review", "approved", "applying", "applied"]
    assert doc["history"][2]["by"] == "Olena"


def test_owner_rejection_is_final(repo, tmp_path, mw):
    p = propose(mw, repo, tmp_path)
    code, out, err = mw(repo, "reject", p["proposalId"], "--reason", "not true",
                        "--by", "Olena", "--now", NOW, "--format", "json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["state"] == "rejected" and doc["history"][-1]["reason"] == "rejected_by_owner"
    assert doc["history"][-1]["message"] == "not true"
    main = git(repo, "rev-parse", "main").strip()
    code, (res,) = apply(mw, repo, "--all")
    # recorded before this run: reported, not a failure of this run
    assert code == 0 and res["status"] == "rejected" and res["reason"] == "rejected_by_owner"
    assert git(repo, "rev-parse", "main").strip() == main
    # rejecting twice, or rejecting an applied proposal: illegal transitions, exit 2
    code, _, err = mw(repo, "reject", p["proposalId"], "--reason", "again")
    assert code == 2 and "illegal lifecycle transition rejected -> rejected" in err


def test_rejecting_an_applied_proposal_is_illegal(repo, tmp_path, mw):
    p = propose(mw, repo, tmp_path)
    apply(mw, repo, "--all")
    code, _, err = mw(repo, "reject", p["proposalId"], "--reason", "late")
    assert code == 2 and "applied -> rejected" in err and "git revert" in err


def test_version_conflict_is_recorded_as_rejected(repo, tmp_path, mw):
    p = propose(mw, repo, tmp_path, expectedVersion=1)
    code, (res,) = apply(mw, repo, p["branch"])
    assert res["reason"] == "version_conflict"
    doc = status(mw, repo, p["proposalId"])
    assert states(doc) == ["pending", "auto_approved", "rejected"]
    assert doc["history"][-1]["reason"] == "version_conflict"


def test_unknown_proposal_is_a_clear_error(repo, mw):
    code, _, err = mw(repo, "status", "nope")
    assert code == 2 and "no proposal 'nope' found" in err


def test_overview_lists_branches(repo, tmp_path, mw):
    p = propose(mw, repo, tmp_path)
    doc = status(mw, repo)
    assert doc["proposals"] == [{"proposalId": p["proposalId"], "branch": p["branch"],
                                 "agentId": "a", "head": p["commit"], "state": "pending"}]


def test_delete_branches_and_notes_pushed(tmp_path, mw):
    work, bare = setup_remote(tmp_path, ["a", "b"])
    pa = propose_pushed(work, tmp_path, "a")
    pb = propose_pushed(work, tmp_path, "b")
    code, out, err = mw(work, "apply", pa["branch"], "--push", "origin", "--delete-branches")
    assert code == 0, out + err
    assert git(work, "branch", "--list", pa["branch"]) == ""
    assert git(bare, "branch", "--list", pa["branch"]) == ""
    assert pb["branch"] in git(bare, "branch", "--list", pb["branch"])  # untouched
    # the lifecycle went to the remote: a fresh clone sees it
    fresh = tmp_path / "fresh"
    git(tmp_path, "clone", "-q", str(bare), str(fresh))
    doc = status(mw, fresh, pa["proposalId"], "--fetch", "origin")
    assert doc["state"] == "applied" and "note" not in doc
    assert states(doc)[-1] == "applied" and doc["links"]["proposal"]["branch"] is None


def test_diverged_notes_merge(tmp_path, mw):
    work, bare = setup_remote(tmp_path, ["a", "b", "c"])
    pa, pb, pc = (propose_pushed(work, tmp_path, x) for x in "abc")
    other = tmp_path / "other"
    git(tmp_path, "clone", "-q", str(bare), str(other))
    git(other, "fetch", "-q", "origin", "+refs/heads/proposals/*:refs/heads/proposals/*")
    # `other` records a rejection locally (not pushed) while `work` applies and pushes
    assert mw(other, "reject", pc["proposalId"], "--reason", "dup")[0] == 0
    assert mw(work, "apply", pa["branch"], "--push", "origin")[0] == 0
    # now `other` applies with push: both notes histories are merged, nothing lost
    code, out, err = mw(other, "apply", pb["branch"], "--push", "origin")
    assert code == 0, out + err
    fresh = tmp_path / "fresh"
    git(tmp_path, "clone", "-q", str(bare), str(fresh))
    git(fresh, "fetch", "-q", "origin", "+refs/heads/proposals/*:refs/heads/proposals/*")
    got = {p["proposalId"]: status(mw, fresh, p["proposalId"], "--fetch", "origin")["state"]
           for p in (pa, pb, pc)}
    assert got == {pa["proposalId"]: "applied", pb["proposalId"]: "applied",
                   pc["proposalId"]: "rejected"}


def test_inactive_or_readonly_agent_is_refused(tmp_path, mw):
    contract = ("---\nname: A\nslug: a\nversion: 1\nstatus: paused\n"
                "created_at: 2026-01-01\ncreated_by: me\n---\n# A\n")
    repo = make_repo(tmp_path, {"memory/a/facts.md": FACTS, "memory/a/meta.json": META,
                                "agents/a/_agent.md": contract})
    p = propose(mw, repo, tmp_path)
    code, (res,) = apply(mw, repo, p["branch"])
    assert code == 1 and res["reason"] == "agent_inactive"
    (repo / "agents/a/_agent.md").write_text(contract.replace("paused", "active"))
    (repo / "memwarden.toml").write_text("[agents.a]\nreadonly = true\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "activate a", "-m", "Human-Edit: true")
    p2 = propose(mw, repo, tmp_path, content="another")
    code, (res,) = apply(mw, repo, p2["branch"])
    assert code == 1 and res["reason"] == "agent_readonly"


def test_force_after_version_conflict_is_a_recorded_override(repo, tmp_path, mw):
    p = propose(mw, repo, tmp_path, expectedVersion=1)
    apply(mw, repo, p["branch"])
    apply(mw, repo, p["branch"])  # rejected again: no second event
    assert states(status(mw, repo, p["proposalId"])) == ["pending", "auto_approved",
                                                         "rejected"]
    code, (res,) = apply(mw, repo, p["branch"], "--force")
    assert code == 0 and res["status"] == "applied"
    doc = status(mw, repo, p["proposalId"])
    assert states(doc)[2:] == ["rejected", "approved", "applying", "applied"]
    assert doc["history"][3]["override"] is True


def test_apply_github_format(repo, tmp_path, mw, monkeypatch):
    out_file, summary = tmp_path / "out.txt", tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_OUTPUT", str(out_file))
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    p = propose(mw, repo, tmp_path, expectedVersion=1)
    code, out, _ = mw(repo, "apply", "--all", "--format", "github", "--now", NOW)
    assert code == 1
    assert out.startswith(f"::warning title=memwarden apply::{p['proposalId']}: rejected "
                          "(version_conflict)")
    assert "rejected<<ghadelimiter_" in out_file.read_text()
    assert f"| {p['proposalId']} | rejected | version_conflict |" in summary.read_text()
