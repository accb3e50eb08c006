"""Side by side with mdtoken 1.0.0: the same repository, the same token limits, offline.

mdtoken (PyPI `mdtoken==1.0.0`) is a tiktoken-based token-limit pre-commit hook. Its CLI
fails to import (`mdtoken.commands` is missing from the wheel), so this drives its library
API, `mdtoken.enforcer.LimitEnforcer`, in a subprocess with memwarden's default limits. tiktoken
inside mdtoken would download the BPE file; instead TIKTOKEN_CACHE_DIR points at a
temporary directory holding memwarden's shipped, hash-identical rank files under
tiktoken's cache names (sha1 of the blob URL), so nothing touches the network.

mdtoken only counts tokens; memwarden runs every registered rule. Cold = no memwarden
cache (`.git/memwarden/` deleted); warm = nothing changed since the last run. mdtoken has
no cache, so its cold and warm runs are the same work.

Getting mdtoken (the only network step, optional): `--fetch` runs
`pip download --no-deps mdtoken==1.0.0` and unpacks the wheel into bench/out/mdtoken/
(its dependencies, tiktoken, PyYAML and click, are memwarden's own). Or point
`--mdtoken-path` at any directory from which `import mdtoken` works.

Usage: python bench/mdtoken_compare.py REPO | --agents N [--runs R] [--fetch]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile
from importlib import resources
from pathlib import Path

from memwarden.tokens.counter import get_encoder

HERE = Path(__file__).resolve().parent
OUT = HERE / "out"
DEFAULT_MDTOKEN = OUT / "mdtoken"
BLOB_URL = "https://openaipublic.blob.core.windows.net/encodings/{name}.tiktoken"
CL100K_CACHE_KEY = "9b5ad71b2ce5302211f9c61530b329a4922fc6a4"

# memwarden's default limits as mdtoken expresses them: path substring -> tokens. decisions.md
# is unbounded (mdtoken needs a number: a huge one).
MDTOKEN_LIMITS = {
    "/snapshot.md": 2000,
    "/facts.md": 8000,
    "/open_loops.md": 2000,
    "/changelog.md": 4000,
    "/relationships.md": 2000,
    "/timeline/": 2000,
    "/runs/": 8000,
    "/_agent.md": 4000,
}
PATTERNS = ["memory/**/*.md", "agents/**/*.md"]

DRIVER = """
import json, sys
from mdtoken.config import Config
from mdtoken.enforcer import LimitEnforcer
limits, patterns = json.loads(sys.argv[1]), json.loads(sys.argv[2])
cfg = Config(default_limit=10**9, limits=limits, exclude=[".git/**"], encoding="cl100k_base")
res = LimitEnforcer(cfg).check_files(patterns=patterns)
print(json.dumps({"files": res.total_files, "tokens": res.total_tokens,
                  "violations": [str(v) for v in res.violations]}))
sys.exit(0 if res.passed else 1)
"""


def fetch_mdtoken(dest: Path) -> None:
    """pip download the wheel (no deps) and unpack it: no change to any environment."""
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--quiet",
                        "mdtoken==1.0.0", "-d", tmp], check=True)
        wheels = list(Path(tmp).glob("mdtoken-1.0.0-*.whl"))
        if not wheels:
            raise SystemExit("pip download produced no mdtoken 1.0.0 wheel")
        shutil.rmtree(dest, ignore_errors=True)
        with zipfile.ZipFile(wheels[0]) as zf:
            zf.extractall(dest)


def tiktoken_cache(dest: Path) -> Path:
    """A TIKTOKEN_CACHE_DIR filled with memwarden's rank files under tiktoken's names."""
    dest.mkdir(parents=True, exist_ok=True)
    for name in ("cl100k_base", "o200k_base"):
        key = hashlib.sha1(BLOB_URL.format(name=name).encode()).hexdigest()
        if name == "cl100k_base" and key != CL100K_CACHE_KEY:
            raise SystemExit(f"unexpected tiktoken cache key {key} for {name}")
        data = (resources.files("memwarden.tokens") / "encodings" / f"{name}.tiktoken").read_bytes()
        (dest / key).write_bytes(data)
    return dest


def timed(cmd: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, str]:
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    dt = time.perf_counter() - t0
    if proc.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(cmd[:3])} ... exited {proc.returncode}:\n{proc.stderr}")
    return dt, proc.stdout


def expected_tokens(repo: Path) -> tuple[int, int]:
    """Files and tokens mdtoken should see (same globs), counted with memwarden's encoder."""
    enc = get_encoder("cl100k_base")
    files = sorted({p for pat in PATTERNS for p in repo.glob(pat) if p.is_file()})
    return len(files), sum(len(enc.encode_ordinary(p.read_text("utf-8"))) for p in files)


def compare(repo: Path, mdtoken_path: Path, runs: int) -> dict[str, object]:
    sys.path.insert(0, str(HERE))
    from check import memwarden_cmd  # the console script beside this interpreter

    mw = memwarden_cmd()
    with tempfile.TemporaryDirectory(prefix="mw-tiktoken-cache-") as cache:
        env = {**os.environ, "TIKTOKEN_CACHE_DIR": str(tiktoken_cache(Path(cache))),
               "PYTHONPATH": str(mdtoken_path)}
        md_cmd = [sys.executable, "-c", DRIVER, json.dumps(MDTOKEN_LIMITS), json.dumps(PATTERNS)]
        md_times, md_out = [], ""
        for _ in range(runs):
            dt, md_out = timed(md_cmd, repo, env)
            md_times.append(dt)
        mw_env = {k: v for k, v in env.items() if k != "PYTHONPATH"}
        cold, warm = [], []
        for _ in range(runs):
            shutil.rmtree(repo / ".git" / "memwarden", ignore_errors=True)
            cold.append(timed([*mw, "check", "--all"], repo, mw_env)[0])
        for _ in range(runs):
            warm.append(timed([*mw, "check", "--all"], repo, mw_env)[0])
    md = json.loads(md_out)
    files, tokens = expected_tokens(repo)
    med = statistics.median
    return {
        "repo": str(repo),
        "mdtoken": {"runs": md_times, "median": med(md_times), "min": min(md_times),
                    "files": md["files"], "tokens": md["tokens"],
                    "violations": md["violations"][:10]},
        "memwarden_cold": {"runs": cold, "median": med(cold), "min": min(cold)},
        "memwarden_warm": {"runs": warm, "median": med(warm), "min": min(warm)},
        "same_counts": md["files"] == files and md["tokens"] == tokens,
        "expected": {"files": files, "tokens": tokens},
        "cold_speedup": round(med(md_times) / med(cold), 2),
        "warm_speedup": round(med(md_times) / med(warm), 2),
        "targets": {"cold_speedup": ">= 1.0", "warm_speedup": ">= 4.0"},
    }


def render(r: dict[str, object]) -> str:
    md, cold, warm = r["mdtoken"], r["memwarden_cold"], r["memwarden_warm"]
    assert isinstance(md, dict) and isinstance(cold, dict) and isinstance(warm, dict)
    cs, ws = float(r["cold_speedup"]), float(r["warm_speedup"])  # type: ignore[arg-type]
    return "\n".join([
        f"repo: {r['repo']}",
        f"mdtoken saw {md['files']} files, {md['tokens']:,} tokens, "
        f"{len(md['violations'])} violation(s); counts match memwarden's encoder: "
        f"{r['same_counts']}",
        "",
        f"{'wall seconds':<44} {'min':>8} {'median':>8}",
        f"{'mdtoken 1.0.0 (LimitEnforcer, no cache)':<44} {md['min']:>8.3f} {md['median']:>8.3f}",
        f"{'memwarden check --all, cold (every rule)':<44} {cold['min']:>8.3f} "
        f"{cold['median']:>8.3f}",
        f"{'memwarden check --all, warm':<44} {warm['min']:>8.3f} {warm['median']:>8.3f}",
        "",
        f"cold: memwarden is {cs:.2f}x mdtoken's speed (target >= 1.0: "
        f"{'ok' if cs >= 1.0 else 'MISSED'})",
        f"warm: memwarden is {ws:.1f}x mdtoken's speed (target >= 4: "
        f"{'ok' if ws >= 4.0 else 'MISSED'})",
    ])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("repo", nargs="?", type=Path, help="a memory repo (git) to measure")
    ap.add_argument("--agents", type=int, help="generate an N-agent repo into a temp dir")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--mdtoken-path", type=Path, default=DEFAULT_MDTOKEN,
                    help=f"directory containing the mdtoken package (default {DEFAULT_MDTOKEN})")
    ap.add_argument("--fetch", action="store_true",
                    help="pip download mdtoken==1.0.0 (no deps) and unpack it there first")
    args = ap.parse_args(argv)
    if (args.repo is None) == (args.agents is None):
        ap.error("give a REPO or --agents N (not both)")
    if args.fetch:
        fetch_mdtoken(args.mdtoken_path)
    if not (args.mdtoken_path / "mdtoken" / "enforcer.py").is_file():
        ap.error(f"mdtoken not found under {args.mdtoken_path}; run with --fetch (needs the "
                 "package index) or pass --mdtoken-path")
    tmp = None
    if args.repo is not None:
        repo = args.repo.resolve()
        name = repo.name
    else:
        sys.path.insert(0, str(HERE))
        from gen_repo import generate

        tmp = tempfile.mkdtemp(prefix="mw-bench-")
        repo = Path(tmp) / "repo"
        generate(repo, args.agents, args.seed)
        name = f"N{args.agents}-seed{args.seed}"
    try:
        result = compare(repo, args.mdtoken_path.resolve(), args.runs)
    finally:
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)
    print(render(result))
    dest = OUT / f"mdtoken-{name}.json"
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_text(json.dumps(result, ensure_ascii=False, indent=2) + "\n", "utf-8")
    print(f"\nresults: {dest}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
