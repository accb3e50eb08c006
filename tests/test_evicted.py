"""`memwarden evicted` and `memwarden restore-fact` on real eviction and maintenance commits
(made by propose + apply with small limits, or by hand for maintenance)."""

from __future__ import annotations

import json
import os
import subprocess

from conftest import GIT_ENV, git, make_repo

from memwarden.apply.evicted import Removed, find_fact, restore_request
from memwarden.model.entries import parse_facts, short_id
from memwarden.model.errors import MemwardenError
from memwarden.model.memfile import split_lines
from memwarden.tokens.counter import count_text

META = '{"agentId": "a", "version": 1, "schemaVersion": "1.0"}\n'
NOW = "2026-03-01T12:00:00Z"
LONG = ("[2025-11-02] the retired importer wrote every catalogue batch twice when the weekly "
        "digest overlapped the nightly archive sweep, which is why the dedupe step exists and "
        "why its window must stay wider than the sweep")


def commit_all(root, message, date="2026-01-01T10:00:00Z"):
    env = {**os.environ, **GIT_ENV, "GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date}
    subprocess.run(["git", "add", "-A"], cwd=root, check=True, env=env)
    subprocess.run(["git", "commit", "-qm", message], cwd=root, check=True, env=env)


def facts_text(n: int) -> str:
    return ("# Facts: a\n\n## Domain\n"
            + "".join(f"- fact number {i} about the archive catalogue and its weekly digest\n"
                      for i in range(n))
            + f"\n## Deprecated\n- {LONG}\n- deprecated fact about the old importer\n")


def repo_with(tmp_path, files, toml=""):
    root = make_repo(tmp_path, {"memwarden.toml": toml, "memory/a/meta.json": META},
                     commit=False)
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    commit_all(root, "start\n\nHuman-Edit: true")
    return root


def propose(mw, root, tmp_path, updates):
    req = tmp_path / "req.json"
    req.write_text(json.dumps({"agentId": "a", "runId": "run_9", "updates": updates}))
    code, out, err = mw(root, "propose", str(req), "--now", "2026-02-28T10:00:00Z")
    assert code == 0, err
    return json.loads(out)


def evicted_repo(tmp_path, mw):
    """A repo whose main holds one facts eviction commit (made by apply)."""
    text = facts_text(30)
    limit = count_text(text, "cl100k_base") + 5
    root = repo_with(tmp_path, {"memory/a/facts.md": text},
                     f"max_auto_diff_bytes = 100000\n[limits]\nfacts = {limit}\n")
    propose(mw, root, tmp_path, [{"file": "facts.md", "operation": "append",
                                  "section": "Domain", "content": "brand new fact about the "
                                  "MinIO bucket versioning and its retention policy"}])
    code, out, err = mw(root, "apply", "--all", "--now", NOW)
    assert code == 0, out + err
    (res,) = json.loads(out)["results"]
    assert res["status"] == "applied" and len(res["commits"]) == 2
    return root, res


def evicted_json(mw, root, *args):
    code, out, err = mw(root, "evicted", "a", "--format", "json", *args)
    assert code == 0, err
    return json.loads(out)["evicted"]


def test_lists_eviction_with_full_text(tmp_path, mw):
    root, res = evicted_repo(tmp_path, mw)
    entries = evicted_json(mw, root)
    assert [e["id"] for e in entries] == [e["id"] for e in res["evicted"]]
    assert {e["commit"] for e in entries} == {res["commits"][0]}
    long_id = short_id(LONG[len("[2025-11-02] "):])
    (long,) = [e for e in entries if e["id"] == long_id]
    assert long["entry"] == LONG[len("[2025-11-02] "):] and len(long["entry"]) > 160
    assert long["reason"] == "stale-fact" and long["kind"] == "fact"
    assert long["file"] == "facts.md" and long["section"] == "Deprecated"
    assert long["date"] == "2026-03-01T12:00:00Z"
    assert all(e["restorable"] for e in entries)
    code, out, _ = mw(root, "evicted", "a")
    assert code == 0 and long_id in out and "(stale-fact, restorable)" in out
    assert out.count("\n") == len(entries)
    assert evicted_json(mw, root) == entries  # deterministic


def test_since_filters_by_commit_date(tmp_path, mw):
    root, res = evicted_repo(tmp_path, mw)
    assert evicted_json(mw, root, "--since", "2026-03-02") == []
    assert len(evicted_json(mw, root, "--since", "2026-03-01")) == len(res["evicted"])
    assert len(evicted_json(mw, root, "--since", "2026-03-01T12:00:00Z")) > 0
    code, _, err = mw(root, "evicted", "a", "--since", "yesterday")
    assert code == 2 and "--since" in err


def test_unknown_agent_and_bad_input(tmp_path, mw):
    root = repo_with(tmp_path, {"memory/a/facts.md": facts_text(2)})
    for agent in ("nobody", "Not_An_Id", "../a"):
        code, _, err = mw(root, "evicted", agent)
        assert code == 2 and "unknown agent" in err, err
        code, _, err = mw(root, "restore-fact", agent, "abc")
        assert code == 2 and "unknown agent" in err
    code, out, _ = mw(root, "evicted", "a")
    assert code == 0 and out.startswith("no entries")
    assert mw(root, "restore-fact", "a", " ")[0] == 2
    assert mw(tmp_path, "evicted", "a")[0] == 2  # not a repository


def test_loops_and_bare_repo(tmp_path, mw):
    loops = ("# Open Loops: a\n\n## Open\n"
             + "".join(f"- [x] loop_c{i}: closed item {i} about the weekly importer run — "
                       f"closed 2026-01-0{i + 1} | run_1\n" for i in range(5))
             + "".join(f"- [ ] loop_l{i}: low priority idea {i} about tagging sources "
                       f"(opened 2026-01-05, priority low)\n" for i in range(5)))
    limit = count_text(loops, "cl100k_base") + 2
    root = repo_with(tmp_path, {"memory/a/open_loops.md": loops,
                                "memory/a/decisions.md": "# Decisions: a\n"},
                     f"max_auto_diff_bytes = 100000\n[limits]\nopen_loops = {limit}\n")
    propose(mw, root, tmp_path, [{"file": "open_loops.md", "operation": "add_loop",
                                  "content": "a new loop about the digest schedule for "
                                             "March and the archive retention window"}])
    code, out, _ = mw(root, "apply", "--all", "--now", NOW)
    (res,) = json.loads(out)["results"]
    assert res["status"] == "applied", res
    entries = evicted_json(mw, root)
    assert [e["id"] for e in entries] == [e["id"] for e in res["evicted"]]
    assert entries[0]["id"] == "loop_c0" and entries[0]["kind"] == "loop"
    assert entries[0]["entry"] == "closed item 0 about the weekly importer run"
    assert {e["reason"] for e in entries} <= {"expired-loop", "frozen-loop"}
    code, _, err = mw(root, "restore-fact", "a", "loop_c0")
    assert code == 2 and "facts only" in err
    bare = tmp_path / "bare.git"
    git(tmp_path, "clone", "-q", "--bare", str(root), str(bare))
    assert evicted_json(mw, bare) == entries


def _colliding_texts() -> tuple[str, str]:
    """Two fact texts whose ids share their first two characters."""
    seen: dict[str, str] = {}
    for i in range(5000):
        text = f"maintenance candidate fact {i} about the catalogue"
        key = short_id(text)[:2]
        if key in seen:
            return seen[key], text
        seen[key] = text
    raise AssertionError("no collision")


def test_maintenance_commits_parsed_generically(tmp_path, mw):
    t1, t2 = _colliding_texts()
    body = f"# Facts: a\n\n## Ops\n- {t1}\n- {t2}\n- kept fact\n  with a continuation line\n"
    root = repo_with(tmp_path, {"memory/a/facts.md": body})
    (root / "memory/a/facts.md").write_text("# Facts: a\n\n## Ops\n- kept fact\n  with a "
                                            "continuation line\n")
    commit_all(root, f"memory-maintain: a / retention\n\nDropped:\n\n- {short_id(t1)} "
               "(dedupe): gone\n\nMemory-Maintenance: retention\n", "2026-02-01T00:00:00Z")
    # a human edit removing a fact is not an eviction
    (root / "memory/a/facts.md").write_text("# Facts: a\n\n## Ops\n")
    commit_all(root, "tidy\n\nHuman-Edit: true", "2026-02-02T00:00:00Z")
    entries = evicted_json(mw, root)
    assert [(e["id"], e["reason"]) for e in entries] == [(short_id(t1), "dedupe"),
                                                         (short_id(t2), "retention")]
    assert entries[1]["entry"] == t2 and entries[0]["section"] == "Ops"
    prefix = short_id(t1)[:2]
    code, _, err = mw(root, "restore-fact", "a", prefix)
    assert code == 2 and "ambiguous" in err and short_id(t1) in err and short_id(t2) in err
    code, _, err = mw(root, "restore-fact", "a", "ffffffffff")
    assert code == 2 and "no evicted fact" in err


def test_restore_fact_round_trip(tmp_path, mw):
    root, res = evicted_repo(tmp_path, mw)
    long_id = short_id(LONG[len("[2025-11-02] "):])
    code, out, err = mw(root, "restore-fact", "a", long_id[:7], "--now", NOW)
    assert code == 0, err
    prop = json.loads(out)
    assert prop["status"] == "pending" and prop["targetFiles"] == ["facts.md"]
    assert prop["branch"].startswith("proposals/a/p-restore-")
    msg = git(root, "log", "-1", "--format=%B", prop["commit"])
    assert f"restore evicted fact {long_id} from {res['commits'][0]}" in msg
    proposed = git(root, "show", f"{prop['commit']}:memory/a/facts.md")
    facts, _ = parse_facts(split_lines(proposed))
    (back,) = [f for f in facts if f.id == long_id]
    assert back.section == "Deprecated" and back.date == "2025-11-02"
    # applying it is a normal apply (it may evict again to make room, never the fact itself)
    code, out, err = mw(root, "apply", prop["branch"], "--now", "2026-03-02T12:00:00Z")
    (res2,) = json.loads(out)["results"]
    assert res2["status"] == "applied", res2
    assert LONG in git(root, "show", "main:memory/a/facts.md")
    entries = evicted_json(mw, root)
    assert [e["restorable"] for e in entries if e["id"] == long_id] == [False]
    code, _, err = mw(root, "restore-fact", "a", long_id)
    assert code == 1 and "already" in err


def test_restore_fact_push(tmp_path, mw):
    root, _ = evicted_repo(tmp_path, mw)
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(remote))
    git(root, "remote", "add", "origin", str(remote))
    fid = evicted_json(mw, root)[0]["id"]
    code, out, err = mw(root, "restore-fact", "a", fid, "--push", "--now", NOW)
    assert code == 0, err
    branch = json.loads(out)["branch"]
    assert git(remote, "rev-parse", f"refs/heads/{branch}").strip() == json.loads(out)["commit"]


def test_find_fact_and_request_units():
    def rem(i, kind="fact", section="S", date=None):
        return Removed(i, "facts.md", kind, "overflow", f"text {i}", "c" * 40, 0, True,
                       section, date)

    removed = [rem("abc123"), rem("abd456"), rem("abc123"), rem("loop_x", "loop")]
    assert find_fact(removed, "abc") is removed[0]  # newest eviction wins
    for wanted, words in (("ab", "ambiguous"), ("zz", "no evicted fact"),
                          ("loop_x", "facts only")):
        try:
            find_fact(removed, wanted)
        except MemwardenError as exc:
            assert words in str(exc)
        else:
            raise AssertionError(wanted)
    req = restore_request("a", rem("abc123", section="", date="2026-99-99"))
    (upd,) = req["updates"]
    assert upd["section"] == "Restored" and upd["content"] == "- text abc123"
    assert restore_request("a", rem("x", date="2026-01-02"))["updates"][0]["content"] == \
        "- [2026-01-02] text x"
