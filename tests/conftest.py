"""Shared test helpers: real git repositories in tmp dirs, the CLI called in-process."""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

import pytest
from hypothesis import settings

from memwarden.cli.main import main

# CI runs a fixed set of examples (reproducible gate); local runs explore new ones.
settings.register_profile("ci", derandomize=True, deadline=None)
if os.environ.get("CI"):
    settings.load_profile("ci")

GIT_ENV = {
    "GIT_AUTHOR_NAME": "Test Human",
    "GIT_AUTHOR_EMAIL": "human@example.invalid",
    "GIT_COMMITTER_NAME": "Test Human",
    "GIT_COMMITTER_EMAIL": "human@example.invalid",
    "GIT_CONFIG_NOSYSTEM": "1",
}


@pytest.fixture(scope="session")
def _user_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One per-user cache folder per test process: parsed ranks and derived tables are
    built once, not once per test (tests of that cache set their own folder)."""
    return tmp_path_factory.mktemp("user-cache")


@pytest.fixture(autouse=True)
def _isolated_git(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory,
                  _user_cache: Path):
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("MEMWARDEN_CACHE_DIR", str(_user_cache))
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(home / ".gitconfig"))
    for k, v in GIT_ENV.items():
        monkeypatch.setenv(k, v)
    monkeypatch.delenv("MEMWARDEN_CONFIG", raising=False)
    monkeypatch.delenv("GIT_DIR", raising=False)
    monkeypatch.delenv("GIT_INDEX_FILE", raising=False)


def git(cwd: Path, *args: str, input: str | None = None) -> str:
    """Run real git; raise with its stderr on failure."""
    proc = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, input=input,
                          env={**os.environ, **GIT_ENV})
    if proc.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed: {proc.stderr}")
    return proc.stdout


def write_files(root: Path, files: Mapping[str, str | bytes]) -> None:
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8", newline="")


BENCH = Path(__file__).resolve().parent.parent / "bench"


def bench_module(name: str):
    """A script of bench/ imported as a module (bench/ is a folder of scripts, not a
    package): the same module object on every call."""
    sys.path.insert(0, str(BENCH))
    try:
        return importlib.import_module(name)
    finally:
        sys.path.remove(str(BENCH))


def make_repo(tmp_path: Path, files: Mapping[str, str | bytes], commit: bool = True,
              message: str = "initial\n\nHuman-Edit: true") -> Path:
    """A real git repository at tmp_path/repo holding `files` (committed by default)."""
    root = tmp_path / "repo"
    root.mkdir(parents=True, exist_ok=True)
    if not (root / ".git").exists():
        git(root, "init", "-q", "-b", "main")
    write_files(root, files)
    if commit:
        git(root, "add", "-A")
        git(root, "commit", "-q", "--allow-empty", "-m", message)
    return root


def pending_proposal(tmp_path: Path, mw, facts: str = "# Facts: a\n\n## Domain\n- one\n"
                     ) -> Path:
    """A repository of agent `a` with one pending proposal `p-1` (a fact appended)."""
    import json

    repo = make_repo(tmp_path, {"memory/a/facts.md": facts,
                                "memory/a/meta.json": '{"agentId": "a", "version": 0, '
                                                      '"schemaVersion": "1.0"}\n'})
    req = tmp_path / "r.json"
    req.write_text(json.dumps({"agentId": "a", "runId": "run_1", "proposalId": "p-1",
                               "updates": [{"file": "facts.md", "operation": "append",
                                            "section": "Domain", "content": "two"}]}))
    code, _, err = mw(repo, "propose", str(req))
    assert code == 0, err
    return repo


def run_mw(cwd: Path, *args: str, capsys: pytest.CaptureFixture[str] | None = None,
           monkeypatch: pytest.MonkeyPatch | None = None) -> tuple[int, str, str]:
    """Call memwarden's main() in-process from `cwd`; return (exit code, stdout, stderr)."""
    assert capsys is not None and monkeypatch is not None
    monkeypatch.chdir(cwd)
    capsys.readouterr()
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def mw(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch):
    """mw(cwd, *args) -> (code, stdout, stderr)."""

    def _run(cwd: Path, *args: str) -> tuple[int, str, str]:
        return run_mw(cwd, *args, capsys=capsys, monkeypatch=monkeypatch)

    return _run


def rules_in(output: str) -> list[str]:
    """Rule ids in text output lines `path:line:col: MWxxx message`."""
    ids = []
    for line in output.splitlines():
        parts = line.split(": ", 1)
        if len(parts) == 2 and parts[1][:2] == "MW":
            ids.append(parts[1].split()[0])
    return ids
