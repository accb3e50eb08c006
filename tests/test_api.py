"""The Python API returns what the CLI prints, for runtimes that import memwarden."""

from __future__ import annotations

import json

import pytest
from conftest import git, make_repo

import memwarden
from memwarden.model.errors import MemwardenError

FILES = {
    "memory/a/snapshot.md": "# Snapshot: a\n\nWorking on the [[heron-survey]].\n",
    "memory/a/open_loops.md": "# Open Loops: a\n\n## Open\n"
                              "- [ ] loop_x: Count herons (opened 2026-01-05, priority normal)\n",
    "memory/a/facts.md": "# Facts: a\n\n## Domain\n- Herons nest in April.\n",
    "memory/a/meta.json": '{"agentId": "a", "version": 2, "schemaVersion": "1.0"}\n',
    "memory/a/runs/run_1.md": "# Run: run_1\n\nsecret run notes\n",
}


@pytest.fixture
def repo(tmp_path):
    return make_repo(tmp_path, FILES)


def test_api_matches_the_cli(repo, mw):
    doc = memwarden.read_memory("a", "wide", repo=repo)
    code, out, _ = mw(repo, "read", "a", "--mode", "wide")
    assert code == 0 and json.loads(out) == doc
    assert doc["version"] == 2 and "facts.md" in doc["content"]
    assert "secret run notes" not in json.dumps(doc)
    hits = memwarden.search_memory("herons", repo=repo)
    code, out, _ = mw(repo, "search", "herons")
    assert code == 0 and json.loads(out)["results"] == hits
    assert hits and hits[0]["agent"] == "a"
    ctx = memwarden.memory_context("a", repo=repo, query_hint="herons")
    assert ctx["tokenCount"] <= 200_000
    node = memwarden.entity_graph("heron-survey", repo=repo)
    assert node is not None
    assert memwarden.entity_graph("nope", repo=repo) is None


def test_api_works_on_a_bare_repo_and_reports_errors(repo, tmp_path):
    bare = tmp_path / "bare.git"
    git(tmp_path, "clone", "-q", "--bare", str(repo), str(bare))
    assert memwarden.read_memory("a", repo=bare) == memwarden.read_memory("a", repo=repo)
    with pytest.raises(MemwardenError):
        memwarden.read_memory("a", repo=tmp_path / "nowhere")
    with pytest.raises(AttributeError):
        memwarden.no_such_thing  # noqa: B018
