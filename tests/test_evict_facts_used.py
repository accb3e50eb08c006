"""Issue 20: the facts a proposal cites in `Facts-Used` are in use at the proposal's time.

A simulation of daily runs through the real CLI (propose, apply) on a real repository:
facts written on day 0 and never touched again, then on day 120 a run that cites two of them
and adds enough facts to overflow facts.md. Its own eviction commit used to remove exactly
the two cited facts as `stale-fact`; they must stay, and a later eviction must see them as
used on day 120.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import subprocess

from conftest import GIT_ENV, git, make_repo

from memwarden.apply.evict import fact_usage
from memwarden.git.repo import open_repo
from memwarden.model.entries import parse_facts
from memwarden.model.memfile import split_lines
from memwarden.tokens.counter import count_text

DAY0 = _dt.datetime(2026, 1, 1, 9, 0, tzinfo=_dt.UTC)
META = '{"agentId": "a", "version": 1, "schemaVersion": "1.0"}\n'


def _at(day: int, hour: int = 9) -> str:
    return (DAY0 + _dt.timedelta(days=day, hours=hour - 9)).strftime("%Y-%m-%dT%H:%M:%SZ")


def _facts(n: int) -> str:
    return "# Facts: a\n\n## Domain\n" + "".join(
        f"- catalogue fact {i}: the weekly digest of shelf {i} goes to the owner on Monday\n"
        for i in range(n))


def _start(tmp_path, n: int):
    text = _facts(n)
    limit = count_text(text, "cl100k_base") + 40
    root = make_repo(tmp_path, {"memwarden.toml": f"max_auto_diff_bytes = 100000\n"
                                                  f"[limits]\nfacts = {limit}\n",
                                "memory/a/meta.json": META, "memory/a/facts.md": text},
                     commit=False)
    env = {**os.environ, **GIT_ENV, "GIT_AUTHOR_DATE": _at(0), "GIT_COMMITTER_DATE": _at(0)}
    subprocess.run(["git", "add", "-A"], cwd=root, check=True, env=env)
    subprocess.run(["git", "commit", "-qm", "start\n\nHuman-Edit: true"], cwd=root,
                   check=True, env=env)
    return root


def _run(mw, root, tmp_path, day: int, new: list[str], cited: list[str]) -> dict:
    """One daily run: propose (appending `new` facts, citing `cited`), then apply."""
    req = tmp_path / f"req-{day}.json"
    req.write_text(json.dumps({"agentId": "a", "runId": f"run_{day}", "updates": [
        {"file": "facts.md", "operation": "append", "section": "Domain", "content": text}
        for text in new], "factsUsed": cited}))
    code, out, err = mw(root, "propose", str(req), "--now", _at(day, 8))
    assert code == 0, err
    code, out, err = mw(root, "apply", json.loads(out)["branch"], "--now", _at(day, 9))
    (res,) = json.loads(out)["results"]
    assert res["status"] == "applied", res
    return res


def _current(root) -> list:
    return parse_facts(split_lines(git(root, "show", "main:memory/a/facts.md")))[0]


def _cite(mw, root, n: int) -> tuple[list[str], list]:
    """The ids a runtime would cite for the first n facts: from `read --mode wide`."""
    code, out, err = mw(root, "read", "a", "--mode", "wide")
    assert code == 0, err
    ids = json.loads(out)["meta"]["factIds"]
    ids = ids.split() if isinstance(ids, str) else ids
    return ids[:n], _current(root)[:n]


def test_a_run_never_evicts_the_facts_it_cites_and_refreshes_them(tmp_path, mw):
    root = _start(tmp_path, 30)
    # Quiet days: one small fact a week for a while (no overflow yet).
    for day in (7, 14, 21):
        _run(mw, root, tmp_path, day, [f"weekly note {day}: shelf audit passed"], [])
    # Day 120: the run relies on the two oldest facts and learns a lot.
    ids, cited = _cite(mw, root, 2)
    new = [f"day 120 finding {k}: the importer now tags every scanned score with its "
           f"shelf and edition number" for k in range(6)]
    res = _run(mw, root, tmp_path, 120, new, ids)
    assert len(res["commits"]) == 2 and res["evicted"], res  # it had to evict
    gone = {e["id"] for e in res["evicted"]}
    assert not gone & {f.id for f in cited}, "the run's own eviction removed facts it cited"
    evict_msg = git(root, "log", "-1", "--format=%B", res["commits"][0])
    assert all(f.text not in evict_msg for f in cited)
    final = git(root, "show", "main:memory/a/facts.md")
    assert all(f.text in final for f in cited)
    # Their last use is now day 120's apply: a later eviction sees them as recently used.
    used = fact_usage(open_repo(root), "main", "a")
    day120 = _dt.datetime.fromisoformat(_at(120)).timestamp()
    assert all(used[f.id] == day120 for f in cited)
    later = [f"day 121 finding {k}: the reading room closes at noon on Fridays from March "
             f"onwards" for k in range(6)]
    res = _run(mw, root, tmp_path, 121, later, [])
    assert res["evicted"] and not {e["id"] for e in res["evicted"]} & {f.id for f in cited}
    assert all(e["reason"] == "stale-fact" for e in res["evicted"])  # day-0 facts went


def test_a_cited_fact_is_protected_in_the_gate_preview_too(tmp_path, mw):
    """The gate previews exactly what apply would evict: the cited facts are not in it."""
    root = _start(tmp_path, 30)
    ids, cited = _cite(mw, root, 3)
    req = tmp_path / "req.json"
    req.write_text(json.dumps({"agentId": "a", "runId": "run_x", "updates": [
        {"file": "facts.md", "operation": "append", "section": "Domain",
         "content": f"finding {k}: the importer tags every scanned score with its shelf"}
        for k in range(6)], "factsUsed": ids}))
    code, out, err = mw(root, "propose", str(req), "--now", _at(100))
    assert code == 0, err
    branch = json.loads(out)["branch"]
    code, out, err = mw(root, "gate", branch, "--format", "json", "--now", _at(100))
    assert code == 0, err
    preview = json.loads(out)["eviction_preview"]
    assert preview and not {e["id"] for e in preview} & {f.id for f in cited}
