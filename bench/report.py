"""Time `memwarden report` on the 1,000-agent repository with >= 10,000 commits of history.

Usage: python bench/report.py [--repo GEN_REPO | --agents N] [--rounds R] [--work DIR]
                              [--reuse]

The history is made by real runs, not synthesised: R rounds (default 10) spread over 28
days; in each one every agent proposes (in-process `propose`, like bench/apply.py), the
branches go to a bare remote, and ONE `memwarden apply --all --push origin --approved-by
bench` lands them (the branches are then deleted in bulk). Every tenth agent adds
enough facts each round to overflow facts.md (eviction commits first: the eviction loops
the report must find), a few other agents overflow now and then, and three proposals a
round carry a stale Expected-Version (rejected: version_conflict). After the last round
20 proposals stay pending and 3 more are rejected by their owner (`memwarden reject`).

Then, in a bare clone of the remote (what a CI job has): the cold report (no
.git/memwarden/), the warm one (same commit, caches kept), both subprocesses with
interpreter start-up, over the whole history (`--since` the first round), for html, md and
json, with and without the findings check (`--no-findings`). Targets (issue 22): cold
<= 10 s, warm <= 1 s, HTML <= 2 MB. JSON: bench/out/report.json.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from apply import GIT_ENV, env, git, overflow_content  # noqa: E402

OUT = Path(__file__).resolve().parent / "out"
START = _dt.datetime(2026, 1, 20, 8, 0, tzinfo=_dt.UTC)
SPAN_DAYS = 28
LOOP_EVERY = 10  # agents i % LOOP_EVERY == 0 overflow every round
STALE_PER_ROUND = 3
PENDING = 20
OWNER_REJECTS = 3


def mw(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "memwarden", *args], cwd=cwd, env=env(),
                          capture_output=True, text=True)


def request(repo: Any, config: Any, slug: str, i: int, r: int, big: bool,
            stale: bool) -> dict[str, Any]:
    from memwarden.tokens.counter import count_text

    doc: dict[str, Any] = {"agentId": slug, "runId": f"run_r{r:02d}_{i:04d}",
                           "proposalId": f"p-r{r:02d}-{i:04d}", "reasoning": "bench run",
                           "task": "bench round", "result": "ok"}
    if big:
        facts = (repo.read_path("main", f"memory/{slug}/facts.md") or b"").decode()
        need = config.limit("facts", slug) - count_text(facts, config.encoding) + 150
        doc["updates"] = [{"file": "facts.md", "operation": "append", "section": "Bench",
                           "content": overflow_content(f"{slug} r{r}", max(need, 200),
                                                       config.encoding)}]
    elif (i + r) % 2:
        doc["updates"] = [{"file": "open_loops.md", "operation": "add_loop",
                           "content": f"check the digest after round {r} run {i}"}]
    else:
        doc["updates"] = [{"file": "facts.md", "operation": "append", "section": "Bench",
                           "content": f"round {r}: the digest moved to Fridays (run {i})"}]
    if stale:
        doc["expectedVersion"] = 0
    return doc


def make_round(work: Path, r: int, rounds: int, slugs: list[str]) -> list[str]:
    """Propose one change per agent on main at round r; returns the branch names."""
    from memwarden.apply.propose import propose
    from memwarden.git.repo import open_repo
    from memwarden.model.config import load_config_at

    repo = open_repo(work)
    assert repo is not None
    base = repo.resolve_commit("main")
    config = load_config_at(repo, base)
    at = START + _dt.timedelta(days=SPAN_DAYS * r / max(1, rounds - 1) if rounds > 1 else 0)
    branches = []
    for i, slug in enumerate(slugs):
        big = i % LOOP_EVERY == 0 or i % 37 == r
        stale = i % 333 == r + 1 and not big
        res = propose(repo, config, request(repo, config, slug, i, r, big, stale), base,
                      at + _dt.timedelta(seconds=i))
        branches.append(res.branch)
    return branches


def build_history(src: Path, root: Path, rounds: int) -> tuple[Path, dict[str, Any]]:
    origin = root / "origin.git"
    work = root / "work.git"
    git(root, "clone", "-q", "--bare", str(src), str(origin))
    git(root, "clone", "-q", "--bare", str(origin), str(work))
    from memwarden.git.repo import open_repo

    repo = open_repo(work)
    assert repo is not None
    slugs = sorted(e.path.split("/")[1] for e in repo.tree_entries("main")
                   if e.path.endswith("/meta.json") and e.path.startswith("memory/"))
    info: dict[str, Any] = {"agents": len(slugs), "rounds": rounds, "apply_seconds": [],
                            "statuses": {}}
    for r in range(rounds):
        t0 = time.perf_counter()
        last = r == rounds - 1
        branches = make_round(work, r, rounds, slugs)
        keep = set(branches[1::max(1, len(branches) // PENDING)][:PENDING]) if last else set()
        for b in keep:  # they stay on the remote only after the apply
            git(work, "update-ref", f"refs/keep/{b}", f"refs/heads/{b}")
            git(work, "update-ref", "-d", f"refs/heads/{b}")
        git(work, "push", "-q", str(origin), "refs/heads/proposals/*:refs/heads/proposals/*")
        now = (START + _dt.timedelta(days=SPAN_DAYS * r / max(1, rounds - 1), hours=6))
        proc = mw(work, "apply", "--all", "--push", str(origin), "--approved-by", "bench",
                  "--now", now.strftime("%Y-%m-%dT%H:%M:%SZ"))
        if proc.returncode not in (0, 1):
            raise SystemExit(f"apply failed: {proc.stderr[-3000:]}")
        for res in json.loads(proc.stdout)["results"]:
            key = res["status"] + (":" + res["reason"] if res["reason"] else "")
            info["statuses"][key] = info["statuses"].get(key, 0) + 1
        # what --delete-branches does one push at a time, in one go: applied branches leave
        # (and rejected ones too, so the next round's listing holds only its own)
        for repo_dir in (work, origin):
            for ref in git(repo_dir, "for-each-ref", "--format=%(refname)",
                           "refs/heads/proposals/").split():
                git(repo_dir, "update-ref", "-d", ref)
        info["apply_seconds"].append(round(time.perf_counter() - t0, 1))
        print(f"round {r + 1}/{rounds}: {info['apply_seconds'][-1]} s", flush=True)
        if last:
            for b in keep:
                git(work, "update-ref", f"refs/heads/{b}", f"refs/keep/{b}")
                git(work, "update-ref", "-d", f"refs/keep/{b}")
            git(work, "push", "-q", str(origin),
                "refs/heads/proposals/*:refs/heads/proposals/*")
            git(work, "push", "-q", "-f", str(origin), "refs/notes/memwarden")
            for b in sorted(keep)[:OWNER_REJECTS]:
                proc = mw(work, "reject", b.rsplit("/", 1)[-1], "--reason",
                          "duplicates an open loop", "--by", "bench-owner", "--push",
                          str(origin), "--now", now.strftime("%Y-%m-%dT%H:%M:%SZ"))
                if proc.returncode != 0:
                    raise SystemExit(f"reject failed: {proc.stderr}")
    log = git(origin, "log", "--first-parent", "--format=%s", "main").splitlines()
    info["commits"] = len(log)
    info["applied_commits"] = sum(s.startswith("memory-update:") for s in log)
    info["eviction_commits"] = sum(s.startswith("memory-evict:") for s in log)
    shutil.rmtree(work)
    return origin, info


CPU: dict[str, float] = {}  # label -> CPU seconds (user + sys) of the last timed run


def timed(cwd: Path, *args: str) -> tuple[float, subprocess.CompletedProcess[str]]:
    """Wall seconds of one `memwarden report` subprocess (CPU seconds, with its children,
    in CPU["last"]: on a shared machine the wall clock also measures the neighbours)."""
    import resource

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = mw(cwd, "report", *args)
    seconds = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    CPU["last"] = round(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime, 2)
    if proc.returncode != 0:
        raise SystemExit(f"report {' '.join(args)} failed: {proc.stderr[-3000:]}")
    return round(seconds, 2), proc


def measure(origin: Path, root: Path) -> dict[str, Any]:
    clone = root / "ci.git"
    shutil.rmtree(clone, ignore_errors=True)
    git(root, "clone", "-q", "--bare", str(origin), str(clone))
    git(clone, "fetch", "-q", "origin", "refs/notes/memwarden:refs/notes/memwarden")
    since = START.strftime("%Y-%m-%d")
    out: dict[str, Any] = {}
    for label, extra in (("no_findings", ["--no-findings"]), ("with_findings", [])):
        shutil.rmtree(clone / "memwarden", ignore_errors=True)
        row: dict[str, Any] = {}
        html = root / f"report-{label}.html"
        row["cold_html_s"], _ = timed(clone, "--since", since, "--format", "html", "-o",
                                      str(html), *extra)
        row["cold_html_cpu_s"] = CPU["last"]
        for run in range(3):
            row[f"warm_html_s_{run}"], _ = timed(clone, "--since", since, "--format", "html",
                                                 "-o", str(html), *extra)
            row[f"warm_html_cpu_s_{run}"] = CPU["last"]
        row["warm_md_s"], md = timed(clone, "--since", since, "--format", "md", *extra)
        row["warm_json_s"], js = timed(clone, "--since", since, "--format", "json", *extra)
        row["html_bytes"] = html.stat().st_size
        row["md_bytes"] = len(md.stdout.encode())
        row["json_bytes"] = len(js.stdout.encode())
        doc = json.loads(js.stdout)
        row["summary"] = doc["summary"]
        row["range_commits"] = doc["range"]["commits"]
        out[label] = row
        print(label, json.dumps({k: v for k, v in row.items() if k != "summary"}), flush=True)
    # the default range (30 days before main's commit time)
    shutil.rmtree(clone / "memwarden", ignore_errors=True)
    out["default_range_cold_html_s"], _ = timed(clone, "--format", "html", "-o",
                                                str(root / "default.html"), "--no-findings")
    out["default_range_cold_html_cpu_s"] = CPU["last"]
    out["load_average"] = os.getloadavg()
    shutil.copy(root / "report-with_findings.html", OUT / "report-1000.html")
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repo", type=Path, help="a bench/gen_repo.py repository")
    ap.add_argument("--agents", type=int, default=1000)
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--work", type=Path, help="keep the history here (default: a temp dir)")
    ap.add_argument("--reuse", action="store_true", help="use WORK/origin.git as it is")
    ap.add_argument("--history-only", action="store_true", help="build the history, no runs")
    args = ap.parse_args()
    OUT.mkdir(exist_ok=True)
    os.environ.update(GIT_ENV)
    root = args.work or Path(tempfile.mkdtemp(prefix="mw-report-bench-"))
    root.mkdir(parents=True, exist_ok=True)
    info: dict[str, Any] = {}
    if args.reuse:
        origin = root / "origin.git"
    else:
        src = args.repo
        if src is None:
            src = root / "gen"
            subprocess.run([sys.executable, str(Path(__file__).parent / "gen_repo.py"),
                            str(src), "--agents", str(args.agents)], check=True, env=env())
        t0 = time.perf_counter()
        origin, info = build_history(src, root, args.rounds)
        info["history_seconds"] = round(time.perf_counter() - t0, 1)
        print(json.dumps(info), flush=True)
    if args.history_only:
        return 0
    result = {"history": info, "report": measure(origin, root),
              "targets": {"cold_s": 10, "warm_s": 1, "html_bytes": 2 * 1024 * 1024}}
    (OUT / "report.json").write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))
    if not args.work:
        shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
