"""The service core in-process: same bytes as the CLI, a new commit seen on the next read,
`at` limited to main's history, scopes and grants, and the CLI's other commands never
importing the service stack."""

from __future__ import annotations

import pytest
from service_support import AGENT, OTHER, git, make_memory_repo, mw, request_doc

from memwarden.service.core import MemoryService
from memwarden.service.errors import ServiceError, make_principal

READER = make_principal(AGENT, {"memory:read", "memory:propose"}, {})


@pytest.fixture()
def svc(tmp_path):
    repo = make_memory_repo(tmp_path / "repo")
    service = MemoryService(repo)
    yield service, repo, tmp_path
    service.close()


def test_read_equals_the_cli_and_follows_main(svc):
    service, repo, tmp = svc
    home = tmp / "home"
    home.mkdir()
    first = service.read(READER, AGENT)
    assert first == mw(repo, home, "read", AGENT, "--format", "json").stdout
    made = service.propose(READER, AGENT, request_doc("run_core", "core loop"))
    assert service.read(READER, AGENT) == first  # a proposal does not change main
    mw(repo, home, "apply", f"refs/heads/{made['branch']}")
    second = service.read(READER, AGENT)
    assert second != first and "core loop" in second
    assert git(repo, "rev-parse", "main").strip() in second
    assert service.read(READER, AGENT, at=made["base"]) == first


def test_at_must_be_a_commit_of_main(svc):
    service, repo, _ = svc
    made = service.propose(READER, AGENT, request_doc("run_at", "not on main"))
    for at, status in ((made["commit"], 404), ("main", 422), ("0" * 40, 404)):
        with pytest.raises(ServiceError) as err:
            service.read(READER, AGENT, at=at)
        assert err.value.status == status


def test_scopes_and_grants(svc):
    service, _, _ = svc
    with pytest.raises(ServiceError) as err:
        service.read(READER, OTHER)
    assert err.value.status == 403
    granted = make_principal("planner", {"memory:read"}, {"planner": [OTHER]})
    assert OTHER in service.read(granted, OTHER)
    with pytest.raises(ServiceError) as err:
        service.propose(granted, OTHER, request_doc("run_g"))
    assert err.value.status == 403 and "memory:propose" in err.value.message
    admin = make_principal("root", {"memory:admin"}, {})
    assert service.search(admin, "violin")["results"] is not None
    with pytest.raises(ServiceError) as err:
        service.read(READER, AGENT, max_tokens=service.cap + 1)
    assert err.value.status == 422 and str(service.cap) in err.value.message



LOOP = {"operation": "add_loop", "content": "a loop for someone else"}


@pytest.mark.parametrize("request_, status, code", [
    ({"runId": "run_p1", "updates": [LOOP], "params": {"agentId": OTHER}}, 403, "other_agent"),
    ({"runId": "run_p2", "updates": [LOOP], "params": {"agent_id": OTHER}}, 403,
     "other_agent"),
    ({"runId": "run_p3", "updates": [LOOP], "params": {"updates": [LOOP] * 21}}, 422,
     "too_many_updates"),
    ({"runId": "run_p4", "updates": [LOOP], "params": {"updates": [{**LOOP, "op": "x"}]}},
     422, "invalid_update"),
    ({"runId": "run_p5", "updates": [LOOP], "params": {"runId": "run_p6"}}, 422,
     "unknown_field"),
])
def test_the_core_checks_the_request_as_propose_reads_it(svc, request_, status, code):
    """Defence in depth under REST's and MCP's schemas: the core looks at the request with
    "params" merged in, as apply/propose.py does, before it refuses unknown fields."""
    service, repo, _ = svc
    before = git(repo, "for-each-ref")
    with pytest.raises(ServiceError) as err:
        service.propose(READER, AGENT, request_)
    assert (err.value.status, err.value.code) == (status, code), err.value.message
    assert git(repo, "for-each-ref") == before


def test_a_lone_surrogate_in_an_update_is_a_422(svc):
    service, repo, _ = svc
    with pytest.raises(ServiceError) as err:
        service.propose(READER, AGENT, {"runId": "run_s", "updates": [
            {**LOOP, "foo": "\ud800"}]})
    assert err.value.status == 422 and "updates[0]" in err.value.message


def test_a_landed_proposals_id_cannot_be_proposed_again_by_anyone(svc):
    """Apply looks proposals up by id alone: an id already on main (its branch deleted
    after landing) is taken for every agent, or the new proposal would count as landed."""
    service, repo, tmp = svc
    home = tmp / "home"
    home.mkdir()
    made = service.propose(READER, AGENT, {**request_doc("run_l1", "landed loop"),
                                           "proposalId": "p-landed-1"})
    mw(repo, home, "apply", f"refs/heads/{made['branch']}")
    git(repo, "branch", "-D", made["branch"])
    other = make_principal(OTHER, {"memory:read", "memory:propose"}, {})
    for who, agent in ((other, OTHER), (READER, AGENT)):
        with pytest.raises(ServiceError) as err:
            service.propose(who, agent, {"runId": "run_l2", "proposalId": "p-landed-1",
                                         "updates": [{"operation": "add_loop",
                                                      "content": "reuse the id"}]})
        assert err.value.status == 409 and AGENT not in err.value.message
    assert "p-landed-1" not in git(repo, "for-each-ref", "refs/heads/proposals/")


def test_the_response_cache_is_bounded_in_bytes(tmp_path):
    """Many distinct arguments from a read-only token (budgets, queries, hints) fill the
    cache only up to its byte bound."""
    from memwarden.model.config import load_config
    from memwarden.service.core import CACHE_BYTES

    repo = make_memory_repo(tmp_path / "repo")
    default = MemoryService(repo)
    assert default.cache.state()["capacityBytes"] == CACHE_BYTES == 64 << 20
    default.close()
    config = load_config(None, repo)
    config.data["service"]["cache_bytes"] = 200_000
    service = MemoryService(repo, config=config)
    try:
        reader = make_principal(AGENT, {"memory:read"}, {})
        for i in range(30):
            service.read(reader, AGENT, "deep", max_tokens=5000 + i)
            service.search(reader, f"violin bow {i}", AGENT)
            service.context(reader, AGENT, hint=f"violin {i}", max_tokens=4000 + i)
        state = service.cache.state()
        assert 0 < state["bytes"] <= 200_000 < 30 * len(service.read(reader, AGENT, "deep"))
        assert state["entries"] < 90
    finally:
        service.close()
