"""The MCP SDK's own client against `memwarden mcp` over stdio and `memwarden serve`'s /mcp
over streamable HTTP: list the tools, call every one, propose, apply with the CLI, and read
the applied change back through the server."""

from __future__ import annotations

import json
import sys

import anyio
import httpx
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from service_support import (
    AGENT,
    OTHER,
    Server,
    auth,
    env,
    git,
    make_memory_repo,
    mw,
    proposal_refs,
    token,
    write_config,
)

TOOLS = {"read-memory", "propose-memory-update", "memory-diff", "memory-snapshot",
         "memory-search", "memory-context", "memory-entities", "memory-layer2",
         "proposal-status"}
READS = TOOLS - {"propose-memory-update", "memory-snapshot"}


@pytest.fixture()
def site(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    repo = make_memory_repo(tmp_path / "repo")
    config = write_config(tmp_path / "svc.toml", repo,
                          service=f'snapshot_dir = "{tmp_path / "snaps"}"\n')
    return {"repo": repo, "home": home, "config": config}


async def exercise(session: ClientSession, site: dict, run: str) -> None:
    """List the tools, call each, propose, apply with the CLI, read it back."""
    await session.initialize()
    listed = (await session.list_tools()).tools
    assert {t.name for t in listed} == TOOLS
    for t in listed:
        assert t.outputSchema is not None, t.name
        assert (t.annotations.readOnlyHint is True) == (t.name in READS), t.name
        if t.name in READS:
            assert t.annotations.idempotentHint is True
    read_tool = next(t for t in listed if t.name == "read-memory")
    assert read_tool.inputSchema["properties"]["maxTokens"]["anyOf"][0]["maximum"] < 25_000
    search = next(t for t in listed if t.name == "memory-search")
    assert search.inputSchema["properties"]["top_k"]["maximum"] == 50
    prop = next(t for t in listed if t.name == "propose-memory-update")
    assert prop.inputSchema["properties"]["updates"]["maxItems"] >= 1

    async def call(name: str, args: dict) -> dict:
        res = await session.call_tool(name, args)
        assert not res.isError, (name, res.content)
        return res.structuredContent

    repo, home = site["repo"], site["home"]
    read = await call("read-memory", {})
    cli = mw(repo, home, "read", AGENT, "--format", "json").stdout
    assert read == json.loads(cli)
    assert (await call("read-memory", {"mode": "wide", "maxTokens": 2000}))["tokenCount"] <= 2000
    head = git(repo, "rev-parse", "main").strip()
    assert (await call("memory-diff", {"since": "2000-01-01"}))["agentId"] == AGENT
    assert (await call("memory-search", {"query": "violin"}))["commit"] == head
    assert (await call("memory-context", {"hint": "violin", "maxTokens": 3000}))[
        "tokenCount"] <= 3000
    assert "total" in await call("memory-entities", {})
    l2 = await call("memory-layer2", {"file": "decisions.md", "maxTokens": 100})
    assert l2["truncated"] is True
    snap = await call("memory-snapshot", {"label": f"snap-{run}"})
    assert snap["gitCommit"] == head
    # refusals say what to do
    over = await session.call_tool("read-memory", {"maxTokens": 30_000})
    assert over.isError
    other = await session.call_tool("read-memory", {"agentId": OTHER})
    assert other.isError and "may not act for agent" in other.content[0].text
    bad = await session.call_tool("memory-layer2", {"file": "../garden-curator/facts.md"})
    assert bad.isError and "inside memory/" in bad.content[0].text
    before = set(proposal_refs(repo))
    made = await call("propose-memory-update", {
        "runId": run, "updates": [{"operation": "add_loop",
                                   "content": f"MCP loop from {run}"}],
        "task": f"catalogue for {run}", "result": "one open loop", "durationSeconds": 42})
    assert set(proposal_refs(repo)) - before == {
        f"refs/heads/{made['branch']} {made['commit']}"}
    message = git(repo, "log", "-1", "--format=%B", made["commit"])
    assert f"Task: catalogue for {run}" in message and "Result: one open loop" in message
    assert (await call("proposal-status", {"proposalId": made["proposalId"]}))[
        "state"] == "pending"
    await anyio.to_thread.run_sync(lambda: mw(repo, home, "apply",
                                              f"refs/heads/{made['branch']}"))
    after = await call("read-memory", {})
    assert after["commit"] == git(repo, "rev-parse", "main").strip() != head
    assert f"MCP loop from {run}" in after["content"]["open_loops.md"]
    assert (await call("proposal-status", {"proposalId": made["proposalId"]}))[
        "state"] == "applied"


def test_stdio_client_calls_every_tool(site):
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "memwarden", "mcp", "--agent", AGENT, "--repo", str(site["repo"]),
              "--config", str(site["config"])],
        env=env(site["home"]), cwd=str(site["repo"]))

    async def main() -> None:
        async with stdio_client(params) as (r, w), ClientSession(r, w) as session:
            await exercise(session, site, "run_stdio")

    anyio.run(main)


def test_stdio_needs_an_agent(site):
    proc = mw(site["repo"], site["home"], "mcp", "--config", str(site["config"]), check=False)
    assert proc.returncode == 2 and "--agent" in proc.stderr


def test_streamable_http_client_calls_every_tool(site):
    server = Server(site["repo"], site["home"], site["config"])
    try:
        async def main() -> None:
            client = httpx.AsyncClient(headers=auth(token(
                scopes=("memory:read", "memory:propose", "memory:snapshot"))), timeout=60)
            async with client, streamable_http_client(server.url + "/mcp",
                                                      http_client=client) as (r, w, _):
                async with ClientSession(r, w) as session:
                    await exercise(session, site, "run_http")

        anyio.run(main)
        # no token, or a bad one: refused before any tool runs
        init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "t", "version": "0"}}}
        hdr = {"Accept": "application/json, text/event-stream"}
        assert httpx.post(server.url + "/mcp", json=init, headers=hdr,
                          timeout=10).status_code == 401
        assert httpx.post(server.url + "/mcp", json=init, headers={
            **hdr, **auth(token(key="another-secret-" + "y" * 40))},
            timeout=10).status_code == 401
    finally:
        server.stop()
    assert "Traceback" not in server.errors()


def test_a_context_hint_over_mcp_searches_only_the_callers_agent(site):
    server = Server(site["repo"], site["home"], site["config"])
    try:
        async def main() -> None:
            client = httpx.AsyncClient(headers=auth(token(AGENT, ("memory:read",))),
                                       timeout=60)
            async with client, streamable_http_client(server.url + "/mcp",
                                                      http_client=client) as (r, w, _):
                async with ClientSession(r, w) as session:
                    await session.initialize()
                    res = await session.call_tool("memory-context", {
                        "hint": "violin garden", "maxTokens": 700})
                    assert not res.isError, res.content
                    hits = res.structuredContent["search"]["results"]
                    assert hits and {h["agent"] for h in hits} == {AGENT}
                    res = await session.call_tool("memory-context", {"hint": "garden"})
                    assert res.structuredContent["search"]["results"] == []

        anyio.run(main)
    finally:
        server.stop()
    assert "Traceback" not in server.errors()
