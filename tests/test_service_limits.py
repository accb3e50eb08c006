"""Limits of `memwarden serve` (a real process on 127.0.0.1) against clients that would deny
service to the others, and what its answers may say: one token holding many keep-alive
connections, a flood of bad tokens from one address or spread over many loopback
addresses, a search index that stays damaged and a repository that is gone (their folders
must not be named to the caller), and `since` dates before the year 1000 (echoed in ISO
8601) or on a read that is not temporal (refused, whatever is cached)."""

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
    served,
    token,
    write_config,
)

PER_TOKEN = 3  # max_connections_per_token of the shared server
ISO = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$")
ABSOLUTE_PATH = re.compile(r"(?:^|[\s'\"(=:])/[A-Za-z0-9._-]+/")


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    base = tmp_path_factory.mktemp("limits")
    # uvicorn would take X-Forwarded-For from any peer with this; the server must not
    with served(base, service=f"max_connections_per_token = {PER_TOKEN}\n",
                extra_env={"FORWARDED_ALLOW_IPS": "*"}) as (repo, _, _, server):
        yield {"repo": repo, "url": server.url, "port": server.port, "server": server,
               "base": base}
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


@pytest.fixture()
def small_site(tmp_path):
    """A server of its own: what these tests do to it would hold back the module's."""
    home = tmp_path / "home"
    home.mkdir()
    repo = make_memory_repo(tmp_path / "repo")
    config = write_config(tmp_path / "svc.toml", repo,
                          service="auth_failures_burst = 5\nauth_failures_per_minute = 1\n")
    # uvicorn would take X-Forwarded-For from any peer with this; the server must not
    server = Server(repo, home, config, extra_env={"FORWARDED_ALLOW_IPS": "*"})
    yield {"repo": repo, "url": server.url, "port": server.port, "server": server}
    server.stop()
    assert "Traceback" not in server.errors()


def _from(address: str) -> httpx.Client:
    return httpx.Client(transport=httpx.HTTPTransport(local_address=address), timeout=30)


def test_a_flood_of_bad_tokens_is_cut_off_before_checking_them(small_site):
    """Every bad token costs a signature check and used to get 401 for ever. Now an address
    gets auth_failures_burst of them, then 429 with Retry-After without any check: also
    with X-Forwarded-For naming other addresses (not trusted), and also for a good token
    the server has not seen (no check is made), while a token verified before still
    passes. The failed checks were counted per exact address, and a client on the
    server's machine may send from any address in 127.0.0.0/8: a new one for every few
    bad tokens, and never a 429. Now every loopback address counts as one, so the bad
    tokens here are spread over several of them."""
    url = small_site["url"] + f"/memory/{AGENT}/read"
    known = token(AGENT, ttl=902)
    with _from("127.0.0.1") as client:
        assert client.get(url, headers=auth(known)).status_code == 200
    bad = token(AGENT, key="wrong-secret-" + "z" * 40)
    statuses = []
    for i in range(8):
        with _from(f"127.0.{i // 3}.{2 + i}") as client:
            statuses.append(client.get(url, headers=auth(bad)).status_code)
    assert statuses == [401] * 5 + [429] * 3, statuses
    with _from("127.1.2.3") as flood:
        for headers in (auth(bad), auth("not-a-jwt"),
                        {**auth(bad), "X-Forwarded-For": "203.0.113.7"},
                        {**auth(bad), "X-Forwarded-For": "198.51.100.1, 127.0.0.3"},
                        auth(token(OTHER, ttl=900))):  # good, but never seen
            r = flood.get(url, headers=headers)
            assert r.status_code == 429, r.text
            assert r.json()["error"]["code"] == "too_many_auth_failures"
            assert int(r.headers["retry-after"]) >= 1
        assert flood.get(url, headers=auth(known)).status_code == 200


def test_addresses_are_grouped_as_a_client_may_choose_them():
    from memwarden.service.http import address_group

    assert address_group("127.0.0.1") == address_group("127.255.3.4") \
        == address_group("::1") == address_group("::ffff:127.0.0.9")
    assert address_group("::ffff:192.0.2.7") == address_group("192.0.2.7") == "192.0.2.7"
    assert address_group("192.0.2.7") != address_group("192.0.2.8")
    assert address_group("2001:db8:1:2:aaaa::1") == address_group("2001:db8:1:2:ffff::9") \
        == "2001:db8:1:2::/64"
    assert address_group("2001:db8:1:3::1") != address_group("2001:db8:1:2::1")
    assert address_group("fe80::1%eth0") == "fe80::/64"
    assert address_group("/run/memwarden.sock") == "/run/memwarden.sock"


def test_a_repository_that_is_gone_is_reported_without_its_folder(small_site):
    """The 503 for a served repository that is no longer one named its folder (an
    absolute path on the server) to any caller; now the message names none, and the
    server's log names it for the operator."""
    repo = small_site["repo"]
    (repo / ".git").rename(repo.parent / "moved.git")
    try:
        r = httpx.get(small_site["url"] + f"/memory/{AGENT}/read", headers=auth(token()),
                      timeout=60)
    finally:
        (repo.parent / "moved.git").rename(repo / ".git")
    assert r.status_code == 503, r.text
    error = r.json()["error"]
    assert error["code"] == "repository_gone" and "operator" in error["message"]
    assert str(repo) not in r.text and str(repo.parent) not in r.text
    assert not ABSOLUTE_PATH.search(error["message"]), error["message"]
    assert str(repo) in small_site["server"].errors()


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


@pytest.mark.parametrize("mode, since", [("wide", "not-a-date"), ("wide", "2026-01-01"),
                                         ("basic", "٢٠٢٦-٠٢-١٠")])
def test_since_is_checked_before_the_read_cache(site, mode, since):
    """`since` on a read that is not temporal was 422 while the read cache was cold, but
    200 (since ignored) once a plain read had filled the cache: the cache was looked up
    first. Now it is 422 invalid_since in either order, over REST and MCP, as the CLI
    refuses --since without --mode temporal."""
    url = site["url"] + f"/memory/{AGENT}/read"
    budget = {"mode": mode, "maxTokens": 1000 + len(since)}  # a cache slot of its own
    cold = httpx.get(url, headers=auth(token()), params={**budget, "since": since}, timeout=60)
    assert cold.status_code == 422, cold.text
    assert cold.json()["error"]["code"] == "invalid_since"
    assert httpx.get(url, headers=auth(token()), params=budget, timeout=60).status_code == 200
    warm = httpx.get(url, headers=auth(token()), params={**budget, "since": since}, timeout=60)
    assert warm.status_code == 422, warm.text
    assert warm.json()["error"]["code"] == "invalid_since"
    assert warm.json()["error"]["message"] == cold.json()["error"]["message"]
    r = httpx.post(site["url"] + "/mcp", timeout=60, headers={
        **auth(token()), "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream"}, json={
        "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
            "name": "read-memory", "arguments": {**budget, "since": since}}})
    result = r.json()["result"]
    assert result["isError"] and "invalid_since (422)" in result["content"][0]["text"]
