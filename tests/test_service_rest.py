"""REST against `memwarden serve` in its own process (uvicorn on 127.0.0.1) with httpx:
reads equal the CLI's bytes, proposals become branches exactly once, apply lands them and
the next read sees the new commit; health, access log, rate limit, graceful shutdown."""

from __future__ import annotations

import json
import signal
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest
from service_support import (
    AGENT,
    OTHER,
    Server,
    auth,
    git,
    make_memory_repo,
    mw,
    proposal_refs,
    request_doc,
    token,
    write_config,
)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory):
    base = tmp_path_factory.mktemp("rest")
    home = base / "home"
    home.mkdir()
    repo = make_memory_repo(base / "repo")
    # 32 concurrent proposals of one agent below hold 32 connections at once
    config = write_config(base / "service.toml", repo,
                          service='snapshot_dir = "' + str(base / "snaps") + '"\n'
                          'max_connections_per_token = 64\n'
                          '[service.grants]\n"ops-human" = ["*"]\n')
    log = base / "access.log"
    server = Server(repo, home, config, log)
    yield {"repo": repo, "home": home, "server": server, "url": server.url, "log": log,
           "config": config, "base": base}
    server.stop()


def get(site, path: str, tok: str | None = None, **params):
    return httpx.get(site["url"] + path, params=params, headers=auth(tok or token()),
                     timeout=60)


def test_health_names_the_served_commit_without_a_token(site):
    r = httpx.get(site["url"] + "/health", timeout=10)
    assert r.status_code == 200
    doc = r.json()
    assert doc["commit"] == git(site["repo"], "rev-parse", "main").strip()
    assert doc["status"] == "ok" and doc["version"] and "entries" in doc["cache"]
    assert r.headers["x-request-id"]


@pytest.mark.parametrize("params, cli", [
    ({}, []),
    ({"mode": "wide"}, ["--mode", "wide"]),
    ({"mode": "wide", "maxTokens": 900}, ["--mode", "wide", "--max-tokens", "900"]),
])
def test_read_is_byte_for_byte_the_cli_read(site, params, cli):
    r = get(site, f"/memory/{AGENT}/read", **params)
    assert r.status_code == 200, r.text
    out = mw(site["repo"], site["home"], "read", AGENT, "--format", "json", *cli).stdout
    assert r.content == out.encode()
    again = get(site, f"/memory/{AGENT}/read", **params)  # from the cache: same bytes
    assert again.content == r.content


def test_every_rest_route_answers_on_the_example(site):
    head = git(site["repo"], "rev-parse", "main").strip()
    assert get(site, "/memory/search", q="violin", agent=AGENT).json()["commit"] == head
    ctx = get(site, f"/memory/{AGENT}/context", hint="violin", maxTokens=3000).json()
    assert ctx["agentId"] == AGENT and ctx["tokenCount"] <= 3000
    diff = get(site, f"/memory/{AGENT}/diff", since="2000-01-01")
    assert diff.status_code == 200 and diff.json()["agentId"] == AGENT
    l2 = get(site, f"/memory/{AGENT}/layer2", file="decisions.md", maxTokens=120).json()
    assert l2["truncated"] is True and l2["tokenCount"] <= 120
    snap = httpx.post(site["url"] + f"/memory/{AGENT}/snapshot", json={"label": "t1"},
                      headers=auth(token(scopes=("memory:snapshot",))), timeout=60)
    assert snap.status_code == 201, snap.text
    assert snap.json()["gitCommit"] == head
    again = httpx.post(site["url"] + f"/memory/{AGENT}/snapshot", json={"label": "t1"},
                       headers=auth(token(scopes=("memory:snapshot",))), timeout=60)
    assert again.status_code == 409
    graph = mw(site["repo"], site["home"], "entities", "--format", "json").stdout
    nodes = json.loads(graph)["nodes"]
    if nodes:
        eid = nodes[0]["entity_id"]
        cli = json.loads(mw(site["repo"], site["home"], "entities", eid, "--format",
                            "json").stdout)
        assert get(site, f"/entities/{eid}").json() == cli
    assert get(site, "/entities/no-such-thing-here").status_code == 404


def test_search_of_every_agent_needs_a_grant(site):
    assert get(site, "/memory/search", q="violin").status_code == 403
    human = token("ops-human", ("memory:read",))
    r = get(site, "/memory/search", tok=human, q="violin")
    assert r.status_code == 200
    cli = json.loads(mw(site["repo"], site["home"], "search", "violin").stdout)
    assert r.json() == cli


def test_propose_then_apply_then_read_sees_it(site):
    repo = site["repo"]
    before = set(proposal_refs(repo))
    r = httpx.post(site["url"] + f"/memory/{AGENT}/propose",
                   json=request_doc("run_rest1", "ask the luthier about the bridge"),
                   headers=auth(token()), timeout=60)
    assert r.status_code == 201, r.text
    doc = r.json()
    added = set(proposal_refs(repo)) - before
    assert added == {f"refs/heads/{doc['branch']} {doc['commit']}"}
    assert git(repo, "rev-parse", "main").strip() == doc["base"]  # main did not move
    # the same request again: same proposal id, refused, nothing new
    dup = httpx.post(site["url"] + f"/memory/{AGENT}/propose",
                     json=request_doc("run_rest1", "ask the luthier about the bridge"),
                     headers=auth(token()), timeout=60)
    assert dup.status_code == 409
    assert set(proposal_refs(repo)) - before == added
    status = get(site, f"/proposals/{doc['proposalId']}").json()
    assert status["state"] == "pending"
    mw(repo, site["home"], "apply", f"refs/heads/{doc['branch']}")
    head = git(repo, "rev-parse", "main").strip()
    read = get(site, f"/memory/{AGENT}/read").json()
    assert read["commit"] == head
    assert "ask the luthier about the bridge" in read["content"]["open_loops.md"]
    assert get(site, f"/proposals/{doc['proposalId']}").json()["state"] == "applied"
    # the old commit stays readable by id, and says what it said
    old = get(site, f"/memory/{AGENT}/read", at=doc["base"]).json()
    assert "ask the luthier" not in old["content"]["open_loops.md"]


def test_the_runs_task_and_result_reach_the_proposal(site):
    """task, result and durationSeconds are the run's record: apply writes them into the
    agent's timeline, so the service takes them as propose does."""
    doc = {**request_doc("run_rest_task", "tune the viola"), "task": "weekly catalogue",
           "result": "one new loop", "durationSeconds": 12.5}
    r = httpx.post(site["url"] + f"/memory/{AGENT}/propose", json=doc,
                   headers=auth(token()), timeout=60)
    assert r.status_code == 201, r.text
    message = git(site["repo"], "log", "-1", "--format=%B", r.json()["commit"])
    assert "Task: weekly catalogue" in message and "Result: one new loop" in message
    assert "Duration-Seconds: 12.5" in message


def test_32_concurrent_proposals_each_make_one_branch(site):
    repo = site["repo"]
    before = set(proposal_refs(repo))
    tok = token(OTHER)

    def one(i: int) -> httpx.Response:
        return httpx.post(site["url"] + f"/memory/{OTHER}/propose",
                          json=request_doc(f"run_par{i}", f"parallel loop number {i}"),
                          headers=auth(tok), timeout=120)

    with ThreadPoolExecutor(32) as pool:
        results = list(pool.map(one, range(32)))
    assert [r.status_code for r in results] == [201] * 32
    added = set(proposal_refs(repo)) - before
    expected = {f"refs/heads/{r.json()['branch']} {r.json()['commit']}" for r in results}
    assert added == expected and len(added) == 32


def test_access_log_is_json_with_request_ids(site):
    r = httpx.get(site["url"] + f"/memory/{AGENT}/read", headers={
        **auth(token()), "X-Request-Id": "trace-me-123"}, timeout=30)
    assert r.headers["x-request-id"] == "trace-me-123"
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        lines = [json.loads(x) for x in site["log"].read_text("utf-8").splitlines()]
        mine = [x for x in lines if x["requestId"] == "trace-me-123"]
        if mine:
            break
        time.sleep(0.05)
    assert mine[0]["status"] == 200 and mine[0]["principal"] == AGENT
    assert {"time", "method", "path", "ms", "bytes"} <= set(mine[0])


def test_openapi_document_lists_the_routes(site):
    doc = httpx.get(site["url"] + "/openapi.json", timeout=10).json()
    for path in ("/memory/{agentId}/read", "/memory/{agentId}/propose",
                 "/memory/{agentId}/diff", "/memory/{agentId}/snapshot",
                 "/memory/{agentId}/context", "/memory/{agentId}/layer2", "/memory/search",
                 "/entities/{entityId}", "/proposals/{proposalId}", "/health"):
        assert path in doc["paths"], path


def test_rate_limit_per_principal_and_graceful_shutdown(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    repo = make_memory_repo(tmp_path / "repo")
    config = tmp_path / "svc.toml"
    config.write_text((repo / "memwarden.toml").read_text("utf-8") +
                      "\n[service]\nrate_limit_per_minute = 60\nrate_limit_burst = 3\n")
    server = Server(repo, home, config)
    try:
        codes = [httpx.get(server.url + f"/memory/{AGENT}/read", headers=auth(token()),
                           timeout=30) for _ in range(6)]
        assert [c.status_code for c in codes[:3]] == [200] * 3
        limited = [c for c in codes if c.status_code == 429]
        assert limited and int(limited[0].headers["retry-after"]) >= 1
        # another principal has its own bucket
        assert httpx.get(server.url + f"/memory/{OTHER}/read", headers=auth(token(OTHER)),
                         timeout=30).status_code == 200
        # SIGTERM while a request runs: it completes, then the process ends (uvicorn
        # re-raises the signal once it has shut down, as systemd expects)
        box: dict[str, int] = {}

        def slow() -> None:
            try:
                r = httpx.get(server.url + f"/memory/{OTHER}/context",
                              params={"hint": "garden"}, headers=auth(token(OTHER)), timeout=60)
                box["status"] = r.status_code
            except httpx.ConnectError:  # the signal came first: never accepted, fine
                box["status"] = 0

        t = threading.Thread(target=slow)
        t.start()
        time.sleep(0.05)
        server.proc.send_signal(signal.SIGTERM)
        t.join(60)
        assert box.get("status") in (200, 0)  # finished, or never started; never cut
        assert server.proc.wait(30) in (0, -signal.SIGTERM)
        assert "Traceback" not in server.errors()
    finally:
        server.stop()


def test_a_context_hint_searches_only_the_callers_agent(site):
    """memory-context's hint searched every agent's memory for any reader; now it searches
    the caller's own, unless the caller may read every agent (ops-human: "*"). The
    grant-holder asks first, so a cached answer cannot leak either."""
    params = {"hint": "violin garden", "maxTokens": 700}
    human = get(site, f"/memory/{AGENT}/context", tok=token("ops-human", ("memory:read",)),
                **params).json()
    assert {r["agent"] for r in human["search"]["results"]} > {AGENT}
    mine = get(site, f"/memory/{AGENT}/context", tok=token(AGENT), **params)
    assert mine.status_code == 200, mine.text
    results = mine.json()["search"]["results"]
    assert results and {r["agent"] for r in results} == {AGENT}
    assert all(r["file"].startswith(f"memory/{AGENT}/") for r in results)
    other = get(site, f"/memory/{AGENT}/context", tok=token(AGENT), hint="garden").json()
    assert other["search"]["results"] == []
