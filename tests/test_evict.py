"""Eviction commits: placed before the proposal's commit, LRU from git, never a touched
entry, down to the low-water mark; loops expire or freeze into decisions.md."""

from __future__ import annotations

import json
import os
import subprocess

from conftest import GIT_ENV, git, make_repo

from memwarden.tokens.counter import count_text

META = '{"agentId": "a", "version": 1, "schemaVersion": "1.0"}\n'
NOW = "2026-03-01T12:00:00Z"


def commit_all(root, message, date):
    env = {**os.environ, **GIT_ENV, "GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date}
    subprocess.run(["git", "add", "-A"], cwd=root, check=True, env=env)
    subprocess.run(["git", "commit", "-qm", message], cwd=root, check=True, env=env)


def facts_text(n: int, deprecated: int = 0) -> str:
    body = "# Facts: a\n\n## Domain\n" + "".join(
        f"- fact number {i} about the archive catalogue and its weekly digest\n"
        for i in range(n))
    if deprecated:
        body += "\n## Deprecated\n" + "".join(
            f"- deprecated fact {i} about the retired importer\n" for i in range(deprecated))
    return body


def repo_with(tmp_path, files, limits):
    root = make_repo(tmp_path, {"memwarden.toml": limits, "memory/a/meta.json": META},
                     commit=False)
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    commit_all(root, "start\n\nHuman-Edit: true", "2026-01-01T10:00:00Z")
    return root


def propose(mw, root, tmp_path, updates, **extra):
    req = tmp_path / "req.json"
    req.write_text(json.dumps({"agentId": "a", "runId": "run_9", "updates": updates, **extra}))
    code, out, err = mw(root, "propose", str(req), "--now", "2026-02-28T10:00:00Z")
    assert code == 0, err
    return json.loads(out)


def test_facts_evicted_in_a_commit_before_the_proposal(tmp_path, mw):
    text = facts_text(40, deprecated=5)
    limit = count_text(text, "cl100k_base") + 5
    root = repo_with(tmp_path, {"memory/a/facts.md": text},
                     f"max_auto_diff_bytes = 100000\n[limits]\nfacts = {limit}\n")
    propose(mw, root, tmp_path, [{"file": "facts.md", "operation": "append",
                                      "section": "Domain",
                                      "content": "brand new fact about the MinIO bucket "
                                                 "versioning and its retention policy"}])
    code, out, err = mw(root, "apply", "--all", "--now", NOW)
    assert code == 0, out + err
    (res,) = json.loads(out)["results"]
    assert res["status"] == "applied" and len(res["commits"]) == 2
    evict_sha, applied_sha = res["commits"]
    assert git(root, "rev-parse", "main").strip() == applied_sha
    assert git(root, "rev-parse", "main~1").strip() == evict_sha
    msg = git(root, "log", "-1", "--format=%B", evict_sha)
    assert msg.startswith("memory-evict: a / facts")
    assert "Memory-Eviction: stale-fact" in msg and "Agent-Id: a" in msg
    reasons = [e["entry"] for e in res["evicted"]]
    assert reasons and all(r.startswith("deprecated fact") for r in reasons[:5])
    final = git(root, "show", "main:memory/a/facts.md")
    assert "brand new fact" in final
    assert count_text(final, "cl100k_base") <= int(limit * 0.9)
    for e in res["evicted"]:
        assert e["entry"] not in final
        assert e["entry"] in msg  # the eviction commit lists every moved entry
    assert mw(root, "check-commits", "main~2..main")[0] == 0
    code, out, _ = mw(root, "check", "--rev", "main", "--select", "MW1")
    assert code == 0, out


def test_touched_and_recently_used_facts_stay(tmp_path, mw):
    text = facts_text(30)
    limit = count_text(text, "cl100k_base") + 3
    root = repo_with(tmp_path, {"memory/a/facts.md": text},
                     f"max_auto_diff_bytes = 100000\n[limits]\nfacts = {limit}\n")
    from memwarden.model.entries import parse_facts
    from memwarden.model.memfile import split_lines

    facts, _ = parse_facts(split_lines(text))
    cited = facts[0].id  # the oldest-positioned fact, but cited by a recent run
    (root / "memory/a/snapshot.md").write_text("# Snapshot\n")
    commit_all(root, f"memory-update: a / run_1 / p-0\n\nAgent-Id: a\nRun-Id: run_1\n"
                     f"Proposal-Id: p-0\nPriority: normal\nExpected-Version: 1\n"
                     f"Facts-Used: {cited}\n", "2026-02-27T10:00:00Z")
    propose(mw, root, tmp_path, [
        {"file": "facts.md", "operation": "remove_entry", "entryId": facts[1].id},
        {"file": "facts.md", "operation": "append", "section": "Domain",
         "content": "fact number 2 rewritten with much more detail about the digest, the "
                    "catalogue, the importer and every weekly batch it sends"}])
    code, out, err = mw(root, "apply", "--all", "--now", NOW)
    (res,) = json.loads(out)["results"]
    assert res["status"] == "applied", res
    final = git(root, "show", "main:memory/a/facts.md")
    assert facts[0].text in final  # reinforced by Facts-Used
    assert "rewritten with much more detail" in final  # touched by the proposal
    assert facts[2].text not in final  # oldest unused went first


def test_loops_expire_and_freeze_into_decisions(tmp_path, mw):
    loops = ("# Open Loops: a\n\n## Open\n"
             + "".join(f"- [x] loop_c{i}: closed item {i} about the weekly importer run — "
                       f"closed 2026-01-0{i + 1} | run_1\n" for i in range(5))
             + "".join(f"- [ ] loop_l{i}: low priority idea {i} about tagging sources "
                       f"(opened 2026-01-05, priority low)\n" for i in range(5))
             + "- [ ] loop_h: urgent (opened 2026-02-20, priority high)\n")
    limit = count_text(loops, "cl100k_base") + 2
    root = repo_with(tmp_path, {"memory/a/open_loops.md": loops,
                                "memory/a/decisions.md": "# Decisions: a\n"},
                     f"max_auto_diff_bytes = 100000\n[limits]\nopen_loops = {limit}\n")
    propose(mw, root, tmp_path, [{"file": "open_loops.md", "operation": "add_loop",
                                  "content": "a new loop about the digest schedule for "
                                             "March and the archive retention window"}])
    code, out, err = mw(root, "apply", "--all", "--now", NOW)
    (res,) = json.loads(out)["results"]
    assert res["status"] == "applied", res
    final = git(root, "show", "main:memory/a/open_loops.md")
    assert "loop_h" in final and "a new loop" in final
    assert "loop_c0" not in final  # the oldest closed loop went first
    assert {e["reason"] for e in res["evicted"]} <= {"expired-loop", "frozen-loop"}
    if any(e["reason"] == "frozen-loop" for e in res["evicted"]):
        assert "Frozen loop:" in git(root, "show", "main:memory/a/decisions.md")
    assert mw(root, "check-commits", "main~2..main")[0] == 0


def test_history_after_eviction_verifies(tmp_path, mw):
    text = facts_text(40, deprecated=5)
    limit = count_text(text, "cl100k_base") + 5
    root = repo_with(tmp_path, {"memory/a/facts.md": text},
                     f"max_auto_diff_bytes = 100000\n[limits]\nfacts = {limit}\n")
    propose(mw, root, tmp_path, [{"file": "facts.md", "operation": "append",
                                  "section": "Domain", "content": "new fact about buckets "
                                  "and their versioning and retention and replication"}])
    assert mw(root, "apply", "--all", "--now", NOW)[0] == 0
    code, out, _ = mw(root, "verify-history")
    assert code == 0, out
