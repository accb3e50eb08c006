"""Time the read side on a generated repo: read (in-process and CLI), search, context.

Usage: python bench/read.py REPO [--samples N] [--seed S]   (REPO from bench/gen_repo.py).
Targets (issue 6): read wide in-process P95 <= 20 ms, CLI <= 0.25 s; search warm P95
<= 50 ms; context P95 <= 200 ms. Writes bench/out/read.json.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

WORDS = ["catalogue", "importer", "source", "review", "archive", "deadline", "owner",
         "каталог", "джерело", "перевірка", "власник", "архів", "release", "schema", "retry"]


def p95(xs: list[float]) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(0.95 * (len(xs) - 1))))]


def stats(name: str, xs: list[float], target: float | None) -> dict[str, float]:
    row = {"median_ms": statistics.median(xs) * 1e3, "p95_ms": p95(xs) * 1e3,
           "max_ms": max(xs) * 1e3, "n": len(xs)}
    goal = f" (target P95 <= {target * 1e3:.0f} ms)" if target else ""
    print(f"{name:<34} median {row['median_ms']:7.1f} ms  P95 {row['p95_ms']:7.1f} ms  "
          f"max {row['max_ms']:7.1f} ms{goal}")
    return row


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("repo", type=Path)
    ap.add_argument("--samples", type=int, default=200)
    ap.add_argument("--cli-runs", type=int, default=10)
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args(argv)
    import memwarden
    from memwarden.git.repo import open_repo

    rnd = random.Random(args.seed)
    repo = open_repo(args.repo)
    agents = sorted(p.name for p in (args.repo / "memory").iterdir())
    sample = [rnd.choice(agents) for _ in range(args.samples)]
    out: dict[str, object] = {"agents": len(agents)}
    for a in sample[:5]:  # warm the import, the tokenizer and the count cache once
        memwarden.read_memory(a, "wide", repo=repo)
    for mode, target in (("basic", None), ("wide", 0.020)):
        times = []
        for a in sample:
            t = time.perf_counter()
            memwarden.read_memory(a, mode, repo=repo)
            times.append(time.perf_counter() - t)
        out[f"read_{mode}"] = stats(f"read --mode {mode} (in-process)", times, target)

    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    exe = (shutil.which("memwarden") or f"{sys.executable} -m memwarden").split()
    # First reads: agents this commit's response cache has not seen (an unseeded pick, so
    # re-running the bench does not turn them into repeats); then the same agents again.
    fresh = random.Random().sample(agents, args.cli_runs)
    for label, key in (("first read", "read_wide_cli_first"), ("repeat", "read_wide_cli")):
        times = []
        for a in fresh:
            t = time.perf_counter()
            subprocess.run([*exe, "read", a, "--mode", "wide"], cwd=args.repo, env=env,
                           capture_output=True, check=True)
            times.append(time.perf_counter() - t)
        out[key] = stats(f"read --mode wide CLI ({label})", times, 0.25)

    t = time.perf_counter()
    memwarden.search_memory("warmup", repo=repo)
    out["search_index_build_s"] = time.perf_counter() - t
    print(f"{'search index build (this tree)':<34} {out['search_index_build_s']:.2f} s "
          "(0 when it was already cached)")
    queries = [" ".join(rnd.sample(WORDS, rnd.randint(1, 3))) for _ in range(args.samples)]
    times = []
    for q in queries:
        t = time.perf_counter()
        memwarden.search_memory(q, repo=repo)
        times.append(time.perf_counter() - t)
    out["search_warm"] = stats("search (warm, in-process)", times, 0.050)
    times = []
    for a, q in zip(sample, queries, strict=True):
        t = time.perf_counter()
        memwarden.memory_context(a, repo=repo, query_hint=q)
        times.append(time.perf_counter() - t)
    out["context"] = stats("context --query-hint (in-process)", times, 0.200)
    dest = Path(__file__).parent / "out" / "read.json"
    dest.parent.mkdir(exist_ok=True)
    dest.write_text(json.dumps(out, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
