"""Connections without a token against `memwarden serve` in its own process, run with a
low limit on open files: many unfinished requests, trickled headers and a body that never
comes are refused or dropped, and the server answers again once they are gone; and, with a
small connection cap, clients that never read their answers are dropped too."""

from __future__ import annotations

import resource
import socket
import subprocess
import sys
import time

import httpx
import pytest
from service_support import (
    AGENT,
    Server,
    auth,
    env,
    free_port,
    make_memory_repo,
    token,
    write_config,
)

FD_LIMIT = 256  # the child's soft and hard limit: it cannot raise it
ATTACKERS = 320  # more connections than the process may hold files
TIMEOUT = 1.0  # --request-timeout for the test server, seconds


@pytest.fixture()
def server(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    repo = make_memory_repo(tmp_path / "repo")
    config = write_config(tmp_path / "svc.toml", repo)
    port = free_port()
    errors = (tmp_path / "serve.err").open("w")

    def low_limit() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (FD_LIMIT, FD_LIMIT))

    proc = subprocess.Popen(
        [sys.executable, "-m", "memwarden", "serve", "--repo", str(repo), "--port", str(port),
         "--config", str(config), "--access-log", "off", "--request-timeout", str(TIMEOUT)],
        cwd=repo, env=env(home), stdout=subprocess.DEVNULL, stderr=errors,
        preexec_fn=low_limit)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while not _healthy(url):
        assert proc.poll() is None and time.monotonic() < deadline, "serve did not start"
        time.sleep(0.1)
    yield {"url": url, "port": port, "proc": proc, "errors": tmp_path / "serve.err"}
    proc.terminate()
    try:
        proc.wait(30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    errors.close()


def _healthy(url: str) -> bool:
    try:
        return httpx.get(url + "/health", timeout=5).status_code == 200
    except httpx.HTTPError:
        return False


def _open(port: int, n: int, first: bytes) -> list[socket.socket]:
    """`n` connections that each sent `first` (paced, so each is accepted: the kernel's
    queue is the server's listen backlog)."""
    socks = []
    for i in range(n):
        try:
            s = socket.create_connection(("127.0.0.1", port), timeout=5)
            s.sendall(first)
        except OSError:
            continue  # refused and closed already: that is the server defending itself
        socks.append(s)
        if i % 8 == 7:
            time.sleep(0.005)
    return socks


def _answer(s: socket.socket) -> bytes | None:
    """What the server sent before it closed the connection (b"" when it just closed;
    None when it still holds it open after well past the deadline)."""
    s.settimeout(3 * TIMEOUT + 2)
    data = b""
    try:
        while chunk := s.recv(4096):
            data += chunk
    except TimeoutError:
        return None
    except OSError:
        pass  # reset: closed by the server
    return data


def test_unfinished_requests_cannot_exhaust_the_servers_files(server):
    socks = _open(server["port"], ATTACKERS, b"GET /health HTTP/1.1\r\nHost: x\r\n")
    body = _open(server["port"], 4, b"POST /health HTTP/1.1\r\nHost: x\r\n"
                 b"Content-Type: application/json\r\nContent-Length: 100000\r\n\r\n{")
    time.sleep(TIMEOUT / 2)
    for s in socks:  # a header line now and then does not buy more time
        try:
            s.sendall(b"X-Slow: 1\r\n")
        except OSError:
            pass
    answers = [_answer(s) for s in socks + body]
    assert server["proc"].poll() is None, server["errors"].read_text("utf-8")
    refused = [a for a in answers if a and a.startswith(b"HTTP/1.1 503")]
    assert refused and b'"too_many_connections"' in refused[0]
    dropped = [a for a in answers if a == b""]  # held, then dropped at the deadline
    assert dropped and len(refused) + len(dropped) == len(answers)
    assert _healthy(server["url"])  # while the attackers still hold their sockets
    for s in socks + body:
        s.close()
    assert _healthy(server["url"])
    text = server["errors"].read_text("utf-8")
    assert "Traceback" not in text and "internal error" not in text


def test_keep_alive_connections_are_served_and_then_let_go(server):
    with httpx.Client(timeout=10) as client:
        for _ in range(3):
            assert client.get(server["url"] + "/health").status_code == 200
    s = socket.create_connection(("127.0.0.1", server["port"]), timeout=5)
    s.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
    first = b""
    while not first.endswith(b"}"):  # the whole JSON answer
        first += s.recv(65536)
    assert first.startswith(b"HTTP/1.1 200")
    s.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\n")  # the next request never finishes
    assert _answer(s) == b""
    s.close()


PIPELINED = b"GET /openapi.json HTTP/1.1\r\nHost: x\r\n\r\n" * 100  # megabytes of answers


def _non_reader(port: int) -> socket.socket:
    """A connection that asks for far more than its tiny receive buffer holds, without a
    token, and then never reads."""
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1024)
    s.settimeout(5)
    s.connect(("127.0.0.1", port))
    s.sendall(PIPELINED)
    return s


def test_clients_that_read_nothing_cannot_hold_the_connection_cap(tmp_path):
    """Connections that pipelined requests for the OpenAPI document and read none of the
    answers stayed open for good: the app waits for the socket to drain, and the request
    deadline does not run while it answers, so a few of them held every slot under
    max_connections and every other client got 503. Now a connection whose client has not
    read for request_timeout_seconds is dropped, and the others are served again (while
    the attacker still holds its sockets)."""
    home = tmp_path / "home"
    home.mkdir()
    repo = make_memory_repo(tmp_path / "repo")
    config = write_config(tmp_path / "svc.toml", repo, service="max_connections = 4\n"
                          "request_timeout_seconds = 2\n")
    server = Server(repo, home, config)
    url = server.url + f"/memory/{AGENT}/read"
    attackers: list[socket.socket] = []
    try:
        # one more until the cap is full (a connection the server has not let go of yet
        # may still take a slot at first)
        while True:
            attackers.append(_non_reader(server.port))
            r = httpx.get(url, headers=auth(token()), timeout=30)
            if r.status_code == 503:
                break
            assert r.status_code == 200 and len(attackers) < 8, r.text
        assert r.json()["error"]["code"] == "too_many_connections"
        deadline = time.monotonic() + 60
        while r.status_code == 503 and time.monotonic() < deadline:
            time.sleep(0.1)
            r = httpx.get(url, headers=auth(token()), timeout=30)
        assert r.status_code == 200, r.text
    finally:
        for s in attackers:
            s.close()
        server.stop()
    assert "Traceback" not in server.errors()
