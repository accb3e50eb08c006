"""The one door to git: pygit2 for objects, the git CLI only for transport.

No other module imports pygit2 or runs `git`. Everything here speaks repo-relative POSIX
paths and hex object ids so callers never handle pygit2 objects.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memwarden.errors import MemwardenError
from memwarden.layout import GOVERNED_FILES, GOVERNED_PREFIXES

MODE_FILE = 0o100644
MODE_EXEC = 0o100755
MODE_LINK = 0o120000
MODE_GITLINK = 0o160000
MODE_TREE = 0o040000


@dataclass(frozen=True)
class Entry:
    """A file as git sees it: path, mode and blob id (None for worktree-only oddities)."""

    path: str
    mode: int
    oid: str | None


if TYPE_CHECKING:
    import pygit2


class Repo:
    """An open repository (bare or not). pygit2 is imported only when objects are needed,
    so a pre-commit run over a few files does not pay for it."""

    def __init__(self, git_dir: Path, root: Path | None) -> None:
        self.git_dir = git_dir.resolve()
        self.root = root.resolve() if root else None
        self.is_bare = root is None

    @cached_property
    def _repo(self) -> pygit2.Repository:
        import pygit2

        try:
            return pygit2.Repository(str(self.git_dir))
        except pygit2.GitError as exc:
            raise MemwardenError(f"{self.git_dir}: cannot open git repository: {exc}") from None

    @property
    def cache_dir(self) -> Path:
        """Where memwarden keeps rebuildable caches (`.git/memwarden/`)."""
        return self.git_dir / "memwarden"

    def resolve_commit(self, rev: str) -> str:
        """The commit id `rev` names; a clear error if it names nothing."""
        import pygit2

        try:
            obj = self._repo.revparse_single(rev)
            commit = obj.peel(pygit2.Commit)
        except (KeyError, ValueError, pygit2.GitError, pygit2.InvalidSpecError):
            raise MemwardenError(f"--rev {rev}: not a commit in {self.git_dir}") from None
        return str(commit.id)

    def tree_entries(self, rev: str) -> Iterator[Entry]:
        """Every governed file in the tree of `rev` (memory/, agents/, logic/, top files)."""
        commit = self._repo.get(self.resolve_commit(rev))
        tree = commit.tree
        for obj in tree:
            name = obj.name
            if obj.filemode == MODE_TREE and f"{name}/" in GOVERNED_PREFIXES:
                yield from self._walk(obj, f"{name}/")
            elif name in GOVERNED_FILES or f"{name}/" in GOVERNED_PREFIXES:
                yield Entry(name, obj.filemode, str(obj.id))

    def _walk(self, tree: Any, prefix: str) -> Iterator[Entry]:
        for obj in tree:
            path = prefix + obj.name
            if obj.filemode == MODE_TREE:
                yield from self._walk(obj, path + "/")
            else:
                yield Entry(path, obj.filemode, str(obj.id))

    def read_blob(self, oid: str) -> bytes:
        return self._repo[oid].read_raw()

    def blob_size(self, oid: str) -> int:
        return self._repo[oid].size

    def read_path(self, rev: str, path: str) -> bytes | None:
        """The content of `path` at `rev`, or None when absent or not a blob."""
        commit = self._repo.get(self.resolve_commit(rev))
        try:
            obj = commit.tree[path]
        except KeyError:
            return None
        if obj.type_str != "blob":
            return None
        return obj.read_raw()

    def tracked_paths(self) -> tuple[set[str], set[str]]:
        """Paths in the index and every folder that holds one (never ignored by git)."""
        try:
            paths = {e.path for e in self._repo.index}
        except Exception:  # pygit2.GitError: a broken index only costs ignore lookups
            return set(), set()
        dirs: set[str] = set()
        for p in paths:
            i = p.rfind("/")
            while i > 0:
                d = p[:i]
                if d in dirs:
                    break
                dirs.add(d)
                i = p.rfind("/", 0, i)
        return paths, dirs

    def is_ignored(self, path: str) -> bool:
        try:
            return bool(self._repo.path_is_ignored(path))
        except Exception:  # pygit2.GitError
            return False


def hash_blob(data: bytes) -> str:
    """The git blob id of `data` (what `git hash-object` prints)."""
    return hashlib.sha1(b"blob %d\x00" % len(data) + data, usedforsecurity=False).hexdigest()


def _looks_like_git_dir(d: Path) -> bool:
    return (d / "HEAD").is_file() and (d / "objects").is_dir() and (d / "refs").is_dir()


def discover(start: Path) -> tuple[Path, Path | None] | None:
    """(git dir, work tree or None for bare) for the repository holding `start`."""
    d = start.absolute()
    if d.is_file():
        d = d.parent
    for cur in (d, *d.parents):
        dot = cur / ".git"
        if dot.is_dir() and _looks_like_git_dir(dot):
            return dot, cur
        if dot.is_file():
            try:
                line = dot.read_text("utf-8").strip()
            except OSError:
                return None
            if line.startswith("gitdir:"):
                target = Path(line[7:].strip())
                return (target if target.is_absolute() else cur / target), cur
        if _looks_like_git_dir(cur):
            return cur, None
    return None


def open_repo(start: Path | str = ".") -> Repo | None:
    """The repository containing `start`, or None outside any repository."""
    found = discover(Path(start))
    if found is None:
        return None
    return Repo(*found)


def worktree_entries(root: Path, repo: Repo | None) -> Iterator[Entry]:
    """Governed files in a working tree, as git would add them (ignored files skipped).

    Symlinks and nested repositories are reported with their git modes, not followed.
    Files tracked in the index are never ignored, so only untracked paths ask git.
    """
    tracked, tracked_dirs = (repo.tracked_paths() if repo is not None else (set(), set()))

    def ignored(path: str, is_dir: bool) -> bool:
        if repo is None or path in tracked or (is_dir and path in tracked_dirs):
            return False
        return repo.is_ignored(path + "/" if is_dir else path)

    base = str(root)
    for name in sorted(os.listdir(base)):
        if name in GOVERNED_FILES:
            if not ignored(name, False):
                yield Entry(name, _mode(os.lstat(os.path.join(base, name))), None)
        elif f"{name}/" in GOVERNED_PREFIXES:
            st = os.lstat(os.path.join(base, name))
            if stat.S_ISDIR(st.st_mode):
                yield from _walk_dir(base, name, ignored)
            else:
                yield Entry(name, _mode(st), None)


def _walk_dir(base: str, rel: str, ignored: Callable[[str, bool], bool]) -> Iterator[Entry]:
    try:
        with os.scandir(os.path.join(base, rel)) as it:
            items = sorted(it, key=lambda d: d.name)
    except OSError:
        return
    for d in items:
        path = f"{rel}/{d.name}"
        if d.is_symlink():
            if not ignored(path, False):
                yield Entry(path, MODE_LINK, None)
        elif d.is_dir():
            if d.name == ".git" or ignored(path, True):
                continue
            if os.path.exists(os.path.join(d.path, ".git")):
                yield Entry(path, MODE_GITLINK, None)
            else:
                yield from _walk_dir(base, path, ignored)
        elif not ignored(path, False):
            yield Entry(path, _mode(d.stat(follow_symlinks=False)), None)


def _mode(st: os.stat_result) -> int:
    if stat.S_ISLNK(st.st_mode):
        return MODE_LINK
    if stat.S_ISREG(st.st_mode):
        return MODE_EXEC if st.st_mode & 0o111 else MODE_FILE
    return 0
