"""`memwarden demo` and the bundled example repository it checks."""

from __future__ import annotations

import json
import re
import shutil
import tempfile
from importlib import resources
from pathlib import Path

import pytest
from conftest import rules_in

from memwarden.cli.demo import PLANTED, run_demo, verify
from memwarden.model.config import parse_config
from memwarden.model.findings import ERROR, make
from memwarden.policies.registry import get_rule
from memwarden.tokens.counter import count_text

EXAMPLE = Path(str(resources.files("memwarden") / "example"))
AGENTS = ("garden-curator", "archivist-violin", "news-scout")


@pytest.fixture(autouse=True)
def _own_temp_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The demo keeps its report (and, with --keep, its repository) in new temp folders:
    here they go under the test's own folder instead of the machine's /tmp."""
    (tmp_path / "tmp").mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))


def _tokens(rel: str) -> int:
    return count_text((EXAMPLE / rel).read_text("utf-8"), "cl100k_base")


def _line_after(out: str, prefix: str) -> str:
    return next(ln.split(prefix, 1)[1] for ln in out.splitlines() if prefix in ln)


def test_demo_reports_every_planted_finding(tmp_path, mw):
    code, out, err = mw(tmp_path, "demo")
    assert code == 0, out + err
    ids = rules_in(out)
    assert "MW101" in ids and "MW506" in ids
    for rule_id in ("MW302", "MW303", "MW202", "MW102"):
        if get_rule(rule_id) is not None:  # asserted once the rule is registered
            assert rule_id in ids, out
    findings = [ln for ln in out.splitlines() if ": MW" in ln]
    assert not [ln for ln in findings if "garden-curator/" in ln], out
    assert "exits 1" in out
    assert "What the findings mean:" in out and "Why:" in out
    # it ends with what the next run loads, within the basic budget
    line = next(ln for ln in out.splitlines() if ln.startswith("4. The agent's next run"))
    used, budget = (int(x) for x in line.split(": ", 1)[1].split(" tokens")[0].split(" of "))
    assert 0 < used <= budget == 4100
    assert "| ## snapshot.md" in out


def test_demo_removes_its_repo_unless_kept(tmp_path, mw):
    _, out, _ = mw(tmp_path, "demo")
    copied = Path(_line_after(out, "It was copied to ").split(" and committed")[0])
    assert not copied.exists()

    code, out, _ = mw(tmp_path, "demo", "--keep")
    kept = Path(_line_after(out, "Kept the demo repository: ").strip())
    try:
        assert code == 0
        assert (kept / ".git").is_dir()
        assert (kept / "memory/news-scout/notes.txt").is_file()
    finally:
        shutil.rmtree(kept.parent)


def test_demo_without_git_is_a_clear_failure(tmp_path, monkeypatch):
    empty = tmp_path / "no-git"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    said: list[str] = []
    assert run_demo(keep=False, echo=said.append) == 2
    assert any("cannot run git" in s for s in said), said


def test_verify_flags_missing_and_unexpected_findings():
    problems = verify([])
    assert any("MW101" in p for p in problems)
    assert any("MW506" in p for p in problems)
    stray = make("MW104", ERROR, "memory/garden-curator/facts.md", 1, 1, "x", "x")
    assert any("clean agent" in p for p in verify([stray]))


def test_example_layout_and_registry():
    for agent in AGENTS:
        assert (EXAMPLE / "agents" / agent / "_agent.md").is_file()
        for name in ("snapshot.md", "facts.md", "open_loops.md", "meta.json"):
            assert (EXAMPLE / "memory" / agent / name).is_file(), (agent, name)
        meta = json.loads((EXAMPLE / "memory" / agent / "meta.json").read_text("utf-8"))
        assert meta["agentId"] == agent
    registry = json.loads((EXAMPLE / "registry.json").read_text("utf-8"))
    assert sorted(a["slug"] for a in registry["agents"]) == sorted(AGENTS)
    config = parse_config((EXAMPLE / "memwarden.toml").read_text("utf-8"))
    assert config.agent_setting("news-scout", "auto_approve") is False


def test_example_sizes_match_the_story():
    assert _tokens("memory/news-scout/snapshot.md") > 2000  # MW101
    facts = _tokens("memory/archivist-violin/facts.md")
    assert 0.9 * 8000 <= facts < 8000  # the near-limit warning, not an error
    clean = sum(_tokens(f"memory/garden-curator/{n}")
                for n in ("snapshot.md", "facts.md", "open_loops.md"))
    assert clean < 0.5 * 12000
    facts_text = (EXAMPLE / "memory/news-scout/facts.md").read_text("utf-8")
    assert "<|im_start|>" in facts_text
    assert "ignore all previous instructions" in facts_text.lower()
    assert {p for _, p, _ in PLANTED} <= {
        p.relative_to(EXAMPLE).as_posix() for p in EXAMPLE.rglob("*") if p.is_file()}


def test_demo_runs_the_whole_loop_with_an_eviction(tmp_path, mw):
    code, out, err = mw(tmp_path, "demo")
    assert code == 0, out + err
    assert "1. The agent's run proposes: branch proposals/archivist-violin/p-demo" in out
    assert "2. CI gates it: pass, needs_human_review" in out
    assert "memwarden-apply: memory-evict: archivist-violin / facts" in out
    assert "archivist-violin: memory-update: archivist-violin / run_demo / p-demo" in out
    m = re.search(r"apply will evict (\d+) entries.*\n3\. .* (\d+) facts moved", out)
    assert m and m.group(1) == m.group(2)  # the gate's preview is what apply did
