"""`memwarden init` + `memwarden agent add` + a commit, on a new machine: the real CLI as a
program, the real pre-commit with the config init wrote, then check and verify-history."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from conftest import GIT_ENV, git

from memwarden.cli.init import init_files

BIN = Path(sys.executable).parent
PROJECT = Path(__file__).resolve().parents[1]


@pytest.fixture
def env(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("GIT_", "PRE_COMMIT")) and k != "MEMWARDEN_CONFIG"}
    env.update(GIT_ENV)
    env.update({"HOME": str(home), "GIT_CONFIG_GLOBAL": str(home / ".gitconfig"),
                "PRE_COMMIT_HOME": str(tmp_path / "pre-commit-cache"),
                "PRE_COMMIT_COLOR": "never",
                "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"})
    return env


def run(env, cwd, *args):
    return subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)


def memwarden(env, cwd, *args):
    return run(env, cwd, str(BIN / "memwarden"), *args)


def ok(proc):
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


def test_init_agent_add_commit_is_clean_through_real_pre_commit(tmp_path, env):
    root = tmp_path / "memory"
    out = ok(memwarden(env, tmp_path, "init", str(root)))
    assert "committed" in out and "pre-commit install" in out
    ok(memwarden(env, root, "agent", "add", "archivist"))
    ok(memwarden(env, root, "agent", "add", "scout", "--status", "active",
                 "--name", "News Scout", "--description", "Collects news for the owner."))
    # the generated pre-commit config, run by pre-commit itself on every file
    proc = run(env, root, sys.executable, "-m", "pre_commit", "run", "--all-files")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "memwarden check" in proc.stdout and "Passed" in proc.stdout
    # hooks installed, a plain commit: prepare-commit-msg adds Human-Edit, commit-msg agrees
    ok(run(env, root, sys.executable, "-m", "pre_commit", "install", "-t", "pre-commit",
           "-t", "commit-msg", "-t", "prepare-commit-msg"))
    ok(run(env, root, "git", "add", "-A"))
    proc = run(env, root, "git", "commit", "-m", "add agents")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Human-Edit: true" in git(root, "log", "-1", "--format=%B")
    assert ok(memwarden(env, root, "check")).endswith("0 error(s), 0 warning(s), 0 waived\n")
    assert "0 error(s)" in ok(memwarden(env, root, "verify-history"))
    assert "0 error(s)" in ok(memwarden(env, root, "check-commits", "main~1..main"))
    registry = json.loads((root / "registry.json").read_text())
    assert [(a["slug"], a["status"]) for a in registry["agents"]] == [
        ("archivist", "draft"), ("scout", "active")]
    # the active agent can take part in the loop right away
    req = tmp_path / "req.json"
    req.write_text(json.dumps({"agentId": "scout", "runId": "run_1", "updates": [
        {"file": "facts.md", "operation": "append", "section": "Domain",
         "content": "the owner reads news at 08:00"}]}))
    branch = json.loads(ok(memwarden(env, root, "propose", str(req))))["branch"]
    assert "verdict: pass (auto_approved)" in ok(memwarden(env, root, "gate", branch))
    assert "1 applied" in ok(memwarden(env, root, "apply", "--all", "--format", "text"))
    assert "0 error(s)" in ok(memwarden(env, root, "verify-history"))


def test_init_refuses_to_overwrite_and_agent_add_refuses_twice(tmp_path, env):
    root = tmp_path / "memory"
    root.mkdir()
    (root / "memwarden.toml").write_text("# mine\n")
    proc = memwarden(env, tmp_path, "init", str(root))
    assert proc.returncode == 2 and proc.stderr.startswith(
        "memwarden: error: memwarden.toml: already exists")
    assert (root / "memwarden.toml").read_text() == "# mine\n"
    assert not (root / "registry.json").exists()  # nothing written
    (root / "memwarden.toml").unlink()
    ok(memwarden(env, tmp_path, "init", str(root)))
    ok(memwarden(env, root, "agent", "add", "a", "--commit"))
    proc = memwarden(env, root, "agent", "add", "a")
    assert proc.returncode == 2 and "agents/a/: already exists" in proc.stderr
    proc = memwarden(env, root, "agent", "add", "Bad_Id")
    assert proc.returncode == 2 and "Bad_Id: not a valid agent id" in proc.stderr
    assert "0 error(s)" in ok(memwarden(env, root, "verify-history"))


def test_init_files_are_valid(tmp_path):
    files = init_files()
    config = yaml.safe_load(files[".pre-commit-config.yaml"])
    hooks = {h["id"]: h for h in config["repos"][0]["hooks"]}
    assert config["repos"][0]["repo"] == "local"
    assert hooks["memwarden-check"]["verbose"] is True
    assert hooks["memwarden-commit-msg"]["stages"] == ["commit-msg"]
    # the workflows are the documented ones
    for name in ("gate", "apply"):
        assert files[f".github/workflows/memwarden-{name}.yml"] == \
            (PROJECT / "docs" / "workflows" / f"{name}.yml").read_text()
