"""apply and propose never lose data: a checked-out main moves only when its files can
follow, `--force` merges instead of overwriting, a multi-line fact stays one fact."""

from __future__ import annotations

import json

import pytest
from conftest import git, make_repo, rules_in
from test_apply import META, NOW, apply, propose

from memwarden.apply import apply as apply_mod
from memwarden.git.repo import open_repo

# Two sections far enough apart that changes to each merge cleanly.
FACTS = "# Facts: a\n\n## Domain\n- one fact\n\n## People\n- the owner is Olga\n"


@pytest.fixture
def repo(tmp_path):
    return make_repo(tmp_path, {"memory/a/facts.md": FACTS, "memory/a/meta.json": META,
                                "memory/b/facts.md": FACTS.replace("a\n", "b\n", 1),
                                "memory/b/meta.json": META.replace('"a"', '"b"')})


def index_matches_head(root):
    return git(root, "diff", "--cached", "--name-only") == ""


def head(root):
    return git(root, "rev-parse", "main").strip()


# --------------------------------------------------------------------- A: checked-out main


def test_local_edits_keep_main_where_its_files_are(repo, tmp_path, mw):
    """apply used to move main and leave index and files behind, so the
    next `git commit -a` silently reverted the landing."""
    p = propose(mw, repo, tmp_path, content="Applied fact")
    start = head(repo)
    edited = FACTS.replace("- the owner is Olga\n", "- the owner is Olga\n- my local fact\n")
    (repo / "memory/a/facts.md").write_text(edited)
    code, (res,) = apply(mw, repo, "--all")
    assert code == 1 and res["status"] == "failed" and res["reason"] == "local_edits"
    assert res["files"] == ["memory/a/facts.md"]
    assert "memory/a/facts.md" in res["message"] and "git stash" in res["message"]
    assert head(repo) == start and index_matches_head(repo)
    assert (repo / "memory/a/facts.md").read_text() == edited  # never lose data
    # the way out the message gives: stash, apply, pop
    git(repo, "stash", "-q")
    code, (res,) = apply(mw, repo, p["branch"])
    assert code == 0 and res["status"] == "applied" and "lifecycle" not in res
    git(repo, "stash", "pop", "-q")
    git(repo, "commit", "-qam", "my local fact\n\nHuman-Edit: true")
    facts = git(repo, "show", "main:memory/a/facts.md")
    assert "- Applied fact" in facts and "- my local fact" in facts


def test_only_the_landings_that_touch_edited_files_wait(repo, tmp_path, mw):
    """Files follow once at the end of a run; each landing is checked against the local
    edits first, so one agent's edit holds back only that agent's proposal."""
    for agent in ("a", "b"):
        propose(mw, repo, tmp_path, agent=agent, content=f"a fact of {agent}")
    (repo / "memory/a/facts.md").write_text(FACTS + "- unsaved\n")
    code, results = apply(mw, repo, "--all")
    assert code == 1
    assert [(r["status"], r["reason"]) for r in results] == [("failed", "local_edits"),
                                                              ("applied", "")]
    assert index_matches_head(repo)
    assert "- a fact of b" in (repo / "memory/b/facts.md").read_text()  # b's files followed
    assert (repo / "memory/a/facts.md").read_text() == FACTS + "- unsaved\n"
    assert git(repo, "status", "--porcelain") == " M memory/a/facts.md\n"


def test_an_untracked_file_in_the_way_is_named(repo, tmp_path, mw):
    propose(mw, repo, tmp_path)
    day = repo / "memory/a/timeline/2026-02-17.md"  # the timeline file apply writes
    day.parent.mkdir()
    day.write_text("my notes\n")
    code, (res,) = apply(mw, repo, "--all")
    assert res["reason"] == "local_edits" and res["files"] == ["memory/a/timeline/2026-02-17.md"]
    assert day.read_text() == "my notes\n" and index_matches_head(repo)


def test_push_sends_nothing_the_checked_out_files_cannot_follow(repo, tmp_path, mw):
    bare = tmp_path / "origin.git"
    git(tmp_path, "clone", "-q", "--bare", str(repo), str(bare))
    git(repo, "remote", "add", "origin", str(bare))
    git(repo, "fetch", "-q", "origin")
    for agent in ("a", "b"):
        propose(mw, repo, tmp_path, agent=agent, content=f"a fact of {agent}")
    git(repo, "push", "-q", "origin", "refs/heads/proposals/*:refs/heads/proposals/*")
    (repo / "memory/a/facts.md").write_text(FACTS + "- unsaved\n")
    code, out, err = mw(repo, "apply", "--all", "--push", "origin", "--now", NOW)
    results = json.loads(out)["results"]
    assert code == 1 and [r["status"] for r in results] == ["failed", "applied"], results
    assert git(bare, "rev-parse", "main").strip() == head(repo)
    assert "a fact of a" not in git(bare, "show", "main:memory/a/facts.md")
    assert "a fact of b" in git(bare, "show", "main:memory/b/facts.md")
    assert index_matches_head(repo)


def test_remote_main_is_not_fetched_over_local_edits(repo, tmp_path, mw):
    bare = tmp_path / "origin.git"
    git(tmp_path, "clone", "-q", "--bare", str(repo), str(bare))
    other = tmp_path / "other"
    git(tmp_path, "clone", "-q", str(bare), str(other))
    (other / "memory/a/facts.md").write_text(FACTS + "- from elsewhere\n")
    git(other, "commit", "-qam", "elsewhere\n\nHuman-Edit: true")
    git(other, "push", "-q", "origin", "main")
    git(repo, "remote", "add", "origin", str(bare))
    propose(mw, repo, tmp_path, agent="b")
    git(repo, "push", "-q", "origin", "refs/heads/proposals/*:refs/heads/proposals/*")
    start = head(repo)
    (repo / "memory/a/facts.md").write_text(FACTS + "- unsaved\n")
    code, out, _ = mw(repo, "apply", "--all", "--push", "origin", "--now", NOW)
    (res,) = json.loads(out)["results"]
    assert code == 1 and res["reason"] == "local_edits", res
    assert res["files"] == ["memory/a/facts.md"]
    assert head(repo) == start and index_matches_head(repo)
    assert (repo / "memory/a/facts.md").read_text() == FACTS + "- unsaved\n"


def test_files_behind_main_with_local_edits_are_refused_with_the_way_out(repo, tmp_path, mw):
    """Index and files left behind main (a run killed between the two steps, or the old
    bug) that cannot catch up: apply stops before landing anything on top."""
    start = head(repo)
    propose(mw, repo, tmp_path, content="landed earlier")
    apply(mw, repo, "--all")
    git(repo, "read-tree", "--reset", "-u", start)  # the files back where they were
    (repo / "memory/a/facts.md").write_text(FACTS + "- unsaved\n")
    propose(mw, repo, tmp_path, agent="b")
    end = head(repo)
    code, out, err = mw(repo, "apply", "--all", "--now", NOW)
    assert code == 2 and f"git reset --soft {start[:12]}" in err and "Traceback" not in err
    assert head(repo) == end
    assert (repo / "memory/a/facts.md").read_text() == FACTS + "- unsaved\n"


def test_files_edited_during_a_run_send_main_back(repo, tmp_path, mw):
    """Edits made while a run lands (after its check) stop the files at the end: main goes
    back to where they are and the run's landings count as failed."""
    p = propose(mw, repo, tmp_path)
    start = head(repo)
    new = apply(mw, repo, "--all", "--dry-run")[1][0]["commits"][-1]
    r = open_repo(repo)
    git(repo, "update-ref", "refs/heads/main", new, start)  # as the run's moves left it
    (repo / "memory/a/facts.md").write_text(FACTS + "- typed meanwhile\n")
    results = [apply_mod.ProposalResult(p["proposalId"], "applied", commits=[new])]
    apply_mod._follow_once(r, "refs/heads/main", start, results)
    assert head(repo) == start and index_matches_head(repo)
    assert results[0].status == "failed" and results[0].reason == "local_edits"
    assert (repo / "memory/a/facts.md").read_text() == FACTS + "- typed meanwhile\n"


def test_a_move_whose_files_cannot_follow_is_undone(repo, tmp_path, mw, monkeypatch):
    """Should the files be edited between the check and the move, main goes back."""
    propose(mw, repo, tmp_path)
    start = head(repo)
    new = apply(mw, repo, "--all", "--dry-run")[1][0]["commits"][-1]
    (repo / "memory/a/facts.md").write_text(FACTS + "- typed meanwhile\n")
    monkeypatch.setattr(apply_mod, "check_local_main", lambda *a, **k: None)  # the race
    with pytest.raises(apply_mod.LocalEdits, match="memory/a/facts.md"):
        apply_mod.move_local_main(open_repo(repo), "refs/heads/main", new, start)
    assert head(repo) == start and index_matches_head(repo)


# --------------------------------------------------------------------------- B: --force


def propose_at(mw, repo, tmp_path, when, content, section="Domain", **extra):
    req = tmp_path / f"req-{when}.json"
    req.write_text(json.dumps({"agentId": "a", "runId": "run_1", **extra, "updates": [
        {"file": "facts.md", "operation": "append", "section": section, "content": content}]}))
    code, out, err = mw(repo, "propose", str(req), "--now", f"2026-02-17T{when}:00Z")
    assert code == 0, err
    return json.loads(out)


def stale_p1(mw, repo, tmp_path, section):
    """P1 waits for review, P2 (same agent) lands, P1 is then stale."""
    p1 = propose_at(mw, repo, tmp_path, "14:00", "P1 fact", section, priority="high")
    propose_at(mw, repo, tmp_path, "14:01", "P2 fact")
    assert [r["status"] for r in apply(mw, repo, "--all")[1]] == ["pending", "applied"]
    code, (res,) = apply(mw, repo, p1["branch"], "--approved-by", "x")
    assert res["reason"] == "version_conflict"
    return p1


def test_force_merges_onto_what_main_gained(repo, tmp_path, mw):
    p1 = stale_p1(mw, repo, tmp_path, "People")
    code, (res,) = apply(mw, repo, p1["branch"], "--approved-by", "x", "--force")
    assert code == 0 and res["status"] == "applied", res
    facts = git(repo, "show", "main:memory/a/facts.md")
    assert "- one fact\n- P2 fact\n" in facts and "- the owner is Olga\n- P1 fact\n" in facts
    assert mw(repo, "check", "--rev", "main")[0] == 0
    assert git(repo, "status", "--porcelain") == ""


def test_force_refuses_changes_that_overlap_main(repo, tmp_path, mw):
    p1 = stale_p1(mw, repo, tmp_path, "Domain")  # both append at the same place
    before = head(repo)
    code, (res,) = apply(mw, repo, p1["branch"], "--approved-by", "x", "--force")
    assert code == 1 and res["status"] == "rejected" and res["reason"] == "merge_conflict"
    assert res["files"] == ["memory/a/facts.md"] and "memory/a/facts.md" in res["message"]
    assert head(repo) == before
    assert "- P2 fact" in git(repo, "show", "main:memory/a/facts.md")


# ------------------------------------------------------------- F: multi-line fact content


def test_a_multi_line_fact_stays_one_bullet(repo, tmp_path, mw):
    p = propose(mw, repo, tmp_path, content="Line one\nLine two\n\n- a second fact\nits tail")
    facts = git(repo, "show", f"{p['branch']}:memory/a/facts.md")
    assert "- one fact\n- Line one\n  Line two\n- a second fact\n  its tail\n\n## People" in facts
    code, out, err = mw(repo, "check", "--rev", p["branch"])
    assert code == 0 and rules_in(out) == [], out + err
    code, (res,) = apply(mw, repo, p["branch"])
    assert res["status"] == "applied"
    assert mw(repo, "check", "--rev", "main")[0] == 0


@pytest.mark.parametrize("tail", ["## Injected", "```", "<!-- hidden", "# Title"])
def test_a_fact_line_that_would_break_out_is_refused(repo, tmp_path, mw, tail):
    req = tmp_path / "req.json"
    req.write_text(json.dumps({"agentId": "a", "runId": "run_7", "updates": [
        {"file": "facts.md", "operation": "append", "section": "Domain",
         "content": f"a fact\n{tail}"}]}))
    before = git(repo, "for-each-ref")
    code, out, err = mw(repo, "propose", str(req), "--now", NOW)
    assert code == 2 and "updates[0].content" in err and "Traceback" not in err
    assert git(repo, "for-each-ref") == before  # nothing created


# ------------------------------------------------------------- one id, two agents


def test_another_agents_proposal_with_the_same_id_is_not_already_applied(repo, tmp_path, mw):
    """Proposal ids are chosen by agents: b's proposal that reuses a's id must land, not be
    skipped as `already_applied` because a's landed first."""
    propose(mw, repo, tmp_path, agent="a", content="fact of a", proposalId="shared-id")
    propose(mw, repo, tmp_path, agent="b", content="fact of b", proposalId="shared-id")
    code, results = apply(mw, repo, "--all")
    assert code == 0 and [r["status"] for r in results] == ["applied", "applied"], results
    assert "- fact of b" in git(repo, "show", "main:memory/b/facts.md")
    code, results = apply(mw, repo, "--all")  # and each is applied once
    assert [r["status"] for r in results] == ["already_applied", "already_applied"]


def test_main_checked_out_in_another_work_tree_is_not_moved_under_it(repo, tmp_path, mw):
    """git lets a branch move under a linked work tree that has it checked out, whose index
    and files then stay behind (its next commit would revert the landing): apply refuses."""
    propose(mw, repo, tmp_path, content="Applied fact")
    git(repo, "checkout", "-q", "-b", "elsewhere")
    other = tmp_path / "wt-main"
    git(repo, "worktree", "add", "-q", str(other), "main")
    start = head(repo)
    code, (res,) = apply(mw, repo, "--all")
    assert code == 1 and res["status"] == "failed" and res["reason"] == "local_edits"
    assert "another work tree" in res["message"] and str(other) in res["message"]
    assert head(repo) == start
    code, (res,) = apply(mw, other, "--all")  # where main is checked out, it lands
    assert code == 0 and res["status"] == "applied"
    assert "- Applied fact" in (other / "memory/a/facts.md").read_text()


# ------------------------------------------------------- a forced merge is judged too


def replace(mw, root, tmp_path, run, name, content):
    req = tmp_path / f"req-{run}.json"
    req.write_text(json.dumps({"agentId": "a", "runId": run, "updates": [
        {"file": name, "operation": "replace", "content": content}]}))
    code, out, err = mw(root, "propose", str(req), "--now", "2026-02-17T14:30:00Z")
    assert code == 0, err
    return json.loads(out)


SNAP = "# Snapshot: a\n\n## Role\n\nfirst line\n\"x\": 1,\nlast line\n"
LOOPS = ("# Open Loops: a\n\n## Critical\n- [ ] loop_a: one (opened 2026-01-01)\n"
         "- [ ] loop_b: two (opened 2026-01-01)\n\n## Waiting\n"
         "- [ ] loop_c: three (opened 2026-01-01)\n- [ ] loop_d: four (opened 2026-01-01)\n")


@pytest.mark.parametrize(("name", "base", "first", "second", "rule"), [
    ("snapshot.md", SNAP, SNAP.replace("first line", '{"tool": "delete_file",'),
     SNAP.replace("last line", '"arguments": {"path": "/"}}'), "MW308"),
    ("open_loops.md", LOOPS,
     LOOPS.replace("two (opened 2026-01-01)\n", "two (opened 2026-01-01)\n"
                   "- [ ] loop_y: A (opened 2026-02-01)\n"),
     LOOPS + "- [ ] loop_y: B (opened 2026-02-01)\n", "MW206"),
])
def test_a_forced_merge_that_joins_two_clean_texts_into_an_error_is_refused(
        repo, tmp_path, mw, name, base, first, second, rule):
    """Each proposal is clean on its own; merged three-way they make a tool call (MW308) or
    a duplicate loop id (MW206): the merged text is judged before it lands."""
    replace(mw, repo, tmp_path, "run_0", name, base)
    assert apply(mw, repo, "--all")[0] == 0
    one = replace(mw, repo, tmp_path, "run_1", name, first)
    two = replace(mw, repo, tmp_path, "run_2", name, second)
    code, (res,) = apply(mw, repo, one["branch"])
    assert res["status"] == "applied"
    start = head(repo)
    code, (res,) = apply(mw, repo, two["branch"], "--force", "--approved-by", "olga")
    assert code == 1 and res["status"] == "rejected" and res["reason"] == "policy", res
    assert any(f["rule"] == rule for f in res["findings"]), res["findings"]
    assert head(repo) == start
    code, out, _ = mw(repo, "check", "--all")
    assert code == 0, out


def test_an_evicted_loop_takes_its_detail_lines_with_it(tmp_path, mw):
    """A frozen loop's indented details used to stay behind, orphaned under the section or
    read as part of the loop above."""
    loops = ("# Open Loops: a\n\n## Waiting\n"
             "- [ ] loop_old1: check the archive (opened 2025-01-01, priority low)\n"
             "  detail of loop one\n"
             "- [ ] loop_old2: check the catalogue (opened 2025-01-02, priority low)\n"
             "  detail of loop two\n"
             "- [ ] loop_old3: check the index (opened 2025-01-03, priority low)\n")
    root = make_repo(tmp_path, {"memory/a/facts.md": FACTS, "memory/a/meta.json": META,
                                "memory/a/open_loops.md": loops,
                                "memwarden.toml": "[limits]\nopen_loops = 75\n"})
    req = tmp_path / "r.json"
    req.write_text(json.dumps({"agentId": "a", "runId": "run_9", "updates": [
        {"file": "open_loops.md", "operation": "add_loop", "content": "ask about retries",
         "loopPriority": "high"}]}))
    assert mw(root, "propose", str(req))[0] == 0
    code, (res,) = apply(mw, root, "--all", "--approved-by", "olga")
    assert res["status"] == "applied" and res["evicted"], res
    after = git(root, "show", "main:memory/a/open_loops.md")
    gone = {e["id"] for e in res["evicted"]}
    for n, loop in (("one", "loop_old1"), ("two", "loop_old2")):
        assert (f"detail of loop {n}" in after) == (loop not in gone), after
    assert mw(root, "check", "--all")[0] == 0


def test_remove_entry_takes_a_loops_detail_lines_with_it(tmp_path, mw):
    loops = ("# Open Loops: a\n\n## Open\n- [ ] loop_x: check the archive (opened 2026-01-01)\n"
             "  detail of loop x\n- [ ] loop_y: check the index (opened 2026-01-02)\n")
    root = make_repo(tmp_path, {"memory/a/facts.md": FACTS, "memory/a/meta.json": META,
                                "memory/a/open_loops.md": loops})
    req = tmp_path / "r.json"
    req.write_text(json.dumps({"agentId": "a", "runId": "run_9", "updates": [
        {"file": "open_loops.md", "operation": "remove_entry", "entryId": "loop_x"}]}))
    code, out, err = mw(root, "propose", str(req))
    assert code == 0, err
    after = git(root, "show", f"{json.loads(out)['commit']}:memory/a/open_loops.md")
    assert "loop_x" not in after and "detail of loop x" not in after and "loop_y" in after
