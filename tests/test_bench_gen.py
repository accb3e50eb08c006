"""bench/gen_repo.py: a realistic, deterministic memory repo that checks clean."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import git

from memwarden.tokens.counter import count_text, get_encoder

BENCH = Path(__file__).resolve().parents[1] / "bench"
sys.path.insert(0, str(BENCH))

import gen_repo  # noqa: E402

LIMITS = {"snapshot.md": 2000, "facts.md": 8000, "open_loops.md": 2000}


@pytest.fixture(scope="module")
def bench_repo(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("bench") / "repo"
    gen_repo.generate(root, 3, seed=7, jobs=1)
    return root


def _agents(root: Path) -> list[str]:
    return sorted(p.name for p in (root / "memory").iterdir())


def test_layout_of_every_agent(bench_repo):
    agents = _agents(bench_repo)
    assert len(agents) == 3
    for a in agents:
        mem = bench_repo / "memory" / a
        for name in ("snapshot.md", "facts.md", "open_loops.md", "decisions.md",
                     "changelog.md", "meta.json"):
            assert (mem / name).is_file(), (a, name)
        assert list((mem / "timeline").glob("????-??-??.md"))
        assert list((mem / "runs").glob("run_*.md"))
        assert (bench_repo / "agents" / a / "_agent.md").is_file()
        meta = json.loads((mem / "meta.json").read_text("utf-8"))
        assert meta["agentId"] == a and isinstance(meta["version"], int)
    registry = json.loads((bench_repo / "registry.json").read_text("utf-8"))
    assert [e["slug"] for e in registry["agents"]] == agents


def test_layer1_near_but_within_limits(bench_repo):
    for a in _agents(bench_repo):
        for name, limit in LIMITS.items():
            n = count_text((bench_repo / "memory" / a / name).read_text("utf-8"), "cl100k_base")
            assert 0.3 * limit < n <= limit, (a, name, n)


def test_one_commit_clean_tree(bench_repo):
    assert git(bench_repo, "rev-list", "--count", "HEAD").strip() == "1"
    assert git(bench_repo, "status", "--porcelain") == ""


def test_check_all_has_no_errors(bench_repo, mw):
    code, out, err = mw(bench_repo, "check", "--all")
    assert code == 0, out + err
    assert " 0 error(s)" in out


def test_deterministic_for_a_seed(tmp_path, bench_repo):
    again = tmp_path / "again"
    gen_repo.generate(again, 3, seed=7, jobs=1)
    files = sorted(p.relative_to(bench_repo) for p in bench_repo.rglob("*")
                   if p.is_file() and ".git" not in p.parts)
    assert files == sorted(p.relative_to(again) for p in again.rglob("*")
                           if p.is_file() and ".git" not in p.parts)
    for rel in files:
        assert (bench_repo / rel).read_bytes() == (again / rel).read_bytes(), rel


def test_mixed_languages(tmp_path):
    root = tmp_path / "r"
    gen_repo.generate(root, 6, seed=1, jobs=1)
    text = "".join(p.read_text("utf-8") for p in root.glob("memory/*/facts.md"))
    assert any("\u0400" <= ch <= "\u04ff" for ch in text)  # Ukrainian
    assert " the " in text  # English


def test_budget_fit_never_exceeds_target():
    enc = get_encoder("cl100k_base")
    w = gen_repo.Writer(gen_repo.random.Random(3), "uk")
    for target in (50, 333, 1200):
        b = gen_repo.Budget(enc, target)
        b.force("# Facts: x", "", "## Домен")
        while b.fits(line := f"- {w.unique(w.sentence)}"):
            b.add(line)
        text = b.fit()
        assert len(enc.encode_ordinary(text)) <= target
        assert text.startswith("# Facts: x\n")


def test_cli_refuses_non_empty_dir_and_bad_count(tmp_path):
    (tmp_path / "x").write_text("x")
    script = str(BENCH / "gen_repo.py")
    busy = subprocess.run([sys.executable, script, str(tmp_path), "--agents", "1"],
                          capture_output=True, text=True)
    assert busy.returncode != 0 and "not empty" in busy.stderr
    bad = subprocess.run([sys.executable, script, str(tmp_path / "new"), "--agents", "0"],
                         capture_output=True, text=True)
    assert bad.returncode == 2 and "--agents" in bad.stderr
