"""`memwarden diff`: per-file unified diffs of one agent's memory between two commits."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from conftest import GIT_ENV, git, make_repo, write_files
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memwarden.git.repo import open_repo
from memwarden.model.errors import MemwardenError
from memwarden.read.budget import serialize
from memwarden.read.diff import memory_diff, parse_since, unified
from memwarden.tokens.counter import count_text

FACTS = "# Facts: a\n\n## Domain\n" + "".join(f"- fact number {i}\n" for i in range(12))
LOOPS = "# Open Loops: a\n\n- [ ] loop_1: first question (opened 2026-02-01)\n"


def commit(root: Path, files: dict[str, str], when: str) -> str:
    """Commit `files` with a fixed author/committer date; returns the sha."""
    write_files(root, files)
    env = {**os.environ, **GIT_ENV, "GIT_AUTHOR_DATE": when, "GIT_COMMITTER_DATE": when}
    subprocess.run(["git", "add", "-A"], cwd=root, check=True, env=env)
    subprocess.run(["git", "commit", "-q", "-m", "edit\n\nHuman-Edit: true"], cwd=root,
                   check=True, env=env)
    return git(root, "rev-parse", "HEAD").strip()


@pytest.fixture
def hist(tmp_path):
    """main: c1 (02-01) create a and b; c2 (02-05) a/facts; c3 (02-08) only b;
    c4 (02-10) a/open_loops + a/timeline; returns (root, [c1, c2, c3, c4])."""
    root = make_repo(tmp_path, {}, commit=False)
    c1 = commit(root, {"memory/a/facts.md": FACTS, "memory/a/open_loops.md": LOOPS,
                       "memory/a/meta.json": '{"agentId": "a", "version": 1}\n',
                       "memory/b/facts.md": FACTS}, "2026-02-01T09:00:00Z")
    c2 = commit(root, {"memory/a/facts.md": FACTS.replace("- fact number 5\n",
                                                          "- fact number five, edited\n")
                       + "- a new fact\n"}, "2026-02-05T09:00:00Z")
    c3 = commit(root, {"memory/b/facts.md": FACTS + "- b only\n"}, "2026-02-08T09:00:00Z")
    c4 = commit(root, {"memory/a/open_loops.md": LOOPS + "- [ ] loop_2: second\n",
                       "memory/a/timeline/2026-02-10.md": "### 09:00 — run_4\nran\n"},
                "2026-02-10T09:00:00Z")
    return root, [c1, c2, c3, c4]


def run_diff(mw, root, *args):
    code, out, err = mw(root, "diff", *args)
    assert code == 0, err
    return json.loads(out), out


def applies(old: str | None, new: str | None, diff_text: str, tmp: Path, name: str) -> bool:
    """git apply (the oracle) turns `old` into `new` with our diff."""
    work = tmp / "apply"
    work.mkdir(exist_ok=True)
    target = work / name
    target.parent.mkdir(parents=True, exist_ok=True)
    if target.exists():
        target.unlink()
    if old is not None:
        target.write_bytes(old.encode("utf-8"))
    patch = tmp / "p.diff"
    patch.write_bytes(diff_text.encode("utf-8"))
    proc = subprocess.run(["git", "apply", "--unsafe-paths", "-p1", str(patch)], cwd=work,
                          capture_output=True)
    assert proc.returncode == 0, proc.stderr.decode()
    if new is None:
        return not target.exists()
    return target.read_bytes().decode("utf-8") == new


def test_since_picks_the_last_commit_before_the_date(hist, mw):
    root, (c1, c2, c3, c4) = hist
    doc, out = run_diff(mw, root, "a", "--since", "2026-02-03")
    assert doc["from"] == c1 and doc["to"] == c4
    assert doc["fromDate"] == "2026-02-01T09:00:00Z" and doc["toDate"] == "2026-02-10T09:00:00Z"
    assert doc["since"] == "2026-02-03T00:00:00Z"
    assert doc["commits"] == 2  # c2 and c4; c3 touched only agent b
    assert list(doc["files"]) == ["open_loops.md", "facts.md", "timeline/2026-02-10.md"]
    assert doc["files"] == {"open_loops.md": "+1 -0", "facts.md": "+2 -1",
                            "timeline/2026-02-10.md": "+2 -0"}
    assert doc["summary"] == "2 commits, 3 files changed, +5 -1"
    assert doc["diff"]["facts.md"].startswith("--- a/facts.md\n+++ b/facts.md\n@@ ")
    assert "-- fact number 5\n+- fact number five, edited\n" in doc["diff"]["facts.md"]
    assert doc["diff"]["timeline/2026-02-10.md"].startswith(
        "--- /dev/null\n+++ b/timeline/2026-02-10.md\n@@ -0,0 +1,2 @@\n")
    assert doc["tokenCount"] == count_text(out, "cl100k_base")
    assert doc["truncated"] == [] and doc["excluded"] == []


def test_the_diffs_apply_with_git(hist, tmp_path):
    root, (c1, _, _, c4) = hist
    r = open_repo(root)
    doc = memory_diff(r, "a", frm=c1, to=c4)
    for name, text in doc["diff"].items():
        old = r.read_path(c1, f"memory/a/{name}")
        new = r.read_path(c4, f"memory/a/{name}")
        assert applies(old.decode() if old else None, new.decode() if new else None, text,
                       tmp_path, name)


def test_from_to_and_files_filter(hist, mw):
    root, (c1, c2, c3, c4) = hist
    doc, _ = run_diff(mw, root, "a", "--from", c1, "--to", c2)
    assert list(doc["diff"]) == ["facts.md"] and doc["commits"] == 1
    doc, _ = run_diff(mw, root, "a", "--from", c2, "--to", c3)
    assert doc["diff"] == {} and doc["commits"] == 0 and doc["summary"].startswith("0 commits")
    doc, _ = run_diff(mw, root, "a", "--since", "2026-01-01", "--files", "timeline/",
                      "--files", "open_loops.md")
    assert doc["from"] is None and doc["fromDate"] is None  # before the first commit
    assert list(doc["diff"]) == ["open_loops.md", "timeline/2026-02-10.md"]
    assert doc["diff"]["open_loops.md"].startswith("--- /dev/null\n+++ b/open_loops.md\n")
    assert doc["commits"] == 3  # every commit touching agent a (c1, c2, c4), not per file
    doc, _ = run_diff(mw, root, "a", "--since", "2026-02-03", "--to", c2)
    assert doc["to"] == c2 and list(doc["diff"]) == ["facts.md"]


def test_commit_count_is_for_the_whole_agent(hist):
    root, (c1, _, _, c4) = hist
    doc = memory_diff(open_repo(root), "a", since="2026-01-01")
    assert doc["commits"] == 3  # c1, c2, c4


def test_since_accepts_date_times(hist):
    root, (c1, c2, _, _) = hist
    r = open_repo(root)
    assert memory_diff(r, "a", since="2026-02-05T09:00:00Z")["from"] == c2
    assert memory_diff(r, "a", since="2026-02-05T08:59:59+00:00")["from"] == c1
    assert memory_diff(r, "a", since="2026-02-05T11:00:00+02:00")["from"] == c2
    assert parse_since("2026-02-05") == parse_since("2026-02-05T00:00:00Z")


def test_token_cap_drops_hunks_in_a_stable_order(hist, mw):
    root, (c1, *_rest, c4) = hist
    full, _ = run_diff(mw, root, "a", "--from", c1, "--to", c4)
    cap = full["tokenCount"] - 10
    doc, out = run_diff(mw, root, "a", "--from", c1, "--to", c4, "--max-tokens", str(cap))
    assert doc["tokenCount"] == count_text(out, "cl100k_base") <= cap
    assert doc["files"] == full["files"] and doc["summary"] == full["summary"]
    gone = [e["file"] for e in doc["excluded"]] + doc["truncated"]
    assert gone and gone[-1] == "timeline/2026-02-10.md"  # the last file goes first
    assert all(e["reason"] == "budget" for e in doc["excluded"])
    again, out2 = run_diff(mw, root, "a", "--from", c1, "--to", c4, "--max-tokens", str(cap))
    assert out2 == out


def test_hunks_are_cut_whole(tmp_path):
    far = "".join(f"line {i}\n" for i in range(60))
    root = make_repo(tmp_path, {}, commit=False)
    c1 = commit(root, {"memory/a/facts.md": far}, "2026-02-01T09:00:00Z")
    c2 = commit(root, {"memory/a/facts.md": far.replace("line 3\n", "LINE 3\n")
                       .replace("line 50\n", "LINE 50\n")}, "2026-02-02T09:00:00Z")
    r = open_repo(root)
    full = memory_diff(r, "a", frm=c1, to=c2)
    assert full["diff"]["facts.md"].count("\n@@ ") == 2  # two hunks
    doc = memory_diff(r, "a", frm=c1, to=c2, max_tokens=full["tokenCount"] - 5)
    assert doc["truncated"] == ["facts.md"]
    assert doc["diff"]["facts.md"].count("@@ ") == 1 and "LINE 3" in doc["diff"]["facts.md"]


def test_tiny_cap_is_an_error(hist, mw):
    root, (c1, *_rest, c4) = hist
    code, out, err = mw(root, "diff", "a", "--from", c1, "--to", c4, "--max-tokens", "10")
    assert code == 2 and "too small" in err


def test_text_format(hist, mw):
    root, (c1, *_rest, c4) = hist
    code, out, err = mw(root, "diff", "a", "--from", c1, "--to", c4, "--format", "text")
    assert code == 0, err
    first = out.splitlines()[0]
    assert first.startswith(f"memory/a: {c1[:12]}..{c4[:12]} (2026-02-01T09:00:00Z")
    assert " facts.md " in out and "| +2 -1" in out and "+++ b/facts.md" in out


def test_deterministic_and_bare(hist, mw, tmp_path):
    root, _ = hist
    _, out = run_diff(mw, root, "a", "--since", "2026-02-03")
    bare = tmp_path / "b.git"
    git(tmp_path, "clone", "-q", "--bare", str(root), str(bare))
    assert run_diff(mw, bare, "a", "--since", "2026-02-03")[1] == out
    assert run_diff(mw, root, "a", "--since", "2026-02-03")[1] == out


def test_no_newline_at_end_and_binary(tmp_path):
    d = unified("x.md", b"one\ntwo", b"one\nthree\n")
    assert "-two\n\\ No newline at end of file\n+three\n" in d.text
    assert (d.added, d.removed) == (1, 1)
    b = unified("x.bin", b"\x00\x01", b"\x00\x02")
    assert b.text == "Binary files a/x.bin and b/x.bin differ\n"


@pytest.mark.parametrize("args, words", [
    (("a",), "either --since DATE or --from REV"),
    (("a", "--since", "2026-02-01", "--from", "HEAD"), "either --since"),
    (("a", "--since", "last week"), "--since last week"),
    (("a", "--from", "nope"), "--from nope: not a commit"),
    (("a", "--since", "2026-02-01", "--to", "nope"), "--to nope: not a commit"),
    (("zed", "--since", "2026-02-01"), "no memory/zed/"),
    (("A!", "--since", "2026-02-01"), "not an agent id"),
    (("a", "--since", "2026-02-01", "--files", "../b/facts.md"), "--files ../b/facts.md"),
    (("a", "--since", "2026-02-01", "--format", "yaml"), "yaml"),
])
def test_errors_exit_2(hist, mw, args, words):
    root, _ = hist
    code, out, err = mw(root, "diff", *args)
    assert code == 2 and out == ""
    assert words in err and "Traceback" not in err


def test_function_errors(hist):
    root, _ = hist
    with pytest.raises(MemwardenError, match="positive integer"):
        memory_diff(open_repo(root), "a", since="2026-02-01", max_tokens=0)


_lines = st.lists(st.sampled_from(["a", "b", "c", "- fact", "", "## H", "x y z", "ü"]),
                  max_size=30)


@settings(max_examples=30, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(old=_lines, new=_lines, old_nl=st.booleans(), new_nl=st.booleans())
def test_unified_diff_applies_with_git_apply(tmp_path_factory, old, new, old_nl, new_nl):
    a = "\n".join(old) + ("\n" if old_nl and old else "")
    b = "\n".join(new) + ("\n" if new_nl and new else "")
    if a == b:
        return
    d = unified("f.md", a.encode(), b.encode())
    tmp = tmp_path_factory.mktemp("u")
    assert applies(a, b, d.text, tmp, "f.md")
    assert d.added == sum(1 for ln in d.text.splitlines()[2:] if ln.startswith("+"))
    assert serialize({"x": d.text})  # serializable
