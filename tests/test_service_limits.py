"""Limits of `memwarden serve` (a real process on 127.0.0.1) against clients that would deny
service to the others, and what its answers may say: one token holding many keep-alive
connections, a flood of bad tokens from one address, a search index that stays damaged
(its folder must not be named to the caller), and `since` dates before the year 1000
(echoed in ISO 8601)."""

from __future__ import annotations

import http.client
import json
import re
import shutil
import socket
import sqlite3
import time

import httpx
import pytest
from service_support import (
    AGENT,
    OTHER,
    Server,
    auth,
    git,
    make_memory_repo,
    token,
    write_config,
)

PER_TOKEN = 3  # max_connections_per_token of the shared server
ISO = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$")
ABSOLUTE_PATH = re.compile(r"(?:^|[\s'\"(=:])/[A-Za-z0-9._-]+/")


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    base = tmp_path_factory.mktemp("limits")
    home = base / "home"
    home.mkdir()
    repo = make_memory_repo(base / "repo")
    config = write_config(base / "svc.toml", repo,
                          service=f"max_connections_per_token = {PER_TOKEN}\n"
                          "auth_failures_burst = 5\nauth_failures_per_minute = 1\n")
    # uvicorn would take X-Forwarded-For from any peer with this; the server must not
    server = Server(repo, home, config, extra_env={"FORWARDED_ALLOW_IPS": "*"})
    yield {"repo": repo, "url": server.url, "port": server.port, "server": server,
           "base": base}
    server.stop()
    assert "Traceback" not in server.errors()


def _held(port: int, tok: str) -> http.client.HTTPConnection:
    """A keep-alive connection that has been served one read with `tok` and stays open."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    _read_on(conn, tok)
    return conn


def _read_on(conn: http.client.HTTPConnection, tok: str) -> None:
    conn.request("GET", f"/memory/{AGENT}/read", headers=auth(tok))
    r = conn.getresponse()
    body = r.read()
    assert r.status == 200, body
    assert not r.will_close  # kept alive: it still counts as open


def _refused_and_closed(port: int, tok: str) -> dict:
    """One read on a new connection that the server must answer and then close (a
    connection it kept open would make recv() time out, failing the test)."""
    s = socket.create_connection(("127.0.0.1", port), timeout=30)
    s.sendall(f"GET /memory/{AGENT}/read HTTP/1.1\r\nHost: x\r\n"
              f"Authorization: Bearer {tok}\r\n\r\n".encode())
    data = b""
    while chunk := s.recv(65536):
        data += chunk
    s.close()
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = dict(line.lower().split(": ", 1) for line in lines[1:])
    return {"status": int(lines[0].split()[1]), "headers": headers, "body": json.loads(body)}


def test_one_token_cannot_hold_more_than_its_share_of_connections(site):
    """About 200 keep-alive connections of one token used to be served (the rate limit is
    per request, not per connection), so a few tokens filled the server's connection cap.
    Now a request on one connection more than max_connections_per_token is refused with
    429 and its connection closed; other agents, and the token's own open connections,
    are still served; and closed connections are let go (three rounds of opening the
    share, closing it and opening it again)."""
    port, tok = site["port"], token(AGENT)
    for _round in range(3):
        held = _wait_for_share(port, tok)
        refused = _refused_and_closed(port, tok)
        assert refused["status"] == 429, refused
        assert refused["body"]["error"]["code"] == "too_many_connections_for_token"
        assert AGENT in refused["body"]["error"]["message"]
        assert refused["body"]["error"]["requestId"]
        assert refused["headers"]["connection"] == "close"
        assert int(refused["headers"]["retry-after"]) >= 1
        # another token subject has a share of its own
        other = httpx.get(site["url"] + f"/memory/{OTHER}/read", headers=auth(token(OTHER)),
                          timeout=30)
        assert other.status_code == 200, other.text
        for conn in held:  # the held connections go on serving their token
            _read_on(conn, tok)
        for conn in held:
            conn.close()


def _wait_for_share(port: int, tok: str) -> list[http.client.HTTPConnection]:
    """PER_TOKEN held connections of `tok`. The server learns of connections the client
    closed a moment after close() returns, so a refusal here is retried for a while; a
    share that never comes back (a leak) fails."""
    deadline = time.monotonic() + 30
    while True:
        held: list[http.client.HTTPConnection] = []
        try:
            for _ in range(PER_TOKEN):
                held.append(_held(port, tok))
            return held
        except AssertionError:
            for conn in held:
                conn.close()
            if time.monotonic() > deadline:
                raise
            time.sleep(0.02)


def test_a_flood_of_bad_tokens_from_one_address_is_cut_off_before_checking_them(site):
    """Every bad token costs a signature check and used to get 401 for ever. Now an address
    gets auth_failures_burst of them, then 429 with Retry-After without any check: also
    with X-Forwarded-For naming other addresses (not trusted), and also for a good token
    the server has not seen (no check is made), while a token verified before still
    passes. Another address is not affected: good tokens work and bad ones get 401. (The
    flood comes from 127.0.0.3: every 127.x address is this machine, and the other tests
    of the module use 127.0.0.1.)"""
    url = site["url"] + f"/memory/{AGENT}/read"
    flood = httpx.Client(transport=httpx.HTTPTransport(local_address="127.0.0.3"), timeout=30)
    elsewhere = httpx.Client(transport=httpx.HTTPTransport(local_address="127.0.0.4"),
                             timeout=30)
    with flood, elsewhere:
        known = token(AGENT, ttl=902)
        assert flood.get(url, headers=auth(known)).status_code == 200
        bad = token(AGENT, key="wrong-secret-" + "z" * 40)
        assert [flood.get(url, headers=auth(bad)).status_code for _ in range(5)] == [401] * 5
        for headers in (auth(bad), auth("not-a-jwt"),
                        {**auth(bad), "X-Forwarded-For": "203.0.113.7"},
                        {**auth(bad), "X-Forwarded-For": "198.51.100.1, 127.0.0.3"},
                        auth(token(OTHER, ttl=900))):  # good, but never seen
            r = flood.get(url, headers=headers)
            assert r.status_code == 429, r.text
            assert r.json()["error"]["code"] == "too_many_auth_failures"
            assert int(r.headers["retry-after"]) >= 1
        assert flood.get(url, headers=auth(known)).status_code == 200
        assert elsewhere.get(url, headers=auth(token(AGENT, ttl=901))).status_code == 200
        assert elsewhere.get(url, headers=auth(bad)).status_code == 401


def test_a_search_index_that_stays_damaged_is_reported_without_paths(site):
    """An index whose pages break while a query reads them is dropped and rebuilt; when
    the next one breaks too (here: a damaged copy in the per-user spare folder, where the
    search looks next) the answer named the index folder, an absolute path on the server,
    with 422. Now it is 503 and names no folder, over REST and MCP; the server's log names
    it for the operator, and the next search builds the index afresh."""
    from memwarden.git.repo import open_repo
    from memwarden.read import search as S

    repo = open_repo(site["repo"])
    head = git(site["repo"], "rev-parse", "main").strip()
    idx = S.open_index(repo, head)
    path = idx.path
    idx.close()
    damaged = site["base"] / "damaged.db"
    shutil.copyfile(path, damaged)
    conn = sqlite3.connect(damaged)
    page = conn.execute("PRAGMA page_size").fetchone()[0]
    [root] = conn.execute("SELECT rootpage FROM sqlite_master WHERE name = 'fts_data'"
                          ).fetchone()
    conn.close()
    data = bytearray(damaged.read_bytes())  # it opens and checks out; its FTS pages do not
    data[(root - 1) * page:root * page] = b"\xff" * page
    damaged.write_bytes(bytes(data))
    spare = S._spare_dir(repo)
    try:
        def damage_both() -> None:
            shutil.copyfile(damaged, path.with_suffix(".new"))
            path.with_suffix(".new").replace(path)  # a new file: no reader has it open
            spare.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(damaged, spare / path.name)

        damage_both()
        r = httpx.get(site["url"] + "/memory/search", params={"q": "violin", "agent": AGENT},
                      headers=auth(token()), timeout=60)
        assert r.status_code == 503, r.text
        error = r.json()["error"]
        assert error["code"] == "search_unavailable"
        _names_no_folder(r.text, error["message"], site, spare)
        assert "index" in error["message"] and "operator" in error["message"]

        damage_both()
        r = httpx.post(site["url"] + "/mcp", timeout=60, headers={
            **auth(token()), "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream"}, json={
            "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
                "name": "memory-search", "arguments": {"query": "bow", "agentId": AGENT}}})
        result = r.json()["result"]
        assert result["isError"]
        assert "search_unavailable (503)" in result["content"][0]["text"]
        _names_no_folder(r.text, result["content"][0]["text"], site, spare)

        assert str(S.index_dir(repo)) in site["server"].errors()  # for the operator
        again = httpx.get(site["url"] + "/memory/search", params={"q": "violin",
                                                                  "agent": AGENT},
                          headers=auth(token()), timeout=60)
        assert again.status_code == 200 and again.json()["results"], again.text
    finally:
        shutil.rmtree(spare.parent.parent, ignore_errors=True)


def _names_no_folder(text: str, message: str, site: dict, spare) -> None:
    for folder in (site["base"], site["repo"], spare, "/tmp"):
        assert str(folder) not in text
    assert not ABSOLUTE_PATH.search(message), message


def test_a_guess_of_the_servers_folder_gets_the_usual_answer(site):
    """Messages that name a server folder are answered without it; one that names it only
    because the caller sent it must get the usual answer, or the difference would confirm
    the guess."""
    answers = []
    for guess in (str(site["repo"]), "/srv/not-the-repo"):
        r = httpx.get(site["url"] + f"/memory/{AGENT}/diff", headers=auth(token()),
                      params={"since": "2000-01-01", "files": guess}, timeout=60)
        assert r.status_code == 422, r.text
        error = r.json()["error"]
        answers.append((error["code"], error["message"].replace(guess, "GUESS")))
    assert answers[0] == answers[1]


@pytest.mark.parametrize("since, echo", [
    ("0001-01-01", "0001-01-01T00:00:00Z"),
    ("0999-12-31T23:00:00-01:00", "1000-01-01T00:00:00Z"),
    ("0042-03-04T05:06:07Z", "0042-03-04T05:06:07Z"),
])
def test_since_is_echoed_in_iso_8601(site, since, echo):
    """`since=0001-01-01` came back as "1-01-01T00:00:00Z" (strftime drops the year's
    leading zeros). Now every time in a temporal read and a diff has a four-digit year,
    over REST and MCP, and tokenCount stays exact and within the budget."""
    from memwarden.model.config import load_config
    from memwarden.tokens.counter import count_text

    encoding = load_config(None, site["repo"]).encoding
    read = httpx.get(site["url"] + f"/memory/{AGENT}/read", headers=auth(token()),
                     params={"mode": "temporal", "since": since}, timeout=60)
    assert read.status_code == 200, read.text
    doc = read.json()
    assert doc["diff"]["since"] == echo
    assert ISO.match(doc["meta"]["commitDate"])
    assert doc["tokenCount"] == count_text(read.text, encoding)
    diff = httpx.get(site["url"] + f"/memory/{AGENT}/diff", headers=auth(token()),
                     params={"since": since}, timeout=60)
    assert diff.status_code == 200, diff.text
    doc = diff.json()
    assert doc["since"] == echo and ISO.match(doc["toDate"])
    assert doc["fromDate"] is None or ISO.match(doc["fromDate"])
    assert doc["tokenCount"] == count_text(diff.text, encoding)
    r = httpx.post(site["url"] + "/mcp", timeout=60, headers={
        **auth(token()), "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream"}, json={
        "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
            "name": "read-memory", "arguments": {"mode": "temporal", "since": since}}})
    assert r.json()["result"]["structuredContent"]["diff"]["since"] == echo


def test_since_echo_fits_every_budget(site):
    """The four-digit year costs a token more than the response was cut for: a budget the
    response met exactly before that token still gets an exact tokenCount within it."""
    from memwarden.model.config import load_config
    from memwarden.tokens.counter import count_text

    encoding = load_config(None, site["repo"]).encoding
    for path, params in ((f"/memory/{AGENT}/diff", {"since": "0001-01-01"}),
                         (f"/memory/{AGENT}/read", {"mode": "temporal",
                                                    "since": "0001-01-01"})):
        whole = httpx.get(site["url"] + path, headers=auth(token()), params=params,
                          timeout=60).json()
        assert not whole["truncated"] and not whole["excluded"]
        full = whole["tokenCount"]
        for budget in (full - 2, full - 1, full, full + 1):
            r = httpx.get(site["url"] + path, headers=auth(token()), timeout=60,
                          params={**params, "maxTokens": budget})
            assert r.status_code == 200, r.text
            doc = r.json()
            assert doc["tokenCount"] <= budget, (path, budget)
            assert doc["tokenCount"] == count_text(r.text, encoding), (path, budget)
            assert bool(doc["truncated"] or doc["excluded"]) == (budget < full)
            assert '"0001-01-01T00:00:00Z"' in r.text


@pytest.mark.parametrize("since", ["0001-01-01T00:00:00+01:00", "9999-12-31T23:59:59-01:00",
                                   "yesterday", "2026-13-01"])
def test_since_outside_the_calendar_is_a_clear_422(site, since):
    for path, params in ((f"/memory/{AGENT}/diff", {"since": since}),
                         (f"/memory/{AGENT}/read", {"mode": "temporal", "since": since})):
        r = httpx.get(site["url"] + path, headers=auth(token()), params=params, timeout=60)
        assert r.status_code == 422, r.text
        assert r.json()["error"]["code"] == "invalid_since"
        assert "2026-02-10" in r.json()["error"]["message"]
