"""Property tests generated from the live OpenAPI document (schemathesis) against a real
`memwarden serve`, with valid tokens: no server error, every response as documented."""

from __future__ import annotations

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis.checks import (
    content_type_conformance,
    not_a_server_error,
    response_schema_conformance,
    status_code_conformance,
)
from service_support import auth, served, token

CHECKS = [not_a_server_error, response_schema_conformance, status_code_conformance,
          content_type_conformance]
ADMIN = token("ops-human", ("memory:read", "memory:propose", "memory:snapshot",
                            "memory:admin"), ttl=3600)


@pytest.fixture(scope="module")
def api(tmp_path_factory):
    base = tmp_path_factory.mktemp("schemathesis")
    with served(base, service=f'snapshot_dir = "{base / "snaps"}"\n') as (_, _, _, server):
        yield schemathesis.openapi.from_url(server.url + "/openapi.json")
    assert "Traceback" not in server.errors()


def test_api_conforms(api):
    """Every operation, a bounded number of generated requests each (derandomized)."""
    operations = [r.ok() for r in api.get_all_operations()]
    assert len(operations) >= 10
    calls = []
    for operation in operations:
        @given(case=operation.as_strategy())
        @settings(max_examples=12, deadline=None, derandomize=True, database=None,
                  suppress_health_check=list(HealthCheck))
        def run(case):
            response = case.call_and_validate(headers=auth(ADMIN), checks=CHECKS, timeout=60)
            calls.append(response.status_code)

        run()
    assert len(calls) >= 5 * len(operations) and 200 in calls
