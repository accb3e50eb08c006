"""The published `.pre-commit-hooks.yaml`, run by the real pre-commit on real commits.

pre-commit installs hooks from a git repository, and the project's working tree is not a
clean commit, so a session fixture copies the project source into a temporary git repo and
builds the hook environment once (a real `pip install` of memwarden and its dependencies)
under a PRE_COMMIT_HOME shared by the whole run. Each test then makes a memory repository
that uses the hooks, installs them as git hooks and commits through them.
"""

from __future__ import annotations

import fcntl
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml
from conftest import GIT_ENV, write_files

PROJECT = Path(__file__).resolve().parents[1]
SOURCE = ["pyproject.toml", "README.md", "LICENSE", ".pre-commit-hooks.yaml",
          "memwarden", "policies", "hooks", "apply"]
HOOK_IDS = ("memwarden-check", "memwarden-agent-contract")
GOOD_FACTS = "# Facts: a\n\n## Domain\n- memory is Markdown in git\n"
TIMEOUT = 900  # the first hook install downloads memwarden's dependencies


@dataclass
class PreCommit:
    """The hook repository copy, its commit, and an environment for running pre-commit."""

    hook_repo: Path
    rev: str
    env: dict[str, str]

    def run(self, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(args, cwd=cwd, env=self.env, capture_output=True, text=True,
                              timeout=TIMEOUT)

    def pre_commit(self, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
        return self.run(cwd, sys.executable, "-m", "pre_commit", *args)

    def git(self, cwd: Path, *args: str) -> str:
        proc = self.run(cwd, "git", *args)
        assert proc.returncode == 0, f"git {' '.join(args)}: {proc.stderr}"
        return proc.stdout

    def config(self, hooks: tuple[str, ...] = HOOK_IDS) -> str:
        lines = ["repos:", f"  - repo: {self.hook_repo}", f"    rev: {self.rev}", "    hooks:"]
        lines += [f"      - id: {h}" for h in hooks]
        return "\n".join(lines) + "\n"


def _copy_source(dest: Path) -> None:
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info")
    for name in SOURCE:
        src = PROJECT / name
        if src.is_dir():
            shutil.copytree(src, dest / name, ignore=ignore, symlinks=True)
        elif src.is_file():
            shutil.copy2(src, dest / name)


def _shared_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The run's temporary folder, which all xdist workers of the run share."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


@pytest.fixture(scope="session")
def pc(tmp_path_factory: pytest.TempPathFactory) -> PreCommit:
    """One hook repository and one built hook environment for the whole run: the first
    process to get here builds them under a lock, the others (xdist workers) wait and
    reuse them, as pre-commit itself shares one store between runs."""
    root = _shared_dir(tmp_path_factory)
    base = root / "precommit"
    home = base / "home"
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("GIT_", "PRE_COMMIT")) and k != "MEMWARDEN_CONFIG"}
    env.update(GIT_ENV)
    env.update({"HOME": str(home), "GIT_CONFIG_GLOBAL": str(home / ".gitconfig"),
                "PRE_COMMIT_HOME": str(base / "cache"), "PRE_COMMIT_COLOR": "never"})
    hook_repo = base / "memwarden-hooks"
    pc = PreCommit(hook_repo, "", env)
    ready = base / "ready"
    with open(root / "precommit.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not ready.exists():
            shutil.rmtree(base, ignore_errors=True)  # a build that failed half-way
            home.mkdir(parents=True)
            hook_repo.mkdir()
            _copy_source(hook_repo)
            pc.git(hook_repo, "init", "-q", "-b", "main")
            pc.git(hook_repo, "add", "-A")
            pc.git(hook_repo, "commit", "-q", "-m", "memwarden hooks under test")
            pc.rev = pc.git(hook_repo, "rev-parse", "HEAD").strip()
            boot = base / "bootstrap"
            boot.mkdir()
            pc.git(boot, "init", "-q", "-b", "main")
            (boot / ".pre-commit-config.yaml").write_text(pc.config(), encoding="utf-8")
            proc = pc.pre_commit(boot, "install-hooks")
            assert proc.returncode == 0, proc.stdout + proc.stderr
            ready.write_text(pc.rev, encoding="utf-8")
    pc.rev = ready.read_text(encoding="utf-8")
    return pc


@pytest.fixture
def memory_repo(tmp_path: Path, pc: PreCommit) -> Path:
    """A git repo using the memwarden hooks, installed as its pre-commit git hook."""
    root = tmp_path / "memory-repo"
    root.mkdir()
    pc.git(root, "init", "-q", "-b", "main")
    write_files(root, {".pre-commit-config.yaml": pc.config(), "README.md": "memory\n"})
    pc.git(root, "add", "-A")
    pc.git(root, "commit", "-q", "-m", "use memwarden hooks")
    proc = pc.pre_commit(root, "install")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return root


def commit(pc: PreCommit, root: Path, files: dict[str, str], message: str = "edit memory\n\n"
           "Human-Edit: true") -> tuple[int, str]:
    """Stage `files` and `git commit` through the installed hook; (exit code, output)."""
    write_files(root, files)
    pc.git(root, "add", "-A")
    proc = pc.run(root, "git", "commit", "-m", message)
    return proc.returncode, proc.stdout + proc.stderr


def commit_count(pc: PreCommit, root: Path) -> int:
    return int(pc.git(root, "rev-list", "--count", "HEAD").strip())


def hook_status(output: str, name: str) -> str:
    """'Passed', 'Failed' or '(no files to check)Skipped' for the hook named `name`."""
    m = re.search(rf"^{re.escape(name)}\.*(.*?)$", output, re.M)
    assert m, f"hook {name!r} not in output:\n{output}"
    return m.group(1)


CHECK = "memwarden check (memory files)"
CONTRACT = "memwarden check (agent contracts)"


# -- the manifest --------------------------------------------------------------------------

def test_manifest_is_valid_for_pre_commit(pc):
    proc = pc.pre_commit(PROJECT, "validate-manifest", ".pre-commit-hooks.yaml")
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_manifest_fields():
    hooks = {h["id"]: h for h in yaml.safe_load((PROJECT / ".pre-commit-hooks.yaml").read_text())}
    assert tuple(hooks) == (*HOOK_IDS, "memwarden-commit-msg", "memwarden-prepare-commit-msg")
    assert hooks["memwarden-commit-msg"]["stages"] == ["commit-msg"]
    assert hooks["memwarden-prepare-commit-msg"]["stages"] == ["prepare-commit-msg"]
    for h in (hooks[i] for i in HOOK_IDS):
        assert h["entry"] == "memwarden check" and h["language"] == "python"
        assert h["pass_filenames"] is True and h["stages"] == ["pre-commit"]
        assert h["verbose"] is True  # a passing commit shows the warnings
        assert h["name"] and h["description"]
        assert "symlink" in h["types_or"] and h["types"] == []


@pytest.mark.parametrize(("path", "check", "contract"), [
    ("memory/a/facts.md", True, False),
    ("memory/a/runs/run_1.md", True, False),
    ("agents/a/_agent.md", True, True),
    ("agents/a/sources/_agent.md", True, False),
    ("logic/a/current.pseudo.md", True, False),
    ("registry.json", True, False),
    ("memwarden.toml", True, False),
    ("README.md", False, False),
    ("docs/memory/facts.md", False, False),
    ("sub/registry.json", False, False),
    ("memwarden.toml.bak", False, False),
    ("agents/_agent.md", True, False),
])
def test_manifest_files_patterns(path, check, contract):
    """pre-commit matches `files` with re.search against the repo-relative path."""
    hooks = {h["id"]: h for h in yaml.safe_load((PROJECT / ".pre-commit-hooks.yaml").read_text())}
    assert bool(re.search(hooks["memwarden-check"]["files"], path)) is check
    assert bool(re.search(hooks["memwarden-agent-contract"]["files"], path)) is contract


# -- commits through the real hook ---------------------------------------------------------

def test_clean_memory_commit_passes(pc, memory_repo):
    code, out = commit(pc, memory_repo, {"memory/a/facts.md": GOOD_FACTS})
    assert code == 0, out
    assert hook_status(out, CHECK) == "Passed"
    assert hook_status(out, CONTRACT) == "(no files to check)Skipped"
    assert commit_count(pc, memory_repo) == 2


def test_unknown_memory_file_fails_the_commit(pc, memory_repo):
    code, out = commit(pc, memory_repo, {"memory/a/facts.md": GOOD_FACTS,
                                         "memory/a/notes.txt": "stray\n"})
    assert code == 1, out
    assert hook_status(out, CHECK) == "Failed"
    assert "memory/a/notes.txt:1:1: MW506 not a memory file" in out
    assert commit_count(pc, memory_repo) == 1


def test_staged_symlink_fails_the_commit(pc, memory_repo):
    write_files(memory_repo, {"memory/a/facts.md": GOOD_FACTS})
    os.symlink("facts.md", memory_repo / "memory/a/snapshot.md")
    code, out = commit(pc, memory_repo, {})
    assert code == 1, out
    assert "memory/a/snapshot.md:1:1: MW502 symlink to 'facts.md'" in out
    assert commit_count(pc, memory_repo) == 1


def test_warning_shows_on_a_passing_commit(pc, memory_repo):
    """facts.md at 94% of its limit: the commit passes and says so."""
    limit = 200
    facts = near_limit_facts(limit, 0.94)
    code, out = commit(pc, memory_repo, {"memwarden.toml": f"[limits]\nfacts = {limit}\n",
                                         "memory/a/facts.md": facts})
    assert code == 0, out
    assert hook_status(out, CHECK) == "Passed"
    assert "memory/a/facts.md:1:1: MW102" in out and "warning" in out
    assert commit_count(pc, memory_repo) == 2


def near_limit_facts(limit: int, ratio: float) -> str:
    """A facts.md of about `ratio` of `limit` tokens (cl100k_base)."""
    from memwarden.tokens.counter import count_text

    text, n = "# Facts: a\n\n## Domain\n", 0
    while count_text(text, "cl100k_base") < ratio * limit:
        n += 1
        text += f"- fact number {n} about the memory repository\n"
    return text


def test_non_memory_file_alone_is_skipped(pc, memory_repo):
    code, out = commit(pc, memory_repo, {"README.md": "memory, now with notes\n"})
    assert code == 0, out
    assert hook_status(out, CHECK) == "(no files to check)Skipped"
    assert hook_status(out, CONTRACT) == "(no files to check)Skipped"
    assert commit_count(pc, memory_repo) == 2


def test_agent_contract_hook_runs_on_agent_md(pc, memory_repo):
    code, out = commit(pc, memory_repo, {"agents/Bad_Slug/_agent.md": "# Bad slug\n"})
    assert code == 1, out
    assert hook_status(out, CONTRACT) == "Failed"
    assert "agents/Bad_Slug/_agent.md:1:1: MW507" in out


# -- the hook environment: memwarden without the service extra ---------------------------

def test_hook_environment_has_no_service_and_says_how_to_get_it(pc, tmp_path):
    (exe,) = Path(pc.env["PRE_COMMIT_HOME"]).glob("*/py_env-*/bin/memwarden")
    python = exe.with_name("python")
    for module in ("mcp", "fastapi", "uvicorn", "jwt"):  # the `serve` extra stayed out
        proc = pc.run(tmp_path, str(python), "-c", f"import {module}")
        assert proc.returncode == 1 and "ModuleNotFoundError" in proc.stderr, module
    pc.git(tmp_path, "init", "-q")
    for args in (["serve"], ["mcp", "--agent", "a"],
                 ["token", "issue", "--sub", "a", "--scope", "memory:read"]):
        proc = pc.run(tmp_path, str(exe), *args)
        assert proc.returncode == 2, (args, proc.stdout, proc.stderr)
        assert "Traceback" not in proc.stderr, proc.stderr
        assert "pip install 'memwarden[serve]'" in proc.stderr, proc.stderr
        assert "mcp, fastapi, uvicorn, PyJWT, cryptography" in proc.stderr, proc.stderr
    (tmp_path / "memwarden.toml").write_text("", "utf-8")
    proc = pc.run(tmp_path, str(exe), "check", "--all")  # checking needs none of it
    assert proc.returncode == 0, proc.stdout + proc.stderr


# -- try-repo and wall time ----------------------------------------------------------------

def test_try_repo(pc, memory_repo):
    # try-repo builds the hook environment afresh in a temporary store: one call is enough
    # (the skip of non-memory files is test_non_memory_file_alone_is_skipped's).
    write_files(memory_repo, {"memory/a/notes.txt": "stray\n"})
    pc.git(memory_repo, "add", "-A")
    proc = pc.pre_commit(memory_repo, "try-repo", str(pc.hook_repo), "memwarden-check",
                         "--ref", pc.rev, "--files", "memory/a/notes.txt")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert hook_status(proc.stdout, CHECK) == "Failed", proc.stdout
    assert "memory/a/notes.txt:1:1: MW506" in proc.stdout, proc.stdout
