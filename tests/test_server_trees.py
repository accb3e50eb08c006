"""Trees built by hand, pushed for real through the installed pre-receive hook: entries out
of git's order, a name twice, a name that is not UTF-8. Each hid a file from the checks (a
lookup missed it, so it was skipped as if deleted) while git, a clone and `memwarden read`
served it: a 3,500-token snapshot landed on main past its HARD limit of 2,000."""

from __future__ import annotations

import subprocess
from pathlib import Path

from conftest import git
from test_server_kit import base_env, make_server, push, ref

BIG_SNAPSHOT = "# Snapshot: a\n\n## Context\n" + "alpha beta gamma delta omega zeta " * 600


def write_object(work: Path, kind: str, data: bytes) -> str:
    return subprocess.run(["git", "hash-object", "-w", "-t", kind, "--literally", "--stdin"],
                          cwd=work, input=data, capture_output=True, check=True
                          ).stdout.decode().strip()


def tree(work: Path, entries: list[tuple[bytes, bytes, str]]) -> str:
    """A tree object with `entries` (mode, name, id) in the order given, unchecked."""
    return write_object(work, "tree", b"".join(mode + b" " + name + b"\0" + bytes.fromhex(oid)
                                               for mode, name, oid in entries))


def commit_with_agent_a(work: Path, a_entries: list[tuple[bytes, bytes, str]]) -> str:
    """A commit on main whose memory/a/ holds `a_entries`, the rest as on main."""
    rev = lambda spec: git(work, "rev-parse", spec).strip()  # noqa: E731
    memory = tree(work, [(b"40000", b"a", tree(work, a_entries)),
                         (b"40000", b"b", rev("HEAD:memory/b"))])
    root = tree(work, [(b"40000", b"memory", memory),
                       (b"100644", b"memwarden.toml", rev("HEAD:memwarden.toml"))])
    return subprocess.run(["git", "commit-tree", root, "-p", "HEAD", "-m",
                           "edit\n\nHuman-Edit: true"], cwd=work, capture_output=True,
                          text=True, check=True, env=base_env()).stdout.strip()


def blob(work: Path, text: str | bytes) -> str:
    return write_object(work, "blob", text.encode() if isinstance(text, str) else text)


def refused_on_main(work: Path, bare: Path, sha: str, words: str) -> None:
    before = ref(bare, "refs/heads/main")
    proc = push(work, f"{sha}:refs/heads/main", who="olga")  # an owner may move main
    assert proc.returncode == 1, proc.stderr
    assert "MW502" in proc.stderr and words in proc.stderr, proc.stderr
    assert ref(bare, "refs/heads/main") == before


def test_a_tree_out_of_order_does_not_hide_an_oversized_snapshot(tmp_path):
    work, bare = make_server(tmp_path)
    rev = lambda spec: git(work, "rev-parse", spec).strip()  # noqa: E731
    # snapshot.md after facts.md and meta.json would be in order; before them it is not
    sha = commit_with_agent_a(work, [
        (b"100644", b"snapshot.md", blob(work, BIG_SNAPSHOT)),
        (b"100644", b"facts.md", rev("HEAD:memory/a/facts.md")),
        (b"100644", b"meta.json", rev("HEAD:memory/a/meta.json"))])
    refused_on_main(work, bare, sha, "memory/a:1:1: MW502 memory/a: a malformed tree "
                    "(entries out of git's order")


def test_a_name_twice_does_not_hide_an_oversized_file(tmp_path):
    work, bare = make_server(tmp_path)
    rev = lambda spec: git(work, "rev-parse", spec).strip()  # noqa: E731
    big = blob(work, "# Facts\n\n## Domain\n- " + "alpha beta gamma delta " * 4000 + "\n")
    # git shows the first entry, libgit2 and a scan of the entries the last one
    sha = commit_with_agent_a(work, [
        (b"100644", b"facts.md", big),
        (b"100644", b"facts.md", rev("HEAD:memory/a/facts.md")),
        (b"100644", b"meta.json", rev("HEAD:memory/a/meta.json"))])
    refused_on_main(work, bare, sha, "the name 'facts.md' twice")


def test_a_file_name_that_is_not_utf8_is_refused(tmp_path):
    work, bare = make_server(tmp_path)
    rev = lambda spec: git(work, "rev-parse", spec).strip()  # noqa: E731
    sha = commit_with_agent_a(work, [
        (b"100644", b"facts.md", rev("HEAD:memory/a/facts.md")),
        (b"100644", b"meta.json", rev("HEAD:memory/a/meta.json")),
        (b"100644", b"\xff.md", blob(work, "hello\n"))])
    refused_on_main(work, bare, sha, "a file name that is not UTF-8")


def test_a_well_formed_tree_built_by_hand_still_lands(tmp_path):
    """The same construction in git's order is an ordinary commit: accepted."""
    work, bare = make_server(tmp_path)
    rev = lambda spec: git(work, "rev-parse", spec).strip()  # noqa: E731
    sha = commit_with_agent_a(work, [
        (b"100644", b"facts.md", blob(work, "# Facts\n\n## Domain\n- one more fact\n")),
        (b"100644", b"meta.json", rev("HEAD:memory/a/meta.json"))])
    proc = push(work, f"{sha}:refs/heads/main", who="olga")
    assert proc.returncode == 0, proc.stderr
    assert ref(bare, "refs/heads/main") == sha
