"""`memwarden context`: Layer 1 + search hits + sources of one agent, whole items in a budget."""

from __future__ import annotations

import datetime as _dt
import json
from pathlib import Path

import pytest
from conftest import git, make_repo
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memwarden.git.repo import open_repo
from memwarden.model.config import parse_config
from memwarden.read import search as S
from memwarden.read.context import build_context
from memwarden.tokens.counter import count_text

SNAPSHOT = "# Snapshot: a\n\n## Role\nKeeps the heron census.\n"
LOOPS = ("# Open Loops: a\n\n## Critical\n"
         "- [ ] loop_001: count the herons (opened 2026-02-01, priority high)\n")
FACTS = "# Facts: a\n\n## Domain\n" + "".join(
    f"- Fact {n}: herons nest near pond {n} in spring.\n" for n in range(60))
FILES = {
    "memory/a/snapshot.md": SNAPSHOT,
    "memory/a/open_loops.md": LOOPS,
    "memory/a/facts.md": FACTS,
    "memory/a/decisions.md": "# Decisions: a\n\n## 2026-01-01 — Heron decision\n"
                             "**Status:** accepted\n",
    "memory/a/meta.json": '{"agentId": "a", "version": 7, "schemaVersion": "1.0"}',
    "agents/a/_agent.md": "---\nname: A\n---\n",
    "agents/a/sources/b-procedures.md": "# Procedures\n\nWalk the pond at dawn.\n",
    "agents/a/sources/a-domain.md": "# Domain\n\nHerons are wading birds.\n",
    "agents/a/sources/photo.png": b"\x89PNG\x00\x00binary",
    "memory/b/facts.md": "# Facts: b\n\n## Domain\n- Egrets and herons share the pond.\n"
                         "- Kingfishers are fast.\n",
    "memory/b/decisions.md": "# Decisions: b\n\n## 2026-01-01 — Heron budget\n"
                             "**Status:** accepted\n",
    "logic/b/current.pseudo.md": "# Logic\n\nIF heron THEN log it\n",
    "memory/c/snapshot.md": "# Snapshot: c\n\nNothing about birds.\n",
}
ENC = "cl100k_base"


@pytest.fixture
def repo_root(tmp_path: Path) -> Path:
    return make_repo(tmp_path, FILES)


def ctx(mw, root: Path, *args: str) -> dict:
    code, out, err = mw(root, "context", *args)
    assert code == 0, err
    return json.loads(out)


def test_layer1_then_sources_without_a_hint(repo_root, mw):
    doc = ctx(mw, repo_root, "a")
    assert [i["file"] for i in doc["layer1"]] == ["snapshot.md", "open_loops.md", "facts.md"]
    assert doc["layer1"][0]["text"] == SNAPSHOT
    assert [s["path"] for s in doc["sources"]] == ["agents/a/sources/a-domain.md",
                                                   "agents/a/sources/b-procedures.md"]
    assert doc["skipped"] == [{"path": "agents/a/sources/photo.png",
                               "reason": "binary, not UTF-8, over 4 MiB or not a plain "
                                         "file"}]
    assert doc["search"] is None and doc["dropped"] == [] and doc["missing"] == []
    assert doc["agentId"] == "a" and doc["version"] == 7 and doc["encoding"] == ENC
    assert doc["commit"] == git(repo_root, "rev-parse", "main").strip()
    texts = [i["text"] for i in doc["layer1"] + doc["sources"]]
    assert doc["tokenCount"] == sum(count_text(t, ENC) for t in texts)
    assert all(i["tokens"] == count_text(i["text"], ENC) for i in doc["layer1"])
    assert "decisions" not in json.dumps(doc)  # never Layer 2


def test_no_hint_does_not_build_an_index(repo_root, mw):
    builds = S.STATS["full"] + S.STATS["incremental"]
    ctx(mw, repo_root, "a")
    assert S.STATS["full"] + S.STATS["incremental"] == builds
    assert not (repo_root / ".git" / "memwarden" / "search").exists()


def test_query_hint_adds_hits_from_the_whole_repo_but_not_layer2(repo_root, mw):
    doc = ctx(mw, repo_root, "a", "--query-hint", "heron pond", "--top-k", "5")
    hits = doc["search"]["results"]
    files = [h["file"] for h in hits]
    assert doc["search"]["query"] == "heron pond" and doc["search"]["topK"] == 5
    assert "memory/b/facts.md" in files and "logic/b/current.pseudo.md" in files
    assert "memory/a/facts.md" not in files  # included whole already
    assert not any("decisions" in f for f in files)  # Layer 2 never
    assert hits[0]["text"] == "IF heron THEN log it"  # rarer word (no stemming: herons)
    assert "- Egrets and herons share the pond." in [h["text"] for h in hits]
    assert all(h["tokens"] == count_text(h["text"], ENC) for h in hits)
    assert doc["tokenCount"] == sum(i["tokens"] for i in doc["layer1"] + hits + doc["sources"])


def test_a_dropped_layer1_file_can_be_found_by_search(repo_root, mw):
    facts_tokens = count_text(FACTS, ENC)
    doc = ctx(mw, repo_root, "a", "--query-hint", "pond 17", "--budget",
              str(facts_tokens - 1))
    assert [i["file"] for i in doc["layer1"]] == ["snapshot.md", "open_loops.md"]
    assert {"part": "layer1", "path": "memory/a/facts.md", "tokens": facts_tokens} \
        in doc["dropped"]
    assert doc["search"]["results"][0]["text"] == "- Fact 17: herons nest near pond 17 in " \
                                                  "spring."


def test_small_budget_drops_whole_items_in_priority_order(repo_root, mw):
    snap = count_text(SNAPSHOT, ENC)
    doc = ctx(mw, repo_root, "a", "--budget", str(snap))
    assert [i["file"] for i in doc["layer1"]] == ["snapshot.md"]
    assert doc["tokenCount"] == snap
    assert [d["path"] for d in doc["dropped"]] == [
        "memory/a/open_loops.md", "memory/a/facts.md", "agents/a/sources/a-domain.md",
        "agents/a/sources/b-procedures.md"]


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(budget=st.integers(min_value=1, max_value=2500), top_k=st.integers(1, 8))
def test_any_budget_is_respected_deterministically(repo_root, budget, top_k):
    repo = open_repo(repo_root)
    doc = build_context(repo, "a", "herons pond dawn", budget=budget, top_k=top_k)
    kept = doc["layer1"] + doc["search"]["results"] + doc["sources"]
    assert doc["tokenCount"] == sum(i["tokens"] for i in kept) <= budget
    for d in doc["dropped"]:  # greedy: what was dropped did not fit even at the end
        assert d["tokens"] > budget - doc["tokenCount"]
    offered = len(doc["layer1"]) + len(doc["sources"]) + len(doc["search"]["results"])
    assert offered + len(doc["dropped"]) >= 3 + 2  # every candidate is kept or listed
    again = build_context(repo, "a", "herons pond dawn", budget=budget, top_k=top_k)
    assert json.dumps(again, sort_keys=True) == json.dumps(doc, sort_keys=True)


def test_output_is_byte_identical_and_clock_free(repo_root, mw):
    a = mw(repo_root, "context", "a", "--query-hint", "heron")
    for db in (repo_root / ".git" / "memwarden" / "search").rglob("*.db"):
        db.unlink()  # a cold index gives the same document
    b = mw(repo_root, "context", "a", "--query-hint", "heron")
    assert a == b and a[0] == 0
    doc = json.loads(a[1])
    assert set(doc) == {"agentId", "commit", "version", "encoding", "budget", "tokenCount",
                        "layer1", "search", "sources", "dropped", "missing", "skipped"}
    assert _dt.date.today().isoformat() not in a[1]  # nothing from the clock


def test_at_rev_and_missing_files(repo_root, mw):
    first = git(repo_root, "rev-parse", "HEAD").strip()
    (repo_root / "memory/a/open_loops.md").unlink()
    git(repo_root, "commit", "-qam", "drop loops")
    doc = ctx(mw, repo_root, "a")
    assert doc["missing"] == ["memory/a/open_loops.md"]
    old = ctx(mw, repo_root, "a", "--at", first)
    assert old["missing"] == [] and old["commit"] == first


def test_agent_with_only_a_snapshot(repo_root, mw):
    doc = ctx(mw, repo_root, "c", "--query-hint", "birds")
    assert [i["file"] for i in doc["layer1"]] == ["snapshot.md"] and doc["version"] is None
    assert doc["missing"] == ["memory/c/open_loops.md", "memory/c/facts.md"]


@pytest.mark.parametrize("args, needle", [
    (("nobody",), "nobody: not found"),
    (("nobody", "--query-hint", "heron"), "nobody: not found"),
    (("Bad Agent",), "not an agent id"),
    (("a", "--budget", "0"), "--budget 0"),
    (("a", "--top-k", "0"), "--top-k 0"),
    (("a", "--at", "nope"), "--at nope"),
    (("a", "--budget", "lots"), "lots"),
])
def test_bad_input_is_a_clear_exit_2(repo_root, mw, args, needle):
    code, out, err = mw(repo_root, "context", *args)
    assert code == 2 and needle in err and "Traceback" not in err and out == ""


def test_blank_hint_means_no_search(repo_root, mw):
    assert ctx(mw, repo_root, "a", "--query-hint", "  ")["search"] is None


def test_punctuation_hint_finds_nothing_quietly(repo_root, mw):
    assert ctx(mw, repo_root, "a", "--query-hint", "* -- ()")["search"]["results"] == []


def test_encoding_comes_from_the_commit_config(tmp_path, mw):
    root = make_repo(tmp_path, {**FILES, "memwarden.toml": 'encoding = "o200k_base"\n'})
    doc = ctx(mw, root, "a")
    assert doc["encoding"] == "o200k_base"
    assert doc["layer1"][0]["tokens"] == count_text(SNAPSHOT, "o200k_base")


def test_explicit_config_and_bare_repo(repo_root, tmp_path):
    bare = tmp_path / "bare.git"
    git(tmp_path, "clone", "-q", "--bare", str(repo_root), str(bare))
    cfg = parse_config('encoding = "o200k_base"\n')
    doc = build_context(open_repo(bare), "a", "heron", config=cfg)
    assert doc["encoding"] == "o200k_base" and doc["search"]["results"]


def test_symlinked_sources_are_left_out(tmp_path, mw):
    import os

    root = make_repo(tmp_path, {"memory/a/facts.md": "- fact\n",
                                "agents/a/sources/real.md": "real\n"}, commit=False)
    os.symlink("real.md", root / "agents/a/sources/link.md")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "x")
    for args in ((), ("--query-hint", "real")):  # tree walk, then index
        doc = ctx(mw, root, "a", *args)
        assert [s["path"] for s in doc["sources"]] == ["agents/a/sources/real.md"]
