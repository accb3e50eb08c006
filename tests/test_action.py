"""action/action.yml and its entry script: schema-valid, and the files GitHub reads."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import GIT_ENV, git, make_repo

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "action"))
import entry  # noqa: E402

MSG = ("memory-update: a / run_1 / p-1\n\nAgent-Id: a\nRun-Id: run_1\nProposal-Id: p-1\n"
       "Priority: normal\nExpected-Version: 0\n")


@pytest.mark.parametrize(("schema", "path"), [
    ("vendor.github-actions", "action/action.yml"),
    ("vendor.github-workflows", "docs/workflows/gate.yml"),
    ("vendor.github-workflows", "docs/workflows/apply.yml"),
])
def test_yaml_validates_against_githubs_schemas(schema, path):
    proc = subprocess.run(["check-jsonschema", "--builtin-schema", schema, str(ROOT / path)],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def declared_outputs() -> set[str]:
    """The outputs action.yml declares: a composite action exposes only those."""
    import yaml

    return set(yaml.safe_load((ROOT / "action/action.yml").read_text())["outputs"])


def parse_outputs(text: str) -> dict[str, str]:
    out, lines, i = {}, text.split("\n"), 0
    while i < len(lines) and lines[i]:
        m = re.fullmatch(r"([\w-]+)<<(ghadelimiter_[0-9a-f-]{36})", lines[i])
        assert m, lines[i]
        end = lines.index(m.group(2), i + 1)
        out[m.group(1)] = "\n".join(lines[i + 1:end])
        i = end + 1
    return out


def run_entry(root: Path, tmp_path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    files = {"GITHUB_OUTPUT": tmp_path / "output", "GITHUB_STEP_SUMMARY": tmp_path / "summary"}
    full = {k: v for k, v in os.environ.items() if not k.startswith("GITHUB_")}
    full.update(GIT_ENV)
    full.update({k: str(v) for k, v in files.items()})
    full.update(env)
    return subprocess.run([sys.executable, str(ROOT / "action" / "entry.py")], cwd=root,
                          env=full, capture_output=True, text=True)


def test_entry_gate_writes_outputs_summary_and_sarif(tmp_path):
    root = make_repo(tmp_path, {"memory/a/facts.md": "# Facts\n\n## D\n- one\n",
                                "memory/b/facts.md": "# Facts\n"})
    git(root, "checkout", "-qb", "proposals/a/p-1")
    (root / "memory/b/facts.md").write_text("# Facts\n\n- foreign\n")
    git(root, "add", "-A")
    subprocess.run(["git", "commit", "-qm", MSG], cwd=root, check=True,
                   env={**os.environ, **GIT_ENV})
    git(root, "checkout", "-q", "main")
    proc = run_entry(root, tmp_path, MW_MODE="gate", MW_REF="proposals/a/p-1", MW_BASE="main",
                     MW_SARIF=str(tmp_path / "mw.sarif"))
    assert proc.returncode == 1, proc.stderr
    assert "::error file=memory/b/facts.md,line=1,col=1,title=MW501" in proc.stdout
    outputs = parse_outputs((tmp_path / "output").read_text())
    assert set(outputs) <= declared_outputs(), set(outputs) - declared_outputs()
    assert outputs == {"result": "rejected", "verdict": "fail", "auto-approve": "false",
                       "findings": "2", "errors": "2", "sarif": str(tmp_path / "mw.sarif")}
    summary = (tmp_path / "summary").read_text()
    assert summary.startswith("## memwarden gate: FAIL — rejected\n")
    assert "| MW501 | error | `memory/b/facts.md:1` |" in summary
    assert json.loads((tmp_path / "mw.sarif").read_text())["runs"][0]["results"]


def test_entry_apply_lands_pushes_and_reports(tmp_path):
    from memwarden.hooks.pre_receive import install

    root = make_repo(tmp_path, {"memory/a/facts.md": "# Facts\n\n## D\n- one\n",
                                "memory/a/meta.json": '{"agentId": "a", "version": 0, '
                                                      '"schemaVersion": "1.0"}'})
    bare = tmp_path / "origin.git"
    git(tmp_path, "clone", "-q", "--bare", str(root), str(bare))
    install(bare)
    git(root, "remote", "add", "origin", str(bare))
    git(root, "checkout", "-qb", "proposals/a/p-1")
    (root / "memory/a/facts.md").write_text("# Facts\n\n## D\n- one\n- two\n")
    git(root, "add", "-A")
    subprocess.run(["git", "commit", "-qm", MSG], cwd=root, check=True,
                   env={**os.environ, **GIT_ENV})
    git(root, "push", "-q", "origin", "proposals/a/p-1")
    git(root, "checkout", "-q", "main")
    proc = run_entry(root, tmp_path, MW_MODE="apply", MW_REMOTE="origin")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    outputs = parse_outputs((tmp_path / "output").read_text())
    assert set(outputs) <= declared_outputs(), set(outputs) - declared_outputs()
    results = json.loads(outputs.pop("results"))
    assert outputs == {"result": "applied", "applied": "1", "already-applied": "0",
                       "rejected": "0", "failed": "0", "pending": "0"}
    assert [r["status"] for r in results] == ["applied"]
    landed = results[0]["commits"][-1]
    assert git(bare, "rev-parse", "main").strip() == landed
    assert "| p-1 | applied |  | " in (tmp_path / "summary").read_text()


def test_entry_unknown_mode(tmp_path):
    root = make_repo(tmp_path, {"README.md": "x\n"})
    proc = run_entry(root, tmp_path, MW_MODE="deploy")
    assert proc.returncode == 2 and "::error title=memwarden::unknown mode 'deploy'" in \
        proc.stdout


def test_ref_from_pull_request_event(tmp_path):
    event = tmp_path / "event.json"
    event.write_text(json.dumps({"pull_request": {"head": {"ref": "proposals/a/p-9"}}}))
    args = entry.gate_args({"GITHUB_EVENT_PATH": str(event), "GITHUB_ACTIONS": "true",
                            "MW_BASE": "main", "MW_SARIF": "x.sarif"})
    assert args == ["gate", "origin/proposals/a/p-9", "--base", "origin/main", "--format",
                    "github", "--sarif-file", "x.sarif"]
    args = entry.gate_args({"GITHUB_REF": "refs/heads/proposals/a/p-9"})
    assert args[:4] == ["gate", "refs/heads/proposals/a/p-9", "--base", "main"]
