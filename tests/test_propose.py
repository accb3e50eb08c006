"""`memwarden propose`: requests become proposal branches, in-process, checked by the hooks."""

from __future__ import annotations

import json

import pytest
from conftest import git, make_repo

from memwarden.hooks.pre_receive import install
from memwarden.model.trailers import parse_trailers
from memwarden.policies.rules.commits import CommitInfo, check_commit

FACTS = "# Facts: a\n\n## Domain\n- one fact\n\n## Deprecated\n- old fact\n"
LOOPS = ("# Open Loops: a\n\n## Critical\n"
         "- [ ] loop_001: confirm the bucket (opened 2026-02-01, priority high)\n")
NOW = "2026-02-17T14:30:00Z"


@pytest.fixture
def repo(tmp_path):
    return make_repo(tmp_path, {"memory/a/facts.md": FACTS, "memory/a/open_loops.md": LOOPS,
                                "memory/a/decisions.md": "# Decisions: a\n",
                                "memory/a/meta.json": '{"agentId": "a", "version": 4, '
                                                      '"schemaVersion": "1.0"}',
                                "memory/b/facts.md": FACTS})


def run(mw, root, tmp_path, doc, *args):
    req = tmp_path / "req.json"
    req.write_text(json.dumps(doc, ensure_ascii=False))
    return mw(root, "propose", str(req), "--now", NOW, *args)


def request(*updates, **extra):
    return {"agentId": "a", "runId": "run_7", "updates": list(updates),
            "reasoning": "Found new facts", **extra}


def show(root, branch, path):
    return git(root, "show", f"{branch}:{path}")


def test_append_close_and_trailers(repo, tmp_path, mw):
    code, out, err = run(mw, repo, tmp_path, request(
        {"file": "facts.md", "operation": "append", "section": "## Domain",
         "content": "MinIO keeps versions"},
        {"file": "open_loops.md", "operation": "close", "loopId": "loop_001",
         "resolution": "confirmed"}), "--base", "main")
    assert code == 0, err
    res = json.loads(out)
    assert res["status"] == "pending" and res["targetFiles"] == ["facts.md", "open_loops.md"]
    assert res["branch"] == f"proposals/a/{res['proposalId']}" and res["diffBytes"] > 0
    facts = show(repo, res["branch"], "memory/a/facts.md")
    assert "- one fact\n- MinIO keeps versions\n\n## Deprecated" in facts
    loops = show(repo, res["branch"], "memory/a/open_loops.md")
    assert "- [x] loop_001: confirm the bucket — closed 2026-02-17 | run_7 — confirmed" in loops
    msg = git(repo, "log", "-1", "--format=%B", res["branch"])
    keys = {t.key: t.value for t in parse_trailers(msg)}
    assert keys["Agent-Id"] == "a" and keys["Expected-Version"] == "4"
    assert keys["Proposal-Id"] == res["proposalId"] and keys["Priority"] == "normal"
    assert check_commit(CommitInfo(msg, ["memory/a/facts.md"], "c")) == []
    assert git(repo, "status", "--porcelain") == ""  # no working tree was touched
    assert git(repo, "rev-parse", "main") == git(repo, "rev-parse", "HEAD")


def test_add_loop_add_decision_replace_remove_snake_case(repo, tmp_path, mw):
    doc = {"params": {"agent_id": "a", "run_id": "run_8", "proposal_id": "p-8",
                      "expected_version": 4, "facts_used": ["abc123"],
                      "updates": [
                          {"file": "open_loops.md", "operation": "add_loop",
                           "content": "ask the owner", "loop_priority": "low"},
                          {"file": "decisions.md", "operation": "add_decision",
                           "title": "Use MinIO", "content": "**Context:** storage"},
                          {"file": "snapshot.md", "operation": "replace",
                           "content": "# Snapshot: a\n\n## Role\nCurator\n"},
                          {"file": "open_loops.md", "operation": "remove_entry",
                           "entry_id": "loop_001"}]}}
    code, out, err = run(mw, repo, tmp_path, doc)
    assert code == 0, err
    res = json.loads(out)
    assert res["proposalId"] == "p-8"
    loops = show(repo, res["branch"], "memory/a/open_loops.md")
    assert "loop_001" not in loops
    assert "(opened 2026-02-17, priority low)" in loops
    decisions = show(repo, res["branch"], "memory/a/decisions.md")
    assert "## 2026-02-17 — Use MinIO\n**Status:** Accepted\n**Context:** storage\n" \
           "**Run:** run_8" in decisions
    assert show(repo, res["branch"], "memory/a/snapshot.md").startswith("# Snapshot: a")
    msg = git(repo, "log", "-1", "--format=%B", res["branch"])
    assert "Facts-Used: abc123" in msg
    code, out, _ = mw(repo, "check", "--rev", res["branch"])
    assert code == 0, out


@pytest.mark.parametrize(("update", "needle"), [
    ({"file": "facts.md", "operation": "rewrite", "content": "x"}, "unknown operation"),
    ({"file": "facts.md", "operation": "append", "content": "x"}, "needs 'section'"),
    ({"file": "../b/facts.md", "operation": "replace", "content": "x"}, "not a plain path"),
    ({"file": "memory/b/facts.md", "operation": "replace", "content": "x"}, "outside memory/a/"),
    ({"file": "meta.json", "operation": "replace", "content": "{}"}, "written only by apply"),
    ({"file": "changelog.md", "operation": "append", "content": "x"}, "written only by apply"),
    ({"file": "notes.txt", "operation": "replace", "content": "x"}, "not a memory file"),
    ({"file": "open_loops.md", "operation": "close", "loopId": "loop_999"}, "not found"),
    ({"file": "facts.md", "operation": "remove_entry", "entryId": "nope"}, "not found"),
    ({"file": "facts.md", "operation": "replace", "content": "  "}, "non-empty text"),
])
def test_bad_updates_exit_2_naming_the_index(repo, tmp_path, mw, update, needle):
    ok = {"file": "facts.md", "operation": "append", "section": "Domain", "content": "fine"}
    code, out, err = run(mw, repo, tmp_path, request(ok, update))
    assert code == 2, out
    assert "updates[1]" in err and needle in err, err
    assert "proposals/" not in git(repo, "branch", "--list", "proposals/*")


@pytest.mark.parametrize(("doc", "needle"), [
    ({"agentId": "A_B", "runId": "r", "updates": [{}]}, "agentId"),
    ({"agentId": "a", "runId": "../x", "updates": [{}]}, "runId"),
    ({"agentId": "a", "runId": "r", "updates": []}, "non-empty"),
    ({"agentId": "a", "runId": "r", "priority": "urgent",
      "updates": [{"operation": "append"}]}, "priority"),
    ([1, 2], "JSON object"),
])
def test_bad_requests(repo, tmp_path, mw, doc, needle):
    code, _, err = run(mw, repo, tmp_path, doc)
    assert code == 2 and needle in err


def test_invalid_json_and_existing_branch(repo, tmp_path, mw):
    (tmp_path / "bad.json").write_text("{nope")
    code, _, err = mw(repo, "propose", str(tmp_path / "bad.json"))
    assert code == 2 and "line 1 column 2" in err
    doc = request({"file": "facts.md", "operation": "append", "section": "Domain",
                   "content": "x"}, proposalId="p-1")
    assert run(mw, repo, tmp_path, doc)[0] == 0
    code, _, err = run(mw, repo, tmp_path, doc)
    assert code == 2 and "already exists" in err


def test_push_passes_the_server_hook(repo, tmp_path, mw):
    bare = tmp_path / "remote.git"
    git(tmp_path, "clone", "-q", "--bare", str(repo), str(bare))
    install(bare)
    git(repo, "remote", "add", "origin", str(bare))
    code, out, err = run(mw, repo, tmp_path, request(
        {"file": "facts.md", "operation": "append", "section": "Domain", "content": "x"}),
        "--push")
    assert code == 0, err
    branch = json.loads(out)["branch"]
    assert git(bare, "rev-parse", branch).strip() == json.loads(out)["commit"]
