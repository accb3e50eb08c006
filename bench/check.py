"""Measure `memwarden check` against the cost floor: tiktoken alone on the same text.

Four measurements on one memory repository (given, or generated with bench/gen_repo.py):

1. tiktoken alone: `encode_ordinary` (cl100k_base) over the text of every governed file,
   one thread, one process, encoder already loaded — the least any exact checker can pay;
2. cold `memwarden check --all` in a subprocess after deleting `<repo>/.git/memwarden/`
   (wall time; target: at most 1.2 x tiktoken alone, although it runs every rule); the two
   alternate run by run;
3. warm `memwarden check --all`, nothing changed (target <= 0.5 s);
4. one freshly edited, staged memory file through a real `pre-commit run` with a
   `repo: local` / `language: system` hook running `memwarden check`, so the hook itself is
   timed, not an environment install, interleaved pair by pair with the same run of a no-op
   hook (target: the memwarden hook adds at most 80 ms, median of the pairs); the no-op
   floor is split into pre-commit's Python start with its imports and the git commands it
   runs (traced), and `memwarden check FILE` alone is timed on a fresh edit too.
   `--precommit-only` measures just this part (the repo is left as it was found: the
   edited file is restored and re-staged).

Each is repeated (--runs, default 3); the table shows min and median, and the results are
written as JSON to bench/out/.

Usage: python bench/check.py REPO | --agents N [--seed S] [--runs R] [--keep] [--precommit-only]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from memwarden.git.repo import open_repo, worktree_entries
from memwarden.model.layout import classify
from memwarden.tokens.counter import get_encoder
from memwarden.version import __version__

HERE = Path(__file__).resolve().parent
OUT = HERE / "out"
ENCODING = "cl100k_base"
TARGETS = {"cold_ratio": 1.2, "warm_s": 0.5, "precommit_s": 0.3, "hook_added_s": 0.08}

PRECOMMIT_CONFIG = """\
repos:
  - repo: local
    hooks:
      - id: memwarden-check
        name: memwarden check
        entry: {entry}
        language: system
        files: ^(memory/|agents/|logic/|registry\\.json$|memwarden\\.toml$)
"""


PUBLISHED_CONFIG = """\
repos:
  - repo: {repo}
    rev: {rev}
    hooks:
      - id: {hook}
"""


# A do-nothing `language: python` hook, to time what pre-commit itself spends on any hook of
# that language: besides the no-op floor above, its environment's health check starts the
# environment's Python twice (`python -S -c ...`) on every run.
NOOP_PYTHON_HOOK = {
    ".pre-commit-hooks.yaml": "- id: noop\n  name: noop\n  entry: 'true'\n"
                              "  language: python\n  files: ^memory/\n",
    "pyproject.toml": '[build-system]\nrequires = ["setuptools>=68"]\n'
                      'build-backend = "setuptools.build_meta"\n'
                      '[project]\nname = "mw-noop-hook"\nversion = "0"\n'
                      '[tool.setuptools]\npy-modules = []\n',
}


def noop_python_config(tmp: Path) -> Path:
    """A config whose one hook is NOOP_PYTHON_HOOK, from a git repository made in `tmp`."""
    hook_repo = tmp / "noop-python-hook"
    hook_repo.mkdir()
    for name, text in NOOP_PYTHON_HOOK.items():
        (hook_repo / name).write_text(text, "utf-8")
    ident = ["-c", "user.name=bench", "-c", "user.email=bench@memwarden.invalid"]
    for args in (["init", "-q"], ["add", "-A"], [*ident, "commit", "-q", "-m", "noop hook"]):
        subprocess.run(["git", *args], cwd=hook_repo, check=True, capture_output=True)
    rev = subprocess.run(["git", "rev-parse", "HEAD"], cwd=hook_repo, check=True,
                         capture_output=True, text=True).stdout.strip()
    cfg = tmp / "noop-python-config.yaml"
    cfg.write_text(PUBLISHED_CONFIG.format(repo=hook_repo, rev=rev, hook="noop"), "utf-8")
    return cfg


def published_config(tmp: Path) -> Path:
    """A config using the hook as users get it: this checkout's .pre-commit-hooks.yaml at
    its HEAD commit, installed by pre-commit into its own virtualenv (language: python)."""
    checkout = HERE.parent
    rev = subprocess.run(["git", "rev-parse", "HEAD"], cwd=checkout, check=True,
                         capture_output=True, text=True).stdout.strip()
    cfg = tmp / "published-config.yaml"
    cfg.write_text(PUBLISHED_CONFIG.format(repo=checkout, rev=rev, hook="memwarden-check"), "utf-8")
    return cfg


def memwarden_cmd() -> list[str]:
    """The console script pip installed beside this interpreter (what users run), else -m.
    Not the first `memwarden` on PATH: a version manager's shim there (pyenv's is a bash
    script running `pyenv exec`) adds ~50 ms that is not memwarden's."""
    exe = Path(sys.executable).parent / "memwarden"
    if exe.is_file() and os.access(exe, os.X_OK):
        return [str(exe)]
    found = shutil.which("memwarden")
    return [found] if found else [sys.executable, "-m", "memwarden"]


def precommit_exe() -> str | None:
    """pre-commit beside this interpreter, as `pre-commit install`'s git hook runs it, else
    the first on PATH (see memwarden_cmd on version-manager shims)."""
    exe = Path(sys.executable).parent / "pre-commit"
    if exe.is_file() and os.access(exe, os.X_OK):
        return str(exe)
    return shutil.which("pre-commit")


# The least any hook on memwarden's dependencies runs: a Python start, click (the CLI) and
# one token count (the verified ranks loaded, the pre-split pattern compiled), no rule.
DEPENDENCY_FLOOR = ("import click\n"
                    "from memwarden.tokens.counter import count_text\n"
                    "count_text('- one new fact\\n', 'cl100k_base')\n")


def hook_cmd() -> list[str]:
    """What the published hook runs (the `memwarden-check` script beside this interpreter),
    else `memwarden check`."""
    exe = Path(sys.executable).parent / "memwarden-check"
    if exe.is_file() and os.access(exe, os.X_OK):
        return [str(exe)]
    return [*memwarden_cmd(), "check"]


def precommit_python(exe: str) -> str:
    """The interpreter pre-commit's script runs with (its shebang), for timing its imports."""
    with open(exe, "rb") as fh:
        first = fh.readline().decode("utf-8", "replace")
    parts = first[2:].split() if first.startswith("#!") else []
    return parts[0] if parts and "python" in Path(parts[0]).name else sys.executable


def git_seconds(trace: Path) -> float:
    """Seconds spent in the git processes a GIT_TRACE2_EVENT file records, counting each
    top-level process once (children of a git command have a `parent/child` sid)."""
    total = 0.0
    for line in trace.read_text("utf-8").splitlines():
        ev = json.loads(line)
        if ev.get("event") == "exit" and "/" not in ev.get("sid", "/"):
            total += float(ev.get("t_abs", 0.0))
    return total


def governed_texts(root: Path) -> list[tuple[str, str]]:
    """(path, text) of every governed file in the working tree, as memwarden lists them."""
    out = []
    for e in worktree_entries(root, open_repo(root)):
        if classify(e.path) is None:
            continue
        try:
            out.append((e.path, (root / e.path).read_bytes().decode("utf-8-sig")))
        except (OSError, UnicodeDecodeError):
            continue
    return out


def time_tiktoken(texts: list[tuple[str, str]]) -> tuple[float, int]:
    """Seconds to encode all texts on this thread (encoder loaded beforehand), and tokens."""
    enc = get_encoder(ENCODING)
    enc.encode_ordinary("warm up")
    t0 = time.perf_counter()
    n = 0
    for _, text in texts:
        n += len(enc.encode_ordinary(text))
    return time.perf_counter() - t0, n


def run_timed(cmd: list[str], cwd: Path, env: dict[str, str] | None = None,
              ok: tuple[int, ...] = (0, 1)) -> tuple[float, subprocess.CompletedProcess[str]]:
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, env=env)
    dt = time.perf_counter() - t0
    if proc.returncode not in ok:
        raise SystemExit(f"{' '.join(cmd)} exited {proc.returncode}:\n{proc.stdout}\n"
                         f"{proc.stderr}")
    return dt, proc


def summary_line(output: str) -> str:
    lines = [ln for ln in output.splitlines() if ln.startswith("memwarden:")]
    return lines[-1] if lines else ""


def repeat(n: int, fn: Callable[[int], float]) -> list[float]:
    return [fn(i) for i in range(n)]


def stats(values: list[float]) -> dict[str, float | list[float]]:
    return {"min": min(values), "median": statistics.median(values),
            "runs": [round(v, 4) for v in values]}


def measure(repo: Path, runs: int) -> dict[str, object]:
    mw = memwarden_cmd()
    texts = governed_texts(repo)
    nbytes = sum(len(t.encode("utf-8")) for _, t in texts)
    tokens = 0

    def tik(_: int) -> float:
        nonlocal tokens
        dt, tokens = time_tiktoken(texts)
        return dt

    cache = repo / ".git" / "memwarden"
    last: dict[str, str] = {}

    def cold(_: int) -> float:
        shutil.rmtree(cache, ignore_errors=True)
        dt, proc = run_timed([*mw, "check", "--all"], repo)
        last["cold"] = summary_line(proc.stdout)
        last["cold_exit"] = str(proc.returncode)
        return dt

    # The floor and the cold check alternate, so a drift of the host's speed between
    # minutes moves both alike instead of the ratio.
    tiktoken_s: list[float] = []
    cold_s: list[float] = []
    for i in range(runs):
        tiktoken_s.append(tik(i))
        cold_s.append(cold(i))

    def warm(_: int) -> float:
        dt, proc = run_timed([*mw, "check", "--all"], repo)
        last["warm"] = summary_line(proc.stdout)
        return dt

    warm_s = repeat(runs, warm)
    pc_times, pc_info = measure_precommit(repo, runs)
    ratio = statistics.median(cold_s) / statistics.median(tiktoken_s)
    return {
        "memwarden_version": __version__,
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "repo": str(repo),
        "governed_files": len(texts),
        "bytes": nbytes,
        "tokens": tokens,
        "tiktoken_s": stats(tiktoken_s),
        "cold_s": stats(cold_s),
        "warm_s": stats(warm_s),
        "precommit_s": stats(pc_times["precommit"]),
        "precommit_noop_s": stats(pc_times["noop"]),
        "hook_added_s": stats(pc_times["added"]),
        "hook_direct_s": stats(pc_times["direct"]),
        "dependency_floor_s": stats(pc_times["floor"]),
        "precommit_imports_s": stats(pc_times["imports"]),
        "precommit_git_s": stats(pc_times["git"]),
        "cold_over_tiktoken": round(ratio, 3),
        "cold_summary": last.get("cold", ""),
        "cold_exit": int(last.get("cold_exit", "-1")),
        "warm_summary": last.get("warm", ""),
        "precommit": pc_info,
        "targets": TARGETS,
    }


def measure_precommit(repo: Path, runs: int, published: bool = False
                      ) -> tuple[dict[str, list[float]], dict[str, object]]:
    """Time `pre-commit run` on one staged, freshly edited facts.md, then restore it.

    Also times the two halves on their own, each on a fresh edit: pre-commit with a no-op
    hook (its own overhead) and `memwarden check FILE` without pre-commit (the hook).
    """
    exe = precommit_exe()
    if exe is None:
        raise SystemExit("pre-commit is not installed (pip install pre-commit)")
    found = sorted(repo.glob("memory/*/facts.md"))
    if not found:
        raise SystemExit(f"{repo}: no memory/<agent>/facts.md to edit")
    target = found[0].relative_to(repo).as_posix()
    entry = " ".join(hook_cmd())
    times: dict[str, list[float]] = {"precommit": [], "noop": [], "direct": [],
                                     "published": [], "noop_python": [], "imports": [],
                                     "git": [], "added": [], "floor": []}
    py = precommit_python(exe)
    info: dict[str, object] = {"file": target}
    with tempfile.TemporaryDirectory(prefix="mw-precommit-") as tmp:
        cfg = Path(tmp) / "pre-commit-config.yaml"
        cfg.write_text(PRECOMMIT_CONFIG.format(entry=entry), "utf-8")
        noop = Path(tmp) / "noop-config.yaml"
        # quoted: a bare `entry: true` is a YAML boolean, which pre-commit rejects as a
        # config error before any git work (the no-op floor measured that until session 12)
        noop.write_text(PRECOMMIT_CONFIG.format(entry='"true"'), "utf-8")
        env = {**os.environ, "PRE_COMMIT_HOME": str(Path(tmp) / "home"),
               "PRE_COMMIT_COLOR": "never"}
        path = repo / target
        original = path.read_bytes()
        edits = 0
        pub_cfg = published_config(Path(tmp)) if published else None
        noop_py_cfg = noop_python_config(Path(tmp)) if published else None

        def edit_and_stage() -> None:
            nonlocal edits
            edits += 1
            path.write_bytes(original + f"- Bench edit {edits}: the curator rechecks the "
                             f"folder index ({time.time_ns()}).\n".encode())
            subprocess.run(["git", "add", "--", target], cwd=repo, check=True)

        try:
            for i in range(runs + 1):  # run 0 initialises pre-commit's store: not timed
                edit_and_stage()
                dt, proc = run_timed([exe, "run", "--config", str(cfg)], repo, env)
                info["exit"] = proc.returncode
                info["output"] = proc.stdout.strip().splitlines()[-3:]
                edit_and_stage()
                dt_noop, proc_noop = run_timed([exe, "run", "--config", str(noop)], repo, env)
                if proc_noop.returncode != 0:
                    raise SystemExit(f"the no-op pre-commit run failed: {proc_noop.stdout}")
                edit_and_stage()
                dt_direct, _ = run_timed([*hook_cmd(), target], repo)
                # the floor's two parts: pre-commit's Python start and imports, and the git
                # commands a no-op run makes (traced in a run of its own, not timed)
                dt_imports, _ = run_timed([py, "-c", "import pre_commit.main"], repo)
                dt_floor, proc_floor = run_timed([sys.executable, "-c", DEPENDENCY_FLOOR], repo)
                if proc_floor.returncode != 0:
                    raise SystemExit(f"the dependency floor failed: {proc_floor.stdout}")
                edit_and_stage()
                trace = Path(tmp) / "trace2.json"
                trace.unlink(missing_ok=True)
                run_timed([exe, "run", "--config", str(noop)], repo,
                          {**env, "GIT_TRACE2_EVENT": str(trace)})
                if pub_cfg is not None and noop_py_cfg is not None:
                    # run 0 also builds the hooks' virtualenvs (pip install)
                    edit_and_stage()
                    dt_pub, proc = run_timed([exe, "run", "--config", str(pub_cfg)], repo, env)
                    info["published_exit"] = proc.returncode
                    edit_and_stage()
                    dt_np, proc_np = run_timed([exe, "run", "--config", str(noop_py_cfg)],
                                               repo, env)
                    if proc_np.returncode != 0:
                        raise SystemExit(f"the no-op python hook failed: {proc_np.stdout}")
                    if i:
                        times["published"].append(dt_pub)
                        times["noop_python"].append(dt_np)
                if i:
                    times["precommit"].append(dt)
                    times["noop"].append(dt_noop)
                    times["added"].append(dt - dt_noop)  # the pair ran back to back
                    times["direct"].append(dt_direct)
                    times["imports"].append(dt_imports)
                    times["floor"].append(dt_floor)
                    times["git"].append(git_seconds(trace))
        finally:
            path.write_bytes(original)
            subprocess.run(["git", "add", "--", target], cwd=repo, check=True)
    return times, info


def measure_precommit_only(repo: Path, runs: int, published: bool = False
                           ) -> dict[str, object]:
    pc_times, pc_info = measure_precommit(repo, runs, published)
    return {
        "memwarden_version": __version__,
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "repo": str(repo),
        "precommit_s": stats(pc_times["precommit"]),
        "precommit_noop_s": stats(pc_times["noop"]),
        "hook_added_s": stats(pc_times["added"]),
        "hook_direct_s": stats(pc_times["direct"]),
        "dependency_floor_s": stats(pc_times["floor"]),
        "precommit_imports_s": stats(pc_times["imports"]),
        "precommit_git_s": stats(pc_times["git"]),
        **({"published_s": stats(pc_times["published"]),
            "published_noop_s": stats(pc_times["noop_python"])} if published else {}),
        "precommit": pc_info,
        "targets": {"precommit_s": TARGETS["precommit_s"],
                    "hook_added_s": TARGETS["hook_added_s"]},
    }


def _row(r: dict[str, object], name: str, key: str, target: str) -> str:
    s = r[key]
    assert isinstance(s, dict)
    return f"{name:<50} {s['min']:>8.3f} {s['median']:>8.3f}   {target}"


def _added(r: dict[str, object]) -> str:
    added = float(r["hook_added_s"]["median"])  # type: ignore[index]
    ok = "ok" if added <= TARGETS["hook_added_s"] else "MISSED"
    return f"<= {TARGETS['hook_added_s']} s {ok}"


def render_precommit(r: dict[str, object]) -> str:
    return "\n".join([
        f"repo: {r['repo']}; memwarden {r['memwarden_version']}, Python {r['python']}, "
        f"{r['cpus']} CPUs; file: {r['precommit']['file']}",  # type: ignore[index]
        "",
        f"{'measurement (wall seconds)':<50} {'min':>8} {'median':>8}   target",
        _row(r, "pre-commit run, 1 staged memory file", "precommit_s",
             "no-op floor + the hook"),
        _row(r, "  of which: pre-commit, no-op hook", "precommit_noop_s",
             "pre-commit's own cost"),
        _row(r, "memwarden hook minus no-op hook (per pair)", "hook_added_s", _added(r)),
        _row(r, "    its Python start + `import pre_commit.main`", "precommit_imports_s",
             "in the no-op floor"),
        _row(r, "    its git commands (sum, traced run)", "precommit_git_s",
             "in the no-op floor"),
        _row(r, "  of which: memwarden check FILE alone", "hook_direct_s", "the hook's cost"),
        _row(r, "    its floor: Python + click + one token count", "dependency_floor_s",
             "no rule run"),
        *([_row(r, "pre-commit run, the published hook (its own venv)", "published_s",
                f"<= {TARGETS['precommit_s']} s"),
           _row(r, "  of which: pre-commit, no-op python hook", "published_noop_s",
                "pre-commit's own cost, with its health check")]
          if "published_s" in r else []),
    ])


def render(r: dict[str, object]) -> str:
    def row(name: str, key: str, target: str) -> str:
        s = r[key]
        assert isinstance(s, dict)
        return f"{name:<42} {s['min']:>8.3f} {s['median']:>8.3f}   {target}"

    ratio = float(r["cold_over_tiktoken"])  # type: ignore[arg-type]
    warm = float(r["warm_s"]["median"])  # type: ignore[index]
    ok = {True: "ok", False: "MISSED"}
    lines = [
        f"repo: {r['repo']}",
        f"governed files: {r['governed_files']}, {int(r['bytes']) / 1e6:.1f} MB, "  # type: ignore
        f"{int(r['tokens']):,} tokens ({ENCODING}); memwarden {r['memwarden_version']}, "  # type: ignore
        f"Python {r['python']}, {r['cpus']} CPUs",
        "",
        f"{'measurement (wall seconds)':<42} {'min':>8} {'median':>8}   target",
        row("tiktoken alone (1 thread, encoder loaded)", "tiktoken_s", "floor"),
        row("memwarden check --all, cold", "cold_s",
            f"<= {TARGETS['cold_ratio']} x tiktoken: {ratio:.2f} x "
            f"{ok[ratio <= TARGETS['cold_ratio']]}"),
        row("memwarden check --all, warm", "warm_s",
            f"<= {TARGETS['warm_s']} s {ok[warm <= TARGETS['warm_s']]}"),
        row("pre-commit run, 1 staged memory file", "precommit_s", "no-op floor + the hook"),
        row("  of which: pre-commit, no-op hook", "precommit_noop_s", "pre-commit's own cost"),
        row("memwarden hook minus no-op (per pair)", "hook_added_s", _added(r)),
        row("    its Python start + imports", "precommit_imports_s", "in the no-op floor"),
        row("    its git commands (sum)", "precommit_git_s", "in the no-op floor"),
        row("  of which: memwarden check FILE alone", "hook_direct_s", "the hook's cost"),
        row("    its floor: Python, click, 1 count", "dependency_floor_s", "no rule run"),
        "",
        f"cold: {r['cold_summary']} (exit {r['cold_exit']})",
        f"warm: {r['warm_summary']}",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("repo", nargs="?", type=Path, help="a memory repo (git) to measure")
    ap.add_argument("--agents", type=int, help="generate an N-agent repo into a temp dir")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--runs", type=int, default=3, help="repetitions per measurement")
    ap.add_argument("--keep", action="store_true", help="keep a generated repo")
    ap.add_argument("--precommit-only", action="store_true", help="measure only the "
                    "one-staged-file pre-commit run and its two halves")
    ap.add_argument("--published", action="store_true", help="with --precommit-only: "
                    "also time the published hook (repo: this checkout at HEAD, installed "
                    "by pre-commit in its own virtualenv; the first run needs PyPI)")
    ap.add_argument("--json", type=Path, help="where to write the JSON results "
                    "(default bench/out/check-<name>.json)")
    args = ap.parse_args(argv)
    if (args.repo is None) == (args.agents is None):
        ap.error("give a REPO or --agents N (not both)")
    if args.runs < 1:
        ap.error("--runs must be at least 1")
    # Measure as users run it: an installed memwarden has .pyc files; without them every
    # timed process would compile its modules again.
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    tmp: str | None = None
    if args.repo is not None:
        repo = args.repo.resolve()
        if not (repo / ".git").is_dir():
            ap.error(f"{repo}: not a git repository with a working tree")
        name = repo.name
    else:
        sys.path.insert(0, str(HERE))
        from gen_repo import generate

        tmp = tempfile.mkdtemp(prefix="mw-bench-")
        repo = Path(tmp) / "repo"
        t0 = time.perf_counter()
        totals = generate(repo, args.agents, args.seed)
        print(f"generated {args.agents} agents in {time.perf_counter() - t0:.1f} s: "
              f"{totals['md_bytes'] / 1e6:.1f} MB Markdown, "  # type: ignore[operator]
              f"{totals['md_tokens']:,} tokens")
        name = f"N{args.agents}-seed{args.seed}"
    try:
        if args.precommit_only:
            results = measure_precommit_only(repo, args.runs, args.published)
        else:
            results = measure(repo, args.runs)
    finally:
        if tmp and not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)
        elif tmp:
            print(f"kept {repo}")
    print(render_precommit(results) if args.precommit_only else render(results))
    suffix = "-precommit" if args.precommit_only else ""
    dest = args.json or OUT / f"check-{name}{suffix}.json"
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_text(json.dumps(results, ensure_ascii=False, indent=2) + "\n", "utf-8")
    print(f"\nresults: {dest}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
