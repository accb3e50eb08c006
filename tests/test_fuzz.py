"""Hypothesis fuzzing of check, propose and restore (bounded here; bench/fuzz.py runs
10,000+ inputs): no input may end in a traceback or a hang. Plus git as the oracle for
the ref-name and `.git` path rules memwarden re-implements."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from conftest import git, make_repo
from hypothesis import given, settings
from hypothesis import strategies as st

from memwarden.model.layout import is_dotgit, valid_ref_id

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
import fuzz as bench_fuzz  # noqa: E402


@pytest.mark.parametrize("target", ["check", "propose", "restore"])
def test_fuzzed_inputs_never_end_in_a_traceback_or_a_hang(tmp_path, target):
    ws = bench_fuzz.Workspace(tmp_path)
    tally = bench_fuzz.Tally(timeout=10)
    examples = {"check": 250, "propose": 200, "restore": 200}[target]
    only = {"check": "check_inputs", "propose": "propose_inputs", "restore": "restore_inputs"}
    bench_fuzz.fuzz(ws, tally, examples, seed=0, only=only[target])
    assert tally.tracebacks == [], tally.tracebacks[0]
    assert tally.hangs == []
    assert tally.inputs[target] >= examples // 2


@settings(max_examples=150, deadline=None)
@given(st.text(st.sampled_from("ab.-_lock~^:/ @{\\\n"), min_size=1, max_size=12))
def test_valid_ref_id_agrees_with_git_check_ref_format(value):
    ok = subprocess.run(["git", "check-ref-format", "--branch", f"proposals/a/{value}"],
                        capture_output=True).returncode == 0
    if valid_ref_id(value):
        assert ok, value  # never accept what git refuses


@pytest.fixture(scope="module")
def oracle_repo(tmp_path_factory):
    root = make_repo(tmp_path_factory.mktemp("oracle"), {"x.md": "x\n"})
    blob = git(root, "hash-object", "-w", "--stdin", input="x\n").strip()
    return root, blob


@settings(max_examples=120, deadline=None)
@given(st.text(st.sampled_from(".gitGIT~1 :$\u200c\u200d\u200e\u202e\ufeff\u206aI"),
               min_size=1, max_size=8))
def test_is_dotgit_agrees_with_gits_protect_rules(oracle_repo, name):
    root, blob = oracle_repo
    proc = subprocess.run(["git", "-c", "core.protectHFS=true", "-c", "core.protectNTFS=true",
                           "update-index", "--add", "--cacheinfo",
                           f"100644,{blob},d/{name}/f"], cwd=root, capture_output=True)
    git_refuses = proc.returncode != 0
    if proc.returncode == 0:
        git(root, "rm", "-q", "--cached", f"d/{name}/f")
    if git_refuses and ":" not in name and name.strip(" .") not in ("", "."):
        assert is_dotgit(name) or name in (".", ".."), name
    if is_dotgit(name):
        assert git_refuses, name
