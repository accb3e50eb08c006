"""Attacks on `memwarden serve` (a real process): every one is refused with 400/401/403/404/
409/413/422 in the documented error shape and leaves no ref behind (`git for-each-ref`
before and after)."""

from __future__ import annotations

import base64
import json
import time

import httpx
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ed25519, rsa
from service_support import (
    AGENT,
    OTHER,
    SECRET,
    Server,
    auth,
    git,
    make_memory_repo,
    request_doc,
    served,
    token,
    write_config,
)


def refs(repo) -> str:
    return git(repo, "for-each-ref", "--format=%(refname) %(objectname)")


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    with served(tmp_path_factory.mktemp("attacks"), service="max_updates = 3\n") as (
            repo, _, _, server):
        yield {"repo": repo, "url": server.url, "server": server}
    assert "Traceback" not in server.errors()


def _b64(doc: dict) -> str:
    return base64.urlsafe_b64encode(json.dumps(doc).encode()).rstrip(b"=").decode()


def alg_none_token(sub: str = AGENT) -> str:
    now = int(time.time())
    return (_b64({"alg": "none", "typ": "JWT"}) + "." + _b64({
        "sub": sub, "scope": "memory:read memory:propose memory:admin", "aud": "memwarden",
        "iss": "memwarden", "exp": now + 600}) + ".")


BAD_TOKENS = {
    "none": None,
    "garbage": "not-a-jwt",
    "expired": token(ttl=-3600),
    "bad signature": token(key="wrong-secret-" + "z" * 40),
    "alg none": alg_none_token(),
    "wrong audience": token(aud="someone-else"),
    "wrong issuer": token(iss="evil"),
    "no exp": token(exp=None),
    "no sub": token(sub=None),
    "no aud": token(aud=None),
    "no iss": token(iss=None),
}


@pytest.mark.parametrize("name", sorted(BAD_TOKENS))
@pytest.mark.parametrize("method, path", [
    ("GET", f"/memory/{AGENT}/read"),
    ("POST", f"/memory/{AGENT}/propose"),
    ("GET", "/proposals/p-demo"),
])
def test_bad_tokens_get_401_and_write_nothing(site, name, method, path):
    before = refs(site["repo"])
    tok = BAD_TOKENS[name]
    headers = auth(tok) if tok else {}
    r = httpx.request(method, site["url"] + path, headers=headers, timeout=30,
                      json=request_doc("run_attack") if method == "POST" else None)
    assert r.status_code == 401, (name, r.text)
    assert r.headers["www-authenticate"].startswith("Bearer")
    assert refs(site["repo"]) == before


@pytest.mark.parametrize("method, path, body, tok, status", [
    # agent A for B
    ("GET", f"/memory/{OTHER}/read", None, token(AGENT), 403),
    ("POST", f"/memory/{OTHER}/propose", request_doc("run_x"), token(AGENT), 403),
    ("POST", f"/memory/{AGENT}/propose", {**request_doc("run_x"), "agentId": OTHER},
     token(AGENT), 403),
    ("GET", f"/memory/{OTHER}/layer2?file=decisions.md", None, token(AGENT), 403),
    ("GET", f"/memory/{OTHER}/diff?since=2000-01-01", None, token(AGENT), 403),
    ("GET", "/proposals/p-demo", None, token(OTHER), 404),  # archivist-violin's proposal
    # missing scopes
    ("POST", f"/memory/{AGENT}/propose", request_doc("run_x"), token(scopes=("memory:read",)),
     403),
    ("GET", f"/memory/{AGENT}/read", None, token(scopes=("memory:propose",)), 403),
    ("POST", f"/memory/{AGENT}/snapshot", {"label": "x"}, token(), 403),
    # invalid ids and paths
    ("GET", "/memory/Archivist/read", None, token(), 422),
    ("GET", "/memory/..%2Fetc/read", None, token(), 404),
    ("GET", "/memory/a%00b/read", None, token(), 422),
    ("GET", f"/memory/{AGENT}/layer2?file=../garden-curator/decisions.md", None, token(), 422),
    ("GET", f"/memory/{AGENT}/layer2?file=/etc/passwd", None, token(), 422),
    ("GET", f"/memory/{AGENT}/layer2?file=facts.md", None, token(), 422),
    ("GET", f"/memory/{AGENT}/read?at=refs/heads/main", None, token(), 422),
    ("GET", f"/memory/{AGENT}/read?at=HEAD~1", None, token(), 422),
    ("GET", "/proposals/..%2F..%2Fmain", None, token(), 404),
    ("GET", "/proposals/-rf", None, token(), 422),
    ("POST", f"/memory/{AGENT}/propose",
     {"runId": "run_x", "updates": [{"operation": "replace", "file": "../garden-curator/"
                                     "facts.md", "content": "owned"}]}, token(), 422),
    ("POST", f"/memory/{AGENT}/propose",
     {"runId": "run_x", "updates": [{"operation": "replace", "file": "meta.json",
                                     "content": "{}"}]}, token(), 422),
    ("POST", f"/memory/{AGENT}/propose", {**request_doc("run_x"), "proposalId": "../../main"},
     token(), 422),
    # ceilings
    ("GET", f"/memory/{AGENT}/read?maxTokens=25000", None, token(), 422),
    ("GET", f"/memory/{AGENT}/read?maxTokens=0", None, token(), 422),
    ("GET", f"/memory/{AGENT}/read?mode=everything", None, token(), 422),
    ("GET", f"/memory/search?q=x&agent={AGENT}&top_k=51", None, token(), 422),
    ("POST", f"/memory/{AGENT}/propose",
     {"runId": "run_x", "updates": [{"operation": "add_loop", "content": f"loop {i}"}
                                    for i in range(4)]}, token(), 422),
    ("POST", f"/memory/{AGENT}/propose", {"runId": "run_x", "updates": []}, token(), 422),
    ("POST", f"/memory/{AGENT}/propose", [1, 2], token(), 422),
])
def test_refusals_write_nothing(site, method, path, body, tok, status):
    before = refs(site["repo"])
    r = httpx.request(method, site["url"] + path, headers=auth(tok), json=body, timeout=30)
    assert r.status_code == status, r.text
    assert r.json()["error"]["message"]
    assert refs(site["repo"]) == before


def test_oversize_bodies_are_413(site):
    before = refs(site["repo"])
    huge = {"runId": "run_big", "updates": [{"operation": "add_loop",
                                             "content": "x" * (2 << 20)}]}
    r = httpx.post(site["url"] + f"/memory/{AGENT}/propose", json=huge, headers=auth(token()),
                   timeout=60)
    assert r.status_code == 413

    def chunks():  # no Content-Length: the cap holds for a streamed body too
        for _ in range(20):
            yield b"x" * (128 << 10)

    r = httpx.post(site["url"] + f"/memory/{AGENT}/propose", content=chunks(),
                   headers={**auth(token()), "Content-Type": "application/json"}, timeout=60)
    assert r.status_code == 413
    assert refs(site["repo"]) == before


def test_hs_rs_confusion_and_eddsa(tmp_path):
    """An RS256 server refuses an HS256 token signed with its public key; an EdDSA server
    refuses RS256. Valid tokens of the configured algorithm pass."""
    home = tmp_path / "home"
    home.mkdir()
    repo = make_memory_repo(tmp_path / "repo")
    rsa_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pub = rsa_key.public_key().public_bytes(serialization.Encoding.PEM,
                                           serialization.PublicFormat.SubjectPublicKeyInfo)
    (tmp_path / "rsa.pub").write_bytes(pub)
    config = write_config(tmp_path / "svc.toml", repo,
                          auth=f'algorithm = "RS256"\npublic_key_file = "{tmp_path / "rsa.pub"}"\n')
    server = Server(repo, home, config)
    try:
        url = server.url + f"/memory/{AGENT}/read"
        good = token(key=rsa_key, alg="RS256")
        assert httpx.get(url, headers=auth(good), timeout=30).status_code == 200
        import hmac
        from hashlib import sha256

        head = _b64({"alg": "HS256", "typ": "JWT"})
        now = int(time.time())
        body = _b64({"sub": AGENT, "scope": "memory:read", "aud": "memwarden",
                     "iss": "memwarden", "exp": now + 600})
        sig = base64.urlsafe_b64encode(hmac.new(pub, f"{head}.{body}".encode(),
                                                sha256).digest()).rstrip(b"=").decode()
        forged = f"{head}.{body}.{sig}"
        assert httpx.get(url, headers=auth(forged), timeout=30).status_code == 401
        assert httpx.get(url, headers=auth(token()), timeout=30).status_code == 401  # HS256
        assert httpx.get(url, headers=auth(alg_none_token()), timeout=30).status_code == 401
    finally:
        server.stop()
    ed = ed25519.Ed25519PrivateKey.generate()
    (tmp_path / "ed.pub").write_bytes(ed.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo))
    config = write_config(tmp_path / "svc2.toml", repo,
                          auth=f'algorithm = "EdDSA"\npublic_key_file = "{tmp_path / "ed.pub"}"\n')
    server = Server(repo, home, config)
    try:
        url = server.url + f"/memory/{AGENT}/read"
        assert httpx.get(url, headers=auth(token(key=ed, alg="EdDSA")),
                         timeout=30).status_code == 200
        assert httpx.get(url, headers=auth(token(key=rsa_key, alg="RS256")),
                         timeout=30).status_code == 401
    finally:
        server.stop()


def test_a_short_hs256_secret_is_a_config_error(tmp_path):
    import subprocess
    import sys

    from service_support import env

    home = tmp_path / "home"
    home.mkdir()
    repo = make_memory_repo(tmp_path / "repo")
    proc = subprocess.run([sys.executable, "-m", "memwarden", "serve", "--port", "0"], cwd=repo,
                          env=env(home, MEMWARDEN_JWT_SECRET="short"), capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 2
    assert "memwarden: error:" in proc.stderr and "32 bytes" in proc.stderr
    assert SECRET  # the fixture secret is long enough


def propose_raw(site, raw: bytes, tok: str = token()) -> httpx.Response:
    """A propose with a body as an attacker writes it (JSON escapes json.dumps would not
    make, like a lone surrogate)."""
    return httpx.post(site["url"] + f"/memory/{AGENT}/propose", content=raw, timeout=30,
                      headers={**auth(tok), "Content-Type": "application/json"})


def mcp_raw(site, raw: bytes, tok: str = token()) -> httpx.Response:
    return httpx.post(site["url"] + "/mcp", content=raw, timeout=30, headers={
        **auth(tok), "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream"})


def tool_call(name: str, arguments: str) -> bytes:
    return ('{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"' + name +
            '","arguments":' + arguments + "}}").encode()


LOOP = {"operation": "add_loop", "content": "written for another agent"}


@pytest.mark.parametrize("extra, field", [
    ({"params": {"agentId": OTHER}}, "params"),  # the audited attack
    ({"params": {"agent_id": OTHER}}, "params"),
    ({"params": {"updates": [LOOP] * 4}}, "params"),  # past max_updates = 3
    ({"agent_id": OTHER}, "agent_id"),
    ({"params": {"proposalId": "p-elsewhere"}}, "params"),
])
def test_a_propose_body_takes_no_fields_but_its_own(site, extra, field):
    """What `memwarden propose` would read as the request (params merged over the top
    level, snake_case spellings) is refused, not passed on: 422 naming the field."""
    before = refs(site["repo"])
    body = {"runId": "run-x1", "updates": [LOOP], **extra}
    r = httpx.post(site["url"] + f"/memory/{AGENT}/propose", json=body,
                   headers=auth(token(AGENT)), timeout=30)
    assert r.status_code == 422, r.text
    assert r.json()["error"]["code"] == "unknown_field"
    assert r.json()["error"]["message"].startswith(field)
    assert refs(site["repo"]) == before
    assert f"proposals/{OTHER}/" not in refs(site["repo"])


def test_an_unknown_update_field_is_refused_over_rest_and_mcp(site):
    before = refs(site["repo"])
    r = httpx.post(site["url"] + f"/memory/{AGENT}/propose", headers=auth(token()),
                   json={"runId": "run-x2", "updates": [{**LOOP, "file_path": "x"}]},
                   timeout=30)
    assert r.status_code == 422 and "updates.0.file_path" in r.json()["error"]["message"]
    r = mcp_raw(site, tool_call("propose-memory-update", json.dumps({
        "runId": "run-x2", "updates": [LOOP], "params": {"agentId": OTHER}})))
    result = r.json()["result"]
    assert result["isError"] and "unknown_field (422): 'params'" in result["content"][0]["text"]
    assert refs(site["repo"]) == before


@pytest.mark.parametrize("raw", [
    rb'{"runId":"run-s1","updates":[{"operation":"add_loop","content":"x","foo":"\ud800"}]}',
    rb'{"runId":"run-s2","updates":[{"operation":"add_loop","content":"x","\ud800":1}]}',
    rb'{"runId":"run-s3","\udfff":"x","updates":[{"operation":"add_loop","content":"x"}]}',
    rb'{"runId":"run-s4","reasoning":"\ud800","updates":[{"operation":"add_loop"}]}',
])
def test_lone_surrogates_are_422_over_rest(site, raw):
    before = refs(site["repo"])
    r = propose_raw(site, raw)
    assert r.status_code == 422, r.text
    assert r.json()["error"]["message"] and r.json()["error"]["requestId"]
    assert refs(site["repo"]) == before


LONE = '"\\ud800"'  # a JSON string holding one lone surrogate, as an escape


@pytest.mark.parametrize("raw", [
    tool_call("propose-memory-update", r'{"runId":"run-s5","updates":'
              r'[{"operation":"add_loop","content":"x","foo":"\ud800"}]}'),
    # these gave HTTP 500 and a traceback: the MCP SDK failed writing an answer quoting them
    ('{"jsonrpc":"2.0","id":' + LONE + ',"method":"tools/list"}').encode(),
    ('{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":' + LONE +
     ',"arguments":{}}}').encode(),
    ('{"jsonrpc":"2.0","id":1,"method":' + LONE + '}').encode(),
    tool_call("read-memory", '{' + LONE + ':1}'),
    tool_call("memory-search", '{"query":"\\udfff x"}'),
    # the same surrogate as UTF-8 bytes, and a UTF-16 body: json.loads reads both
    '{"jsonrpc":"2.0","id":"\ud800","method":"tools/list"}'.encode("utf-8", "surrogatepass"),
    '{"jsonrpc":"2.0","id":"\ud800","method":"tools/list"}'.encode("utf-16-le",
                                                                  "surrogatepass"),
], ids=["argument", "id", "tool-name", "method", "key", "low-half", "utf8-bytes", "utf16"])
def test_a_lone_surrogate_over_mcp_is_422_as_over_rest(site, raw):
    """A lone surrogate anywhere in a JSON-RPC body (id, tool name, method, a key or a
    value) is refused by the gate with 422 invalid_text in the REST error shape, before
    the MCP SDK sees it; the server logs no traceback."""
    before = refs(site["repo"])
    errors = len(site["server"].errors())
    r = mcp_raw(site, raw)
    assert r.status_code == 422, r.text
    error = r.json()["error"]
    assert error["code"] == "invalid_text" and error["requestId"]
    assert "surrogate" in error["message"]
    assert "Traceback" not in site["server"].errors()[errors:]
    assert refs(site["repo"]) == before


def test_a_surrogate_pair_over_mcp_is_text_like_any_other(site):
    r = mcp_raw(site, tool_call("memory-search", '{"query":"violin \\ud83c\\udfbb",'
                                '"agentId":"' + AGENT + '"}'))
    assert r.status_code == 200, r.text
    assert not r.json()["result"].get("isError"), r.text


@pytest.mark.parametrize("path", [f"/memory/{AGENT}/propose", "/mcp"])
def test_deeply_nested_json_gets_the_documented_error(site, path):
    r = httpx.post(site["url"] + path, content=b"[" * 5000 + b"]" * 5000, timeout=30,
                   headers={**auth(token()), "Content-Type": "application/json",
                            "Accept": "application/json, text/event-stream"})
    assert r.status_code == 422, r.text
    assert r.json()["error"]["code"] == "nested_too_deeply"
    deep = b'{"runId":"run-d","updates":[' + b'{"a":' * 80 + b"1" + b"}" * 80 + b"]}"
    r = propose_raw(site, deep)
    assert r.status_code == 422 and r.json()["error"]["code"] == "nested_too_deeply"
    # a JSON text with brackets inside its strings is not nested
    flat = {"runId": f"run-flat{len(path)}", "updates": [{"operation": "add_loop",
                                              "content": "[{" * 100}]}
    r = httpx.post(site["url"] + f"/memory/{AGENT}/propose", json=flat,
                   headers=auth(token()), timeout=30)
    assert r.status_code == 201, r.text


def test_a_body_fastapi_cannot_parse_gets_the_documented_error(site):
    r = propose_raw(site, b'{"runId": "run-\xff", "updates": []}')  # not UTF-8
    assert r.status_code == 400, r.text
    assert r.json()["error"]["code"] == "bad_request" and r.json()["error"]["requestId"]


def test_another_agents_proposal_id_is_taken_without_saying_whose(site):
    repo = site["repo"]
    mine = httpx.post(site["url"] + f"/memory/{AGENT}/propose", headers=auth(token(AGENT)),
                      json={**request_doc("run-id1"), "proposalId": "p-shared-1"}, timeout=30)
    assert mine.status_code == 201, mine.text
    before = refs(repo)
    theirs = httpx.post(site["url"] + f"/memory/{OTHER}/propose", headers=auth(token(OTHER)),
                        json={"runId": "run-id2", "proposalId": "p-shared-1",
                              "updates": [{"operation": "add_loop", "content": "mine now"}]},
                        timeout=30)
    assert theirs.status_code == 409, theirs.text
    assert refs(repo) == before and f"proposals/{OTHER}/p-shared-1" not in refs(repo)
    # the owner's own retry gets the very same answer: nothing says whose the id is
    retry = httpx.post(site["url"] + f"/memory/{AGENT}/propose", headers=auth(token(AGENT)),
                       json={**request_doc("run-id3"), "proposalId": "p-shared-1"},
                       timeout=30)
    assert retry.status_code == 409
    assert theirs.json()["error"]["message"] == retry.json()["error"]["message"]
    assert theirs.json()["error"]["code"] == retry.json()["error"]["code"]
    assert AGENT not in theirs.json()["error"]["message"]


def test_proposal_status_says_the_same_for_absent_and_foreign_ids(site):
    made = httpx.post(site["url"] + f"/memory/{AGENT}/propose", headers=auth(token(AGENT)),
                      json={**request_doc("run-id4"), "proposalId": "p-foreign-01"},
                      timeout=30)
    assert made.status_code == 201, made.text
    foreign = httpx.get(site["url"] + "/proposals/p-foreign-01", headers=auth(token(OTHER)),
                        timeout=30)
    absent = httpx.get(site["url"] + "/proposals/p-nothing-01", headers=auth(token(OTHER)),
                       timeout=30)
    assert foreign.status_code == absent.status_code == 404
    assert foreign.json()["error"]["code"] == absent.json()["error"]["code"]
    assert foreign.json()["error"]["message"].replace("p-foreign-01", "ID") == \
        absent.json()["error"]["message"].replace("p-nothing-01", "ID")


def _two_tokens(first: str, second: str, *more: tuple[str, str]) -> httpx.Headers:
    return httpx.Headers([*more, ("authorization", f"Bearer {first}"),
                          ("authorization", f"Bearer {second}")])


@pytest.mark.parametrize("first, second", [("bad", "mine"), ("mine", "bad"),
                                           ("theirs", "mine")])
def test_two_authorization_headers_are_refused_over_rest_and_mcp(site, first, second):
    """The gate checked the last Authorization header and the MCP SDK acted on the first,
    so a request could act as one subject while it was rate-limited and logged as
    another, and a bad token in the header the gate skipped was never counted. Now a
    request with two is 400 duplicate_authorization before any token is checked."""
    tokens = {"mine": token(AGENT), "theirs": token(OTHER), "bad": "x.y.z"}
    before = refs(site["repo"])
    r = httpx.get(site["url"] + f"/memory/{AGENT}/read", timeout=30,
                  headers=_two_tokens(tokens[first], tokens[second]))
    assert r.status_code == 400, r.text
    assert r.json()["error"]["code"] == "duplicate_authorization"
    assert r.json()["error"]["requestId"]
    r = httpx.post(site["url"] + "/mcp", timeout=30, content=tool_call(
        "propose-memory-update", json.dumps({"runId": f"run-dup-{first}", "updates": [LOOP]})),
        headers=_two_tokens(tokens[first], tokens[second],
                            ("content-type", "application/json"),
                            ("accept", "application/json, text/event-stream")))
    assert r.status_code == 400, r.text
    assert r.json()["error"]["code"] == "duplicate_authorization"
    assert refs(site["repo"]) == before


@pytest.mark.parametrize("version", [2**31 + 1, 10**40])
def test_expected_version_over_mcp_has_the_rest_bound(site, version):
    """expectedVersion had no upper bound over MCP (REST caps it at 2**31), so a proposal
    was made with any integer in it."""
    before = refs(site["repo"])
    r = mcp_raw(site, tool_call("propose-memory-update", json.dumps({
        "runId": "run-ev1", "updates": [LOOP], "expectedVersion": version})))
    result = r.json()["result"]
    text = result["content"][0]["text"]
    assert result["isError"] and "invalid_input (422): expectedVersion" in text, text
    assert str(2**31) in text
    assert refs(site["repo"]) == before
    r = propose_raw(site, json.dumps({"runId": "run-ev1", "updates": [LOOP],
                                      "expectedVersion": version}).encode())
    assert r.status_code == 422, r.text
