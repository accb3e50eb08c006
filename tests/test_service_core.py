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
    for at, status in ((made["commit"], 422), ("main", 422), ("0" * 40, 404)):
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

