"""Load `memwarden serve` on loopback: reads, proposals, and reads while `apply --all` runs.

Usage: python bench/serve.py REPO [--clients 32] [--seconds 30] [--max-proposals 1000]
REPO comes from bench/gen_repo.py (it is cloned first; the clone takes the proposals and
the apply). Three phases, each bounded in time and count:
  1. reads: CLIENTS keep-alive connections GET /memory/<agent>/read (basic) of random agents
     for SECONDS; P50/P95/P99 latency and requests/s;
  2. proposals: CLIENTS connections POST /memory/<agent>/propose (one add_loop each, agents
     in turn) until SECONDS pass or MAX_PROPOSALS exist; proposals/s; then every 2xx must
     have its branch exactly once and no other branch may exist (lost/duplicated);
  3. apply: `memwarden apply --all` lands them while CLIENTS read; read P95 during it.
The server's RSS is sampled after start-up, after each phase. Targets (issue 21): read
P95 <= 25 ms and >= 400 req/s; >= 50 proposals/s, 0 lost or duplicated; RSS growth <= 50
MB; P95 during apply <= 2x idle. The client runs in this process (asyncio, raw HTTP/1.1).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

SECRET = "bench-secret-" + "b" * 40


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def _pct(values: list[float], p: float) -> float:
    if not values:
        return float("nan")
    s = sorted(values)
    return s[min(len(s) - 1, int(p / 100 * len(s)))]


class Conn:
    """One keep-alive HTTP/1.1 connection (what a busy agent runtime would hold)."""

    def __init__(self, port: int, token: str) -> None:
        self.port = port
        self.auth = f"Bearer {token}"
        self.reader: Any = None
        self.writer: Any = None

    async def request(self, method: str, path: str, body: bytes = b"") -> tuple[int, bytes]:
        if self.writer is None:
            self.reader, self.writer = await asyncio.open_connection("127.0.0.1", self.port)
        head = (f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{self.port}\r\n"
                f"Authorization: {self.auth}\r\nContent-Length: {len(body)}\r\n")
        if body:
            head += "Content-Type: application/json\r\n"
        self.writer.write(head.encode() + b"\r\n" + body)
        await self.writer.drain()
        status = int((await self.reader.readline()).split()[1])
        length = 0
        while True:
            line = await self.reader.readline()
            if line in (b"\r\n", b""):
                break
            name, _, value = line.decode("latin-1").partition(":")
            if name.lower() == "content-length":
                length = int(value)
        data = await self.reader.readexactly(length)
        return status, data

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()


async def timed_read(conn: Conn, agent: str, lat: list[float], bad: list[int]) -> None:
    """One basic read of `agent`: its latency in ms to `lat` when 200, else a count in bad."""
    t = time.perf_counter()
    status, _ = await conn.request("GET", f"/memory/{agent}/read")
    if status == 200:
        lat.append((time.perf_counter() - t) * 1000)
    else:
        bad[0] += 1


async def read_load(port: int, token: str, agents: list[str], clients: int,
                    until: Any) -> tuple[list[float], int, int]:
    """(latencies in ms, 2xx count, other count) of reads until `until()` is true."""
    lat: list[float] = []
    bad = [0]

    async def client(seed: int) -> None:
        rng = random.Random(seed)
        conn = Conn(port, token)
        try:
            while not until():
                await timed_read(conn, rng.choice(agents), lat, bad)
        finally:
            conn.close()

    await asyncio.gather(*(client(i) for i in range(clients)))
    return lat, len(lat), bad[0]


async def read_each(port: int, token: str, agents: list[str], clients: int
                    ) -> tuple[list[float], int, int]:
    """Every agent read once, spread over the clients."""
    todo = iter(agents)
    lat: list[float] = []
    bad = [0]

    async def client() -> None:
        conn = Conn(port, token)
        try:
            for agent in todo:
                await timed_read(conn, agent, lat, bad)
        finally:
            conn.close()

    await asyncio.gather(*(client() for _ in range(clients)))
    return lat, len(lat), bad[0]


async def propose_load(port: int, token: str, agents: list[str], clients: int,
                       seconds: float, limit: int) -> tuple[list[dict[str, Any]], int, float]:
    """(2xx results, refused count, elapsed seconds)."""
    made: list[dict[str, Any]] = []
    refused = [0]
    counter = iter(range(10**9))
    start = time.perf_counter()
    stamp = time.time_ns()

    async def client() -> None:
        conn = Conn(port, token)
        try:
            while time.perf_counter() - start < seconds:
                i = next(counter)
                if i >= limit:
                    return
                agent = agents[i % len(agents)]
                body = json.dumps({"runId": f"run_bench{stamp}_{i}", "updates": [
                    {"operation": "add_loop", "content": f"bench loop {stamp} {i}"}]}).encode()
                status, data = await conn.request("POST", f"/memory/{agent}/propose", body)
                if 200 <= status < 300:
                    made.append(json.loads(data))
                else:
                    refused[0] += 1
        finally:
            conn.close()

    await asyncio.gather(*(client() for _ in range(clients)))
    return made, refused[0], time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("repo", type=Path)
    ap.add_argument("--clients", type=int, default=32)
    ap.add_argument("--seconds", type=float, default=30.0)
    ap.add_argument("--max-proposals", type=int, default=1000)
    ap.add_argument("--apply-timeout", type=float, default=600.0)
    args = ap.parse_args(argv)
    env = {**os.environ, "MEMWARDEN_JWT_SECRET": SECRET, "GIT_AUTHOR_NAME": "bench",
           "GIT_AUTHOR_EMAIL": "bench@memwarden.invalid", "GIT_COMMITTER_NAME": "bench",
           "GIT_COMMITTER_EMAIL": "bench@memwarden.invalid"}
    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp) / "repo"
        subprocess.run(["git", "clone", "-q", str(args.repo), str(repo)], check=True, env=env)
        agents = sorted(p.name for p in (repo / "memory").iterdir() if p.is_dir())
        config = Path(tmp) / "svc.toml"
        base = (repo / "memwarden.toml").read_text("utf-8") if (
            repo / "memwarden.toml").exists() else ""
        # one token drives every client here: its connection limit must hold them all
        config.write_text(base + "\n[service]\nrate_limit_per_minute = 0\n"
                          "max_connections_per_token = 1000\n"
                          'access_log = "off"\n', "utf-8")
        port = _port()
        server = subprocess.Popen(
            [sys.executable, "-m", "memwarden", "serve", "--repo", str(repo), "--port",
             str(port), "--config", str(config)], cwd=repo, env=env,
            stdout=subprocess.DEVNULL, stderr=open(Path(tmp) / "serve.err", "w"))  # noqa: SIM115
        try:
            return _run(args, repo, agents, port, server, env, Path(tmp))
        finally:
            server.terminate()
            server.wait(60)


def _run(args: Any, repo: Path, agents: list[str], port: int, server: Any,
         env: dict[str, str], tmp: Path) -> int:
    import httpx
    import jwt

    deadline = time.monotonic() + 120
    while True:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/health", timeout=2).status_code == 200:
                break
        except httpx.HTTPError:
            pass
        if server.poll() is not None or time.monotonic() > deadline:
            print((tmp / "serve.err").read_text(), file=sys.stderr)
            return 2
        time.sleep(0.2)
    now = int(time.time())
    token = jwt.encode({"sub": "bench", "scope": "memory:admin", "aud": "memwarden",
                        "iss": "memwarden", "iat": now, "exp": now + 7200}, SECRET,
                       algorithm="HS256")
    report: dict[str, Any] = {"agents": len(agents), "clients": args.clients,
                              "seconds": args.seconds, "rss_mb": {}}
    report["rss_mb"]["start"] = round(_rss_mb(server.pid), 1)

    # 1. reads: first every agent once (cold: nothing cached for main's commit), then the
    # idle steady state
    t = time.perf_counter()
    cold, cold_ok, cold_bad = asyncio.run(read_each(port, token, agents, args.clients))
    took = time.perf_counter() - t
    report["cold_reads"] = {"requests": cold_ok, "errors": cold_bad,
                            "per_s": round(cold_ok / took, 1),
                            "p50_ms": round(_pct(cold, 50), 2),
                            "p95_ms": round(_pct(cold, 95), 2)}
    print(json.dumps({"phase": "cold reads", **report["cold_reads"]}), flush=True)
    report["rss_mb"]["after_warmup"] = round(_rss_mb(server.pid), 1)
    end = time.monotonic() + args.seconds
    t = time.perf_counter()
    lat, ok, bad = asyncio.run(read_load(port, token, agents, args.clients,
                                         lambda: time.monotonic() > end))
    took = time.perf_counter() - t
    report["reads"] = {"requests": ok, "errors": bad, "per_s": round(ok / took, 1),
                       "p50_ms": round(_pct(lat, 50), 2), "p95_ms": round(_pct(lat, 95), 2),
                       "p99_ms": round(_pct(lat, 99), 2)}
    report["rss_mb"]["after_reads"] = round(_rss_mb(server.pid), 1)
    print(json.dumps({"phase": "reads", **report["reads"]}), flush=True)

    # 2. proposals
    before = set(_branches(repo))
    made, refused, took = asyncio.run(propose_load(port, token, agents, args.clients,
                                                   args.seconds, args.max_proposals))
    after = _branches(repo)
    new = [b for b in after if b not in before]
    expected = {f"refs/heads/{m['branch']} {m['commit']}" for m in made}
    lost = len(expected - set(new))
    dup = len(new) - len(set(new)) + len(set(new) - expected)
    report["proposals"] = {"created": len(made), "refused": refused, "seconds": round(took, 2),
                           "per_s": round(len(made) / took, 1), "lost": lost,
                           "duplicated_or_unexpected": dup}
    report["rss_mb"]["after_proposals"] = round(_rss_mb(server.pid), 1)
    print(json.dumps({"phase": "proposals", **report["proposals"]}), flush=True)

    # 3. reads while apply --all lands them
    apply_out = (tmp / "apply.json").open("w+")
    apply = subprocess.Popen([sys.executable, "-m", "memwarden", "apply", "--all"], cwd=repo,
                             env=env, stdout=apply_out, stderr=subprocess.DEVNULL, text=True)
    stop = time.monotonic() + args.apply_timeout
    t = time.perf_counter()
    lat2, ok2, bad2 = asyncio.run(read_load(
        port, token, agents, args.clients,
        lambda: apply.poll() is not None or time.monotonic() > stop))
    took2 = time.perf_counter() - t
    try:
        apply.wait(timeout=max(1.0, stop - time.monotonic() + 60))
    except subprocess.TimeoutExpired:  # bounded: report it unfinished
        apply.terminate()
        apply.wait()
    apply_out.seek(0)
    try:
        results = json.loads(apply_out.read())["results"]
    except (ValueError, KeyError):
        results = []
    states: dict[str, int] = {}
    for r in results:
        states[r["status"]] = states.get(r["status"], 0) + 1
    report["during_apply"] = {"apply_seconds": round(took2, 2), "apply_exit": apply.returncode,
                              "apply_results": states, "reads": ok2, "errors": bad2,
                              "per_s": round(ok2 / took2, 1) if took2 else None,
                              "p95_ms": round(_pct(lat2, 95), 2),
                              "p95_vs_idle": round(_pct(lat2, 95) / _pct(lat, 95), 2)}
    report["rss_mb"]["end"] = round(_rss_mb(server.pid), 1)
    report["rss_mb"]["growth_after_warmup"] = round(
        report["rss_mb"]["end"] - report["rss_mb"]["after_warmup"], 1)
    print(json.dumps({"phase": "apply", **report["during_apply"]}), flush=True)
    health = httpx.get(f"http://127.0.0.1:{port}/health", timeout=10).json()
    report["served_commit_is_main"] = health["commit"] == subprocess.run(
        ["git", "rev-parse", "main"], cwd=repo, capture_output=True, text=True).stdout.strip()
    report["cache"] = health["cache"]
    print(json.dumps(report, indent=2))
    return 0


def _branches(repo: Path) -> list[str]:
    out = subprocess.run(["git", "for-each-ref", "--format=%(refname) %(objectname)",
                          "refs/heads/proposals/"], cwd=repo, capture_output=True, text=True,
                         check=True).stdout
    return out.split("\n")[:-1]


if __name__ == "__main__":
    raise SystemExit(main())
