"""CPU of the MW3xx injection scan over a repo's Markdown, and the one-file hook run.

    python bench/scan_speed.py REPO [--runs 5] [--split] [--hook AGENT] [--dump OUT]

Every `.md` file under REPO (the working tree, `.git` skipped) is read once, then scanned
as `facts` in this one process, `--runs` times after warm() (as `check --all` warms before
it forks its workers); the CPU seconds of each run are printed with their min and median.
`--split` adds one profiled run attributing the time to the scanner's passes (profiling
inflates the total, so only the shares are meaningful). `--hook AGENT` instead times
`memwarden check memory/AGENT/facts.md` in a fresh process after appending a line to that
file (restored afterwards), the path a pre-commit hook takes, and the CPU a fresh process
spends importing the scanner and scanning that one file (what the hook pays for MW3xx).
`--dump OUT` writes every hit instead: of each `.md` file under REPO and of each text of
the evaluation corpus (bench/injection_eval.py, with upper-cased, CRLF and CR variants),
scanned as `facts` and as an agent contract, with the compiled tries and with the
small-text walk; two dumps made before and after a change to the scanner must be
byte-identical (`cmp`).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path


def _markdown(repo: Path) -> list[tuple[str, bytes]]:
    out = []
    for root, dirs, files in os.walk(repo):
        dirs[:] = sorted(d for d in dirs if d != ".git")
        for name in sorted(files):
            if name.endswith(".md"):
                data = (Path(root) / name).read_bytes()
                out.append((data.decode("utf-8"), data))
    return out


def _scan_all(texts: list[tuple[str, bytes]]) -> int:
    from memwarden.policies.rules.injection import scan

    return sum(len(scan(text, "facts", data=data)) for text, data in texts)


def _split(texts: list[tuple[str, bytes]]) -> None:
    import cProfile
    import pstats

    prof = cProfile.Profile()
    prof.enable()
    _scan_all(texts)
    prof.disable()
    stats = pstats.Stats(prof)
    rows = []
    for (path, _, func), (_, _, _, cum, _) in stats.stats.items():  # type: ignore[attr-defined]
        if "injection" in path and not func.startswith("<"):
            rows.append((cum, f"{Path(path).stem}.{func}"))
    for cum, name in sorted(rows, reverse=True)[:16]:
        print(f"  {cum:7.3f} s  {name}")


_ONE_FILE = """
import sys, time
t0 = time.process_time()
from memwarden.policies.rules.injection import findings_for
data = open(sys.argv[1], "rb").read()
findings_for(data.decode(), "memory/x/facts.md", "facts", data)
print(time.process_time() - t0)
"""


def _one_file(path: Path, runs: int) -> list[float]:
    return [float(subprocess.run([sys.executable, "-c", _ONE_FILE, str(path)], check=True,
                                 capture_output=True, text=True).stdout)
            for _ in range(runs)]


def _corpus() -> list[str]:
    """The evaluation corpus (injection_eval.corpus_texts), each text also upper-cased and
    with CRLF and CR line ends."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import injection_eval as ev

    return [v for t in ev.corpus_texts() for v in (t, t.upper(), t.replace("\n", "\r\n"),
                                                   t.replace("\n", "\r"))]


def _dump(repo: Path, out: Path) -> int:
    import json

    from memwarden.policies.rules.injection import CONTRACT, scan

    named = [(str(i), t) for i, t in enumerate(_corpus())]
    named += [(f"repo {i}", t) for i, (t, _) in enumerate(_markdown(repo))]
    n = 0
    with out.open("w", encoding="utf-8") as fh:
        for name, text in named:
            for kind in ("facts", CONTRACT):
                for walk in (False, True):  # compiled tries, and the small-text walk
                    hits = [list(h) for h in scan(text, kind, walk=walk)]
                    n += len(hits)
                    fh.write(json.dumps([name, kind, walk, hits], ensure_ascii=False) + "\n")
    print(f"{len(named)} texts, {n} hits -> {out}")
    return 0


def _hook(repo: Path, agent: str, runs: int) -> list[float]:
    path = repo / "memory" / agent / "facts.md"
    original = path.read_bytes()
    exe = Path(sys.executable).with_name("memwarden")
    times = []
    try:
        for i in range(runs):
            path.write_bytes(original + f"- edited fact number {i} for the hook run\n".encode())
            t0 = time.perf_counter()
            subprocess.run([str(exe), "check", str(path.relative_to(repo))], cwd=repo,
                           stdout=subprocess.DEVNULL, check=False)
            times.append(time.perf_counter() - t0)
    finally:
        path.write_bytes(original)
    return times


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("repo", type=Path)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--split", action="store_true")
    ap.add_argument("--hook", metavar="AGENT")
    ap.add_argument("--dump", type=Path, metavar="OUT")
    args = ap.parse_args()
    if args.dump:
        return _dump(args.repo, args.dump)
    if args.hook:
        times = _hook(args.repo, args.hook, args.runs)
        print(f"hook runs (wall s): {' '.join(f'{t:.3f}' for t in times)}")
        print(f"min {min(times):.3f} s, median {statistics.median(times):.3f} s")
        times = _one_file(args.repo / "memory" / args.hook / "facts.md", args.runs)
        print(f"import + scan of the file in a fresh process (CPU s): "
              f"{' '.join(f'{t:.4f}' for t in times)}")
        print(f"min {min(times):.4f} s, median {statistics.median(times):.4f} s")
        return 0
    texts = _markdown(args.repo)
    from memwarden.policies.rules.injection import warm

    warm()
    mb = sum(len(d) for _, d in texts) / 1e6
    times, hits = [], 0
    for _ in range(args.runs):
        t0 = time.process_time()
        hits = _scan_all(texts)
        times.append(time.process_time() - t0)
    print(f"{len(texts)} files, {mb:.1f} MB, {hits} hits")
    print(f"scan CPU (s): {' '.join(f'{t:.3f}' for t in times)}")
    print(f"min {min(times):.3f} s, median {statistics.median(times):.3f} s")
    if args.split:
        _split(texts)
    return 0


if __name__ == "__main__":
    sys.exit(main())
