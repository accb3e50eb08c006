"""Third round of attacks on `memwarden serve` (a real process on 127.0.0.1, real MCP
clients): what an agent holding a read+propose token, or nobody, can do with search,
the read parameters, held connections, hostile memory content and the public routes."""

from __future__ import annotations

import asyncio
import json

import anyio
import httpx
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from service_support import (
    AGENT,
    OTHER,
    auth,
    git,
    make_memory_repo,
    request_doc,
    served,
    token,
)

from memwarden.service.core import MemoryService
from memwarden.service.errors import make_principal

HOSTILE = ("- hostile </script><script>alert(1)</script> \x1b[31m red \x07 \x7f \x01 \u2028 "
           "\u202e rtl\n")
WORDY = 60_000  # one line of this many matches: FTS5's snippet() is quadratic in them


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    base = tmp_path_factory.mktemp("round3")

    def hostile(repo):
        facts = repo / "memory" / AGENT / "facts.md"
        facts.write_text(facts.read_text("utf-8") + HOSTILE + "- huge " + "wordy " * WORDY
                         + "\n", "utf-8")
        git(repo, "commit", "-qam", "hostile content on main")

    log = base / "access.log"
    with served(base, log=log, prepare=hostile) as (repo, _, _, server):
        yield {"repo": repo, "url": server.url, "server": server, "log": log}
    assert "Traceback" not in server.errors()


def get(site, path, tok=None, **params):
    return httpx.get(site["url"] + path, params=params, timeout=60,
                     headers=auth(tok or token()))


def assert_error(r, status, code):
    assert r.status_code == status, r.text
    doc = r.json()
    assert doc["error"]["code"] == code and doc["error"]["requestId"], doc


# -- search ---------------------------------------------------------------------------------

def test_an_entry_with_very_many_matches_is_searched_in_linear_time(site):
    """FTS5's snippet() is quadratic in the matches of one entry: one line of 60,000 equal
    words held a worker thread past any client's patience, per distinct query. Such an
    entry gets the one-pass excerpt (the window around its first match)."""
    r = get(site, "/memory/search", q="wordy", agent=AGENT, top_k=5)
    assert r.status_code == 200, r.text
    hit = r.json()["results"][0]
    assert "wordy" in hit["excerpt"] and len(hit["excerpt"]) < 1000


@pytest.mark.parametrize("layer", [1, 2])
def test_the_layer_filter_works_over_rest(site, layer):
    r = get(site, "/memory/search", q="violin decision bow", agent=AGENT, layer=layer)
    assert r.status_code == 200, r.text
    assert {h["layer"] for h in r.json()["results"]} == {layer}
    assert_error(get(site, "/memory/search", q="x", agent=AGENT, layer=3), 422,
                 "invalid_input")


# -- read parameters ------------------------------------------------------------------------

def test_a_commit_off_main_is_answered_as_an_absent_one(site):
    """Another agent's unmerged proposal commit: not served, and not told apart from an id
    nobody has (that would confirm which commits exist)."""
    r = httpx.post(f"{site['url']}/memory/{OTHER}/propose", json=request_doc("r3-secret"),
                   headers=auth(token(OTHER)), timeout=60)
    assert r.status_code == 201, r.text
    theirs = r.json()["commit"]
    absent = "0" * 40
    for path, name in ((f"/memory/{AGENT}/read", "at"), (f"/memory/{AGENT}/context", "at"),
                       ("/entities/x", "at"), (f"/memory/{AGENT}/diff", "from")):
        answers = []
        for sha in (theirs, theirs[:7], absent):
            r = get(site, path, **{name: sha})
            assert_error(r, 404, "unknown_commit")
            answers.append(r.json()["error"]["message"].replace(sha, "ID"))
        assert len(set(answers)) == 1, answers


# -- connections ----------------------------------------------------------------------------

def test_get_mcp_does_not_hold_a_connection_open(site):
    """Stateless MCP sends nothing on a GET stream; it pinged every 15 s for good, so one
    token could fill the connection cap with them."""
    r = httpx.get(site["url"] + "/mcp", timeout=5, headers={
        **auth(token()), "Accept": "text/event-stream"})
    assert_error(r, 405, "method_not_allowed")
    assert r.headers["allow"] == "POST"


def test_proposals_waiting_for_the_write_lock_leave_threads_for_reads(tmp_path):
    """Proposals run one at a time under the write lock; they used to wait for it on every
    worker thread, so while one was slow a burst of them left no thread for anyone's
    reads. The lock is held here as a slow proposal would hold it."""
    service = MemoryService(make_memory_repo(tmp_path / "repo"))
    writer = make_principal(AGENT, {"memory:propose"}, {})
    reader = make_principal(OTHER, {"memory:read"}, {})

    async def main() -> None:
        with service._write_lock:
            burst = [asyncio.ensure_future(service.call(
                service.propose, writer, AGENT, request_doc(f"held-{i}", f"loop {i}")))
                for i in range(2 * int(service.settings["threads"]))]
            await asyncio.sleep(0.2)
            text = await asyncio.wait_for(service.call(service.read, reader, OTHER), 30)
            assert json.loads(text)["agentId"] == OTHER
            assert not any(f.done() for f in burst)
        assert {r["status"] for r in await asyncio.gather(*burst)} == {"pending"}

    try:
        asyncio.run(main())
    finally:
        service.close()


# -- hostile content, tokens and logs --------------------------------------------------------

def test_hostile_memory_comes_back_as_valid_json_over_rest_and_mcp(site):
    for path, params in ((f"/memory/{AGENT}/read", {"mode": "wide"}),
                         ("/memory/search", {"q": "hostile script", "agent": AGENT}),
                         (f"/memory/{AGENT}/context", {"hint": "hostile"})):
        r = get(site, path, **params)
        assert r.status_code == 200 and r.headers["content-type"] == "application/json"
        assert "</script>" in json.dumps(r.json(), ensure_ascii=False)
        assert not any(c in r.text for c in "\x1b\x07\x01")  # escaped, as JSON must

    async def main() -> None:
        client = httpx.AsyncClient(headers=auth(token()), timeout=60)
        async with client, streamable_http_client(site["url"] + "/mcp",
                                                  http_client=client) as (r, w, _):
            async with ClientSession(r, w) as session:
                await session.initialize()
                for name, args in (("read-memory", {"mode": "wide"}),
                                   ("memory-search", {"query": "hostile wordy"})):
                    res = await session.call_tool(name, args)
                    assert not res.isError, res.content
                    assert json.loads(res.content[0].text) == res.structuredContent

    anyio.run(main)


def test_the_access_log_holds_no_token_query_or_body(site):
    tok = token()
    marker = "body-marker-4711"
    httpx.post(f"{site['url']}/memory/{AGENT}/propose?access_token={tok}",
               json=request_doc("r3-log", marker), headers=auth(tok), timeout=60)
    httpx.get(f"{site['url']}/memory/{AGENT}/read?access_token={tok}", timeout=60)
    text = site["log"].read_text("utf-8")
    assert tok not in text and tok.split(".")[1] not in text
    assert marker not in text and "access_token" not in text
    for line in text.splitlines():
        assert set(json.loads(line)) == {"time", "requestId", "method", "path", "status",
                                         "ms", "principal", "bytes"}


def test_the_public_routes_say_only_what_is_documented(site):
    health = httpx.get(site["url"] + "/health", timeout=10).json()
    assert set(health) == {"status", "version", "commit", "cache", "proposalsCreated"}
    assert set(health["cache"]) == {"entries", "capacity", "bytes", "capacityBytes", "hits",
                                    "misses"}
    text = httpx.get(site["url"] + "/openapi.json", timeout=10).text
    assert str(site["repo"]) not in text and "secret" not in text.lower()
    for page in ("/docs", "/redoc"):  # HTML that loads scripts from a CDN: not served
        assert httpx.get(site["url"] + page, timeout=10).status_code == 401
        assert_error(get(site, page), 404, "not_found")
