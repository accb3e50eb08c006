"""Helpers for the service tests: a real memory repo, real `memwarden serve` processes on
127.0.0.1, and tokens signed as an operator would sign them."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import jwt

SECRET = "test-secret-" + "x" * 40
AGENT = "archivist-violin"
OTHER = "garden-curator"
GIT_ENV = {
    "GIT_AUTHOR_NAME": "Test Human", "GIT_AUTHOR_EMAIL": "human@example.invalid",
    "GIT_COMMITTER_NAME": "Test Human", "GIT_COMMITTER_EMAIL": "human@example.invalid",
    "GIT_CONFIG_NOSYSTEM": "1",
}


def env(home: Path, **extra: str) -> dict[str, str]:
    out = {k: v for k, v in os.environ.items()
           if k not in ("GIT_DIR", "GIT_INDEX_FILE", "MEMWARDEN_CONFIG")}
    out.update(GIT_ENV)
    out.update({"HOME": str(home), "GIT_CONFIG_GLOBAL": str(home / ".gitconfig"),
                "MEMWARDEN_JWT_SECRET": SECRET, "PYTHONUNBUFFERED": "1"})
    out.update(extra)
    return out


def make_memory_repo(root: Path) -> Path:
    """The bundled example (three agents) as a git repository with one commit on main."""
    from memwarden.cli.demo import make_repo

    make_repo(root)
    return root


def write_config(path: Path, repo: Path, service: str = "", auth: str = "") -> Path:
    """The repo's memwarden.toml plus a [service] section (kept outside the work tree)."""
    base = (repo / "memwarden.toml").read_text("utf-8")
    text = base + "\n[service]\nrate_limit_per_minute = 600000\nrate_limit_burst = 100000\n"
    text += service + "\n[service.auth]\n" + auth + "\n"
    path.write_text(text, "utf-8")
    return path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def mw(repo: Path, home: Path, *args: str, input: str | None = None,
       check: bool = True) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run([sys.executable, "-m", "memwarden", *args], cwd=repo, env=env(home),
                          capture_output=True, text=True, input=input, timeout=120)
    if check and proc.returncode != 0:
        raise AssertionError(f"memwarden {' '.join(args)}: {proc.returncode}\n{proc.stderr}")
    return proc


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True,
                          check=True, env={**os.environ, **GIT_ENV}).stdout


def proposal_refs(repo: Path) -> list[str]:
    return git(repo, "for-each-ref", "--format=%(refname) %(objectname)",
               "refs/heads/proposals/").split("\n")[:-1]


class Server:
    """`memwarden serve` in its own process; stopped with SIGTERM."""

    def __init__(self, repo: Path, home: Path, config: Path, log: Path | None = None,
                 extra_env: dict[str, str] | None = None) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        args = [sys.executable, "-m", "memwarden", "serve", "--repo", str(repo), "--port",
                str(self.port), "--config", str(config),
                "--access-log", str(log) if log else "off"]
        self.stderr = (home / f"serve-{self.port}.err").open("w")
        self.proc = subprocess.Popen(args, cwd=repo, env=env(home, **(extra_env or {})),
                                     stdout=subprocess.DEVNULL, stderr=self.stderr)
        deadline = time.monotonic() + 60
        while True:
            if self.proc.poll() is not None:
                raise AssertionError("serve exited: " +
                                     Path(self.stderr.name).read_text("utf-8"))
            try:
                if httpx.get(self.url + "/health", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                self.stop()
                raise AssertionError("serve did not start")
            time.sleep(0.1)

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.stderr.close()
        return self.proc.returncode

    def errors(self) -> str:
        return Path(self.stderr.name).read_text("utf-8")


def token(sub: str = AGENT, scopes: tuple[str, ...] = ("memory:read", "memory:propose"),
          key: Any = SECRET, alg: str = "HS256", ttl: int = 600, **claims: Any) -> str:
    now = int(time.time())
    body = {"sub": sub, "scope": " ".join(scopes), "aud": "memwarden", "iss": "memwarden",
            "iat": now, "exp": now + ttl}
    body.update(claims)
    body = {k: v for k, v in body.items() if v is not None}
    return jwt.encode(body, key, algorithm=alg)


def auth(tok: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {tok}"}


def request_doc(run: str, content: str = "check the bow rehair") -> dict[str, Any]:
    return {"runId": run, "updates": [{"operation": "add_loop", "content": content}]}


def dumps(doc: Any) -> str:
    return json.dumps(doc, ensure_ascii=False)


@contextlib.contextmanager
def served(base: Path, service: str = "", log: Path | None = None,
           extra_env: dict[str, str] | None = None,
           prepare: Callable[[Path], None] | None = None
           ) -> Iterator[tuple[Path, Path, Path, Server]]:
    """(repo, home, config, server) under `base`: the example memory repository (changed by
    `prepare` first, if given), a config with `service` in its [service] section, and
    `memwarden serve` on them, stopped on leaving."""
    home = base / "home"
    home.mkdir()
    repo = make_memory_repo(base / "repo")
    if prepare is not None:
        prepare(repo)
    config = write_config(base / "svc.toml", repo, service=service)
    server = Server(repo, home, config, log, extra_env)
    try:
        yield repo, home, config, server
    finally:
        server.stop()
