"""Objects held in memory during a batch, stored as one pack of deltas: real git reads it."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pygit2
from hypothesis import given, settings
from hypothesis import strategies as st

from memwarden.git.heldobjects import _MAX_DEPTH, delta, write_pack
from memwarden.git.repo import Repo, Writer

WHO = ("Tester", "t@example.invalid")


def git(cwd: Path, *args: str, data: bytes | None = None) -> bytes:
    return subprocess.run(["git", *args], cwd=cwd, input=data, check=True,
                          capture_output=True).stdout


def repo_with_files(tmp_path: Path, n: int = 40) -> Repo:
    root = tmp_path / "r"
    git(tmp_path, "init", "-q", str(root))
    for i in range(n):
        (root / "memory" / f"agent{i}").mkdir(parents=True)
        (root / "memory" / f"agent{i}" / "facts.md").write_text(f"# facts {i}\n" * 20)
    git(root, "add", "-A")
    git(root, "-c", "user.name=t", "-c", "user.email=t@x", "commit", "-qm", "init")
    return Repo(root / ".git", root)


def loose_objects(repo: Repo) -> set[str]:
    base = repo.git_dir / "objects"
    return {p.parent.name + p.name for p in base.glob("??/*")}


def test_a_batch_is_one_pack_git_reads_and_checks(tmp_path: Path) -> None:
    repo = repo_with_files(tmp_path)
    before = loose_objects(repo)
    tip = repo.resolve_commit("HEAD")
    repo.hold_objects()
    expected = {}
    for i in range(120):  # more versions of memory/ than git's delta depth
        path = f"memory/agent{i % 40}/facts.md"
        text = (f"# facts {i % 40}\n" * 20 + f"- new {i}\n" * (i // 40 + 1)).encode()
        log = b"".join(b"line %d\n" % k for k in range(i + 1))
        tip = Writer(repo).commit_changes(tip, {path: text, "changelog.md": log}, f"c{i}",
                                          WHO, WHO, 1_700_000_000 + i)
        expected[path] = text
    assert repo.read_path(tip, "changelog.md").endswith(b"line 119\n")  # read while held
    assert loose_objects(repo) == before  # nothing written yet
    repo.store_held_objects()
    assert loose_objects(repo) == before
    git(repo.root, "update-ref", "refs/heads/batch", tip)
    git(repo.root, "fsck", "--strict", "--full")
    packs = list((repo.git_dir / "objects" / "pack").glob("pack-*.idx"))
    assert len(packs) == 1
    verify = git(repo.root, "verify-pack", "-v", str(packs[0])).decode()
    depths = [int(ln.split()[5]) for ln in verify.splitlines()
              if len(ln.split()) == 7 and ln.split()[1] in ("tree", "blob")]
    assert depths and max(depths) <= _MAX_DEPTH  # deltas were made, chains stay short
    for path, text in expected.items():
        assert git(repo.root, "show", f"batch:{path}") == text
    # a fresh process (libgit2) reads the pack too, and short ids resolve
    again = Repo(repo.git_dir, repo.root)
    assert again.read_path(tip, "changelog.md") == git(repo.root, "show", "batch:changelog.md")
    assert again.resolve_commit(tip[:10]) == tip


def test_dropped_objects_leave_nothing_and_writes_go_to_disk_again(tmp_path: Path) -> None:
    repo = repo_with_files(tmp_path, 3)
    before = loose_objects(repo)
    head = repo.resolve_commit("HEAD")
    repo.hold_objects()
    held = Writer(repo).commit_changes(head, {"a.md": b"held\n"}, "m", WHO, WHO, 1)
    repo.drop_held_objects()
    assert loose_objects(repo) == before
    assert not list((repo.git_dir / "objects" / "pack").glob("*.pack"))
    assert subprocess.run(["git", "cat-file", "-e", held], cwd=repo.root).returncode != 0
    written = Writer(repo).commit_changes(head, {"a.md": b"on disk\n"}, "m", WHO, WHO, 2)
    assert Repo(repo.git_dir, repo.root).read_path(written, "a.md") == b"on disk\n"
    git(repo.root, "cat-file", "-e", written)


def _unpack_one_delta(tmp_path: Path, base: bytes, target: bytes) -> bytes:
    """Write base and target (target as a delta of base) as a pack, read target with git."""
    objects = {}
    for data in (base, target):
        oid = pygit2.hash(data)
        objects[str(oid)] = (3, data)
    bases = {str(pygit2.hash(target)): str(pygit2.hash(base))} if base != target else {}
    repo = tmp_path / "d.git"
    if not repo.exists():
        git(tmp_path, "init", "-q", "--bare", str(repo))
    pack = write_pack(repo / "objects" / "pack", objects, bases)
    out = git(repo, "cat-file", "blob", str(pygit2.hash(target)))
    for p in pack.parent.glob("pack-*"):
        p.unlink()
    return out


@settings(max_examples=40, deadline=None)
@given(st.binary(max_size=300), st.binary(max_size=300), st.binary(max_size=300),
       st.integers(0, 3))
def test_delta_rebuilds_the_target_in_git(tmp_path_factory, head: bytes, mid: bytes,
                                          tail: bytes, scale: int) -> None:
    tmp = tmp_path_factory.mktemp("delta")
    base = head * (1 + scale * 150) + b"old" + tail
    target = head * (1 + scale * 150) + mid + tail * (1 + scale)
    assert _unpack_one_delta(tmp, base, target) == target


def test_delta_copies_beyond_one_instruction(tmp_path: Path) -> None:
    base = bytes(range(256)) * 1200  # 300 KB: several copy instructions each side
    target = base[:150_000] + b"inserted" * 40 + base[150_000:]
    d = delta(base, target)
    assert len(d) < 400
    assert _unpack_one_delta(tmp_path, base, target) == target


NAMES = st.sampled_from(["a", "a.b", "a-b", "a0", "b", "ab", "z", "Б"])
PATHS = st.lists(NAMES, min_size=1, max_size=3).map("/".join)
CHANGES = st.dictionaries(PATHS, st.none() | st.binary(max_size=8), max_size=6)
MODES = st.dictionaries(PATHS, st.sampled_from([0o100644, 0o100755, 0o120000]), max_size=6)


@settings(max_examples=150, deadline=None)
@given(base=st.dictionaries(PATHS, st.binary(max_size=8), max_size=8), changes=CHANGES,
       base_modes=MODES, modes=MODES)
def test_spliced_trees_are_the_trees_libgit2_builds(tmp_path_factory, base, changes,
                                                    base_modes, modes):
    """Held batches splice trees in Python; every tree must be the one TreeBuilder makes
    (same id), whatever the sort-order corner: "a" vs "a.b" vs "a/", files becoming
    folders and back, deletions that empty a folder or name nothing, modes given, kept
    (an executable edited) or defaulted."""
    tmp = tmp_path_factory.mktemp("splice")
    git(tmp, "init", "-q", "--bare", str(tmp / "r.git"))
    repo = Repo(tmp / "r.git", None)
    clean = {}
    for path, data in base.items():  # a file and a folder cannot share a path
        if not any(p != path and (p.startswith(path + "/") or path.startswith(p + "/"))
                   for p in clean):
            clean[path] = data
    start = Writer(repo).commit_changes(None, clean, "base", WHO, WHO, 1,
                                        {p: m for p, m in base_modes.items() if p in clean})
    modes = {p: m for p, m in modes.items() if changes.get(p) is not None}
    expected = Writer(repo).commit_changes(start, changes, "c", WHO, WHO, 2, modes)
    repo.hold_objects()
    got = Writer(repo).commit_changes(start, changes, "c", WHO, WHO, 2, modes)
    assert got == expected
    repo.store_held_objects()


def test_a_batch_over_the_memory_bound_spills_packs_and_reads_on(tmp_path, monkeypatch):
    from memwarden.git.heldobjects import HeldObjects

    monkeypatch.setattr(HeldObjects, "SPILL_BYTES", 20_000)
    repo = repo_with_files(tmp_path)
    tip = repo.resolve_commit("HEAD")
    repo.hold_objects()
    for i in range(60):
        text = b"".join(b"- fact %d %d\n" % (i, k) for k in range(200))  # ~3 KB a version
        tip = Writer(repo).commit_changes(tip, {f"memory/agent{i % 40}/facts.md": text},
                                          f"c{i}", WHO, WHO, 1_700_000_000 + i)
        assert repo.read_path(tip, f"memory/agent{i % 40}/facts.md") == text
    repo.store_held_objects()
    packs = list((repo.git_dir / "objects" / "pack").glob("pack-*.idx"))
    assert len(packs) > 2  # spilled on the way
    git(repo.root, "update-ref", "refs/heads/batch", tip)
    git(repo.root, "fsck", "--strict", "--full")
    assert git(repo.root, "show", "batch:memory/agent19/facts.md").startswith(b"- fact 59 0\n")
