"""Pathological memory files: `memwarden check FILE` must stay linear in the file's size.

For each shape (one letter repeated, blank lines, one long line, runs of spaces and tabs,
`[[`, `{{`, `|`, `<!--`, emoji) a facts.md of SIZE and of 2 x SIZE bytes is checked in a
fresh process (`--no-cache`), and so is the pre-commit case: a normal facts.md with
40,000 characters of one letter appended. Targets: each check of a SIZE file within 2 s,
and doubling the input at most doubles the time (the ratio is reported; <= 2.0 plus noise).

Usage: python bench/pathological.py [--size BYTES] [--runs R]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
HEAD = "# Facts: a\n\n## Domain\n- "
SHAPES = {
    "letter": "a",
    "blank_lines": "\n",
    "long_line": "word ",
    "spaces": " ",
    "spaces_tabs": " \t",
    "brackets": "[[",
    "braces": "{{",
    "pipes": "|",
    "comment": "<!--",
    "emoji": "\U0001f600",
}
TARGET_S = 2.0


def _repo(folder: Path, text: str) -> Path:
    folder.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(folder)], check=True)
    facts = folder / "memory" / "a" / "facts.md"
    facts.parent.mkdir(parents=True)
    facts.write_text(text, encoding="utf-8")
    return facts


def _shape_text(unit: str, size: int) -> str:
    if unit == "word ":  # one line of words, no newline inside
        return HEAD + (unit * (size // len(unit))).rstrip() + "\n"
    n = size // len(unit.encode("utf-8"))
    return HEAD + unit * n + "\n"


def _time_check(facts: Path, runs: int) -> float:
    cmd = [sys.executable, "-m", "memwarden", "check", "--no-cache", "memory/a/facts.md"]
    root = facts.parents[2]
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        proc = subprocess.run(cmd, cwd=root, capture_output=True, text=True)
        times.append(time.perf_counter() - start)
        if proc.returncode not in (0, 1):
            raise SystemExit(f"check failed: {proc.stderr}")
    return statistics.median(times)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size", type=int, default=1024 * 1024, help="bytes of the small file")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--skip", action="append", default=[], help="a shape to leave out")
    args = ap.parse_args(argv)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        normal = "".join(f"- F{i}: the importer keeps fact {i} about the archive.\n"
                         for i in range(200))
        cases = [(name, _shape_text(unit, args.size), _shape_text(unit, 2 * args.size))
                 for name, unit in SHAPES.items() if name not in args.skip]
        cases.append(("append_40k_letters", HEAD + normal + "a" * 40_000 + "\n",
                      HEAD + normal + "a" * 80_000 + "\n"))
        for name, small, large in cases:
            t1 = _time_check(_repo(base / name / "1", small), args.runs)
            t2 = _time_check(_repo(base / name / "2", large), args.runs)
            rows.append({"shape": name, "bytes": len(small.encode()), "s": round(t1, 3),
                         "bytes_2x": len(large.encode()), "s_2x": round(t2, 3),
                         "ratio": round(t2 / t1, 2)})
            ok = "ok" if t1 <= TARGET_S else "OVER"
            print(f"{name:20} {len(small.encode()):>9} B {t1:6.2f} s   x2: {t2:6.2f} s "
                  f"(ratio {t2 / t1:4.2f})  {ok}", flush=True)
    out = HERE / "out"
    out.mkdir(exist_ok=True)
    (out / "pathological.json").write_text(json.dumps(rows, indent=2) + "\n")
    return 0 if all(r["s"] <= TARGET_S for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
