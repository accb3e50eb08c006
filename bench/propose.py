"""Time `memwarden propose` and `memwarden gate` (CLI, end to end) on a generated repo.

Usage: python bench/propose.py REPO [--runs R]   (REPO from bench/gen_repo.py; the created
proposal branches are deleted afterwards). Targets (issue 4): propose <= 0.3 s,
gate of a typical proposal on 1,000 agents <= 0.5 s.
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


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("repo", type=Path)
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args(argv)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    agent = sorted(p.name for p in (args.repo / "memory").iterdir())[0]
    exe = shutil.which("memwarden") or f"{sys.executable} -m memwarden"
    times, gate_times, branches = [], [], []
    with tempfile.TemporaryDirectory() as d:
        for i in range(args.runs):
            req = Path(d) / f"r{i}.json"
            req.write_text(json.dumps({
                "agentId": agent, "runId": f"run_bench{i}_{time.time_ns()}",
                "updates": [{"file": "open_loops.md", "operation": "add_loop",
                             "content": f"bench loop {i} {time.time_ns()}"}]}))
            t = time.perf_counter()
            out = subprocess.run([*exe.split(), "propose", str(req)], cwd=args.repo, env=env,
                                 capture_output=True, text=True, check=True).stdout
            times.append(time.perf_counter() - t)
            branches.append(json.loads(out)["branch"])
            t = time.perf_counter()
            subprocess.run([*exe.split(), "gate", branches[-1]], cwd=args.repo, env=env,
                           capture_output=True, text=True)
            gate_times.append(time.perf_counter() - t)
    for b in branches:
        subprocess.run(["git", "branch", "-qD", b], cwd=args.repo, check=True)
    print(f"memwarden propose: min {min(times):.3f} s, median {statistics.median(times):.3f} s "
          f"({args.runs} runs; target <= 0.3 s)")
    print(f"memwarden gate:    min {min(gate_times):.3f} s, median "
          f"{statistics.median(gate_times):.3f} s ({args.runs} runs; target <= 0.5 s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
