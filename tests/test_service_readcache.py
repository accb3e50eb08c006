"""Reads reused across commits (memwarden/service/readcache.py): the patched response is
byte for byte what `read_memory` builds at the new commit, in both encodings, for commit
ids and dates of every shape; cut responses are never patched; a read after a landing
names the new main, in-process and against a spawned server."""

from __future__ import annotations

import copy
import json
import random

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
    request_doc,
    token,
    write_config,
)

from memwarden.git.repo import open_repo
from memwarden.model.config import parse_config
from memwarden.read.budget import finish_count, iso, serialize
from memwarden.read.reader import read_memory
from memwarden.service.core import MemoryService
from memwarden.service.errors import make_principal
from memwarden.service.readcache import Basis, Facts, make_slot, patched, tokens_alone

READER = make_principal(AGENT, {"memory:read", "memory:propose"}, {})
ADMIN = make_principal("root", {"memory:admin"}, {})


@pytest.fixture(scope="module")
def example(tmp_path_factory: pytest.TempPathFactory):
    return make_memory_repo(tmp_path_factory.mktemp("readcache") / "repo")


def _facts(sha: str, date: str, encoding: str) -> Facts:
    return Facts(sha, date, date[:10], None, encoding,
                 tokens_alone(sha, encoding) + tokens_alone(date, encoding))


def _shas(rng: random.Random) -> list[str]:
    """Commit ids of every shape the pre-tokenizer could treat differently."""
    out = ["0" * 40, "f" * 40, "a" + "1" * 39, "1" + "a" * 39, "9" * 39 + "e",
           "deadbeef" * 5, "0123456789abcdef" * 2 + "01234567"]
    out += ["".join(rng.choice("0123456789abcdef") for _ in range(40)) for _ in range(60)]
    return out


@pytest.mark.parametrize("encoding", ["cl100k_base", "o200k_base"])
@pytest.mark.parametrize("mode", ["basic", "wide", "deep"])
def test_patched_equals_a_full_recount(example, encoding, mode):
    rng = random.Random(f"{encoding}{mode}")
    repo = open_repo(example)
    sha = repo.ref_target("refs/heads/main")
    cfg = parse_config(f'encoding = "{encoding}"\n')  # the same documents, both encodings
    doc = read_memory(repo, AGENT, mode, at=sha, config=cfg)
    assert not doc["truncated"]
    facts = _facts(sha, doc["meta"]["commitDate"], encoding)
    slot = make_slot(doc, serialize(doc), Basis("t", None, encoding, None), facts)
    assert slot.rest is not None
    for new_sha in _shas(rng):
        date = iso(rng.randrange(0, 4_000_000_000))
        want = copy.deepcopy(doc)
        want["commit"] = new_sha
        want["meta"]["commitDate"] = date
        finish_count(want, encoding)  # the tokenizer over the whole response
        got = patched(slot, _facts(new_sha, date, encoding), 10**6)
        assert got == serialize(want), (new_sha, date)


def test_cut_or_over_budget_responses_are_built_again(example):
    repo = open_repo(example)
    sha = repo.ref_target("refs/heads/main")
    cut = read_memory(repo, AGENT, "wide", max_tokens=700, at=sha)
    assert cut["truncated"] or any(e["reason"] == "budget" for e in cut["excluded"])
    facts = _facts(sha, cut["meta"]["commitDate"], "cl100k_base")
    assert make_slot(cut, serialize(cut), Basis("t", None, "cl100k_base", None),
                     facts).rest is None
    whole = read_memory(repo, AGENT, "basic", at=sha)
    slot = make_slot(whole, serialize(whole), Basis("t", None, "cl100k_base", None), facts)
    n = whole["tokenCount"]
    # a commit id that costs more tokens than this one no longer fits a budget of exactly n
    heavier = next(s for s in _shas(random.Random(1))
                   if tokens_alone(s, "cl100k_base") > tokens_alone(sha, "cl100k_base"))
    assert patched(slot, _facts(heavier, facts.date, "cl100k_base"), n) is None
    assert patched(slot, facts, n) == serialize(whole)


def test_reads_follow_main_byte_for_byte(tmp_path):
    """Landings of another agent reuse a cached read (patched); landings of the agent
    itself build it again; every read equals read_memory at main now, and `at` still
    gives the old commit's bytes."""
    repo = make_memory_repo(tmp_path / "repo")
    home = tmp_path / "home"
    home.mkdir()
    service = MemoryService(repo)
    try:
        modes = ("basic", "wide", "deep")
        first = {m: service.read(ADMIN, AGENT, m) for m in modes}
        base = git(repo, "rev-parse", "main").strip()
        for n, who in enumerate((OTHER, AGENT, OTHER)):
            principal = make_principal(who, {"memory:propose"}, {})
            made = service.propose(principal, who, request_doc(f"run_rc{n}", f"loop {n}"))
            mw(repo, home, "apply", f"refs/heads/{made['branch']}")
            head = git(repo, "rev-parse", "main").strip()
            opened = open_repo(repo)
            for m in modes:
                budget = 24000 if m == "deep" else None
                want = serialize(read_memory(opened, AGENT, m, max_tokens=budget, at=head))
                assert service.cached_read(ADMIN, AGENT, m) in (None, want)
                got = service.read(ADMIN, AGENT, m)
                assert got == want and json.loads(got)["commit"] == head
                assert service.cached_read(ADMIN, AGENT, m) == want
        for m in modes:
            assert service.read(ADMIN, AGENT, m, at=base) == first[m]
    finally:
        service.close()


def test_server_read_after_a_landing_names_the_new_main(tmp_path):
    """Against `memwarden serve`: read, land a proposal of another agent and then one of
    the reader, read again: each read names main at that moment and equals the CLI's."""
    repo = make_memory_repo(tmp_path / "repo")
    home = tmp_path / "home"
    home.mkdir()
    server = Server(repo, home, write_config(tmp_path / "svc.toml", repo))
    try:
        url = f"{server.url}/memory/{AGENT}/read"
        before = httpx.get(url, headers=auth(token()), timeout=60)
        assert before.status_code == 200
        for who, text in ((OTHER, "tune the garden hose"), (AGENT, "rosin for the bow")):
            r = httpx.post(f"{server.url}/memory/{who}/propose", json=request_doc(
                f"run_fresh_{who}", text), headers=auth(token(sub=who)), timeout=60)
            assert r.status_code == 201, r.text
            mw(repo, home, "apply", f"refs/heads/{r.json()['branch']}")
            head = git(repo, "rev-parse", "main").strip()
            after = httpx.get(url, headers=auth(token()), timeout=60)
            assert after.json()["commit"] == head
            assert after.content == mw(repo, home, "read", AGENT, "--format",
                                       "json").stdout.encode()
        assert "rosin for the bow" in after.json()["content"]["open_loops.md"]
        assert "rosin for the bow" not in before.json()["content"]["open_loops.md"]
    finally:
        server.stop()
