"""Memory quality under daily runs: does eviction keep what the agents use?

Usage: python bench/memory_quality.py [--agents 2] [--runs 120] [--hot 12] [--cite 3]
                                      [--new 3] [--evictor lru|oldest|both] [--seed 0]

A temp repository with N agents, each starting (day 0) with a snapshot and open loops of
~1,500 tokens, and facts.md holding a hot set of facts plus background facts. Then R days;
every day each agent runs once, as a runtime would: `read --mode wide` (read_memory), cite
`--cite` random facts of its hot set in `Facts-Used` by the ids that read listed, append
`--new` new facts (propose), and the day's proposals are applied (apply_all, the real
gate, stale check, eviction commits and bookkeeping). Facts only ever come in, so facts.md
overflows after a few weeks and every few days apply evicts.

Reported per evictor, after the last run: the share of the hot set still in Layer 1, the
share of the facts of the last 10 runs still in Layer 1, and whether any agent's Layer 1
was ever over a HARD limit (checked after every day), plus eviction counts and wall time.
Targets (issue 20): hot set >= 95%, last 10 runs 100%, never over a limit.

`--evictor oldest` is the baseline, built here and not in the product: the same apply with
memwarden's notion of use switched off (no Facts-Used, no line times: every fact counts as
unused, so eviction goes oldest first in file order, and a proposal's citations protect
nothing). `both` (default) runs the two on identical inputs, each in its own process.
JSON: bench/out/memory_quality.json (or --json PATH); exit 1 when lru misses a target.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

OUT = Path(__file__).resolve().parent / "out"
DAY0 = _dt.datetime(2026, 1, 1, 7, 0, tzinfo=_dt.UTC)
GIT_ENV = {"GIT_AUTHOR_NAME": "memwarden bench", "GIT_AUTHOR_EMAIL": "bench@memwarden.invalid",
           "GIT_COMMITTER_NAME": "memwarden bench",
           "GIT_COMMITTER_EMAIL": "bench@memwarden.invalid", "GIT_CONFIG_NOSYSTEM": "1"}
EN = ("archive note violin etude tag audio catalogue source owner review import link exercise "
      "sonata bowing weekly answer search notebook shelf digest bucket index scan score "
      "edition folder reader queue batch glossary metadata lesson teacher student").split()
UK = ("архів нотатка скрипка етюд тег аудіо каталог джерело власник перевірка імпорт "
      "посилання вправа соната штрих тиждень відповідь пошук блокнот полиця дайджест "
      "індекс партитура видання тека черга урок викладач студент").split()
LAYER1 = ("snapshot.md", "open_loops.md", "facts.md")


def env() -> dict[str, str]:
    drop = {"GIT_DIR", "GIT_INDEX_FILE", "GIT_WORK_TREE"}
    return {**{k: v for k, v in os.environ.items() if k not in drop}, **GIT_ENV}


def sentence(rng: random.Random, n: int) -> str:
    words = rng.choice((EN, UK))
    return " ".join(rng.choice(words) for _ in range(n))


def fill(head: str, tokens: int, line: Any) -> str:
    """`head` and lines line(0), line(1)... while the text stays within `tokens`."""
    from memwarden.tokens.counter import count_text

    out, k = head, 0
    while count_text(out + (nxt := line(k)), "cl100k_base") <= tokens:
        out, k = out + nxt, k + 1
    return out


def agent_files(rng: random.Random, agent: str, hot: int, background: int
                ) -> tuple[dict[str, str], list[str]]:
    """Day-0 memory of one agent, and the texts of its hot facts."""
    hot_facts = [f"hot {agent} {k}: {sentence(rng, 14)}" for k in range(hot)]
    back = [f"[2025-12-{k % 28 + 1:02d}] background {agent} {k}: {sentence(rng, 14)}"
            for k in range(background)]
    snapshot = fill(f"# Snapshot: {agent}\n\n## Context\n", 1_500,
                    lambda k: f"- {sentence(rng, 12)}\n")
    loops = fill(f"# Open Loops: {agent}\n\n## Open\n", 1_500,
                 lambda k: f"- [ ] loop_{k:03d}: {sentence(rng, 10)} "
                           f"(opened 2025-12-{k % 28 + 1:02d})\n")
    facts = f"# Facts: {agent}\n\n## Domain\n" + "".join(f"- {t}\n" for t in hot_facts + back)
    meta = json.dumps({"agentId": agent, "version": 1, "schemaVersion": "1.0"}) + "\n"
    root = f"memory/{agent}"
    return ({f"{root}/snapshot.md": snapshot, f"{root}/open_loops.md": loops,
             f"{root}/facts.md": facts, f"{root}/decisions.md": f"# Decisions: {agent}\n",
             f"{root}/meta.json": meta}, hot_facts)


def make_repo(path: Path, files: dict[str, str]) -> None:
    subprocess.run(["git", "init", "-q", "-b", "main", str(path)], check=True, env=env())
    for rel, text in files.items():
        target = path / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    when = DAY0.strftime("%Y-%m-%dT%H:%M:%SZ")
    e = {**env(), "GIT_AUTHOR_DATE": when, "GIT_COMMITTER_DATE": when}
    subprocess.run(["git", "add", "-A"], cwd=path, check=True, env=e)
    subprocess.run(["git", "commit", "-qm", "start\n\nHuman-Edit: true"], cwd=path,
                   check=True, env=e)


def oldest_first() -> None:
    """The baseline evictor: no notion of use (monkeypatched into this process only)."""
    from memwarden.apply import evict

    evict.fact_usage = lambda repo, main, agent: {}
    evict.cited_facts = lambda repo, base, head, agent, text: set()


def cited_ids(repo: Any, agent: str, wanted: list[str]) -> list[str]:
    """What the runtime cites for the facts `wanted` (texts): the ids `read --mode wide`
    listed for them (meta.factIds, in file order, one per fact of content["facts.md"])."""
    from memwarden.model.entries import parse_facts
    from memwarden.model.memfile import split_lines
    from memwarden.read.reader import read_memory

    doc = read_memory(repo, agent, "wide")
    listed = doc["meta"].get("factIds", "").split()
    facts, _ = parse_facts(split_lines(doc["content"].get("facts.md", "")))
    by_text = dict(zip((f.text for f in facts), listed, strict=True))
    return [by_text[t] for t in wanted if t in by_text]


def simulate(args: argparse.Namespace, evictor: str) -> dict[str, Any]:
    from memwarden.apply.apply import apply_all
    from memwarden.apply.propose import propose
    from memwarden.git.repo import open_repo
    from memwarden.model.config import load_config_at
    from memwarden.model.entries import parse_facts
    from memwarden.model.memfile import split_lines
    from memwarden.tokens.counter import count_text

    if evictor == "oldest":
        oldest_first()
    rng = random.Random(args.seed)
    agents = [f"agent-{i:02d}" for i in range(args.agents)]
    files: dict[str, str] = {}
    hot: dict[str, list[str]] = {}
    for a in agents:
        f, hot[a] = agent_files(rng, a, args.hot, args.background)
        files.update(f)
    tmp = tempfile.mkdtemp(prefix=f"mq-{evictor}-")
    root = Path(tmp) / "repo"
    make_repo(root, files)
    repo = open_repo(root)
    config = load_config_at(repo, repo.resolve_commit("main"))
    limits = {name: config.limit(name.removesuffix(".md"), a) for a in agents[:1]
              for name in LAYER1}
    total_limit = config.limit("layer1_total", agents[0])
    added: dict[str, list[list[str]]] = {a: [] for a in agents}
    over: list[str] = []
    worst = 0.0
    evictions = evicted = 0
    started = time.perf_counter()
    for day in range(1, args.runs + 1):
        refs = []
        for n, a in enumerate(agents):
            when = DAY0 + _dt.timedelta(days=day, minutes=n)
            cite = rng.sample(hot[a], args.cite)
            new = [f"run {day} of {a}, finding {k}: {sentence(rng, 14)}"
                   for k in range(args.new)]
            added[a].append(new)  # (a fact's text is what follows its date)
            doc = {"agentId": a, "runId": f"run_{day:03d}", "proposalId": f"p-{a}-{day:03d}",
                   "updates": [{"file": "facts.md", "operation": "append",
                                "section": "Domain",
                                "content": f"[{when.date().isoformat()}] {t}"} for t in new],
                   "factsUsed": cited_ids(repo, a, cite)}
            refs.append(f"refs/heads/{propose(repo, config, doc, now=when).branch}")
        results = apply_all(repo, refs, config, None, DAY0 + _dt.timedelta(days=day, hours=2),
                            delete_branches=True)
        for res in results:
            if res.status != "applied":
                raise SystemExit(f"day {day}: {res.proposal_id} {res.status} {res.reason} "
                                 f"{res.details}")
            evictions += len(res.commits) - 1
            evicted += len(res.evicted)
        for a in agents:  # Layer 1 after the day, against its HARD limits
            total = 0
            for name in LAYER1:
                text = (repo.read_path("main", f"memory/{a}/{name}") or b"").decode()
                n_tok = count_text(text, config.encoding)
                total += n_tok
                worst = max(worst, n_tok / limits[name])
                if n_tok > limits[name]:
                    over.append(f"day {day} {a} {name} {n_tok} > {limits[name]}")
            worst = max(worst, total / total_limit)
            if total > total_limit:
                over.append(f"day {day} {a} Layer 1 {total} > {total_limit}")
    elapsed = time.perf_counter() - started
    hot_kept = last_kept = hot_all = last_all = 0
    for a in agents:
        text = (repo.read_path("main", f"memory/{a}/facts.md") or b"").decode()
        present = {f.text for f in parse_facts(split_lines(text))[0]}
        hot_all += len(hot[a])
        hot_kept += sum(t in present for t in hot[a])
        recent = [t for run in added[a][-10:] for t in run]
        last_all += len(recent)
        last_kept += sum(t in present for t in recent)
    return {"evictor": evictor, "agents": args.agents, "runs": args.runs,
            "hotResident": hot_kept / hot_all, "hotKept": hot_kept, "hotTotal": hot_all,
            "last10Resident": last_kept / last_all, "last10Kept": last_kept,
            "last10Total": last_all, "overLimit": over[:20], "overLimitCount": len(over),
            "worstLayer1Ratio": round(worst, 4), "evictionCommits": evictions,
            "factsEvicted": evicted, "seconds": round(elapsed, 1), "repo": str(root)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--agents", type=int, default=2)
    ap.add_argument("--runs", type=int, default=120)
    ap.add_argument("--hot", type=int, default=12, help="hot facts per agent")
    ap.add_argument("--cite", type=int, default=3, help="hot facts cited per run")
    ap.add_argument("--new", type=int, default=3, help="new facts per run")
    ap.add_argument("--background", type=int, default=40, help="day-0 facts besides the hot")
    ap.add_argument("--evictor", choices=("lru", "oldest", "both"), default="both")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", type=Path, default=OUT / "memory_quality.json",
                    help="where to write the rows (default bench/out/memory_quality.json)")
    args = ap.parse_args()
    evictors = ["lru", "oldest"] if args.evictor == "both" else [args.evictor]
    rows = []
    for ev in evictors:
        # Each evictor in its own process: the baseline monkeypatches apply's module.
        proc = subprocess.run([sys.executable, __file__, "--one", ev, *sys.argv[1:]],
                              capture_output=True, text=True) if len(evictors) > 1 else None
        if proc is not None:
            if proc.returncode != 0:
                raise SystemExit(proc.stderr)
            rows.append(json.loads(proc.stdout))
        else:
            rows.append(simulate(args, ev))
    print(f"{args.agents} agents x {args.runs} daily runs, hot set {args.hot}/agent "
          f"({args.cite} cited a run), {args.new} new facts a run\n")
    print("| evictor | hot set resident | last 10 runs resident | Layer 1 over a limit | "
          "worst Layer 1 / limit | eviction commits | facts evicted | seconds |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['evictor']} | {r['hotResident']:.1%} ({r['hotKept']}/{r['hotTotal']}) | "
              f"{r['last10Resident']:.1%} ({r['last10Kept']}/{r['last10Total']}) | "
              f"{'never' if not r['overLimitCount'] else r['overLimitCount']} | "
              f"{r['worstLayer1Ratio']:.1%} | {r['evictionCommits']} | {r['factsEvicted']} | "
              f"{r['seconds']} |")
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(rows, indent=2) + "\n")
    lru = next((r for r in rows if r["evictor"] == "lru"), None)
    if lru is None:
        return 0
    ok = lru["hotResident"] >= 0.95 and lru["last10Resident"] == 1.0 and \
        not lru["overLimitCount"]
    print(f"\ntargets (lru): hot >= 95%, last 10 runs 100%, never over a limit: "
          f"{'met' if ok else 'NOT met'}")
    return 0 if ok else 1


def _one() -> None:
    """Child mode: `--one EVICTOR ARGS...` prints one result row as JSON."""
    ev = sys.argv[2]
    sys.argv = [sys.argv[0], *sys.argv[3:]]
    ap = argparse.ArgumentParser()
    for name, default in (("--agents", 2), ("--runs", 120), ("--hot", 12), ("--cite", 3),
                          ("--new", 3), ("--background", 40), ("--seed", 0)):
        ap.add_argument(name, type=int, default=default)
    ap.add_argument("--evictor", default="both")
    ap.add_argument("--json", default="")
    print(json.dumps(simulate(ap.parse_args(), ev)))


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--one":
        _one()
    else:
        sys.exit(main())
