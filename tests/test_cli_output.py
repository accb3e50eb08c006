"""Readable text output: gate summarises its eviction preview, status prints no raw JSON,
apply has a text format, demo says how to keep its repository."""

from __future__ import annotations

import json

from conftest import make_repo, pending_proposal
from test_gate import FACTS, branch

from memwarden.cli.gate import EVICT_SHOWN


def test_gate_text_summarises_the_eviction_preview(tmp_path, mw):
    old = FACTS + "".join(f"- [2025-01-{i % 28 + 1:02d}] old fact number {i} about "
                          "archives and catalogues\n" for i in range(30))
    repo = make_repo(tmp_path, {"memory/a/facts.md": old, "memwarden.toml":
                                "max_auto_diff_bytes = 1000000\n[limits]\nfacts = 400\n"})
    new = "".join(f"- new fact number {i} about the catalogue importer\n" for i in range(12))
    ref = branch(repo, "p-1", {"memory/a/facts.md": old + new})
    code, out, _ = mw(repo, "gate", ref, "--format", "json")
    preview = json.loads(out)["eviction_preview"]
    assert code == 0 and len(preview) > EVICT_SHOWN + 1  # JSON lists every entry
    code, text, _ = mw(repo, "gate", ref)
    lines = [ln for ln in text.splitlines() if ln.startswith("would evict")]
    assert code == 0 and len(lines) == EVICT_SHOWN + 1
    assert lines[-1].startswith(f"would evict ... and {len(preview) - EVICT_SHOWN} more (")
    assert "--format json lists every one" in lines[-1]


def test_status_and_reject_text_is_not_json(tmp_path, mw):
    repo = pending_proposal(tmp_path, mw, FACTS)
    code, out, _ = mw(repo, "apply", "--all", "--format", "text")
    assert code == 0 and out.startswith("applied         p-1 -> ")
    code, out, _ = mw(repo, "status", "p-1")
    assert code == 0 and out.startswith("p-1: applied (agent a, run run_1)")
    assert "{" not in out and "}" not in out
    assert "  changelog: memory/a/changelog.md:" in out
    code, out, _ = mw(repo, "status")
    assert code == 0 and out.split() == ["applied", "proposals/a/p-1"]


def test_demo_says_how_to_keep_its_repository(tmp_path, mw, monkeypatch):
    import tempfile

    (tmp_path / "tmp").mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))  # where its report goes
    code, out, _ = mw(tmp_path, "demo")
    assert code == 0
    assert "run `memwarden demo --keep` to keep it" in out.splitlines()[-1]
