"""Measure the git hooks: commit-msg end to end through pre-commit, and pre-receive on a
push of 100 proposal commits to a local bare repository.

1. `git commit` of one staged memory file with a `repo: local` / `language: system`
   commit-msg hook (`memwarden hook commit-msg`), timed as the commit-msg stage alone via
   `pre-commit run --hook-stage commit-msg --commit-msg-filename F` (target <= 0.2 s), and
   pre-commit with a no-op hook for comparison;
2. `git push` of a proposal branch carrying 100 proposal commits to a bare repository with
   `memwarden install-server-hooks` (target <= 2 s for the hook; the push is timed whole
   and with the hook replaced by `exit 0`, the difference is the hook's cost).

Usage: python bench/hooks.py [--runs R] [--agents N]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ENV = {**os.environ, "GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "b@x.invalid",
       "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "b@x.invalid",
       "PRE_COMMIT_COLOR": "never"}
ENV.pop("PYTHONDONTWRITEBYTECODE", None)  # measure as users run it: with .pyc files


def sh(cwd: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(args, cwd=cwd, env=ENV, capture_output=True, text=True)
    if check and proc.returncode != 0:
        raise SystemExit(f"{' '.join(args)} failed: {proc.stdout}{proc.stderr}")
    return proc


def timed(fn, runs: int) -> list[float]:
    out = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t)
    return out


def memory_repo(root: Path, agents: int) -> None:
    root.mkdir(parents=True)
    sh(root, "git", "init", "-q", "-b", "main")
    for i in range(agents):
        d = root / "memory" / f"agent-{i:03d}"
        d.mkdir(parents=True)
        (d / "facts.md").write_text("# Facts\n\n## Domain\n" + "".join(
            f"- fact {j} of agent {i}: memory lives in git\n" for j in range(40)))
        (d / "meta.json").write_text(f'{{"agentId": "agent-{i:03d}", "version": 0, '
                                     '"schemaVersion": "1.0"}')
    sh(root, "git", "add", "-A")
    sh(root, "git", "commit", "-qm", "start\n\nHuman-Edit: true")


def bench_commit_msg(tmp: Path, runs: int) -> dict[str, list[float]]:
    root = tmp / "msg"
    memory_repo(root, 20)
    script = Path(sys.executable).parent / "memwarden"  # not a version manager's shim
    entry = (str(script) if script.is_file() else shutil.which("memwarden")
             or f"{sys.executable} -m memwarden")
    cfg = root / "pc.yaml"
    cfg.write_text(
        "repos:\n  - repo: local\n    hooks:\n"
        f"      - id: mw-msg\n        name: mw-msg\n        entry: {entry} hook commit-msg\n"
        "        language: system\n        stages: [commit-msg]\n"
        "      - id: noop\n        name: noop\n        entry: 'true'\n        language: system\n"
        "        stages: [commit-msg]\n")
    (root / "memory/agent-000/facts.md").write_text("# Facts\n\n- edited\n")
    sh(root, "git", "add", "-A")
    msg = root / ".git" / "BENCH_MSG"
    msg.write_text("Edit facts\n\nHuman-Edit: true\n")
    pc = [sys.executable, "-m", "pre_commit", "run", "-c", str(cfg), "--hook-stage",
          "commit-msg", "--commit-msg-filename", str(msg)]
    sh(root, *pc, "mw-msg")  # warm-up (pyc, caches)
    return {
        "commit-msg hook through pre-commit": timed(lambda: sh(root, *pc, "mw-msg"), runs),
        "pre-commit with a no-op hook": timed(lambda: sh(root, *pc, "noop"), runs),
        "memwarden hook commit-msg alone": timed(
            lambda: sh(root, *entry.split(), "hook", "commit-msg", str(msg)), runs),
    }


def bench_pre_receive(tmp: Path, runs: int, agents: int) -> dict[str, list[float]]:
    work = tmp / "work"
    memory_repo(work, agents)
    sh(work, "git", "checkout", "-qb", "proposals/agent-001/p-1")
    facts = work / "memory/agent-001/facts.md"
    for n in range(100):
        facts.write_text(facts.read_text() + f"- proposal fact {n}\n")
        sh(work, "git", "commit", "-qam",
           f"memory-update: agent-001 / run_{n} / p-1\n\nAgent-Id: agent-001\nRun-Id: run_{n}\n"
           "Proposal-Id: p-1\nPriority: normal\nExpected-Version: 0\n")
    results: dict[str, list[float]] = {"push of 100 proposal commits, with hook": [],
                                       "same push, hook replaced by exit 0": []}
    for i in range(runs):
        for label, hooked in (("push of 100 proposal commits, with hook", True),
                              ("same push, hook replaced by exit 0", False)):
            bare = tmp / f"remote-{i}-{hooked}.git"
            sh(tmp, "git", "clone", "-q", "--bare", "--single-branch", "-b", "main", str(work),
               str(bare))
            hook = bare / "hooks" / "pre-receive"
            if hooked:
                sh(tmp, *(shutil.which("memwarden") or "memwarden").split(),
                   "install-server-hooks", str(bare))
            else:
                hook.write_text("#!/bin/sh\nexit 0\n")
                hook.chmod(0o755)
            t = time.perf_counter()
            proc = sh(work, "git", "push", "-q", str(bare), "proposals/agent-001/p-1",
                      check=False)
            results[label].append(time.perf_counter() - t)
            if proc.returncode != 0:
                raise SystemExit(f"push rejected: {proc.stderr}")
    return results


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--agents", type=int, default=200)
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        res = {**bench_commit_msg(tmp, args.runs), **bench_pre_receive(tmp, args.runs,
                                                                        args.agents)}
    print(f"{'measurement':<45} {'min':>7} {'median':>7}")
    for k, v in res.items():
        print(f"{k:<45} {min(v):7.3f} {statistics.median(v):7.3f}")
    (HERE / "out").mkdir(exist_ok=True)
    (HERE / "out" / "hooks.json").write_text(json.dumps(res, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
