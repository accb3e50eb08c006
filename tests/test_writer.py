"""Writer.commit_changes rebuilds only changed subtrees; the result equals applying the
changes to the file list (hypothesis), and git fsck accepts every tree it writes."""

from __future__ import annotations

import subprocess

import pytest
from conftest import git, make_repo
from hypothesis import given, settings
from hypothesis import strategies as st

from memwarden.git.repo import Writer, open_repo

NAMES = st.sampled_from(["a", "b", "memory", "x.md", "facts.md", "日本", "z-1"])
PATHS = st.lists(NAMES, min_size=1, max_size=3).map("/".join)
IDENT = ("t", "t@example.invalid")


@settings(max_examples=40, deadline=None)
@given(start=st.dictionaries(PATHS, st.binary(max_size=8), max_size=6),
       changes=st.dictionaries(PATHS, st.none() | st.binary(max_size=8), max_size=6))
def test_commit_changes_equals_the_file_list(tmp_path_factory, start, changes):
    # a path cannot be both a file and a folder: keep the first of such clashes
    def consistent(files):
        out = {}
        for p in sorted(files):
            if any(p.startswith(q + "/") or q.startswith(p + "/") for q in out):
                continue
            out[p] = files[p]
        return out

    start = consistent(start)
    changes = {p: v for p, v in changes.items()
               if not any(p.startswith(q + "/") or q.startswith(p + "/")
                          for q in start if q != p)}
    changes = consistent(changes)
    root = make_repo(tmp_path_factory.mktemp("w"), {"keep.md": "k\n"})
    repo = open_repo(root)
    base = Writer(repo).commit_changes("HEAD", dict(start), "start\n", IDENT, IDENT)
    new = Writer(repo).commit_changes(base, dict(changes), "change\n", IDENT, IDENT)
    want = {"keep.md": b"k\n", **start}
    for p, v in changes.items():
        if v is None:
            want.pop(p, None)
        else:
            want[p] = v
    listed = git(root, "ls-tree", "-r", "-z", "--name-only", new).split("\0")
    assert sorted(x for x in listed if x) == sorted(want)
    for p, v in want.items():
        assert repo.read_path(new, p) == v
    subprocess.run(["git", "fsck", "--strict", "--no-dangling"], cwd=root, check=True,
                   capture_output=True)


def _modes(root, rev: str) -> dict[str, str]:
    rows = git(root, "ls-tree", "-r", "-z", rev).split("\0")
    return {r.split("\t", 1)[1]: r.split(" ", 1)[0] for r in rows if r}


def test_modes_are_written_kept_on_edit_and_default_to_a_plain_file(tmp_path):
    """An executable file edited stays executable (as in git); `modes` sets a mode, a
    symlink included; new files are 100644. (test_heldobjects checks that the held
    splice writes the same trees.)"""
    root = make_repo(tmp_path, {"keep.md": "k\n"})
    repo = open_repo(root)
    base = Writer(repo).commit_changes(
        "HEAD", {"logic/run.sh": b"#!/bin/sh\n", "logic/link": b"run.sh", "a.md": b"a\n"},
        "start\n", IDENT, IDENT, modes={"logic/run.sh": 0o100755, "logic/link": 0o120000})
    assert _modes(root, base) == {"keep.md": "100644", "a.md": "100644",
                                  "logic/run.sh": "100755", "logic/link": "120000"}
    edited = Writer(repo).commit_changes(base, {"logic/run.sh": b"#!/bin/sh\necho\n",
                                                "logic/link": b"run.sh\n", "b.md": b"b\n"},
                                         "edit\n", IDENT, IDENT)
    assert _modes(root, edited)["logic/run.sh"] == "100755"
    assert _modes(root, edited)["logic/link"] == "100644"  # content written is a file
    assert _modes(root, edited)["b.md"] == "100644"
    plain = Writer(repo).commit_changes(edited, {"logic/run.sh": b"#!/bin/sh\necho\n"},
                                        "chmod -x\n", IDENT, IDENT,
                                        modes={"logic/run.sh": 0o100644})
    assert _modes(root, plain)["logic/run.sh"] == "100644"
    assert git(root, "diff", "--summary", edited, plain).strip() == \
        "mode change 100755 => 100644 logic/run.sh"
    subprocess.run(["git", "fsck", "--strict", "--no-dangling"], cwd=root, check=True,
                   capture_output=True)


def test_a_gitlink_mode_is_refused(tmp_path):
    repo = open_repo(make_repo(tmp_path, {"keep.md": "k\n"}))
    with pytest.raises(ValueError, match="160000"):
        Writer(repo).commit_changes("HEAD", {"sub": b"x"}, "m\n", IDENT, IDENT,
                                    modes={"sub": 0o160000})
