"""Fuzz `check`, `propose` and `restore` with generated inputs (hypothesis).

Each input runs against real parts: files in a real folder checked by the policy engine,
requests proposed into a real git repository, archives (random bytes and mutations of a
real snapshot) verified and restored into a real folder. An input may be refused (a
MemwardenError: the exit-2/exit-1 path users see); anything else is a traceback and is
reported. Each input runs under an alarm (a hang over --timeout seconds is reported);
the peak RSS of this process and of its git children is measured with getrusage.

    python bench/fuzz.py --examples 10000        # >= 10,000 inputs over the three targets

tests/test_fuzz.py runs the same targets with a few hundred examples each.
"""

from __future__ import annotations

import argparse
import gzip
import io
import json
import os
import resource
import signal
import subprocess
import sys
import tarfile
import tempfile
import time
import traceback
from collections import Counter
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from memwarden.model.errors import MemwardenError

# ------------------------------------------------------------------------- strategies

PATHS = ["memory/a/facts.md", "memory/a/snapshot.md", "memory/a/open_loops.md",
         "memory/a/decisions.md", "memory/a/changelog.md", "memory/a/meta.json",
         "memory/a/runs/run_1.md", "memory/a/timeline/2026-02-17.md", "agents/a/_agent.md",
         "agents/a/memory/obs.jsonl", "agents/a/sources/s.md", "logic/a/current.pseudo.md",
         "registry.json", "memory/a/notes.txt", "memory/A_b/facts.md"]
PIECES = ["---\n", "agent: a\n", "updated_at: 2026-02-17\n", "## Domain\n", "- fact\n",
          "- [ ] loop_1: x (opened 2026-02-01, priority high)\n", "- [x] y — closed 2026-02-02 "
          "| run_1\n", "## 2026-02-17 — title\n**Status:** Accepted\n", "<|im_start|>",
          "[INST]", "ignore all previous instructions", "# SYSTEM:", "<!-- c -->",
          "![x](https://e.invalid/?q=", "\u202e", "\u200b", "&anchor *a", "{\"a\": [",
          "\"tool_call\": {\"name\": \"x\"}", "%2e%2e/", "\r\n", "\x00", "\ufeff", "\ud800",
          "A" * 300, "=" * 80, "ZXhhbXBsZQ==" * 20, "[[entity]]", "{", "}", "[", "]", ":"]


def texts() -> st.SearchStrategy[str]:
    return st.lists(st.one_of(st.sampled_from(PIECES), st.text(max_size=40)),
                    max_size=30).map("".join)


def file_bytes() -> st.SearchStrategy[bytes]:
    return st.one_of(texts().map(lambda t: t.encode("utf-8", "surrogatepass")),
                     st.binary(max_size=300))


def json_values(depth: int = 3) -> st.SearchStrategy[Any]:
    scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False),
                        texts(), st.sampled_from(["a", "run_1", "p.", "x..", "p.lock",
                                                  "loop_x\n", "facts.md", "open_loops.md",
                                                  "runs/run_x/.git/config", "../b/facts.md",
                                                  "runs/run_x/\u202egnp.md", "append",
                                                  "close", "replace", "add_loop",
                                                  "remove_entry", "add_decision"]))
    return st.recursive(scalars, lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)),
        max_leaves=12)


def updates() -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries(
        {"operation": st.sampled_from(["append", "replace", "close", "remove_entry",
                                       "add_loop", "add_decision", "bogus"])},
        optional={"file": st.one_of(st.sampled_from(
            ["facts.md", "open_loops.md", "decisions.md", "snapshot.md", "runs/run_2.md",
             "meta.json", "runs/run_x/.git/config", "runs/run_x/.git\u200c/config",
             "memory/b/facts.md", "a\\b.md", "%2e%2e/x", "runs/run_x/GIT~1/c"]), json_values()),
            "section": st.one_of(texts(), json_values()), "content": st.one_of(texts(),
                                                                             json_values()),
            "loopId": st.one_of(st.sampled_from(["loop_1", "loop_x\n", "loop_new"]),
                                json_values()),
            "entryId": st.sampled_from(["loop_1", "abc"]), "title": texts(),
            "resolution": json_values(), "status": json_values(),
            "loopPriority": st.sampled_from(["high", "low", "x"])})


def good_updates() -> st.SearchStrategy[dict[str, Any]]:
    """Updates that often succeed, so the writing code runs too."""
    return st.one_of(
        st.fixed_dictionaries({"operation": st.just("append"), "file": st.just("facts.md"),
                               "section": st.sampled_from(["Domain", "## New", "Нове"]),
                               "content": texts()}),
        st.fixed_dictionaries({"operation": st.sampled_from(["append", "replace"]),
                               "file": st.sampled_from(["snapshot.md", "decisions.md",
                                                        "runs/run_2.md", "runs/run_2/r.md"]),
                               "content": texts()}),
        st.fixed_dictionaries({"operation": st.just("add_loop"), "content": texts()},
                              optional={"loopId": st.sampled_from(["loop_9", "loop_1"]),
                                        "section": texts()}),
        st.fixed_dictionaries({"operation": st.just("close"), "loopId": st.just("loop_1")},
                              optional={"resolution": texts()}),
        st.fixed_dictionaries({"operation": st.just("add_decision"), "title": texts()},
                              optional={"content": texts(), "status": texts()}))


def requests() -> st.SearchStrategy[Any]:
    good = st.fixed_dictionaries(
        {"agentId": st.just("a"), "runId": st.just("run_1"),
         "updates": st.lists(good_updates(), min_size=1, max_size=3)},
        optional={"reasoning": texts(), "factsUsed": st.lists(st.sampled_from(["f1", "x"])),
                  "priority": st.sampled_from(["normal", "high"])})
    doc = st.fixed_dictionaries(
        {"agentId": st.one_of(st.sampled_from(["a", "a\n", "ghost", "A", "-a"]), json_values()),
         "runId": st.one_of(st.sampled_from(["run_1", "run_1\n", "r"]), json_values()),
         "updates": st.one_of(st.lists(updates(), min_size=1, max_size=3), json_values())},
        optional={"proposalId": st.one_of(st.sampled_from(["p.", "x..", "p.lock", "p-1"]),
                                          texts()),
                  "reasoning": json_values(), "priority": json_values(),
                  "expectedVersion": json_values(), "factsUsed": json_values(),
                  "entityRefs": json_values(), "params": json_values()})
    return st.one_of(good, good, doc, json_values())


def request_texts() -> st.SearchStrategy[str]:
    """Raw request text: valid JSON of a generated request, deep nesting, or junk."""
    return st.one_of(requests().map(lambda d: json.dumps(d)),
                     st.integers(1, 3000).map(lambda n: "[" * n + "]" * n),
                     st.integers(1, 3000).map(lambda n: '{"updates": ' + "[" * n + "]" * n
                                              + "}"),
                     texts())


# ---------------------------------------------------------------------------- targets

class Workspace:
    """The real repository and folders the targets work in (made once per run)."""

    def __init__(self, base: Path) -> None:
        from memwarden.git.repo import Repo
        from memwarden.model.config import parse_config

        self.base = base
        self.check_root = base / "checked"
        self.check_root.mkdir()
        self.repo_root = base / "repo"
        files = {"memory/a/facts.md": "# Facts: a\n\n## Domain\n- one fact\n",
                 "memory/a/open_loops.md": "# Loops\n\n## Open\n- [ ] loop_1: x (opened "
                                           "2026-02-01, priority high)\n",
                 "memory/a/decisions.md": "# Decisions\n",
                 "memory/a/meta.json": '{"agentId": "a", "version": 1, "schemaVersion": "1"}',
                 "agents/a/_agent.md": "---\nname: A\nslug: a\nversion: 1.0.0\nstatus: draft\n"
                                       "created_at: 2026-01-01\ncreated_by: o\n---\nA\n"}
        for rel, text in files.items():
            p = self.repo_root / rel
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text(text)
        env = {**os.environ, "GIT_AUTHOR_NAME": "F", "GIT_AUTHOR_EMAIL": "f@x.invalid",
               "GIT_COMMITTER_NAME": "F", "GIT_COMMITTER_EMAIL": "f@x.invalid"}
        for args in (["init", "-q", "-b", "main"], ["add", "-A"],
                     ["commit", "-qm", "init\n\nHuman-Edit: true"]):
            subprocess.run(["git", *args], cwd=self.repo_root, check=True, env=env)
        self.repo = Repo(self.repo_root / ".git", self.repo_root)
        self.config = parse_config(None)
        from memwarden.read.snapshot import agent_snapshot

        self.archive, _ = agent_snapshot(self.repo, "a", "fuzz", "main")
        self.n = 0


def target_check(ws: Workspace, path: str, data: bytes) -> str:
    from memwarden.git.source import WorktreeSource
    from memwarden.policies.engine import check

    full = ws.check_root / path
    full.parent.mkdir(parents=True, exist_ok=True)
    full.write_bytes(data)
    try:
        result = check(WorktreeSource(ws.check_root, None, None), ws.config, [path])
        return "findings" if result.findings else "clean"
    finally:
        full.unlink()


def target_propose(ws: Workspace, doc: Any, raw: str | None) -> str:
    import datetime as dt

    from memwarden.apply.propose import load_request, propose

    if raw is not None:
        doc = load_request(raw, "request", ws.config)
    ws.n += 1
    if isinstance(doc, dict) and "proposalId" not in doc:
        doc = {**doc, "proposalId": f"fuzz-{ws.n}"}
    propose(ws.repo, ws.config, doc, "main", dt.datetime(2026, 2, 17, tzinfo=dt.UTC))
    return "proposed"


def _mutate(archive: bytes, edits: list[tuple[int, int]], member: tuple[str, bytes] | None,
            cut: int | None) -> bytes:
    tar = gzip.decompress(archive)
    if member is not None:  # append a member, as an attacker's tar tool would
        buf = io.BytesIO()
        with tarfile.open(fileobj=io.BytesIO(tar)) as src, \
                tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as dst:
            for m in src.getmembers():
                dst.addfile(m, src.extractfile(m) if m.isreg() else None)
            info = tarfile.TarInfo(member[0])
            info.size = len(member[1])
            dst.addfile(info, io.BytesIO(member[1]))
        tar = buf.getvalue()
    data = bytearray(tar)
    for pos, val in edits:
        if data:
            data[pos % len(data)] = val
    out = gzip.compress(bytes(data), mtime=0)
    return out[:cut] if cut is not None else out


def target_restore(ws: Workspace, raw: bytes) -> str:
    from memwarden.read.snapshot import restore_archive

    into = Path(tempfile.mkdtemp(dir=ws.base, prefix="into-"))
    try:
        restore_archive(ws.repo, raw, "archive", into, None, None, False, True)
        return "restored"
    finally:
        import shutil

        shutil.rmtree(into, ignore_errors=True)


def archives(ws_archive: bytes) -> st.SearchStrategy[bytes]:
    names = st.one_of(st.sampled_from(
        ["memory/a/runs/run_x/.git/config", "memory/a/x.md", "../x", "/etc/x",
         "memory/a/facts.md", "memory/a/runs/run_x/\u202e.md", "memory/b/facts.md"]),
        st.text(max_size=30))
    return st.one_of(
        st.binary(max_size=400),
        st.binary(max_size=200).map(lambda b: gzip.compress(b, mtime=0)),
        st.tuples(st.lists(st.tuples(st.integers(0, 1 << 20), st.integers(0, 255)),
                           max_size=4),
                  st.none() | st.tuples(names, st.binary(max_size=100)),
                  st.none() | st.integers(0, 4000)).map(
            lambda t: _mutate(ws_archive, *t)))


# ---------------------------------------------------------------------------- running

class Tally:
    def __init__(self, timeout: int) -> None:
        self.timeout = timeout
        self.inputs: Counter[str] = Counter()
        self.outcomes: Counter[str] = Counter()
        self.tracebacks: list[str] = []
        self.hangs: list[str] = []
        self.slowest = 0.0

    def run(self, name: str, fn: Any, *args: Any) -> None:
        """One input: refused (MemwardenError) or done is fine; anything else is a bug."""
        self.inputs[name] += 1

        def alarm(signum: int, frame: Any) -> None:
            raise TimeoutError

        old = signal.signal(signal.SIGALRM, alarm)
        signal.alarm(self.timeout)
        start = time.monotonic()
        try:
            self.outcomes[f"{name}:{fn(*args)}"] += 1
        except MemwardenError:
            self.outcomes[f"{name}:refused"] += 1
        except TimeoutError:
            self.hangs.append(f"{name}: {args[1:]!r:.300}")
        except Exception:  # noqa: BLE001 - the point: report every traceback
            self.tracebacks.append(f"{name}: {args[1:]!r:.300}\n{traceback.format_exc()}")
        finally:
            signal.alarm(0)
            signal.signal(signal.SIGALRM, old)
            self.slowest = max(self.slowest, time.monotonic() - start)


def fuzz(ws: Workspace, tally: Tally, examples: int, seed: int | None = None,
         only: str | None = None) -> None:
    """Run `examples` generated inputs through each of the three targets (or `only` the
    one named: check_inputs, propose_inputs, restore_inputs)."""
    common = settings(max_examples=examples, deadline=None, database=None,
                      phases=[Phase.generate], derandomize=seed is not None,
                      suppress_health_check=list(HealthCheck))

    @common
    @given(st.sampled_from(PATHS), file_bytes())
    def check_inputs(path: str, data: bytes) -> None:
        tally.run("check", target_check, ws, path, data)

    @common
    @given(st.one_of(requests().map(lambda d: (d, None)),
                     request_texts().map(lambda t: (None, t))))
    def propose_inputs(pair: tuple[Any, str | None]) -> None:
        tally.run("propose", target_propose, ws, *pair)

    @common
    @given(archives(ws.archive))
    def restore_inputs(raw: bytes) -> None:
        tally.run("restore", target_restore, ws, raw)

    for fn in (check_inputs, propose_inputs, restore_inputs):
        if only is None or fn.__name__ == only:
            fn()


def peak_rss_mb() -> float:
    """Peak resident set of this process and (separately) of its largest child, in MB."""
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    kids = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return max(own, kids) / 1024  # Linux reports KiB


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--examples", type=int, default=10_000,
                    help="total generated inputs, split over the three targets")
    ap.add_argument("--timeout", type=int, default=10, help="seconds before an input hangs")
    ap.add_argument("--seed", type=int, default=None)
    args = ap.parse_args(argv)
    per_target = -(-args.examples // 3)
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="mw-fuzz-") as tmp:
        ws = Workspace(Path(tmp))
        tally = Tally(args.timeout)
        fuzz(ws, tally, per_target, args.seed)
    report = {"inputs": dict(tally.inputs), "total": sum(tally.inputs.values()),
              "outcomes": dict(sorted(tally.outcomes.items())),
              "tracebacks": len(tally.tracebacks), "hangs": len(tally.hangs),
              "slowest_input_s": round(tally.slowest, 3),
              "peak_rss_mb": round(peak_rss_mb(), 1),
              "seconds": round(time.monotonic() - start, 1)}
    for tb in tally.tracebacks[:20]:
        print(tb, file=sys.stderr)
    for h in tally.hangs[:20]:
        print(f"HANG {h}", file=sys.stderr)
    print(json.dumps(report, indent=2))
    ok = not tally.tracebacks and not tally.hangs and report["peak_rss_mb"] <= 500
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
