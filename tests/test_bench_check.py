"""bench/check.py's helpers that read other tools' output: the git trace and the shebang."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from conftest import GIT_ENV, make_repo

BENCH = Path(__file__).resolve().parents[1] / "bench"
sys.path.insert(0, str(BENCH))

import check as bench_check  # noqa: E402


def test_git_seconds_sums_top_level_git_processes_once(tmp_path):
    """A shell alias (`!git status`) runs a child git: only the parent's time counts, and
    two traced commands add up."""
    root = make_repo(tmp_path, {"a.md": "a\n"})
    trace = tmp_path / "trace.json"
    env = {**os.environ, **GIT_ENV, "GIT_TRACE2_EVENT": str(trace)}
    subprocess.run(["git", "-c", "alias.st=!git status", "st"], cwd=root, env=env,
                   check=True, capture_output=True)
    one = bench_check.git_seconds(trace)
    exits = [ev for ev in map(json.loads, trace.read_text().splitlines())
             if ev["event"] == "exit"]
    assert len(exits) == 2  # the alias and its child
    (parent,) = [ev for ev in exits if "/" not in ev["sid"]]
    assert one == parent["t_abs"] > 0
    subprocess.run(["git", "status"], cwd=root, env=env, check=True, capture_output=True)
    assert bench_check.git_seconds(trace) > one


def test_precommit_python_reads_the_scripts_shebang(tmp_path):
    script = tmp_path / "pre-commit"
    script.write_text("#!/opt/venv/bin/python3.11\nimport sys\n")
    assert bench_check.precommit_python(str(script)) == "/opt/venv/bin/python3.11"
    script.write_text("#!/bin/sh\nexec something\n")
    assert bench_check.precommit_python(str(script)) == sys.executable
