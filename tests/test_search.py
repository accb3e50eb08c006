"""`memwarden search`: BM25 over a commit's memory, per-tree cached index, safe queries."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import git, make_repo, write_files
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memwarden.git.repo import open_repo
from memwarden.model.errors import MemwardenError
from memwarden.read import search as S

FM = '---\nagent: "{a}"\nupdated_at: "2026-02-15T09:00:00Z"\n---\n'


def facts(agent: str, *bullets: str, section: str = "Domain") -> str:
    body = "".join(f"- {b}\n" for b in bullets)
    return FM.format(a=agent) + f"# Facts: {agent}\n\n## {section}\n{body}"


BASE = {
    "memory/alpha/facts.md": facts("alpha", "The gateway rotates tags for the catalogue.",
                                   "Zebra crossings are mapped weekly by the zebra team.",
                                   "Шлюз відхиляє нотатки коротші за 200 слів.",
                                   "Власник позначає нові нотатки у Київ."),
    "memory/alpha/snapshot.md": FM.format(a="alpha") + "# Snapshot: alpha\n\n## Role\n"
                                "Keeps the catalogue of notes.\n",
    "memory/alpha/open_loops.md": "# Open Loops: alpha\n\n## Critical\n"
                                  "- [ ] loop_001: confirm the bucket (opened 2026-02-01, "
                                  "priority high)\n",
    "memory/alpha/decisions.md": "# Decisions: alpha\n\n## 2026-01-05 — Use quokka storage\n"
                                 "**Status:** accepted\n**Context:** quokka was cheaper.\n",
    "memory/beta/facts.md": facts("beta", "Ёлка стоит в зале с декабря.",
                                  "The café is in the за\u0301мок.",
                                  "The catalogue is rebuilt nightly."),
    "memory/beta/meta.json": '{"agentId": "beta", "version": 2, "schemaVersion": "1.0"}',
    "logic/beta/current.pseudo.md": "# Logic: beta\n\nIF walrus THEN rebuild the catalogue\n",
    "agents/beta/_agent.md": "---\nname: Beta\n---\n",
    "agents/beta/sources/domain.md": "# Domain\n\nPelican migration notes for the catalogue.\n",
    "README.md": "zebra quokka walrus pelican (not governed, never indexed)\n",
}


@pytest.fixture
def repo_root(tmp_path: Path) -> Path:
    return make_repo(tmp_path, BASE)


def run_search(mw, root: Path, *args: str) -> list[dict]:
    code, out, err = mw(root, "search", *args)
    assert code == 0, err
    return json.loads(out)["results"]


def files_of(results: list[dict]) -> list[str]:
    return [r["file"] for r in results]


def index_files(root: Path) -> list[Path]:
    return sorted((root / ".git" / "memwarden" / "search" / f"v{S.SCHEMA}").glob("*.db"))


def commit_all(root: Path, files: dict[str, str | None], msg: str = "edit") -> None:
    for rel, content in files.items():
        if content is None:
            (root / rel).unlink()
    write_files(root, {k: v for k, v in files.items() if v is not None})
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", msg)


# --------------------------------------------------------------------------- ranking


def test_the_entry_with_the_term_ranks_first(repo_root, mw):
    res = run_search(mw, repo_root, "zebra")
    assert res[0]["file"] == "memory/alpha/facts.md"
    assert res[0]["excerpt"].startswith("- Zebra crossings")
    assert res[0]["line"] == 9 and res[0]["section"] == "Domain"
    assert res[0]["layer"] == 1 and res[0]["agent"] == "alpha" and res[0]["kind"] == "facts"
    assert res[0]["score"] > 0
    assert len(res) == 1  # README.md is not governed; nothing else mentions zebras


def test_more_query_words_rank_higher_and_scores_descend(repo_root, mw):
    res = run_search(mw, repo_root, "catalogue rotates tags")
    assert res[0]["excerpt"] == "- The gateway rotates tags for the catalogue."
    scores = [r["score"] for r in res]
    assert scores == sorted(scores, reverse=True) and len(res) >= 4


def test_prefix_word(repo_root, mw):
    assert files_of(run_search(mw, repo_root, "zeb*")) == ["memory/alpha/facts.md"]


def test_top_k(repo_root, mw):
    assert len(run_search(mw, repo_root, "catalogue", "--top-k", "2")) == 2


@pytest.mark.parametrize("query, file", [
    ("КИЇВ", "memory/alpha/facts.md"),  # case folds for Cyrillic
    ("київ", "memory/alpha/facts.md"),
    ("ШЛЮЗ НОТАТКИ", "memory/alpha/facts.md"),
    ("елка", "memory/beta/facts.md"),  # ё is read as е ...
    ("ЁЛКА", "memory/beta/facts.md"),  # ... both ways
    ("cafe", "memory/beta/facts.md"),  # Latin diacritics removed
    ("CAFÉ", "memory/beta/facts.md"),
    ("замок", "memory/beta/facts.md"),  # a combining stress mark is ignored ...
    ("за\u0301мок", "memory/beta/facts.md"),  # ... in the query too
    ("ки\u0457в", "memory/alpha/facts.md"),  # precomposed ї
    ("ки\u0456\u0308в", "memory/alpha/facts.md"),  # decomposed ї (NFC in the query)
])
def test_cyrillic_and_diacritics(repo_root, mw, query, file):
    assert files_of(run_search(mw, repo_root, query))[:1] == [file]


def test_text_format(repo_root, mw):
    code, out, _ = mw(repo_root, "search", "zebra", "--format", "text")
    assert code == 0 and out.split()[1] == "memory/alpha/facts.md:9"


# --------------------------------------------------------------------------- scope


def test_default_scope_is_layer1_logic_and_sources(repo_root, mw):
    assert files_of(run_search(mw, repo_root, "walrus")) == ["logic/beta/current.pseudo.md"]
    hit = run_search(mw, repo_root, "pelican")
    assert files_of(hit) == ["agents/beta/sources/domain.md"]
    assert hit[0]["layer"] is None and hit[0]["kind"] == "agent_source"
    assert run_search(mw, repo_root, "quokka") == []  # Layer 2 only on request


def test_layer_filters(repo_root, mw):
    l2 = run_search(mw, repo_root, "quokka", "--layer", "2")
    assert files_of(l2) == ["memory/alpha/decisions.md"] and l2[0]["layer"] == 2
    assert l2[0]["excerpt"].startswith("## 2026-01-05 — Use quokka storage\n**Status:**")
    assert l2[0]["section"] == "2026-01-05 — Use quokka storage"
    assert run_search(mw, repo_root, "walrus pelican", "--layer", "1") == []
    l1 = run_search(mw, repo_root, "catalogue", "--layer", "1")
    assert {r["layer"] for r in l1} == {1}
    code, _, err = mw(repo_root, "search", "x", "--layer", "3")
    assert code == 2 and "--layer" in err


def test_agent_filter(repo_root, mw):
    everyone = files_of(run_search(mw, repo_root, "catalogue"))
    assert {"memory/alpha/facts.md", "memory/beta/facts.md"} <= set(everyone)
    beta = run_search(mw, repo_root, "catalogue", "--agent", "beta")
    assert {r["agent"] for r in beta} == {"beta"}
    assert {"memory/beta/facts.md", "logic/beta/current.pseudo.md",
            "agents/beta/sources/domain.md"} <= set(files_of(beta))
    code, _, err = mw(repo_root, "search", "x", "--agent", "gamma")
    assert code == 2 and "gamma" in err and "Traceback" not in err
    code, _, err = mw(repo_root, "search", "x", "--agent", "Not An Id")
    assert code == 2 and "not an agent id" in err


# --------------------------------------------------------------------------- queries


@pytest.mark.parametrize("query", ['foo-bar "x', "NOT", "*", "AND OR NOT", "(", '"', "a:b",
                                   "^zebra", "NEAR(zebra gateway, 2)", "body:zebra", "-",
                                   "'; DROP TABLE chunks; --", "zebra\x00", "{akey}: x",
                                   "zebra*", "**", "zeb* *"])
def test_weird_queries_never_break(repo_root, mw, query):
    code, out, err = mw(repo_root, "search", query)
    assert code == 0, err
    assert isinstance(json.loads(out)["results"], list)


@pytest.mark.parametrize("query", ["", "   ", "\t\n"])
def test_empty_query_is_a_usage_error(repo_root, mw, query):
    code, _, err = mw(repo_root, "search", query)
    assert code == 2 and "empty" in err


def test_special_words_are_plain_words(repo_root, mw):
    # NOT/AND/NEAR are searched as words; punctuation separates words like the index does
    assert files_of(run_search(mw, repo_root, "NOT zebra"))[:1] == ["memory/alpha/facts.md"]
    assert files_of(run_search(mw, repo_root, '"zebra-crossings'))[:1] == \
        ["memory/alpha/facts.md"]


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=60))
def test_match_expression_is_always_valid_fts5(text):
    conn = sqlite3.connect(":memory:")
    conn.execute(f"CREATE VIRTUAL TABLE t USING fts5(body, tokenize='{S.TOKENIZER}')")
    conn.execute("INSERT INTO t VALUES ('zebra Ёлка café')")
    try:
        expr = S.match_expression(text)
    except MemwardenError:
        assert not text.strip()
        return
    if expr:
        conn.execute("SELECT rowid FROM t WHERE t MATCH ?", (expr,)).fetchall()


def test_bad_options_and_revs(repo_root, mw, tmp_path):
    for args, needle in [(("--top-k", "0"), "--top-k"), (("--top-k", "5000"), "--top-k"),
                         (("--at", "no-such-rev"), "--at no-such-rev")]:
        code, _, err = mw(repo_root, "search", "zebra", *args)
        assert code == 2 and needle in err and "Traceback" not in err
    outside = tmp_path / "not-a-repo"
    outside.mkdir()
    code, _, err = mw(outside, "search", "zebra")
    assert code == 2 and "git repository" in err


# --------------------------------------------------------------------------- revisions


def test_reads_main_not_the_checked_out_branch_and_at(repo_root, mw):
    git(repo_root, "checkout", "-q", "-b", "work")
    commit_all(repo_root, {"memory/alpha/snapshot.md": "# Snapshot\n\nOkapi sighting.\n"})
    assert run_search(mw, repo_root, "okapi") == []  # default: main
    assert files_of(run_search(mw, repo_root, "okapi", "--at", "work")) == \
        ["memory/alpha/snapshot.md"]
    (repo_root / "memory/alpha/facts.md").write_text("- narwhal uncommitted\n")
    assert run_search(mw, repo_root, "narwhal", "--at", "work") == []  # committed trees only


def test_head_when_there_is_no_main(tmp_path, mw):
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "trunk")
    make_repo(tmp_path, {"memory/a/facts.md": "- ibis facts\n"})
    assert files_of(run_search(mw, root, "ibis")) == ["memory/a/facts.md"]


def test_main_branch_from_config(tmp_path, mw):
    root = make_repo(tmp_path, {"memory/a/facts.md": "- ibis facts\n",
                                "memwarden.toml": 'main_branch = "live"\n'})
    git(root, "branch", "live")
    commit_all(root, {"memory/a/facts.md": "- heron facts\n"})  # on main, not on live
    assert files_of(run_search(mw, root, "ibis")) == ["memory/a/facts.md"]
    assert run_search(mw, root, "heron") == []


def test_bare_repository(repo_root, tmp_path, mw):
    bare = tmp_path / "bare.git"
    git(tmp_path, "clone", "-q", "--bare", str(repo_root), str(bare))
    assert files_of(run_search(mw, bare, "zebra")) == ["memory/alpha/facts.md"]
    assert list((bare / "memwarden" / "search").rglob("*.db"))


def test_empty_repository(tmp_path, mw):
    root = tmp_path / "empty"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    code, _, err = mw(root, "search", "zebra")
    assert code == 2 and "no commit" in err


# --------------------------------------------------------------------------- cache


def test_unchanged_tree_reuses_the_index(repo_root, mw):
    run_search(mw, repo_root, "zebra")
    [db] = index_files(repo_root)
    before = (db.stat().st_ino, db.stat().st_size, dict(S.STATS))
    assert run_search(mw, repo_root, "catalogue")
    assert (db.stat().st_ino, db.stat().st_size) == before[:2]
    assert S.STATS["full"] == before[2]["full"]
    assert S.STATS["incremental"] == before[2]["incremental"]
    assert S.STATS["docs_indexed"] == before[2]["docs_indexed"]
    assert S.STATS["cached"] == before[2]["cached"] + 1
    # a commit that changes nothing indexed (same tree) reuses it too
    git(repo_root, "commit", "-q", "--allow-empty", "-m", "empty")
    run_search(mw, repo_root, "zebra")
    assert S.STATS["cached"] == before[2]["cached"] + 2 and index_files(repo_root) == [db]


def test_a_commit_indexes_only_changed_blobs(repo_root, mw):
    run_search(mw, repo_root, "zebra")
    before = dict(S.STATS)
    commit_all(repo_root, {
        "memory/alpha/facts.md": facts("alpha", "Kiwi birds replace the zebra team."),
        "memory/beta/facts.md": None,
        "memory/alnew/facts.md": facts("alnew", "Kiwi orchard notes."),
    })
    res = run_search(mw, repo_root, "kiwi")
    assert S.STATS["incremental"] == before["incremental"] + 1
    assert S.STATS["full"] == before["full"]
    assert S.STATS["docs_indexed"] == before["docs_indexed"] + 2  # changed + added only
    assert files_of(res) == ["memory/alnew/facts.md", "memory/alpha/facts.md"]  # shorter first
    assert run_search(mw, repo_root, "crossings") == []  # old blob's entries are gone
    assert run_search(mw, repo_root, "ёлка") == []  # deleted file is gone
    assert len(index_files(repo_root)) == 2  # both trees are cached


def _tied_repo(tmp_path: Path) -> Path:
    same = "Heron counts are logged at dawn."
    files = {f"memory/ag-{n:02d}/facts.md": facts(f"ag-{n:02d}", same, f"Other {n}.")
             for n in range(0, 20, 2)}
    files["memory/ag-zz/facts.md"] = facts("ag-zz", "Heron nest and heron eggs.")
    return make_repo(tmp_path, files)


def test_incremental_and_fresh_indexes_agree_exactly(tmp_path, mw):
    root = _tied_repo(tmp_path)
    run_search(mw, root, "heron")  # index of the first tree
    same = "Heron counts are logged at dawn."
    commit_all(root, {  # new paths land between existing ones in rowid order
        **{f"memory/ag-{n:02d}/facts.md": facts(f"ag-{n:02d}", same) for n in (1, 5, 13)},
        "memory/ag-04/facts.md": facts("ag-04", same, "Changed."),
        "memory/ag-08/facts.md": None,
    })
    incremental = run_search(mw, root, "heron logged", "--top-k", "50")
    assert S.STATS["incremental"] >= 1
    for db in index_files(root):
        db.unlink()
    fresh = run_search(mw, root, "heron logged", "--top-k", "50")
    assert incremental == fresh
    keys = [(-r["score"], r["file"], r["line"]) for r in fresh]
    assert keys == sorted(keys)  # score ties go by path
    assert "memory/ag-01/facts.md" in files_of(fresh)
    assert "memory/ag-08/facts.md" not in files_of(fresh)


@pytest.mark.parametrize("damage", ["garbage", "truncate", "empty", "foreign"])
def test_corrupt_index_is_rebuilt(repo_root, mw, damage):
    run_search(mw, repo_root, "zebra")
    [db] = index_files(repo_root)
    if damage == "garbage":
        db.write_bytes(b"not a database at all" * 100)
    elif damage == "truncate":
        data = db.read_bytes()
        db.write_bytes(data[: len(data) // 2])
    elif damage == "empty":
        db.write_bytes(b"")
    else:  # a sound SQLite file that is not this tree's index
        db.unlink()
        conn = sqlite3.connect(db)
        conn.execute("CREATE TABLE meta (key TEXT, value TEXT)")
        conn.execute("INSERT INTO meta VALUES ('schema', '1'), ('tree', 'x'), "
                     "('complete', '1')")
        conn.commit()
        conn.close()
    builds = S.STATS["full"] + S.STATS["incremental"]
    assert files_of(run_search(mw, repo_root, "zebra")) == ["memory/alpha/facts.md"]
    assert S.STATS["full"] + S.STATS["incremental"] == builds + 1


def test_pages_that_break_while_reading_are_rebuilt(repo_root, mw):
    run_search(mw, repo_root, "zebra")
    [db] = index_files(repo_root)
    conn = sqlite3.connect(db)
    page = conn.execute("PRAGMA page_size").fetchone()[0]
    [root] = conn.execute("SELECT rootpage FROM sqlite_master WHERE name = 'fts_data'").fetchone()
    conn.close()
    data = bytearray(db.read_bytes())  # the file opens and checks out; its FTS pages do not
    data[(root - 1) * page:root * page] = b"\xff" * page
    db.write_bytes(bytes(data))
    builds = S.STATS["full"] + S.STATS["incremental"]
    res = run_search(mw, repo_root, "zebra")
    assert files_of(res) == ["memory/alpha/facts.md"]
    assert S.STATS["full"] + S.STATS["incremental"] == builds + 1


def test_eviction_keeps_a_few_trees(repo_root, mw):
    for n in range(S.KEEP_INDEXES + 2):
        commit_all(repo_root, {"memory/alpha/snapshot.md": f"# Snapshot\n\nVersion {n}.\n"})
        run_search(mw, repo_root, "version")
    assert len(index_files(repo_root)) == S.KEEP_INDEXES


def test_concurrent_processes_build_one_sound_index(repo_root):
    code = ("import json, sys; from memwarden.read.search import search; from memwarden.git.repo "
            "import open_repo; print(json.dumps(search(open_repo('.'), 'zebra')))")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    procs = [subprocess.Popen([sys.executable, "-c", code], cwd=repo_root, env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(4)]
    outs = [p.communicate(timeout=120) for p in procs]
    assert all(p.returncode == 0 for p in procs), [err for _, err in outs]
    assert len({out for out, _ in outs}) == 1
    assert len(index_files(repo_root)) == 1
    assert not list(index_files(repo_root)[0].parent.glob(".tmp-*"))


# --------------------------------------------------------------------------- entries


def test_an_entry_with_very_many_matches_gets_a_linear_snippet():
    """FTS5's snippet() weighs every match against every other: past SNIPPET_MAX_WORDS
    words an entry gets long_snippet, the window around its first match."""
    body = "x " * 5000 + "- Éléphant rose " + "y " * 5000
    assert not S._words_at_most(body, S.SNIPPET_MAX_WORDS)
    out = S.long_snippet(body, S.match_terms("elephant"))
    assert out.startswith("…") and out.endswith("…") and "Éléphant rose" in out
    assert len(out) < 200
    assert S.long_snippet("- huge " + "w " * 99, S.match_terms("hug*")).startswith("- huge w")
    assert S.long_snippet("- x " * 99, S.match_terms("absent")).startswith("- x - x")



def test_long_entries_get_a_snippet(tmp_path, mw):
    filler = " ".join(f"word{n}" for n in range(150))
    root = make_repo(tmp_path, {"memory/a/decisions.md": (
        f"# Decisions: a\n\n## 2026-01-01 — Long one\n**Context:** {filler} flamingo "
        f"{filler}\n")})
    [hit] = run_search(mw, root, "flamingo", "--layer", "2")
    assert "flamingo" in hit["excerpt"] and len(hit["excerpt"]) < S.EXCERPT_CHARS
    assert hit["line"] == 3 and hit["end_line"] == 4


def test_binary_and_odd_files_are_skipped(tmp_path, mw):
    root = make_repo(tmp_path, {"memory/a/facts.md": b"- okapi \x00 binary\n",
                                "memory/a/snapshot.md": b"\xff\xfe okapi",
                                "agents/a/sources/img.png": b"okapi",
                                "memory/a/meta.json": '{"okapi": 1}',
                                "memory/a/open_loops.md": "- [ ] okapi loop\n"})
    assert files_of(run_search(mw, root, "okapi")) == ["memory/a/open_loops.md"]


LINE = st.sampled_from(["", "   ", "# Title", "## Section", "### Sub", "- bullet", "* star",
                        "1. numbered", "  - nested", "text line", "```", "~~~", "---",
                        "**Status:** ok", "    indented code"])


@settings(max_examples=300, deadline=None)
@given(st.lists(LINE, max_size=40), st.booleans())
def test_entries_cover_every_content_line_once(lines, blocks):
    text = "\n".join(lines)
    entries = S.split_entries(text, blocks)
    all_lines = text.split("\n")
    covered: list[int] = []
    for e in entries:
        assert 1 <= e.line <= e.end_line <= len(all_lines)
        assert e.body == "\n".join(all_lines[e.line - 1:e.end_line]).strip()
        covered.extend(range(e.line, e.end_line + 1))
    assert covered == sorted(set(covered))  # in order, no line twice
    start = S.body_start(all_lines)
    for n, line in enumerate(all_lines[start:], start=start + 1):
        if line.strip() and not line.lstrip().startswith("#"):
            assert n in covered, (n, line)


@settings(max_examples=50, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(st.text(alphabet="abc Ёё-*\"' :()", max_size=20))
def test_search_function_never_raises_on_text(repo_root, text):
    repo = open_repo(repo_root)
    try:
        res = S.search(repo, text)
    except MemwardenError:
        assert not text.strip()
        return
    assert isinstance(res, list)


def test_sharded_queries_match_one_thread(tmp_path, mw, monkeypatch):
    monkeypatch.setattr(S, "MIN_SHARDED_ENTRIES", 1)
    root = _tied_repo(tmp_path)
    monkeypatch.setattr(S, "THREADS", 1)
    single = run_search(mw, root, "heron logged other", "--top-k", "7")
    for threads in (2, 3, 8):
        monkeypatch.setattr(S, "THREADS", threads)
        assert run_search(mw, root, "heron logged other", "--top-k", "7") == single
    idx = S.open_index(open_repo(root), git(root, "rev-parse", "HEAD").strip())
    assert len(idx._shards()) == 8
    idx.close()


VOCAB = ["the", "and", "heron", "pond", "dawn", "census", "egret", "reed", "marsh", "tide",
         "шлюз", "нотатки", "і", "та", "дайджест"]


@pytest.fixture
def skewed_repo(tmp_path: Path) -> Path:
    """Entries where 'the' and 'і' are everywhere and the rest thins out: the MaxScore
    plan's territory."""
    import random

    rng = random.Random(7)
    files = {}
    for agent in ("ag-a", "ag-b", "ag-c", "ag-d"):
        bullets = []
        for _ in range(40):
            words = ["the", "і"] + [w for i, w in enumerate(VOCAB[2:]) if rng.random() < 0.8 /
                                    (i + 1)] * rng.randint(1, 2)
            rng.shuffle(words)
            bullets.append(" ".join(words) + ".")
        files[f"memory/{agent}/facts.md"] = facts(agent, *bullets)
    return make_repo(tmp_path, files)


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(words=st.lists(st.sampled_from(VOCAB + ["absent"]), min_size=2, max_size=7),
       top_k=st.integers(1, 30), threads=st.sampled_from([1, 3]))
def test_maxscore_plan_is_exact(skewed_repo, monkeypatch, words, top_k, threads):
    monkeypatch.setattr(S, "FREQ_MIN", 1)
    monkeypatch.setattr(S, "FREQ_SHARE", 0.0)
    monkeypatch.setattr(S, "MIN_SHARDED_ENTRIES", 1)
    monkeypatch.setattr(S, "THREADS", threads)
    repo = open_repo(skewed_repo)
    query = " ".join(words)
    planned = S.search(repo, query, top_k=top_k)
    with monkeypatch.context() as m:
        m.setattr(S.SearchIndex, "_counts", lambda self, table, terms: {})
        plain = S.search(repo, query, top_k=top_k)
    assert [(r["file"], r["line"]) for r in planned] == [(r["file"], r["line"]) for r in plain]
    assert [r["score"] for r in planned] == pytest.approx([r["score"] for r in plain],
                                                          abs=2e-6)


def test_maxscore_plan_skips_the_common_words(skewed_repo, monkeypatch):
    monkeypatch.setattr(S, "FREQ_MIN", 1)
    monkeypatch.setattr(S, "FREQ_SHARE", 0.0)
    repo = open_repo(skewed_repo)
    idx = S.open_index(repo, git(skewed_repo, "rev-parse", "HEAD").strip())
    seen: list[str] = []
    original = idx.conn

    class Spy:
        def execute(self, sql, params=()):
            if "MATCH" in sql and "bm25" in sql:
                seen.append(params[0])
            return original.execute(sql, params)

    idx.conn = Spy()  # type: ignore[assignment]
    terms = S.match_terms("the heron")
    idx.query(terms, top_k=3)
    idx.conn = original
    idx.close()
    # one query scores the rows holding 'heron' (with 'the' counted where present); the
    # rows holding only 'the' cannot reach the top 3 and are never scored
    assert len(seen) == 1 and 'body : ("heron")' in seen[0] and " NOT " not in seen[0]


def test_unwritable_cache_folder_falls_back_to_a_temp_folder(repo_root, mw, tmp_path,
                                                               monkeypatch):
    (repo_root / ".git" / "memwarden").write_text("a file where the cache folder goes\n")
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    assert files_of(run_search(mw, repo_root, "zebra")) == ["memory/alpha/facts.md"]
    assert len(list((tmp_path / "tmp").rglob("*.db"))) == 1
    before = dict(S.STATS)
    run_search(mw, repo_root, "zebra")  # found again there, not rebuilt
    assert S.STATS["cached"] == before["cached"] + 1 and S.STATS["full"] == before["full"]


def test_symlinks_are_not_indexed(tmp_path, mw):
    root = make_repo(tmp_path, {"memory/a/facts.md": "- plain okapi\n",
                                "agents/a/sources/real.md": "okapi source\n"}, commit=False)
    os.symlink("real.md", root / "agents/a/sources/link.md")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "x")
    assert sorted(files_of(run_search(mw, root, "okapi"))) == [
        "agents/a/sources/real.md", "memory/a/facts.md"]
