"""The hook on a real self-hosted server: gitolite (Debian package gitolite3), which
authenticates the pusher and sets GL_USER. No sshd: each push runs gitolite-shell exactly as
sshd's forced command for the user's key would (SSH_CONNECTION, SSH_ORIGINAL_COMMAND), over
git's ext:: transport. The hook is installed the gitolite way: a repo-specific hook in
LOCAL_CODE, named by `option hook.pre-receive` in gitolite.conf."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import git, make_repo
from test_server_kit import FACTS, INJECTION, META, base_env, commit, proposal_message

from memwarden.hooks.pre_receive import HOOK_SCRIPT

GITOLITE = shutil.which("gitolite") or (
    "/usr/bin/gitolite" if os.path.exists("/usr/bin/gitolite") else None)
SHELL = "/usr/share/gitolite3/gitolite-shell"

pytestmark = pytest.mark.skipif(
    GITOLITE is None and not os.environ.get("CI"),
    reason="gitolite3 is not installed (apt-get install -y gitolite3); CI requires it")

CONFIG = """[server]
owners = ["olga"]
apply_pushers = ["ci"]
pusher_vars = ["GL_USER"]
"""


@pytest.fixture
def gitolite(tmp_path):
    """(HOME of the gitolite account, env to run gitolite in it)."""
    assert GITOLITE is not None, "CI must install gitolite3 (apt-get install -y gitolite3)"
    home = tmp_path / "git-home"
    home.mkdir()
    env = {**base_env(), "HOME": str(home), "GIT_CONFIG_GLOBAL": str(home / ".gitconfig")}
    run = lambda *a: subprocess.run(a, env=env, cwd=home, check=True,  # noqa: E731
                                    capture_output=True, text=True)
    run("git", "config", "--global", "init.defaultBranch", "main")
    run(GITOLITE, "setup", "-a", "admin")
    rc = home / ".gitolite.rc"
    text = rc.read_text()
    text = text.replace('# LOCAL_CODE                =>  "$ENV{HOME}/local",',
                        'LOCAL_CODE => "$ENV{HOME}/local",')
    text = text.replace("# 'repo-specific-hooks',", "'repo-specific-hooks',")
    assert "'repo-specific-hooks'," in text and 'LOCAL_CODE => "$ENV{HOME}/local"' in text
    rc.write_text(text)
    hooks = home / "local" / "hooks" / "repo-specific"
    hooks.mkdir(parents=True)
    (hooks / "memwarden").write_text(HOOK_SCRIPT.format(python=sys.executable))
    (hooks / "memwarden").chmod(0o755)
    conf = home / ".gitolite" / "conf" / "gitolite.conf"
    conf.write_text(conf.read_text() + "\nrepo memory\n    RW+ = olga ci mallory bot-a\n"
                    "    option hook.pre-receive = memwarden\n")
    run(GITOLITE, "compile")
    run(GITOLITE, "trigger", "POST_COMPILE")
    assert (home / "repositories" / "memory.git" / "hooks" / "pre-receive.h00-memwarden"
            ).exists()
    shell = tmp_path / "glsh"
    shell.write_text(f"#!/bin/sh\n# glsh USER SERVICE REPO: what sshd runs for USER's key\n"
                     f"HOME='{home}' SSH_CONNECTION='127.0.0.1 50000 127.0.0.1 22' "
                     f"SSH_ORIGINAL_COMMAND=\"$2 '$3'\" exec {SHELL} \"$1\"\n")
    shell.chmod(0o755)
    return home, shell


def gl_push(work: Path, shell: Path, user: str, *refspecs: str
            ) -> subprocess.CompletedProcess[str]:
    url = f"ext::{shell} {user} %S memory"
    return subprocess.run(["git", "-c", "protocol.ext.allow=always", "push", url, *refspecs],
                          cwd=work, capture_output=True, text=True, env=base_env())


def test_gitolite_enforces_the_trust_model(tmp_path, gitolite):
    home, shell = gitolite
    work = make_repo(tmp_path, {"memory/a/facts.md": FACTS.format(a="a"),
                                "memory/a/meta.json": META.format(a="a")})
    # an empty repository: no roles yet, so the first push (with the config) is testing mode
    commit(work, {"memwarden.toml": CONFIG}, "Configure the server\n\nHuman-Edit: true")
    proc = gl_push(work, shell, "olga", "main")
    assert proc.returncode == 0, proc.stderr
    assert "testing mode" in proc.stderr
    bare = home / "repositories" / "memory.git"
    # a forged apply committer does not make mallory the apply step
    commit(work, {"memory/a/facts.md": FACTS.format(a="a") + INJECTION}, "notes",
           env={"GIT_COMMITTER_NAME": "memwarden-apply",
                "GIT_COMMITTER_EMAIL": "apply@memwarden.invalid"})
    proc = gl_push(work, shell, "mallory", "main")
    assert proc.returncode != 0 and "MW508" in proc.stderr and "'mallory'" in proc.stderr
    # an owner's push is checked in full: the same commit is refused on content
    proc = gl_push(work, shell, "olga", "main")
    assert proc.returncode != 0 and "MW303" in proc.stderr and "MW404" in proc.stderr
    git(work, "reset", "-q", "--hard", "HEAD~1")
    # an owner's clean human edit lands
    commit(work, {"memory/a/facts.md": FACTS.format(a="a") + "- checked by olga\n"},
           "Fix facts\n\nHuman-Edit: true")
    proc = gl_push(work, shell, "olga", "main")
    assert proc.returncode == 0, proc.stderr
    assert "testing mode" not in proc.stderr
    assert "checked by olga" in git(bare, "show", "main:memory/a/facts.md")
    # proposals, unknown refs and notes by role
    git(work, "checkout", "-qb", "proposals/a/p-1")
    commit(work, {"memory/a/facts.md": FACTS.format(a="a") + "- checked by olga\n- new\n"},
           proposal_message("a", "p-1", version=1))
    assert gl_push(work, shell, "bot-a", "proposals/a/p-1").returncode == 0
    proc = gl_push(work, shell, "bot-a", "HEAD:refs/heads/feature")
    assert proc.returncode != 0 and "allow_refs" in proc.stderr
    git(work, "notes", "--ref", "memwarden", "add", "-m", '{"state": "rejected", "reason": '
        '"rejected_by_owner", "by": "mallory"}', "HEAD")
    proc = gl_push(work, shell, "mallory", "refs/notes/memwarden")
    assert proc.returncode != 0 and "MW508" in proc.stderr


def test_gitolite_user_cannot_spoof_through_other_variables(tmp_path, gitolite):
    """With pusher_vars = ["GL_USER"], a REMOTE_USER in the pusher's environment is ignored:
    gitolite's GL_USER (from the key) decides."""
    home, shell = gitolite
    work = make_repo(tmp_path, {"memwarden.toml": CONFIG,
                                "memory/a/facts.md": FACTS.format(a="a")})
    assert gl_push(work, shell, "olga", "main").returncode == 0
    commit(work, {"memory/a/facts.md": FACTS.format(a="a") + "- x\n"}, "E\n\nHuman-Edit: true")
    proc = subprocess.run(["git", "-c", "protocol.ext.allow=always", "push",
                           f"ext::{shell} mallory %S memory", "main"], cwd=work,
                          capture_output=True, text=True, env=base_env(REMOTE_USER="olga"))
    assert proc.returncode != 0 and "'mallory'" in proc.stderr
