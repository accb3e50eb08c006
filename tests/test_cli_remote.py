"""The CLI in the clones CI really has: proposals only as the remote's branches, main only
as origin/main, a stale local main; and errors that name what the user typed."""

from __future__ import annotations

import json

from conftest import git, make_repo

FACTS = "# Facts: {a}\n\n## Domain\n- one fact\n"
META = '{{"agentId": "{a}", "version": 1, "schemaVersion": "1.0"}}\n'


def origin(tmp_path, agents=("a", "b")):
    """A bare remote with the agents' memory, and an agent-side clone of it."""
    files = {}
    for a in agents:
        files[f"memory/{a}/facts.md"] = FACTS.format(a=a)
        files[f"memory/{a}/meta.json"] = META.format(a=a)
    seed = make_repo(tmp_path / "seed", files)
    bare = tmp_path / "origin.git"
    git(tmp_path, "clone", "-q", "--bare", str(seed), str(bare))
    runner = tmp_path / "runner"
    git(tmp_path, "clone", "-q", str(bare), str(runner))
    return bare, runner


def propose(mw, root, tmp_path, agent, pid, *args):
    req = tmp_path / f"{pid}.json"
    req.write_text(json.dumps({"agentId": agent, "runId": "run_1", "proposalId": pid,
                               "updates": [{"file": "facts.md", "operation": "append",
                                            "section": "Domain", "content": f"new {pid}"}]}))
    code, out, err = mw(root, "propose", str(req), *args)
    assert code == 0, err
    return json.loads(out)


def human_edit(tmp_path, bare, agent):
    """Someone else lands a human edit of `agent`'s memory on the remote's main."""
    other = tmp_path / f"human-{agent}"
    git(tmp_path, "clone", "-q", str(bare), str(other))
    path = other / f"memory/{agent}/facts.md"
    path.write_text(path.read_text() + "- edited by a human\n")
    git(other, "commit", "-qam", "human edit\n\nHuman-Edit: true")
    git(other, "push", "-q", "origin", "main")


def test_apply_all_push_finds_the_remotes_proposal_branches(tmp_path, mw):
    bare, runner = origin(tmp_path)
    pa = propose(mw, runner, tmp_path, "a", "p-a", "--push", "origin")
    pb = propose(mw, runner, tmp_path, "b", "p-b", "--push", "origin")
    ci = tmp_path / "ci"  # a plain clone: proposals only as origin/proposals/*
    git(tmp_path, "clone", "-q", str(bare), str(ci))
    assert git(ci, "branch", "--list", "proposals/*") == ""
    code, out, err = mw(ci, "apply", "--all", "--push", "origin")
    assert code == 0, out + err
    results = json.loads(out)["results"]
    assert sorted(r["proposalId"] for r in results) == ["p-a", "p-b"]
    assert all(r["status"] == "applied" for r in results)
    main = git(bare, "rev-parse", "main").strip()
    assert main == results[-1]["commits"][-1]
    for p in (pa, pb):  # each branch was pushed to what landed: the PR shows as merged
        assert git(bare, "merge-base", "--is-ancestor", p["branch"], "main") == ""
    # a second run finds them again, already applied: nothing new, exit 0
    code, out, _ = mw(ci, "apply", "--all", "--push", "origin", "--format", "text")
    assert code == 0 and "2 already applied" in out


def test_apply_all_without_proposals_says_where_it_looked(tmp_path, mw):
    bare, runner = origin(tmp_path)
    code, out, err = mw(runner, "apply", "--all")
    assert code == 0 and json.loads(out) == {
        "results": [], "message": "no proposal branches (looked in refs/heads/proposals/)"}
    assert "no proposal branches (looked in refs/heads/proposals/)" in err
    code, out, err = mw(runner, "apply", "--all", "--push", "origin", "--format", "text")
    assert code == 0 and "looked in refs/heads/proposals/ here and on origin" in err
    # remote-tracking proposals without --push: the hint names the option
    propose(mw, runner, tmp_path, "a", "p-a", "--push", "origin")
    ci = tmp_path / "ci"
    git(tmp_path, "clone", "-q", str(bare), str(ci))
    code, _, err = mw(ci, "apply", "--all")
    assert code == 0 and "use --push origin to apply them" in err
    code, out, _ = mw(ci, "status")
    assert code == 0 and "use --push origin" in out
    code, out, _ = mw(ci, "status", "--fetch", "origin")
    assert code == 0 and out.split() == ["pending", "proposals/a/p-a"]


def test_propose_push_builds_on_the_remotes_main(tmp_path, mw):
    bare, runner = origin(tmp_path)
    human_edit(tmp_path, bare, "a")  # the runner's main is now stale
    stale = git(runner, "rev-parse", "main").strip()
    p = propose(mw, runner, tmp_path, "a", "p-a", "--push", "origin")
    assert git(runner, "rev-parse", f"{p['commit']}~1").strip() == \
        git(bare, "rev-parse", "main").strip() != stale
    assert git(runner, "rev-parse", "main").strip() == stale  # local main is not moved
    code, out, err = mw(runner, "apply", "--all", "--push", "origin")
    assert code == 0, out + err
    assert json.loads(out)["results"][0]["status"] == "applied"


def test_old_push_spellings_still_work(tmp_path, mw):
    bare, runner = origin(tmp_path)
    p = propose(mw, runner, tmp_path, "a", "p-a", "--push")  # bare flag: origin
    assert git(bare, "rev-parse", p["branch"]).strip() == p["commit"]
    git(runner, "remote", "add", "mirror", str(bare))
    p = propose(mw, runner, tmp_path, "b", "p-b", "--push", "--remote", "mirror")
    assert git(bare, "rev-parse", p["branch"]).strip() == p["commit"]


def test_exit_code_counts_only_this_runs_new_failures(tmp_path, mw):
    bare, runner = origin(tmp_path)
    propose(mw, runner, tmp_path, "a", "p-stale")  # built on the local main
    git(runner, "push", "-q", "origin", "proposals/a/p-stale")
    human_edit(tmp_path, bare, "a")  # ... which the remote then moves past
    propose(mw, runner, tmp_path, "b", "p-ok", "--push", "origin")
    code, out, _ = mw(runner, "apply", "--all", "--push", "origin")
    results = {r["proposalId"]: r for r in json.loads(out)["results"]}
    assert code == 1 and results["p-stale"]["reason"] == "version_conflict"
    assert results["p-ok"]["status"] == "applied"
    # the next CI run: the conflict is recorded, nothing new failed
    ci = tmp_path / "ci"
    git(tmp_path, "clone", "-q", str(bare), str(ci))
    code, out, err = mw(ci, "apply", "--all", "--push", "origin", "--format", "text")
    assert code == 0, out + err
    assert "rejected        p-stale (version_conflict, recorded earlier)" in out
    assert "1 already applied, 1 rejected" in out


def test_gate_base_main_in_a_clone_with_only_origin_main(tmp_path, mw):
    bare, runner = origin(tmp_path)
    p = propose(mw, runner, tmp_path, "a", "p-a", "--push", "origin")
    ci = tmp_path / "ci"  # what a pull-request checkout has: a detached head, origin/*
    git(tmp_path, "clone", "-q", "--no-checkout", str(bare), str(ci))
    git(ci, "checkout", "-q", "--detach", f"origin/{p['branch']}")
    git(ci, "branch", "-D", "main")
    code, out, err = mw(ci, "gate", p["branch"], "--base", "main")
    assert code == 0, out + err
    assert "verdict: pass" in out
    # two remotes with a main: say exactly what to pass
    git(ci, "remote", "add", "upstream", str(bare))
    git(ci, "fetch", "-q", "upstream")
    code, _, err = mw(ci, "gate", f"origin/{p['branch']}", "--base", "main")
    assert code == 2 and "memwarden: error: --base main: no such branch here" in err
    assert "pass one of origin/main, upstream/main" in err


def test_errors_name_what_the_user_typed(tmp_path, mw):
    _, runner = origin(tmp_path)
    for args, said in ((("gate", "proposals/beta/nope"), "proposals/beta/nope"),
                       (("apply", "proposals/beta/nope"), "proposals/beta/nope"),
                       (("check-commits", "nosuch..main"), "nosuch"),
                       (("check", "--at", "nosuch"), "nosuch"),
                       (("gate", "main", "--base", "nosuch"), "--base nosuch")):
        code, _, err = mw(runner, *args)
        assert code == 2, args
        assert err == f"memwarden: error: {said}: no such branch or commit\n", args
        assert "--rev" not in err
