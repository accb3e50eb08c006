"""Time ONE `memwarden apply --all --push origin` over 1,000 proposals, beside a naive script.

Usage: python bench/apply.py [--repo REPO | --agents N] [--naive-sample K] [--profile]

REPO is a bench/gen_repo.py repository (never modified: it is cloned); without --repo one
is generated into a temp dir. Every agent gets one proposal (one run each), written
in-process on main with increasing commit times (FIFO order); every tenth agent's proposal
adds enough facts to push facts.md over its HARD limit, so apply must evict first. All
proposal branches go to a local bare remote in one push; a bare clone of it (what a CI job
fetches) then runs `memwarden apply --all --push origin --approved-by bench` once, timed
end to end (subprocess, interpreter start-up included). Target (issue 5): >= 100
proposals/s.

The naive baseline is what a team would script without memwarden: a worktree on main, and
per proposal `git merge --ff-only` (when main moved: `git rebase` the proposal onto main,
then the fast-forward) and `git push origin main`. No policy, no stale check, no eviction,
no bookkeeping: a lower bound on the work. It runs on the first K proposals (FIFO) of the
same set from the same start, and its time is extrapolated linearly to all proposals
(optimistic for the naive script: its checkouts grow as main moves away from the
proposals' base). Target: memwarden >= 20x the naive throughput.

--profile runs apply a second time, from the same start, under cProfile and prints the
hotspots (pstats file: bench/out/apply.prof). JSON: bench/out/apply.json.
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
from collections import Counter
from pathlib import Path
from typing import Any

NOW = "2026-02-18T12:00:00Z"  # the day after the generated repository's "today"
PROPOSED_AT = _dt.datetime(2026, 2, 18, 8, 0, tzinfo=_dt.UTC)
OUT = Path(__file__).resolve().parent / "out"
GIT_ENV = {"GIT_AUTHOR_NAME": "memwarden bench", "GIT_AUTHOR_EMAIL": "bench@memwarden.invalid",
           "GIT_COMMITTER_NAME": "memwarden bench",
           "GIT_COMMITTER_EMAIL": "bench@memwarden.invalid", "GIT_CONFIG_NOSYSTEM": "1"}
SUBJECTS = ["the weekly digest", "the archive bucket", "the reading list", "the tag list",
            "the review queue", "the folder index", "the source metadata", "the glossary"]


def env() -> dict[str, str]:
    drop = {"GIT_DIR", "GIT_INDEX_FILE", "GIT_WORK_TREE", "PYTHONDONTWRITEBYTECODE"}
    return {**{k: v for k, v in os.environ.items() if k not in drop}, **GIT_ENV}


def git(cwd: Path, *args: str) -> str:
    proc = subprocess.run(["git", *args], cwd=cwd, env=env(), capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"git {' '.join(args)} failed in {cwd}: {proc.stderr.strip()}")
    return proc.stdout


# ------------------------------------------------------------------------ proposals


def overflow_content(slug: str, need: int, encoding: str) -> str:
    """Fact bullets worth at least `need` tokens (each one unique)."""
    from memwarden.tokens.counter import count_text

    lines: list[str] = []
    k = 0
    while count_text("\n".join(lines), encoding) < need:
        s = SUBJECTS[k % len(SUBJECTS)]
        lines.append(f"- {slug} learned in the bench run that {s} batch {k} now waits for "
                     f"the owner's review before the importer sends it on")
        k += 1
    return "\n".join(lines)


def request(repo: Any, config: Any, slug: str, i: int, overflow: bool) -> dict[str, Any]:
    from memwarden.tokens.counter import count_text

    doc: dict[str, Any] = {"agentId": slug, "runId": f"run_bench_{i:04d}",
                           "proposalId": f"p-bench-{i:04d}",
                           "reasoning": "bench run", "factsUsed": []}
    if overflow:
        facts = (repo.read_path("main", f"memory/{slug}/facts.md") or b"").decode()
        have = count_text(facts, config.encoding)
        need = config.limit("facts", slug) - have + 150
        doc["updates"] = [{"file": "facts.md", "operation": "append", "section": "Bench",
                           "content": overflow_content(slug, need, config.encoding)}]
    elif i % 2:
        doc["updates"] = [{"file": "open_loops.md", "operation": "add_loop",
                           "content": f"check {SUBJECTS[i % 8]} after bench run {i}"}]
    else:
        doc["updates"] = [{"file": "facts.md", "operation": "append", "section": "Bench",
                           "content": f"{SUBJECTS[i % 8]} moved to Fridays (bench run {i})"}]
    return doc


def make_proposals(work: Path, overflow_every: int) -> dict[str, Any]:
    """One proposal per agent, in-process, FIFO commit times; returns counts."""
    from memwarden.apply.propose import propose
    from memwarden.git.repo import open_repo
    from memwarden.model.config import load_config_at

    repo = open_repo(work)
    assert repo is not None
    base = repo.resolve_commit("main")
    config = load_config_at(repo, base)
    slugs = sorted(e.path.split("/")[1] for e in repo.tree_entries(base)
                   if e.path.endswith("/meta.json") and e.path.startswith("memory/"))
    t0 = time.perf_counter()
    overflow = 0
    for i, slug in enumerate(slugs):
        big = overflow_every > 0 and i % overflow_every == 0
        overflow += big
        propose(repo, config, request(repo, config, slug, i, big), base,
                PROPOSED_AT + _dt.timedelta(seconds=i))
    return {"proposals": len(slugs), "overflow_proposals": overflow,
            "propose_seconds": round(time.perf_counter() - t0, 2)}


def prepare(src: Path, root: Path, overflow_every: int) -> tuple[Path, dict[str, Any]]:
    """A bare remote holding main and every proposal branch (the pristine start)."""
    work = root / "proposer.git"
    git(root, "clone", "-q", "--bare", str(src), str(work))
    info = make_proposals(work, overflow_every)
    origin = root / "pristine.git"
    git(root, "init", "-q", "--bare", "-b", "main", str(origin))
    git(work, "push", "-q", str(origin), "refs/heads/*:refs/heads/*")
    shutil.rmtree(work)
    return origin, info


def fresh(pristine: Path, root: Path, name: str) -> tuple[Path, Path]:
    """A copy of the pristine remote and a bare clone of it (origin = the copy)."""
    remote = root / f"{name}-origin.git"
    shutil.rmtree(remote, ignore_errors=True)
    shutil.copytree(pristine, remote)
    clone = root / f"{name}-applier.git"
    shutil.rmtree(clone, ignore_errors=True)
    git(root, "clone", "-q", "--bare", str(remote), str(clone))
    return remote, clone


# --------------------------------------------------------------------------- runs


def run_memwarden(pristine: Path, root: Path, profile: Path | None = None
                  ) -> dict[str, Any]:
    remote, clone = fresh(pristine, root, "prof" if profile else "mw")
    prefix = [sys.executable]
    if profile:
        prefix += ["-m", "cProfile", "-o", str(profile)]
    cmd = [*prefix, "-m", "memwarden", "apply", "--all", "--push", "origin",
           "--approved-by", "bench", "--now", NOW]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, cwd=clone, env=env(), capture_output=True, text=True)
    seconds = time.perf_counter() - t0
    if proc.returncode not in (0, 1):
        raise SystemExit(f"memwarden apply failed ({proc.returncode}): {proc.stderr[-3000:]}")
    results = json.loads(proc.stdout)["results"]
    statuses = Counter(f"{r['status']}{':' + r['reason'] if r['reason'] else ''}"
                       for r in results)
    log = git(remote, "log", "--first-parent", "--format=%s", "main").splitlines()
    return {"seconds": round(seconds, 2), "proposals": len(results),
            "proposals_per_s": round(len(results) / seconds, 1),
            "statuses": dict(statuses),
            "evicted_entries": sum(len(r["evicted"]) for r in results),
            "eviction_commits": sum(s.startswith("memory-evict:") for s in log),
            "applied_commits": sum(s.startswith("memory-update:") for s in log),
            "merges_on_main": len(git(remote, "rev-list", "--merges", "main").split())}


def run_naive(pristine: Path, root: Path, sample: int) -> dict[str, Any]:
    """Per proposal: ff-only merge into main (rebase onto main first when main moved),
    then push main. The worktree checkout is set up once, untimed."""
    remote, _ = fresh(pristine, root, "naive")
    wt = root / "naive-worktree"
    shutil.rmtree(wt, ignore_errors=True)
    git(root, "clone", "-q", str(remote), str(wt))
    branches = git(wt, "for-each-ref", "--sort=committerdate", "--format=%(refname:short)",
                   "refs/remotes/origin/proposals/").split()[:sample]
    fast = rebased = 0
    t0 = time.perf_counter()
    for b in branches:
        merge = subprocess.run(["git", "merge", "--ff-only", "-q", b], cwd=wt, env=env(),
                               capture_output=True)
        if merge.returncode == 0:
            fast += 1
        else:
            git(wt, "checkout", "-q", "-B", "naive-tmp", b)
            git(wt, "rebase", "-q", "main")
            git(wt, "checkout", "-q", "main")
            git(wt, "merge", "--ff-only", "-q", "naive-tmp")
            rebased += 1
        git(wt, "push", "-q", "origin", "main")
    seconds = time.perf_counter() - t0
    return {"sample": len(branches), "seconds": round(seconds, 2),
            "per_proposal_s": round(seconds / len(branches), 4),
            "proposals_per_s": round(len(branches) / seconds, 2),
            "fast_forwards": fast, "rebased": rebased}


def hotspots(path: Path, top: int = 15) -> dict[str, list[dict[str, Any]]]:
    """The profile's heaviest functions: project code by cumulative time, and everything
    by own time (waiting for git subprocesses shows up as select/poll)."""
    import pstats

    stats = pstats.Stats(str(path))
    here = str(Path(__file__).resolve().parent.parent)
    rows = [{"function": f"{Path(f).name}:{line}({name})", "file": f, "calls": nc,
             "own_s": round(tt, 3), "cumulative_s": round(ct, 3)}
            for (f, line, name), (_, nc, tt, ct, _) in stats.stats.items()]  # type: ignore
    ours = sorted((r for r in rows if r["file"].startswith(here)),
                  key=lambda r: -r["cumulative_s"])[:top]
    own = sorted(rows, key=lambda r: -r["own_s"])[:top]
    for r in ours + own:
        r.pop("file", None)
    return {"project_by_cumulative": ours, "all_by_own_time": own}


# --------------------------------------------------------------------------- main


def table(doc: dict[str, Any]) -> str:
    mw, nv = doc["memwarden"], doc["naive"]
    rows = [("", "proposals", "seconds", "proposals/s"),
            ("memwarden apply --all --push", str(mw["proposals"]), f"{mw['seconds']:.1f}",
             f"{mw['proposals_per_s']:.1f}"),
            (f"naive ff/rebase+push ({nv['sample']} run)", str(nv["sample"]),
             f"{nv['seconds']:.1f}", f"{nv['proposals_per_s']:.2f}"),
            (f"naive, extrapolated to {mw['proposals']}", str(mw["proposals"]),
             f"{nv['extrapolated_seconds']:.1f}", f"{nv['proposals_per_s']:.2f}")]
    w = [max(len(r[i]) for r in rows) for i in range(4)]
    lines = ["  ".join(c.ljust(w[i]) if i == 0 else c.rjust(w[i]) for i, c in enumerate(r))
             for r in rows]
    lines.insert(1, "-" * len(lines[0]))
    lines.append(f"throughput ratio memwarden/naive: {doc['ratio']:.1f}x (target >= 20x); "
                 f"memwarden target >= 100 proposals/s")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repo", type=Path, help="a bench/gen_repo.py repository (cloned)")
    ap.add_argument("--agents", type=int, default=1000, help="agents to generate (no --repo)")
    ap.add_argument("--overflow-every", type=int, default=10,
                    help="every Nth proposal overflows facts.md (default 10: 10%%)")
    ap.add_argument("--naive-sample", type=int, default=100)
    ap.add_argument("--profile", action="store_true", help="also profile a second apply run")
    ap.add_argument("--keep", action="store_true", help="keep the work directory")
    args = ap.parse_args(argv)
    root = Path(tempfile.mkdtemp(prefix="mw-bench-apply-"))
    try:
        src = args.repo
        if src is None:
            sys.path.insert(0, str(Path(__file__).resolve().parent))
            from gen_repo import generate

            src = root / "src"
            print(f"generating {args.agents} agents ...", flush=True)
            generate(src, args.agents)
        print("writing one proposal per agent and pushing them ...", flush=True)
        pristine, info = prepare(src.resolve(), root, args.overflow_every)
        print(f"  {info['proposals']} proposals ({info['overflow_proposals']} overflow facts) "
              f"in {info['propose_seconds']} s", flush=True)
        print("timing memwarden apply --all --push origin ...", flush=True)
        mw = run_memwarden(pristine, root)
        print(f"timing the naive script on {args.naive_sample} proposals ...", flush=True)
        naive = run_naive(pristine, root, max(1, args.naive_sample))
        naive["extrapolated_seconds"] = round(naive["per_proposal_s"] * mw["proposals"], 1)
        doc: dict[str, Any] = {
            "date": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
            "cpus": os.cpu_count(), "repo": str(args.repo or f"generated {args.agents}"),
            **info, "memwarden": mw, "naive": naive,
            "ratio": round(mw["proposals_per_s"] / naive["proposals_per_s"], 2)}
        if args.profile:
            print("profiling a second memwarden run ...", flush=True)
            OUT.mkdir(exist_ok=True)
            prof = OUT / "apply.prof"
            doc["profiled_run"] = run_memwarden(pristine, root, prof)
            doc["hotspots"] = hotspots(prof)
        print()
        print(table(doc))
        print(f"statuses: {mw['statuses']}; evicted entries {mw['evicted_entries']} in "
              f"{mw['eviction_commits']} eviction commits")
        if args.profile:
            print("\nhotspots (project code, cumulative s; profiled run took "
                  f"{doc['profiled_run']['seconds']} s):")
            for r in doc["hotspots"]["project_by_cumulative"]:
                print(f"  {r['cumulative_s']:8.2f}  {r['calls']:7d}  {r['function']}")
            print("own time (all functions):")
            for r in doc["hotspots"]["all_by_own_time"][:8]:
                print(f"  {r['own_s']:8.2f}  {r['calls']:7d}  {r['function']}")
        OUT.mkdir(exist_ok=True)
        (OUT / "apply.json").write_text(json.dumps(doc, indent=2) + "\n")
        print(f"\nJSON: {OUT / 'apply.json'}")
    finally:
        if args.keep:
            print(f"work directory kept: {root}")
        else:
            shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
