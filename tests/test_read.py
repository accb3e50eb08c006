"""`memwarden read`: modes, budgets (exact tiktoken counts), determinism, Layer 2 isolation."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import GIT_ENV, git, make_repo, write_files
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memwarden.git import repo as repo_module
from memwarden.git.repo import open_repo
from memwarden.model.entries import parse_facts
from memwarden.model.errors import MemwardenError
from memwarden.model.factids import resolve, short_ids
from memwarden.read.budget import serialize, split_keepends
from memwarden.read.reader import MODE_BUDGETS, read_memory, render_markdown
from memwarden.tokens.counter import count_text, get_encoder

SNAPSHOT = ("---\nagent: a\nupdated_at: \"2026-02-17T10:00:00Z\"\nversion: 4\nrun_id: run_3\n---\n"
            "# Snapshot: a\n\n## Role\nCurator of the \"garden\" notes.\n\n## Context\n"
            "- working on the index\n- waiting for the owner\n")
LOOPS = ("# Open Loops: a\n\n## Critical\n"
         "- [ ] loop_001: confirm the bucket (opened 2026-02-01, priority high)\n"
         "- [ ] loop_002: ask about tags (opened 2026-02-03)\n\n## Closed\n"
         "- [x] loop_000: old question — closed 2026-02-15 | run_2\n")
FACTS = ("# Facts: a\n\n## Domain\n- MinIO keeps versions\n- [2026-02-01] notes are Markdown\n"
         "  with a continuation line\n\n## Technical\n- the index is rebuilt nightly\n"
         "\n## Deprecated\n- the old bucket name was `x`\n")


def decisions(n: int) -> str:
    # Dates out of file order: "last 5" means the 5 newest by date.
    days = [3, 1, 9, 5, 7, 2, 8][:n]
    blocks = [f"## 2026-02-0{d} — decision {d}\n**Status:** Accepted\n**Decision:** use {d}\n"
              for d in days]
    return "# Decisions: a\n\n" + "\n".join(blocks)


CHANGELOG = ("# Changelog: a\n\n## 2026-02-16\n\n### 08:00 — run_3 / p-3\n"
             "- **facts.md:** CHANGELOG-MARKER added\n")
META = '{"agentId": "a", "version": 4, "schemaVersion": "1.0", "lastRunId": "run_3"}\n'
FILES = {
    "memory/a/snapshot.md": SNAPSHOT, "memory/a/open_loops.md": LOOPS,
    "memory/a/facts.md": FACTS, "memory/a/decisions.md": decisions(7),
    "memory/a/changelog.md": CHANGELOG, "memory/a/meta.json": META,
    "memory/a/timeline/2026-02-16.md": "# Timeline: a / 2026-02-16\n\n### 08:00 — run_3\n"
                                       "TIMELINE-IN-WINDOW\n",
    "memory/a/timeline/2026-02-01.md": "# Timeline: a / 2026-02-01\n\n### 08:00 — run_1\n"
                                       "TIMELINE-TOO-OLD\n",
    "memory/a/runs/run_3.md": "# Run run_3\nRUN-MARKER\n",
    "memory/a/relationships.md": "# Relationships\nRELATIONSHIPS-MARKER\n",
    "memory/a/notes.txt": "UNKNOWN-MARKER\n",
    "memory/b/snapshot.md": "# Snapshot: b\nOTHER-AGENT-MARKER\n",
}
LAYER2_MARKERS = ("CHANGELOG-MARKER", "TIMELINE-IN-WINDOW", "TIMELINE-TOO-OLD", "RUN-MARKER",
                  "RELATIONSHIPS-MARKER", "UNKNOWN-MARKER", "OTHER-AGENT-MARKER")


def commit(root: Path, files: dict[str, str | bytes | None], when: str,
           message: str = "edit\n\nHuman-Edit: true") -> str:
    """Commit `files` (None deletes) with a fixed author/committer date; returns the sha."""
    for rel, content in files.items():
        if content is None:
            git(root, "rm", "-q", rel)
    write_files(root, {k: v for k, v in files.items() if v is not None})
    env = {**os.environ, **GIT_ENV, "GIT_AUTHOR_DATE": when, "GIT_COMMITTER_DATE": when}
    subprocess.run(["git", "add", "-A"], cwd=root, check=True, env=env)
    subprocess.run(["git", "commit", "-q", "--allow-empty", "-m", message], cwd=root,
                   check=True, env=env)
    return git(root, "rev-parse", "HEAD").strip()


def new_repo(tmp_path: Path, files: dict[str, str | bytes] = FILES,
             when: str = "2026-02-17T12:00:00Z") -> Path:
    root = make_repo(tmp_path, {}, commit=False)
    commit(root, dict(files), when)
    return root


@pytest.fixture
def repo(tmp_path):
    return new_repo(tmp_path)


def read_json(mw, root, *args):
    code, out, err = mw(root, "read", *args)
    assert code == 0, err
    assert out.endswith("}\n")
    return json.loads(out), out


def exact(out: str, encoding: str = "cl100k_base") -> int:
    return count_text(out, encoding)


def test_basic_shape_and_exact_count(repo, mw):
    doc, out = read_json(mw, repo, "a")
    assert list(doc) == ["agentId", "version", "commit", "mode", "tokenCount", "content",
                         "truncated", "excluded", "meta"]
    assert doc["agentId"] == "a" and doc["version"] == 4 and doc["mode"] == "basic"
    assert doc["commit"] == git(repo, "rev-parse", "main").strip()
    assert doc["content"] == {"snapshot.md": SNAPSHOT, "open_loops.md": LOOPS}
    assert doc["truncated"] == [] and doc["excluded"] == []
    assert doc["meta"] == {"lastRunId": "run_3", "commitDate": "2026-02-17T12:00:00Z",
                           "budget": 4100}
    assert doc["tokenCount"] == exact(out) <= 4100
    assert "loadedAt" not in out


@pytest.mark.parametrize("mode", ["basic", "wide"])
def test_layer2_never_leaks_into_basic_or_wide(repo, mw, mode):
    doc, out = read_json(mw, repo, "a", "--mode", mode)
    for marker in LAYER2_MARKERS:
        assert marker not in out
    expected = {"basic": ["snapshot.md", "open_loops.md"],
                "wide": ["snapshot.md", "open_loops.md", "facts.md", "decisions.md"]}[mode]
    assert list(doc["content"]) == expected


def test_deep_adds_changelog_and_seven_days_of_timeline_only(repo, mw):
    doc, out = read_json(mw, repo, "a", "--mode", "deep")
    assert list(doc["content"]) == ["snapshot.md", "open_loops.md", "facts.md",
                                    "decisions.md", "changelog.md", "timeline/2026-02-16.md"]
    assert "TIMELINE-TOO-OLD" not in out  # 2026-02-01 is outside the 7 days before 02-17
    for marker in ("RUN-MARKER", "RELATIONSHIPS-MARKER", "UNKNOWN-MARKER", "OTHER-AGENT"):
        assert marker not in out
    assert doc["meta"]["timeline"] == ["2026-02-11", "2026-02-17"]
    assert doc["tokenCount"] == exact(out)


def test_timeline_window_follows_the_commit_date_not_the_clock(tmp_path, mw):
    root = new_repo(tmp_path, when="2026-02-03T09:00:00Z")
    doc, out = read_json(mw, root, "a", "--mode", "deep")
    assert "TIMELINE-TOO-OLD" in out and "TIMELINE-IN-WINDOW" not in out


def test_wide_has_facts_ids_and_last_five_decisions_by_date(repo, mw):
    doc, out = read_json(mw, repo, "a", "--mode", "wide")
    dec = doc["content"]["decisions.md"]
    heads = [ln for ln in dec.splitlines() if ln.startswith("## ")]
    # 7 blocks dated 3,1,9,5,7,2,8: the 5 newest (3,9,5,7,8) stay, in file order.
    assert heads == [f"## 2026-02-0{d} — decision {d}" for d in (3, 9, 5, 7, 8)]
    assert dec.startswith("# Decisions: a\n\n## 2026-02-03")
    assert doc["meta"]["decisionsTotal"] == 7
    facts, _ = parse_facts(FACTS.splitlines())
    assert doc["meta"]["factIds"] == " ".join(short_ids([f.id for f in facts]))
    assert len(facts) == 4 and resolve(doc["meta"]["factIds"].split(),
                                       [f.id for f in facts]) == {f.id for f in facts}
    assert doc["content"]["facts.md"] == FACTS
    assert doc["tokenCount"] == exact(out) <= 13_000


def test_same_output_twice_and_in_a_clone(repo, mw, tmp_path):
    outs = [read_json(mw, repo, "a", "--mode", m)[1] for m in ("basic", "wide", "deep")]
    assert outs == [read_json(mw, repo, "a", "--mode", m)[1] for m in ("basic", "wide", "deep")]
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(repo), str(clone))
    assert outs == [read_json(mw, clone, "a", "--mode", m)[1] for m in ("basic", "wide", "deep")]
    bare = tmp_path / "bare.git"
    git(tmp_path, "clone", "-q", "--bare", str(repo), str(bare))
    assert outs == [read_json(mw, bare, "a", "--mode", m)[1] for m in ("basic", "wide", "deep")]


@pytest.mark.parametrize("budget", ["200", "300", "450"])
def test_budgeted_reads_are_identical_with_and_without_the_count_cache(repo, mw, budget):
    first = read_json(mw, repo, "a", "--mode", "wide", "--max-tokens", budget)[1]
    assert (repo / ".git" / "memwarden" / "read").is_dir()  # exact counts remembered
    assert read_json(mw, repo, "a", "--mode", "wide", "--max-tokens", budget)[1] == first
    assert serialize(read_memory(open_repo(repo), "a", "wide", int(budget))) == first


def test_at_an_older_commit_returns_old_content(repo, mw):
    old = git(repo, "rev-parse", "HEAD").strip()
    commit(repo, {"memory/a/snapshot.md": "# Snapshot: a\nNEW STATE\n"}, "2026-02-18T10:00:00Z")
    doc, _ = read_json(mw, repo, "a")
    assert doc["content"]["snapshot.md"] == "# Snapshot: a\nNEW STATE\n"
    doc, _ = read_json(mw, repo, "a", "--at", "HEAD~1")
    assert doc["content"]["snapshot.md"] == SNAPSHOT and doc["commit"] == old


def test_reads_main_not_the_checked_out_branch_or_working_tree(repo, mw):
    git(repo, "checkout", "-q", "-b", "proposals/a/p1")
    commit(repo, {"memory/a/snapshot.md": "# Snapshot: a\nPROPOSED\n"}, "2026-02-18T10:00:00Z")
    (repo / "memory/a/open_loops.md").write_text("WORKTREE EDIT\n")
    doc, out = read_json(mw, repo, "a")
    assert "PROPOSED" not in out and "WORKTREE EDIT" not in out
    doc, out = read_json(mw, repo, "a", "--at", "proposals/a/p1")
    assert "PROPOSED" in out and "WORKTREE EDIT" not in out


def test_main_branch_name_comes_from_the_config(tmp_path, mw):
    root = new_repo(tmp_path, {**FILES, "memwarden.toml": 'main_branch = "trunk"\n'})
    git(root, "branch", "-m", "main", "trunk")
    git(root, "checkout", "-q", "-b", "work")
    commit(root, {"memory/a/snapshot.md": "# Snapshot: a\nWORK\n"}, "2026-02-18T10:00:00Z")
    doc, _ = read_json(mw, root, "a")
    assert doc["commit"] == git(root, "rev-parse", "trunk").strip()


def test_bare_repository(repo, mw, tmp_path):
    bare = tmp_path / "only.git"
    git(tmp_path, "clone", "-q", "--bare", str(repo), str(bare))
    doc, out = read_json(mw, bare, "a", "--mode", "wide")
    assert doc["content"]["facts.md"] == FACTS and doc["tokenCount"] == exact(out)


def test_budget_truncates_at_entry_boundaries_in_priority_order(repo, mw):
    full, _ = read_json(mw, repo, "a", "--mode", "wide")
    doc, out = read_json(mw, repo, "a", "--mode", "wide", "--max-tokens", "300")
    assert doc["tokenCount"] == exact(out) <= 300
    assert doc["meta"]["budget"] == 300
    names = list(doc["content"])
    order = ["snapshot.md", "open_loops.md", "facts.md", "decisions.md"]
    assert names == order[:len(names)]
    cut = [n for n in order if n not in names]
    assert [e["file"] for e in doc["excluded"]] == cut and cut
    assert all(e["reason"] == "budget" for e in doc["excluded"])
    for name in doc["truncated"]:
        assert full["content"][name].startswith(doc["content"][name])
        assert doc["content"][name].endswith("\n")  # whole lines only
    if "facts.md" in names:
        kept, _ = parse_facts(doc["content"]["facts.md"].splitlines())
        assert doc["meta"]["factIds"] == " ".join(short_ids([f.id for f in kept]))


def test_decisions_keep_the_newest_first_when_cut(repo):
    r = open_repo(repo)
    full = read_memory(r, "a", "wide")
    seen = set()
    for budget in range(full["tokenCount"] - 1, full["tokenCount"] - 200, -1):
        doc = read_memory(r, "a", "wide", max_tokens=budget)
        if "decisions.md" not in doc["truncated"]:
            continue
        dec = doc["content"]["decisions.md"]
        days = [int(ln[11:13]) for ln in dec.splitlines() if ln.startswith("## ")]
        newest = [9, 8, 7, 5, 3][:len(days)]
        assert sorted(days) == sorted(newest)  # the newest blocks survive...
        assert days == [d for d in (3, 9, 5, 7, 8) if d in days]  # ...in file order
        assert dec.startswith("# Decisions: a\n")
        seen.add(len(days))
    assert len(seen) >= 3


def test_snapshot_is_cut_at_whole_lines(tmp_path):
    lines = "".join(f"line {i} of the snapshot with some words\n" for i in range(300))
    root = new_repo(tmp_path, {"memory/a/snapshot.md": lines})
    r = open_repo(root)
    doc = read_memory(r, "a", "basic", max_tokens=500)
    text = doc["content"]["snapshot.md"]
    assert doc["truncated"] == ["snapshot.md"] and lines.startswith(text) and text
    assert text.endswith("\n") and doc["tokenCount"] == exact(serialize(doc)) <= 500


def test_mode_budget_applies_without_max_tokens(tmp_path):
    big = "# Snapshot: a\n" + "".join(f"- point {i}: ‘quoted’ \"text\" \\ path\n"
                                      for i in range(1500))
    root = new_repo(tmp_path, {"memory/a/snapshot.md": big, "memory/a/open_loops.md": LOOPS})
    doc = read_memory(open_repo(root), "a", "basic", max_tokens=50_000)
    assert doc["meta"]["budget"] == 4100
    assert doc["tokenCount"] == exact(serialize(doc)) <= 4100
    assert doc["truncated"] == ["snapshot.md"]
    assert doc["excluded"] == [{"file": "open_loops.md", "reason": "budget"}]


def test_o200k_counts_are_exact(tmp_path, mw):
    root = new_repo(tmp_path, {**FILES, "memwarden.toml": 'encoding = "o200k_base"\n'})
    for args in (("--mode", "wide"), ("--mode", "wide", "--max-tokens", "333")):
        doc, out = read_json(mw, root, "a", *args)
        assert doc["tokenCount"] == exact(out, "o200k_base")


@pytest.mark.parametrize("encoding", ["cl100k_base", "o200k_base"])
def test_every_short_digit_run_is_one_token(encoding):
    """finish_count relies on this to place tokenCount without re-encoding."""
    enc = get_encoder(encoding)
    for n in range(1000):
        for s in {str(n), f"{n:02d}", f"{n:03d}"}:
            assert len(enc.encode_ordinary(s)) == 1, s


def test_unreadable_file_is_excluded_with_a_reason(tmp_path):
    root = new_repo(tmp_path, {**FILES, "memory/a/facts.md": b"\xff\xfe\x00binary"})
    doc = read_memory(open_repo(root), "a", "wide")
    assert "facts.md" not in doc["content"]
    assert {"file": "facts.md", "reason": "not UTF-8 text"} in doc["excluded"]


def test_agent_with_nothing_for_the_mode_reads_empty(tmp_path):
    root = new_repo(tmp_path, {"memory/a/facts.md": FACTS})
    doc = read_memory(open_repo(root), "a", "basic")
    assert doc["content"] == {} and doc["excluded"] == [] and doc["version"] == 0


def test_oversized_file_is_excluded_not_tokenized(tmp_path):
    huge = "# Facts: a\n\n## Domain\n" + "- x\n" * (1_100_000)
    root = new_repo(tmp_path, {**FILES, "memory/a/facts.md": huge})
    doc = read_memory(open_repo(root), "a", "wide")
    assert {"file": "facts.md", "reason": "larger than 4 MiB"} in doc["excluded"]
    assert "facts.md" not in doc["content"]


def test_missing_meta_gives_version_zero(tmp_path):
    files = {k: v for k, v in FILES.items() if not k.endswith("meta.json")}
    doc = read_memory(open_repo(new_repo(tmp_path, files)), "a")
    assert doc["version"] == 0 and "lastRunId" not in doc["meta"]


def test_markdown_format(repo, mw):
    code, out, err = mw(repo, "read", "a", "--mode", "wide", "--format", "md")
    assert code == 0, err
    assert out.startswith("# Memory of a (wide, version 4, commit ")
    assert "## facts.md\n```markdown\n# Facts: a\n" in out
    assert "fact ids (in file order): " in out


def test_markdown_fence_outlasts_fences_in_content(tmp_path):
    snap = "# Snapshot: a\n```\ncode\n```\n````\nmore\n````\n"
    root = new_repo(tmp_path, {"memory/a/snapshot.md": snap})
    md = render_markdown(read_memory(open_repo(root), "a"))
    assert "`````markdown\n" + snap + "`````\n" in md


def test_temporal_shows_diffs_since_a_date(repo, mw):
    commit(repo, {"memory/a/facts.md": FACTS + "- a brand new fact\n"}, "2026-02-19T08:00:00Z")
    doc, out = read_json(mw, repo, "a", "--mode", "temporal", "--since", "2026-02-18")
    diff = doc["diff"]
    assert diff["from"] == git(repo, "rev-parse", "HEAD~1").strip()
    assert diff["commits"] == 1 and diff["summary"] == "+1 -0"
    assert list(diff["files"]) == ["facts.md"]
    assert "+- a brand new fact\n" in diff["files"]["facts.md"]
    assert "RUN-MARKER" not in out and doc["tokenCount"] == exact(out) <= 32_000
    # Default range: the 7 days before the commit (the first commit is 2 days older).
    doc, _ = read_json(mw, repo, "a", "--mode", "temporal")
    assert doc["diff"]["from"] is None and doc["diff"]["since"] == "2026-02-12T08:00:00Z"
    assert set(doc["diff"]["files"]) == {"snapshot.md", "open_loops.md", "facts.md",
                                         "decisions.md"}


def test_temporal_diffs_are_dropped_first(repo, mw):
    commit(repo, {"memory/a/facts.md": FACTS + "- a brand new fact\n"}, "2026-02-19T08:00:00Z")
    full, _ = read_json(mw, repo, "a", "--mode", "temporal")
    doc, out = read_json(mw, repo, "a", "--mode", "temporal", "--max-tokens",
                         str(full["tokenCount"] - 20))
    assert doc["content"] == full["content"]
    assert any(e["file"].startswith("diff/") for e in doc["excluded"]) or \
        any(t.startswith("diff/") for t in doc["truncated"])
    assert doc["tokenCount"] == exact(out)


def test_times_have_four_digit_years(repo, mw):
    """strftime wrote the year 1 as "1-01-01T00:00:00Z"; every time memwarden writes is ISO
    8601 with four digits of year, and a forged commit time past the year 9999 reads as
    the calendar's last second instead of failing the read."""
    doc, _ = read_json(mw, repo, "a", "--mode", "temporal", "--since", "0001-01-01")
    assert doc["diff"]["since"] == "0001-01-01T00:00:00Z"
    doc, _ = read_json(mw, repo, "a", "--mode", "temporal", "--since",
                       "0999-12-31T23:00:00-01:00")
    assert doc["diff"]["since"] == "1000-01-01T00:00:00Z"
    env = {**os.environ, **GIT_ENV, "GIT_COMMITTER_DATE": "@253402300800 +0000"}
    (repo / "memory/a/facts.md").write_text(FACTS + "- from the far future\n")
    subprocess.run(["git", "commit", "-qam", "future\n\nHuman-Edit: true"], cwd=repo,
                   env=env, check=True)
    doc, _ = read_json(mw, repo, "a")
    assert doc["meta"]["commitDate"] == "9999-12-31T23:59:59Z"


@pytest.mark.parametrize("args, words", [
    (("a", "--mode", "temporal", "--since", "0001-01-01T00:00:00+01:00"), "years 1 and 9999"),
    (("a", "--mode", "temporal", "--since", "9999-12-31T23:59:59-01:00"), "years 1 and 9999"),
    (("nobody",), "no memory/nobody/"),
    (("Bad_Id",), "not an agent id"),
    (("a", "--at", "no-such-rev"), "--at no-such-rev: not a commit"),
    (("a", "--mode", "temporal", "--since", "yesterday-ish"), "--since yesterday-ish"),
    (("a", "--mode", "temporal", "--since", "2026-02-30"), "--since 2026-02-30"),
    (("a", "--since", "2026-02-01"), "temporal only"),
    (("a", "--mode", "wide", "--max-tokens", "5"), "too small"),
    (("a", "--mode", "sideways"), "sideways"),
    (("a", "--max-tokens", "0"), "0"),
    (("a", "--format", "xml"), "xml"),
])
def test_errors_exit_2_without_traceback(repo, mw, args, words):
    code, out, err = mw(repo, "read", *args)
    assert code == 2 and out == ""
    assert words in err and "Traceback" not in err


def test_outside_a_repository(tmp_path, mw):
    code, _, err = mw(tmp_path, "read", "a")
    assert code == 2 and "not inside a git repository" in err


def test_function_rejects_bad_mode(repo):
    with pytest.raises(MemwardenError, match="--mode 'full'"):
        read_memory(open_repo(repo), "a", "full")


# --------------------------------------------------------------------------- property

_text = st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=60)
_word = st.text(st.characters(codec="utf-8", categories=["L", "N", "P", "S", "Zs"]),
                min_size=1, max_size=40).filter(lambda s: s.strip())


@st.composite
def memories(draw):
    eol = draw(st.sampled_from(["\n", "\r\n"]))
    snap = "# Snapshot: a" + eol + "".join(draw(_word) + eol for _ in range(draw(
        st.integers(0, 25))))
    facts = "# Facts: a" + eol + eol + "## Domain" + eol + "".join(
        "- " + draw(_word) + eol for _ in range(draw(st.integers(0, 60))))
    loops = "# Open Loops: a" + eol + "".join(
        f"- [ ] loop_{i}: " + draw(_word) + eol for i in range(draw(st.integers(0, 20))))
    decs = "# Decisions: a" + eol + "".join(
        f"{eol}## 2026-01-{draw(st.integers(10, 28))} — {draw(_word)}{eol}"
        f"**Decision:** {draw(_text)}{eol}" for _ in range(draw(st.integers(0, 8))))
    files = {"memory/a/snapshot.md": snap, "memory/a/facts.md": facts,
             "memory/a/open_loops.md": loops, "memory/a/decisions.md": decs,
             "memory/a/changelog.md": "# Changelog" + eol + "".join(
                 f"## 2026-02-1{i}{eol}### 08:00 — run_{i} / p{eol}- {draw(_text)}{eol}"
                 for i in range(draw(st.integers(0, 5)))),
             "memory/a/timeline/2026-02-16.md": "### 08:00 — run_1" + eol + draw(_text),
             "memory/a/runs/run_1.md": "RUN-MARKER\n",
             "memory/a/meta.json": json.dumps({"agentId": "a", "version": draw(
                 st.integers(0, 10**9)), "lastRunId": draw(_text)})}
    return files


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(files=memories(), mode=st.sampled_from(["basic", "wide", "deep"]),
       budget=st.one_of(st.none(), st.integers(1, 6000)),
       encoding=st.sampled_from(["cl100k_base", "o200k_base"]))
def test_budget_is_never_exceeded_and_count_is_exact(tmp_path_factory, files, mode, budget,
                                                     encoding):
    tmp = tmp_path_factory.mktemp("prop")
    root = new_repo(tmp, {**files, "memwarden.toml": f'encoding = "{encoding}"\n'})
    r = open_repo(root)
    try:
        doc = read_memory(r, "a", mode, max_tokens=budget)
    except MemwardenError as exc:
        assert "too small" in str(exc) and budget is not None and budget < 400
        return
    out = serialize(doc)
    limit = min(budget or 10**9, MODE_BUDGETS[mode])
    assert doc["tokenCount"] == count_text(out, encoding) <= limit
    assert count_text(render_markdown(doc), encoding) <= doc["tokenCount"]
    assert "RUN-MARKER" not in out
    assert serialize(read_memory(r, "a", mode, max_tokens=budget)) == out
    with BatchReader(r) as objects:  # what the CLI reads through gives the same bytes
        assert serialize(read_memory(objects, "a", mode, max_tokens=budget)) == out
    for name, text in doc["content"].items():
        if name == "decisions.md":
            continue
        whole = files[f"memory/a/{name}"]
        if name in doc["truncated"]:
            assert whole.startswith(text) and len(text) < len(whole)
            assert text.endswith(("\n", "\r"))
        else:
            assert text == whole
    expected = {"basic": 2, "wide": 4, "deep": 6}[mode]
    assert len(doc["content"]) + len(doc["excluded"]) == expected
    if "facts.md" in doc["content"]:
        kept, _ = parse_facts([ln.rstrip("\r\n") for ln in
                               split_keepends(doc["content"]["facts.md"])])
        every, _ = parse_facts([ln.rstrip("\r\n") for ln in
                                split_keepends(files["memory/a/facts.md"])])
        short = dict(zip([f.id for f in every], short_ids([f.id for f in every]),
                         strict=True))
        assert doc["meta"]["factIds"] == " ".join(short[f.id] for f in kept)


# --------------------------------------------------------------------------- git cat-file

BatchReader = repo_module.BatchReader
ODD_PATHS = ["memory/a/facts.md", "memory/a/run.sh", "memory/a/link", "memory/a/sub",
             "memory/a/sub/x.md", "memory/a/mod", "memory/a/none.md", "memory/zz/facts.md",
             "memory", "memwarden.toml", "memory/a/facts.md/x", "./memory/a/facts.md",
             "memory//a/facts.md", "memory/a/../a/facts.md", "memory/a/na\nme.md",
             "memory/a/ü.md"]


def odd_repo(tmp_path: Path) -> Path:
    """Two commits holding an executable, a symlink, a folder, a gitlink and a non-ASCII
    name, the first committed a day after it was authored and tagged (annotated)."""
    root = make_repo(tmp_path, {}, commit=False)
    write_files(root, {"memory/a/facts.md": FACTS, "memory/a/run.sh": "#!/bin/sh\n",
                       "memory/a/sub/x.md": "x\n", "memory/a/ü.md": "u\n"})
    (root / "memory/a/run.sh").chmod(0o755)
    (root / "memory/a/link").symlink_to("facts.md")
    git(root, "add", "-A")
    git(root, "update-index", "--add", "--cacheinfo",
        f"160000,{'1' * 40},memory/a/mod")
    env = {**os.environ, **GIT_ENV, "GIT_AUTHOR_DATE": "2026-02-16T08:00:00Z",
           "GIT_COMMITTER_DATE": "2026-02-17T09:30:00Z"}
    subprocess.run(["git", "commit", "-q", "-m", "one"], cwd=root, check=True, env=env)
    git(root, "tag", "-a", "-m", "tag", "v1")
    commit(root, {"memory/a/facts.md": FACTS + "- later\n"}, "2026-02-18T10:00:00Z")
    return root


def test_batch_reader_answers_as_the_repo(tmp_path):
    root = odd_repo(tmp_path)
    r = open_repo(root)
    short = git(root, "rev-parse", "--short", "HEAD~1").strip()
    with BatchReader(r) as objects:
        for rev in ("HEAD", "main", "HEAD~1", "v1", short, r.resolve_commit("HEAD")):
            assert objects.resolve_commit(rev) == r.resolve_commit(rev), rev
            assert objects.commit_time(rev) == r.commit_time(rev), rev
            for path in ODD_PATHS:
                assert objects.read_path(rev, path) == r.read_path(rev, path), (rev, path)
                assert objects.entry_at(rev, path) == r.entry_at(rev, path), (rev, path)
        for bad in ("nope", "HEAD~9", "main:memory", "main\nHEAD", "v1^{tree}"):
            with pytest.raises(MemwardenError):
                r.resolve_commit(bad)
            with pytest.raises(MemwardenError):
                objects.resolve_commit(bad)


def test_batch_reader_falls_back_to_the_repo_when_git_cannot_answer(tmp_path, monkeypatch):
    root = odd_repo(tmp_path)
    r = open_repo(root)
    with BatchReader(r) as objects:  # git stops half way
        assert objects.read_path("HEAD", "memory/a/facts.md") == r.read_path(
            "HEAD", "memory/a/facts.md")
        objects._proc.kill()
        objects._proc.wait()
        for path in ODD_PATHS:
            assert objects.read_path("HEAD~1", path) == r.read_path("HEAD~1", path), path
            assert objects.entry_at("HEAD~1", path) == r.entry_at("HEAD~1", path), path
    monkeypatch.setenv("PATH", str(tmp_path / "no-git-here"))  # git never starts
    with BatchReader(r) as objects:
        assert objects.commit_time("v1") == r.commit_time("v1")
        assert objects.read_path("main", "memory/a/sub/x.md") == b"x\n"


@pytest.mark.parametrize("args", [("--mode", "basic"), ("--mode", "wide"), ("--mode", "deep"),
                                  ("--mode", "wide", "--max-tokens", "300"),
                                  ("--mode", "wide", "--at", "HEAD")])
def test_cli_bytes_equal_the_api_bytes(repo, mw, args):
    code, out, err = mw(repo, "read", "a", *args)
    assert code == 0, err
    mode, budget = args[1], int(args[3]) if "--max-tokens" in args else None
    assert out == serialize(read_memory(open_repo(repo), "a", mode, max_tokens=budget))


def test_cli_read_prints_what_the_api_reads(repo):
    script = ("import sys\nfrom memwarden.cli.main import main\n"
              "sys.exit(main(['read', 'a', '--mode', 'wide']))\n")
    proc = subprocess.run([sys.executable, "-c", script], cwd=repo, capture_output=True,
                          text=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == serialize(read_memory(open_repo(repo), "a", "wide"))


def test_meta_text_utf8_cannot_carry_is_left_out(tmp_path, mw):
    meta = '{"version": 2, "lastRunId": "\\ud800", "lastUpdate": "2026-02-17"}\n'
    root = new_repo(tmp_path, {**FILES, "memory/a/meta.json": meta})
    doc, out = read_json(mw, root, "a")
    assert "lastRunId" not in doc["meta"] and doc["meta"]["lastUpdate"] == "2026-02-17"
    assert doc["version"] == 2 and doc["tokenCount"] == exact(out)


# --------------------------------------------------------------------------- near the limits

WORDS_UK = ("архів нотатка скрипка етюд тег аудіо каталог джерело власник перевірка імпорт "
            "посилання вправа соната штрих тиждень відповідь пошук блокнот").split()
WORDS_EN = ("archive note violin etude tag audio catalogue source owner review import link "
            "exercise sonata bowing weekly answer search notebook shelf").split()


def _filler(prefix: str, n_tokens: int, line: callable) -> str:
    """Lines from `line(i)` after `prefix` until just under n_tokens (cl100k_base)."""
    out, i = prefix, 0
    while True:
        nxt = out + line(i)
        if count_text(nxt, "cl100k_base") > n_tokens:
            return out
        out, i = nxt, i + 1


def _sentence(i: int, words: list[str], n: int) -> str:
    return " ".join(words[(i * 7 + k * 3) % len(words)] for k in range(n))


def near_limit_files() -> dict[str, str]:
    """An agent whose Layer 1 is just under its HARD limits (snapshot 2,000, open loops
    2,000, facts 8,000, total 12,000) with seven decisions, half Ukrainian."""
    words = [WORDS_UK, WORDS_EN]
    snap = _filler("# Snapshot: a\n\n## Context\n", 1_950,
                   lambda i: f"- {_sentence(i, words[i % 2], 12)}\n")
    loops = _filler("# Open Loops: a\n\n## Open\n", 1_950,
                    lambda i: f"- [ ] loop_{i:03d}: {_sentence(i, words[i % 2], 10)} "
                              f"(opened 2026-02-{i % 27 + 1:02d})\n")
    facts = _filler("# Facts: a\n\n## Domain\n", 11_990 - count_text(snap, "cl100k_base")
                    - count_text(loops, "cl100k_base"),
                    lambda i: f"- [2026-01-{i % 28 + 1:02d}] fact {i}: "
                              f"{_sentence(i, words[i % 2], 16)}\n")
    decs = "# Decisions: a\n" + "".join(
        f"\n## 2026-02-{d:02d} — decision {d}\n**Status:** Accepted\n"
        f"**Context:** {_sentence(d, WORDS_EN, 30)}\n**Decision:** {_sentence(d, WORDS_UK, 25)}\n"
        for d in (3, 1, 9, 5, 7, 2, 8))
    return {"memory/a/snapshot.md": snap, "memory/a/open_loops.md": loops,
            "memory/a/facts.md": facts, "memory/a/decisions.md": decs,
            "memory/a/meta.json": META}


def test_wide_near_the_layer1_limits_keeps_facts_whole_and_the_newest_decisions(tmp_path):
    """Issue 20: with Layer 1 near its HARD limits a wide read used to spend ~950 tokens on
    meta.factIds and drop decisions.md whole. The fact ids now cost <= 2% of the budget and
    the newest decisions that fit come in, newest first, entry by entry."""
    files = near_limit_files()
    layer1 = sum(count_text(files[f"memory/a/{n}"], "cl100k_base")
                 for n in ("snapshot.md", "open_loops.md", "facts.md"))
    assert 11_900 <= layer1 <= 12_000
    r = open_repo(new_repo(tmp_path, files))
    doc = read_memory(r, "a", "wide")
    out = serialize(doc)
    assert doc["tokenCount"] == exact(out) <= 13_000
    facts, _ = parse_facts(files["memory/a/facts.md"].splitlines())
    assert doc["content"]["facts.md"] == files["memory/a/facts.md"]
    ids = doc["meta"]["factIds"]
    assert resolve(ids.split(), [f.id for f in facts]) == {f.id for f in facts}
    ids_cost = exact(serialize({**doc, "meta": {**doc["meta"], "factIds": ids}})) - exact(
        serialize({**doc, "meta": {**doc["meta"], "factIds": ""}}))
    old_cost = exact(json.dumps([f.id for f in facts], separators=(",", ":")))
    assert ids_cost <= 13_000 * 0.02 < old_cost
    dec = doc["content"].get("decisions.md", "")
    days = [int(ln[11:13]) for ln in dec.splitlines() if ln.startswith("## ")]
    assert days, doc["excluded"]  # decisions are no longer dropped whole
    assert sorted(days, reverse=True) == [9, 8, 7, 5, 3][:len(days)]  # the newest ones
    print(f"\nnear-limit wide read: {len(facts)} facts, ids {ids_cost} tokens "
          f"(full-id list {old_cost}), decisions kept {len(days)} of 5, "
          f"tokenCount {doc['tokenCount']}")
    assert serialize(read_memory(r, "a", "wide")) == out  # deterministic
