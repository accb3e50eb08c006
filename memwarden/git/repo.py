"""The one door to git: pygit2 for objects, the git CLI only for transport.

No other module imports pygit2 or runs `git`. Everything here speaks repo-relative POSIX
paths and hex object ids so callers never handle pygit2 objects.
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
import stat
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path  # imported where a Path is made: a hook run does without it
from typing import TYPE_CHECKING, Any, NamedTuple

from memwarden.git.files import (  # noqa: F401 - re-exported: memwarden.git.repo is the door to git
    MODE_BLOBS,
    MODE_EXEC,
    MODE_FILE,
    MODE_GITLINK,
    MODE_LINK,
    MODE_TREE,
    Entry,
    common_prefix,
    common_suffix,
    file_mode,
    hash_blob,
    locate,
    looks_like_git_dir,
)
from memwarden.model.errors import MemwardenError
from memwarden.model.layout import GOVERNED_FILES, GOVERNED_PREFIXES, is_governed

if TYPE_CHECKING:  # pygit2 is heavy to import: only the functions that need it import it
    import pygit2

# pygit2 (1.21) keeps a reference to the path string of every Tree or References lookup
# for good; one interned string per path keeps that to the paths there are, not lookups.
_key = sys.intern

# one entry of a raw tree object: mode, name, 20-byte object id
_BLOB_MODES = tuple(f"{m:06o}".encode() for m in MODE_BLOBS)
_TREE_ENTRY = re.compile(rb"([0-7]+) ([^\0]*)\0(.{20})", re.DOTALL)


def _tree_entries(raw: bytes, start: int, stop: int | None = None
                  ) -> tuple[dict[bytes, tuple[bytes, bytes]], int]:
    """name -> (mode, id) of the entries from offset `start` until one ends at or past
    `stop` (None: the end), and the offset where parsing stopped."""
    out: dict[bytes, tuple[bytes, bytes]] = {}
    end = len(raw) if stop is None else stop
    pos = start
    while pos < end:
        m = _TREE_ENTRY.match(raw, pos)
        if m is None:
            raise MemwardenError(f"corrupt tree object (entry at byte {pos})")
        out[m[2]] = (m[1], m[3])
        pos = m.end()
    return out, pos


def checked_entries(raw: bytes) -> tuple[dict[bytes, tuple[bytes, bytes]], str | None]:
    """A raw tree object's entries (name -> (mode, id)) and why git's own fsck refuses it,
    or None: a name twice, or entries out of git's order (by name, a folder's name taken
    with a "/" after it). Lookups in such a tree disagree: libgit2's binary search misses
    entries, git and a scan of the entries pick different ones of two alike names."""
    out: dict[bytes, tuple[bytes, bytes]] = {}
    last = b""
    pos = 0
    while pos < len(raw):
        m = _TREE_ENTRY.match(raw, pos)
        if m is None:
            return out, f"a corrupt entry at byte {pos}"
        name = m[2]
        if name in out:
            return out, f"the name {name.decode('utf-8', 'replace')!r} twice"
        key = name + b"/" if m[1] == b"40000" else name
        if key < last:
            return out, f"entries out of git's order at {name.decode('utf-8', 'replace')!r}"
        out[name] = (m[1], m[3])
        last = key
        pos = m.end()
    return out, None


def _middle_entries(a: tuple[bytes, list[int] | None], rb: bytes
                    ) -> tuple[dict[bytes, tuple[bytes, bytes]], dict[bytes, tuple[bytes, bytes]]]:
    """The entries of two versions of a tree outside their common byte prefix and suffix,
    where every entry is identical. Entry boundaries come from `a`'s offsets; `b` is
    parsed only across the middle (and to its end if the suffix does not fall on one of
    its entry boundaries)."""
    import bisect

    ra, offs = a[0], a[1] or []
    p = common_prefix(ra, rb, min(len(ra), len(rb)))
    s = common_suffix(ra, rb, min(len(ra), len(rb)) - p)
    start = offs[bisect.bisect_right(offs, p) - 1] if offs and offs[0] <= p else 0
    j = bisect.bisect_left(offs, len(ra) - s)
    end_a = offs[j] if j < len(offs) else len(ra)
    end_b = len(rb) - (len(ra) - end_a)
    eb, pos = _tree_entries(rb, start, end_b)
    if pos != end_b:  # the shared tail is not entry-aligned in b: read both to the end
        eb.update(_tree_entries(rb, pos)[0])
        end_a = len(ra)
    return _tree_entries(ra, start, end_a)[0], eb


class _Written(NamedTuple):
    """A commit this process wrote: walks of main's history read it from memory."""

    parent: str | None
    time: int
    paths: frozenset[str]
    message: bytes


class Repo:
    """An open repository (bare or not). pygit2 is imported only when objects are needed,
    so a pre-commit run over a few files does not pay for it."""

    def __init__(self, git_dir: Path, root: Path | None) -> None:
        self.git_dir = git_dir.resolve()
        self.root = root.resolve() if root else None
        self.is_bare = root is None
        self._changed: dict[tuple[str | None, str], list[str]] = {}  # commits never change
        self._trees: dict[str, tuple[bytes, list[int] | None]] = {}  # id -> raw, offsets
        # paths each commit written in this process changed (Writer knows them): history
        # walks skip tree lookups on the commits that left a path alone
        self._written: dict[str, _Written] = {}
        self._held: Any = None  # heldobjects.HeldObjects, once a batch held objects
        self._commits: dict[str, str] = {}  # full commit id -> itself, once checked
        self._blobs: dict[str, bytes] = {}  # recently read blobs (objects never change)
        self._blob_bytes = 0

    @functools.cached_property
    def _repo(self) -> pygit2.Repository:
        import pygit2

        try:
            repo = pygit2.Repository(str(self.git_dir))
        except pygit2.GitError as exc:
            raise MemwardenError(f"{self.git_dir}: cannot open git repository: {exc}") from None
        # libgit2 caches no tree over 4 KiB by default, and memory/ in a repository of many
        # agents is far larger: every path lookup and tree diff would inflate and parse it
        # again (5x slower lookups at 1,000 agents). Commits and trees are small; keep them.
        for kind in (pygit2.enums.ObjectType.TREE, pygit2.enums.ObjectType.COMMIT):
            pygit2.settings.cache_object_limit(kind, 4 << 20)
        # Inside a pre-receive hook the pushed objects sit in a quarantine directory that
        # git names in the environment; libgit2 does not read it on its own.
        for var in ("GIT_OBJECT_DIRECTORY", "GIT_QUARANTINE_PATH"):
            extra = os.environ.get(var)
            if extra and os.path.isdir(extra):
                repo.odb.add_disk_alternate(extra)
        return repo

    # -- objects held in memory during a batch (memwarden/heldobjects.py) ----------------

    def hold_objects(self) -> None:
        """From now on new objects stay in memory (readable as usual) until
        `store_held_objects()` writes them as one pack, or `drop_held_objects()`. No ref may
        point at a held object before it is stored."""
        if self._held is None:
            from memwarden.git.heldobjects import HeldObjects

            self._held = HeldObjects(self.objects_dir())
            self._repo.odb.add_backend(self._held, 1000)  # asked first: above pack, loose
        self._held.hold()

    def store_held_objects(self) -> None:
        if self._held is not None:
            self._held.store()

    def drop_held_objects(self) -> None:
        if self._held is not None:
            self._held.drop()

    def _holding(self) -> Any:
        return self._held if self._held is not None and self._held.holding else None

    def objects_dir(self) -> Path:
        """Where this repository's objects live (a linked worktree's are in the common
        git dir)."""
        env = os.environ.get("GIT_OBJECT_DIRECTORY")
        if env:
            from pathlib import Path

            return Path(env)
        common = self.git_dir / "commondir"
        if common.is_file():
            return (self.git_dir / common.read_text().strip()).resolve() / "objects"
        return self.git_dir / "objects"

    @property
    def cache_dir(self) -> Path:
        """Where memwarden keeps rebuildable caches (`.git/memwarden/`)."""
        return self.git_dir / "memwarden"

    def resolve_commit(self, rev: str) -> str:
        """The commit id `rev` names; a clear error if it names nothing."""
        known = self._commits.get(rev)  # a full id checked before: ids never change
        if known is not None:
            return known
        import pygit2

        try:
            obj = self._repo.revparse_single(rev)
            commit = obj.peel(pygit2.Commit)
        except (KeyError, ValueError, pygit2.GitError, pygit2.InvalidSpecError):
            raise MemwardenError(f"{rev}: no such branch or commit") from None
        sha = str(commit.id)
        if rev == sha:
            self._commits[sha] = sha
        return sha

    def tree_entries(self, rev: str, everything: bool = False) -> Iterator[Entry]:
        """Every governed file in the tree of `rev` (memory/, agents/, logic/, top files);
        with `everything`, every file."""
        commit = self._repo.get(self.resolve_commit(rev))
        tree = commit.tree
        if everything:
            yield from self._walk(tree, "")
            return
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
        data = self._blobs.get(oid)
        return data if data is not None else self._blob(self._repo[oid])

    def blob_size(self, oid: str) -> int:
        data = self._blobs.get(oid)
        return len(data) if data is not None else self._repo.odb.read_header(oid)[1]

    def _object_at(self, rev: str, path: str) -> Any:
        """The tree entry's object at `path` in commit `rev`, or None when absent."""
        try:
            return self._repo.get(self.resolve_commit(rev)).tree[_key(path)]
        except KeyError:
            return None

    def read_path(self, rev: str, path: str) -> bytes | None:
        """The content of `path` at `rev`, or None when absent or not a blob."""
        obj = self._object_at(rev, path)
        if obj is None or obj.type_str != "blob":
            return None
        return self._blob(obj)

    _BLOB_MEMO_BYTES = 64 << 20

    def _blob(self, obj: Any) -> bytes:
        """A blob's bytes, remembered for a while: planning a proposal reads the same
        files at the same commits for the gate, the eviction and the bookkeeping."""
        oid = str(obj.id)
        data = self._blobs.get(oid)
        if data is None:
            data = obj.read_raw()
            if self._blob_bytes + len(data) > self._BLOB_MEMO_BYTES:
                self._blobs.clear()
                self._blob_bytes = 0
            self._blobs[oid] = data
            self._blob_bytes += len(data)
        return data

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

    def staged_paths(self, index_file: str | None = None) -> list[str]:
        """Governed paths whose staged state differs from HEAD.

        `index_file` is the index git is committing ($GIT_INDEX_FILE inside hooks: a
        temporary index for `commit -a` / `commit <path>`); None means the repo's index.
        Asked of git itself (`diff --cached`): git's semantics exactly, with no pygit2
        import on the commit-msg path.
        """
        env = {"GIT_DIR": str(self.git_dir)}
        if self.root is not None:
            env["GIT_WORK_TREE"] = str(self.root)
        if index_file:
            env["GIT_INDEX_FILE"] = index_file
        out = git_cli(["diff", "--cached", "--name-only", "-z", "--no-renames",
                       "--no-ext-diff"], self.root or self.git_dir, env)
        return sorted(p for p in out.split("\0") if p and is_governed(p))

    def commit_info(self, rev: str) -> dict[str, Any]:
        """Message, parents, author/committer and governed paths changed vs first parent."""
        commit = self._repo.get(self.resolve_commit(rev))
        parents = [str(p) for p in commit.parent_ids]
        return {
            "id": str(commit.id),
            "parents": parents,
            "raw_message": commit.raw_message,
            "author": (commit.author.name, commit.author.email, commit.author.time),
            "committer": (commit.committer.name, commit.committer.email, commit.committer.time),
            "touched": self.changed_paths(parents[0] if parents else None, str(commit.id)),
        }

    def subtree_id(self, rev: str, path: str) -> str | None:
        """The id of the tree (or blob) at `path` in commit `rev` (None: absent). Equal ids
        mean identical content, without diffing."""
        obj = self._object_at(rev, path)
        return str(obj.id) if obj is not None else None

    def changed_paths(self, old: str | None, new: str) -> list[str]:
        """Paths whose content or mode differ between two commits (old None: empty tree).

        A tree diff: identical subtrees are skipped by id, so this is cheap even in large
        repositories. Renames count as a deletion plus an addition.
        """
        key = (self.resolve_commit(old) if old is not None else None, self.resolve_commit(new))
        if key in self._changed:
            return list(self._changed[key])
        if len(self._changed) > 4096:
            self._changed.clear()
        self._changed[key] = paths = self._diff_paths(*key)
        return list(paths)

    def _diff_paths(self, old: str | None, new: str) -> list[str]:
        out: set[str] = set()
        self._diff_trees(str(self._repo.get(old).tree_id) if old is not None else None,
                         str(self._repo.get(new).tree_id), "", out)
        return sorted(out)

    def _tree(self, oid: str, offsets: bool = True) -> tuple[bytes, list[int] | None]:
        """A tree object's raw bytes and (when asked) the offset of each entry, remembered
        by id: a batch diffs its proposals against the same base folder again and again."""
        got = self._trees.get(oid)
        if got is None:
            if len(self._trees) > 512:
                self._trees.clear()
            got = self._trees[oid] = (self._repo[oid].read_raw(), None)
        if offsets and got[1] is None:
            got = self._trees[oid] = (got[0], [m.start() for m in
                                               _TREE_ENTRY.finditer(got[0])])
        return got

    def _diff_trees(self, a: str | None, b: str | None, prefix: str, out: set[str]) -> None:
        """Add to `out` every path below `prefix` whose blob or mode differs between trees
        `a` and `b` (None: absent). libgit2's tree diff walks a whole large memory/
        folder; here equal subtrees are skipped by id and a changed folder is compared
        only outside the bytes both versions share."""
        if a == b:
            return
        if a is None or b is None:
            ea: dict[bytes, tuple[bytes, bytes]] = {}
            eb = _tree_entries(self._tree(b or a or "", offsets=False)[0], 0)[0]
            if b is None:
                ea, eb = eb, ea
        else:
            ea, eb = _middle_entries(self._tree(a), self._tree(b, offsets=False)[0])
        for name in ea.keys() | eb.keys():
            ma, oa = ea.get(name, (b"", b""))
            mb, ob = eb.get(name, (b"", b""))
            if ma == mb and oa == ob:
                continue
            path = prefix + name.decode("utf-8", "replace")
            ta, tb = ma == b"40000", mb == b"40000"
            if ta or tb:
                self._diff_trees(oa.hex() if ta else None, ob.hex() if tb else None,
                                 path + "/", out)
            if (ma and not ta) or (mb and not tb):
                out.add(path)

    def tree_problems(self, old: str | None, new: str, paths: list[str]
                      ) -> list[tuple[str, str]]:
        """(path, why) for what commit `new` cannot be trusted to show against `old` (None:
        no parent): each of `paths` (as changed_paths names them) whose name is not UTF-8
        (read with U+FFFD, no lookup finds it), and each folder that changed into a tree
        git's fsck refuses (see checked_entries; a changed file may hide in it unseen). A
        check that skipped such a file as absent would pass a file nobody checked."""
        out = [(p, "a file name that is not UTF-8") for p in paths if "\ufffd" in p]
        old_tree = str(self._repo.get(self.resolve_commit(old)).tree_id) if old else None
        stack = [(old_tree, str(self._repo.get(self.resolve_commit(new)).tree_id), "")]
        while stack:
            a, b, prefix = stack.pop()
            if a == b:
                continue
            eb, why = checked_entries(self._tree(b, offsets=False)[0])
            if why is not None:
                out.append((prefix.rstrip("/") or ".", f"a malformed tree ({why})"))
                continue
            ea = _tree_entries(self._tree(a, offsets=False)[0], 0)[0] if a else {}
            for name, (mode, oid) in eb.items():
                was = ea.get(name)
                if mode == b"40000" and (was is None or was[1] != oid):
                    stack.append((was[1].hex() if was is not None and was[0] == b"40000"
                                  else None, oid.hex(),
                                  prefix + name.decode("utf-8", "replace") + "/"))
        return out

    def new_commits(self, new: str, old: str | None = None) -> list[str]:
        """Commits reachable from `new` that no existing branch or tag (or `old`) reaches:
        what a push brings in. Oldest first."""
        import pygit2

        walker = self._repo.walk(self.resolve_commit(new), pygit2.enums.SortMode.TOPOLOGICAL |
                                 pygit2.enums.SortMode.REVERSE)
        for name in self._repo.references:
            if name.startswith(("refs/heads/", "refs/tags/")):
                try:
                    target = self._repo.references[name].peel(pygit2.Commit)
                except (pygit2.GitError, ValueError, KeyError):
                    continue
                walker.hide(target.id)
        if old:
            walker.hide(self.resolve_commit(old))
        return [str(c.id) for c in walker]

    def ref_target(self, ref: str) -> str | None:
        try:
            return str(self._repo.references[_key(ref)].peel().id)
        except (KeyError, ValueError):
            return None

    def merge_base(self, a: str, b: str) -> str | None:
        base = self._repo.merge_base(self.resolve_commit(a), self.resolve_commit(b))
        return str(base) if base else None

    def first_parent_log(self, rev: str, limit: int = 100_000) -> Iterator[tuple[str, bytes]]:
        """(commit id, raw message) along first parents of `rev`, newest first."""
        for sha, w, c in self._walk_first_parents(rev, limit):
            yield sha, w.message if w is not None else c.raw_message

    def _first_parents(self, rev: str) -> Iterator[tuple[str, int, frozenset[str] | None]]:
        """(commit id, commit time, the paths it changed when this process wrote it, else
        None) along first parents, newest first."""
        for sha, w, c in self._walk_first_parents(rev):
            yield (sha, w.time, w.paths) if w is not None else (sha, int(c.commit_time), None)

    def _walk_first_parents(self, rev: str, limit: int = 10**9
                            ) -> Iterator[tuple[str, _Written | None, Any]]:
        """(commit id, what this process recorded writing it, else the libgit2 commit)
        along first parents, newest first. A batch of apply writes hundreds of commits and
        then walks back through them per eviction: those steps come from memory."""
        import pygit2

        sha, n = self.resolve_commit(rev), 0
        while sha in self._written and n < limit:
            w = self._written[sha]
            yield sha, w, None
            sha, n = w.parent, n + 1
        # first parents form a chain: no sort needed, and a topological sort would read
        # the whole history before yielding the first commit
        walker = self._repo.walk(sha, pygit2.enums.SortMode.NONE)
        walker.simplify_first_parent()
        for c in walker:
            if n >= limit:
                return
            n += 1
            yield str(c.id), None, c

    def first_parent_changes(self, commits: list[str]
                             ) -> dict[str, list[tuple[str, str | None, str | None]]]:
        """For each of `commits`: (path, old blob id, new blob id) of every file that differs
        from its first parent (None: absent or not a blob; a root commit against the empty
        tree), from ONE `git diff-tree --stdin` run: git's tree diff in C, for summarising
        long histories (a Python tree diff per commit of a large memory/ folder adds up)."""
        import subprocess

        if not commits:
            return {}
        try:
            proc = subprocess.run(
                ["git", "diff-tree", "--stdin", "-r", "-m", "--raw", "--no-abbrev", "--root",
                 "--always", "--no-renames", "-z"], cwd=self.git_dir, env=clean_env(),
                input="".join(f"{c}\n" for c in commits).encode(), capture_output=True)
        except OSError as exc:
            raise MemwardenError(f"cannot run git ({exc.strerror}); is git installed?") from None
        if proc.returncode != 0:
            err = proc.stderr.decode("utf-8", "replace").strip()
            raise MemwardenError(f"git diff-tree failed: {err}")
        out: dict[str, list[tuple[str, str | None, str | None]]] = {}
        current: list[tuple[str, str | None, str | None]] | None = None
        fields = proc.stdout.split(b"\0")
        i = 0
        while i < len(fields):
            field = fields[i]
            if field.startswith(b":"):
                mode_a, mode_b, old, new = field[1:].split(b" ")[:4]
                path = fields[i + 1].decode("utf-8", "surrogateescape")
                i += 2
                if current is not None:
                    current.append((path, old.decode() if mode_a in _BLOB_MODES else None,
                                    new.decode() if mode_b in _BLOB_MODES else None))
                continue
            sha = field.strip().decode()
            i += 1
            if not sha:
                continue
            # -m repeats a merge's header per parent: the first block is the first parent's
            current = None if sha in out else out.setdefault(sha, [])
        return out

    def refs(self, prefix: str) -> list[str]:
        return sorted(r for r in self._repo.references if r.startswith(prefix))

    def commit_time(self, rev: str) -> int:
        return int(self._repo.get(self.resolve_commit(rev)).commit_time)

    def commit_message(self, rev: str) -> bytes:
        """The raw message of commit `rev` (commit_info without its tree diff)."""
        return self._repo.get(self.resolve_commit(rev)).raw_message

    def author_of(self, rev: str) -> tuple[str, str]:
        c = self._repo.get(self.resolve_commit(rev))
        return c.author.name, c.author.email

    def compare_and_swap(self, ref: str, new: str, old: str) -> bool:
        """Move `ref` to `new` only if it still points at `old` (git update-ref's CAS).
        False when it moved; a lock file left by a killed git is an error naming it."""
        try:
            git_cli(["update-ref", "-m", "memwarden apply", ref, new, old],
                    self.root or self.git_dir, {"GIT_DIR": str(self.git_dir)})
        except MemwardenError as exc:
            if ".lock': File exists" in str(exc):
                lock = str(exc).split("Unable to create '", 1)[-1].split("'", 1)[0]
                raise MemwardenError(
                    f"{lock} exists: another git process is running, or one was killed and "
                    "left its lock behind; if no git process is running, delete the lock "
                    "file and re-run") from None
            return False
        return True

    def delete_ref(self, ref: str, old: str) -> bool:
        """Delete `ref` only if it still points at `old`."""
        try:
            git_cli(["update-ref", "-d", ref, old], self.root or self.git_dir,
                    {"GIT_DIR": str(self.git_dir)})
        except MemwardenError:
            return False
        return True

    def line_times(self, rev: str, path: str, depth: int = 50) -> list[int]:
        """Commit time of the last change of every line of `path` at `rev`, along first
        parents (main's history is linear): like `git blame --first-parent`, with difflib
        matching lines between the versions of the file. libgit2's blame re-diffs every
        commit; this reads one tree entry per
        commit and diffs only the versions where the file changed."""
        import difflib

        r = self._repo
        versions: list[tuple[int, str]] = []  # (commit time, blob id), newest first
        last_blob: str | None = None
        last_time = 0
        child_kept = False  # the commit after this one is known not to have changed `path`
        for n, (sha, when, changed) in enumerate(self._first_parents(rev)):
            if child_kept and n < depth:
                last_time = when  # same blob as its child: no lookup
                child_kept = changed is not None and path not in changed
                continue
            try:
                blob: str | None = str(r.get(sha).tree[_key(path)].id)
            except KeyError:
                blob = None
            child_kept = changed is not None and path not in changed
            if blob != last_blob and last_blob is not None:
                versions.append((last_time, last_blob))  # introduced by the commit after
            if blob is None or n >= depth:
                break
            last_blob, last_time = blob, when
        if last_blob is not None and (not versions or versions[-1][1] != last_blob):
            versions.append((last_time, last_blob))
        times: list[int] = []
        lines: list[bytes] = []
        for when, blob in reversed(versions):  # oldest first
            new = r[blob].read_raw().splitlines()
            out = [when] * len(new)
            if lines:
                sm = difflib.SequenceMatcher(None, lines, new, autojunk=False)
                for tag, i1, i2, j1, j2 in sm.get_opcodes():
                    if tag == "equal":
                        out[j1:j2] = times[i1:i2]
            times, lines = out, new
        return times

    def push_with_lease(self, remote: str, commit: str, ref: str, expected: str | None) -> bool:
        """Push `commit` to `ref` on `remote` only if the remote still has `expected` there
        (None: the ref must not exist; commit "": delete the ref). False when the remote
        moved (stale lease, non-fast-forward, lost the ref-lock race); a refusal by a hook
        or any other failure raises with git's words."""
        return self.push_refs(remote, {ref: (commit, expected)}, atomic=False)

    def push_refs(self, remote: str, updates: dict[str, tuple[str, str | None]],
                  atomic: bool = True) -> bool:
        """Push many refs in one connection, each `ref: (commit, expected)` with its own
        lease; `atomic`: all or none. Same outcomes as push_with_lease."""
        import shutil
        import subprocess

        leases = [f"--force-with-lease={ref}:{exp or ''}" for ref, (_, exp) in updates.items()]
        specs = [f"{new}:{ref}" for ref, (new, _) in updates.items()]
        bare = self._refless_twin() if len(updates) >= REFLESS_PUSH_MIN else None
        env = {**clean_env(), "GIT_DIR": str(bare or self.git_dir)}
        try:
            proc = subprocess.run(["git", "push", "--porcelain",
                                   *(["--atomic"] if atomic else []), *leases, remote, *specs],
                                  cwd=self.root or self.git_dir, env=env, capture_output=True)
        finally:
            if bare is not None:
                shutil.rmtree(bare, ignore_errors=True)
        if proc.returncode == 0:
            return True
        said = (proc.stdout + proc.stderr).decode("utf-8", "replace")
        if "hook declined" not in said and any(w in said for w in (
                "stale info", "non-fast-forward", "fetch first", "cannot lock ref",
                "but expected", "atomic push failed")):
            return False
        lines = [ln.removeprefix("remote: ").strip() for ln in said.splitlines()
                 if ln.strip() and not ln.startswith(("To ", "Done"))]
        names = ", ".join(list(updates)[:3]) + (" ..." if len(updates) > 3 else "")
        raise MemwardenError(f"git push to {remote} refused {names}: " + " | ".join(lines[-6:]))

    def _refless_twin(self) -> Path:
        """A throwaway git dir with this repository's objects (an alternate) and config (an
        include: remotes, credentials, URL rewrites) and hooks, but no refs. `git push`
        matches every refspec against every local ref (O(specs x refs)): a batch pushing
        many proposal branches from a clone that has them all is quadratic there."""
        import shutil
        import tempfile
        from pathlib import Path

        base = self.cache_dir
        base.mkdir(parents=True, exist_ok=True)
        for old in base.glob("push-*"):  # left by a killed run
            try:
                if old.stat().st_mtime < time.time() - 3600:
                    shutil.rmtree(old, ignore_errors=True)
            except OSError:
                pass
        twin = Path(tempfile.mkdtemp(prefix="push-", dir=base))
        (twin / "refs").mkdir()
        (twin / "objects" / "info").mkdir(parents=True)
        (twin / "objects" / "pack").mkdir()
        (twin / "HEAD").write_text("ref: refs/heads/main\n")
        (twin / "objects" / "info" / "alternates").write_text(f"{self.objects_dir()}\n")
        common = self.objects_dir().parent
        hooks = git_cli(["rev-parse", "--path-format=absolute", "--git-path", "hooks"],
                        self.root or self.git_dir, {"GIT_DIR": str(self.git_dir)}).strip()
        lines = ["[include]", f"\tpath = {_config_quote(common / 'config')}"]
        if (self.git_dir / "config.worktree").is_file():
            lines.append(f"\tpath = {_config_quote(self.git_dir / 'config.worktree')}")
        lines += ["[core]", f"\thooksPath = {_config_quote(Path(hooks))}"]
        (twin / "config").write_text("\n".join(lines) + "\n")
        return twin

    def remote_refs(self, remote: str, pattern: str) -> dict[str, str]:
        """What `remote` has under `pattern` (git ls-remote), ref -> commit."""
        out = git_cli(["ls-remote", remote, pattern], self.root or self.git_dir,
                      {"GIT_DIR": str(self.git_dir)})
        refs = {}
        for line in out.splitlines():
            sha, _, ref = line.partition("\t")
            if ref:
                refs[ref] = sha
        return refs

    def fetch_ref(self, remote: str, ref: str) -> str | None:
        """The commit `ref` points at on `remote` now (fetched; None if it does not exist)."""
        try:
            git_cli(["fetch", "--quiet", remote, f"+{ref}:refs/memwarden/fetched"],
                    self.root or self.git_dir, {"GIT_DIR": str(self.git_dir)})
        except MemwardenError:
            return None
        return self.ref_target("refs/memwarden/fetched")

    def head_branch(self) -> str | None:
        """The branch checked out in this work tree (None: bare or detached)."""
        if self.root is None:
            return None
        try:
            return self._repo.head.name if not self._repo.head_is_detached else None
        except Exception:  # unborn or broken HEAD
            return None

    @functools.cached_property
    def _worktree_listing(self) -> str:
        """`git worktree list --porcelain -z`, read once: work trees do not come and go
        during a run ("" when git cannot tell)."""
        try:
            return git_cli(["worktree", "list", "--porcelain", "-z"], self.root or self.git_dir)
        except MemwardenError:
            return ""

    def checked_out_elsewhere(self, branch_ref: str) -> str | None:
        """The path of another work tree of this repository that has `branch_ref` checked
        out (its files would not follow a move of the branch made here), or None."""
        path = None
        for field in self._worktree_listing.split("\0"):
            if field.startswith("worktree "):
                path = field[len("worktree "):]
            elif field == f"branch {branch_ref}" and path is not None and (
                    self.root is None or Path(path).resolve() != self.root):
                return path
        return None

    def _worktree_git(self) -> tuple[Path, dict[str, str]]:
        return self.root or self.git_dir, {"GIT_DIR": str(self.git_dir),
                                           "GIT_WORK_TREE": str(self.root)}

    def _refresh_index(self) -> None:
        cwd, env = self._worktree_git()
        try:  # a stat-only change (touch, cache restore) is not an edit: refresh first
            git_cli(["update-index", "-q", "--refresh"], cwd, env)
        except MemwardenError:
            pass  # exits 1 when files really differ; read-tree then decides

    def sync_worktree(self, old: str, new: str) -> bool:
        """After the checked-out branch moved old -> new, fast-forward index and files the
        way `git merge --ff-only` does; False (nothing touched) if local edits would be
        overwritten."""
        cwd, env = self._worktree_git()
        self._refresh_index()
        try:
            git_cli(["read-tree", "-m", "-u", old, new], cwd, env)
        except MemwardenError:
            return False
        return True

    def local_edits(self, rev: str, paths: list[str] | None = None) -> set[str] | None:
        """The paths (of `paths`, or all) whose index entry or file differs from commit
        `rev`, and the untracked files there that are not ignored: what moving index and
        files on from `rev` could overwrite (git overwrites ignored files). A file only
        touched may be listed too; None when git cannot tell."""
        if paths == []:
            return set()
        cwd, env = self._worktree_git()
        if paths is None:
            self._refresh_index()  # else every file only touched would be listed
        env = {**env, "GIT_LITERAL_PATHSPECS": "1"}
        spec = ["--", *paths] if paths is not None else []
        out: set[str] = set()
        try:
            for args in (["diff-index", "--name-only", "-z", rev],
                         ["ls-files", "-z", "--others", "--exclude-standard"]):
                out.update(p for p in git_cli([*args, *spec], cwd, env).split("\0") if p)
        except MemwardenError:
            return None
        return out

    def worktree_blockers(self, old: str, new: str) -> list[str]:
        """What stops index and files at `old` from following to `new` (sync_worktree):
        [] when nothing does, else the paths with local edits (staged, unstaged, or an
        untracked file in the way) that the move would change. git decides, by a dry run
        of the same `git read-tree -m -u`; the paths are then named for the user."""
        cwd, env = self._worktree_git()
        self._refresh_index()
        try:
            git_cli(["read-tree", "-n", "-m", "-u", old, new], cwd, env)
            return []
        except MemwardenError as exc:
            refusal = str(exc)
        named = self.local_edits(old, self.changed_paths(old, new)) or set()
        # a folder/file clash names no changed path itself: git's own words then
        return sorted(named) or sorted(set(re.findall(r"'([^']+)'", refusal))) or [refusal]

    def catch_up_worktree(self, branch_ref: str, depth: int = 20_000) -> str:
        """If the checked-out `branch_ref` moved but index and files stayed at one of its
        recent commits (a process killed between the two steps), fast-forward them; never
        when anything is edited. Returns that commit when local edits stop them from
        following, else "" (caught up, or nothing to catch up)."""
        if self.root is None or self.head_branch() != branch_ref:
            return ""
        tip = self.ref_target(branch_ref)
        cwd, env = self._worktree_git()
        try:
            index_tree = git_cli(["write-tree"], cwd, env).strip()
        except MemwardenError:
            return ""  # unmerged entries: a human is in the middle of something
        if tip is None or str(self._repo.get(tip).tree.id) == index_tree:
            return ""
        for sha, _ in self.first_parent_log(tip, depth):
            if str(self._repo.get(sha).tree.id) == index_tree:
                return "" if self.sync_worktree(sha, tip) else sha
        return ""

    def merge_file(self, path: str, base: Entry | None, ours: Entry | None,
                   theirs: Entry | None) -> bytes | None:
        """Three-way merge of one file's blobs (None: absent on that side), as
        `git merge-file` does: the merged bytes, or None when the changes overlap. Text
        only: a blob that is not UTF-8 or holds a NUL counts as a conflict (libgit2 hands
        the result back as UTF-8 text, cut at the first NUL)."""
        import pygit2

        sides = []
        for entry in (base, ours, theirs):
            if entry is not None:
                data = self.read_blob(entry.oid)
                try:
                    data.decode("utf-8")
                except UnicodeDecodeError:
                    return None
                if b"\0" in data:
                    return None
            sides.append(None if entry is None else
                         pygit2.IndexEntry(path, pygit2.Oid(hex=entry.oid), entry.mode))
        result = self._repo.merge_file_from_index(*sides)
        return result.contents.encode("utf-8") if result.automergeable else None

    def is_ancestor(self, ancestor: str, descendant: str) -> bool:
        a, d = self.resolve_commit(ancestor), self.resolve_commit(descendant)
        return a == d or bool(self._repo.descendant_of(d, a))

    def folder_id(self, rev: str, path: str) -> str | None:
        """The tree id of folder `path` in `rev`'s tree, None when it is not a folder."""
        obj = self._object_at(rev, path)
        return str(obj.id) if obj is not None and obj.filemode == MODE_TREE else None

    def has_folder(self, rev: str, path: str) -> bool:
        """True when `path` is a folder (a tree) in `rev`'s tree."""
        return self.folder_id(rev, path) is not None

    def entry_at(self, rev: str, path: str) -> Entry | None:
        """One path of a committed tree, looked up directly (no walk)."""
        obj = self._object_at(rev, path)
        if obj is None or obj.filemode == MODE_TREE:
            return None
        return Entry(path, obj.filemode, str(obj.id))

    def rev_list(self, revision_range: str) -> list[str]:
        """Commits of `A..B` (or of B's whole history), oldest first, like git rev-list."""
        import pygit2

        if ".." in revision_range:
            a, b = revision_range.split("..", 1)
            if b.startswith("."):
                raise MemwardenError(f"{revision_range}: A...B ranges are not supported; "
                                     "use A..B")
            start, stop = self.resolve_commit(b or "HEAD"), (self.resolve_commit(a) if a else None)
        else:
            start, stop = self.resolve_commit(revision_range), None
        walker = self._repo.walk(start, pygit2.enums.SortMode.TOPOLOGICAL |
                                 pygit2.enums.SortMode.REVERSE)
        if stop is not None:
            walker.hide(stop)
        return [str(c.id) for c in walker]

    def is_ignored(self, path: str) -> bool:
        try:
            return bool(self._repo.path_is_ignored(path))
        except Exception:  # pygit2.GitError
            return False


def limit_object_cache(size: int) -> None:
    """Cap libgit2's process-wide object cache (256 MiB by default) for long-lived
    processes such as `memwarden serve`."""
    import pygit2

    pygit2.settings.cache_max_size(size)


def open_repo(start: Path | str = ".") -> Repo | None:
    """The repository containing `start`, or None outside any repository."""
    from pathlib import Path

    found = locate(start)
    if found is None:
        return None
    git_dir, root = found
    return Repo(Path(git_dir), Path(root) if root is not None else None)


def worktree_entries(root: Path, repo: Repo | None) -> Iterator[Entry]:
    """Governed files in a working tree, as git would add them (ignored files skipped).

    Symlinks and nested repositories are reported with their git modes, not followed.
    Files tracked in the index are never ignored, so only untracked paths ask git.
    """
    if repo is not None and repo.root is not None:
        listed = git_listed(repo)
        if listed is not None:
            yield from _entries_from_list(root, listed)
            return
    tracked, tracked_dirs = (repo.tracked_paths() if repo is not None else (set(), set()))

    def ignored(path: str, is_dir: bool) -> bool:
        if repo is None or path in tracked or (is_dir and path in tracked_dirs):
            return False
        return repo.is_ignored(path + "/" if is_dir else path)

    base = str(root)
    for name in sorted(os.listdir(base)):
        if name in GOVERNED_FILES:
            if not ignored(name, False):
                yield Entry(name, file_mode(os.lstat(os.path.join(base, name))), None)
        elif f"{name}/" in GOVERNED_PREFIXES:
            st = os.lstat(os.path.join(base, name))
            if stat.S_ISDIR(st.st_mode):
                yield from _walk_dir(base, name, ignored)
            else:
                yield Entry(name, file_mode(st), None)


def git_listed(repo: Repo) -> list[str] | None:
    """Governed paths git would add (tracked, plus untracked not ignored), from git itself:
    its ignore rules exactly, and ~10x faster than walking in Python. None if git fails."""
    try:
        out = git_cli(["ls-files", "-z", "--cached", "--others", "--exclude-standard", "--",
                       *[p.rstrip("/") for p in GOVERNED_PREFIXES], *GOVERNED_FILES],
                      repo.root or repo.git_dir,
                      {"GIT_DIR": str(repo.git_dir), "GIT_WORK_TREE": str(repo.root)})
    except MemwardenError:
        return None
    return sorted({p.rstrip("/") for p in out.split("\0") if p})


def _entries_from_list(root: Path, paths: list[str]) -> Iterator[Entry]:
    base = str(root)
    for path in paths:
        full = os.path.join(base, path)
        try:
            st = os.lstat(full)
        except OSError:
            continue  # tracked but deleted in the working tree
        if stat.S_ISDIR(st.st_mode):
            if os.path.exists(os.path.join(full, ".git")):
                yield Entry(path, MODE_GITLINK, None)
            continue
        yield Entry(path, file_mode(st), None,
                    (st.st_mtime_ns, st.st_size, st.st_ino, st.st_ctime_ns))


def entries_from_types(base: str, paths: list[str], types: dict[str, str]) -> Iterator[Entry]:
    """The entries of `paths` as a directory walk saw them (`types`, see
    source.special_files), with no stat call for the files and links it saw: such entries
    carry no stat key, and a regular file is MODE_FILE (no rule looks at the executable
    bit). A path the walk did not see as a file or link (a folder such as a nested
    repository, a name at the top, one that changed since) is looked at as before."""
    for path in paths:
        kind = types.get(path)
        if kind == "file":
            yield Entry(path, MODE_FILE, None)
        elif kind == "link":
            yield Entry(path, MODE_LINK, None)
        else:
            yield from _entries_from_list(Path(base), [path])


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
            yield Entry(path, file_mode(d.stat(follow_symlinks=False)), None)


# Pushes of this many refs or more go through a ref-less twin (Repo._refless_twin).
REFLESS_PUSH_MIN = 64


def _config_quote(path: Path) -> str:
    """A path as a git config value (quoted, backslashes and quotes escaped)."""
    text = str(path).replace("\\", "\\\\").replace('"', '\\"')
    return f'"{text}"'


def clean_env() -> dict[str, str]:
    """The environment for a git subprocess, minus variables that would point it at another
    repository or index (hooks inherit GIT_DIR, GIT_INDEX_FILE, GIT_WORK_TREE, ...)."""
    drop = {"GIT_DIR", "GIT_INDEX_FILE", "GIT_WORK_TREE", "GIT_OBJECT_DIRECTORY",
            "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_COMMON_DIR", "GIT_PREFIX",
            "GIT_NAMESPACE", "GIT_QUARANTINE_PATH"}
    return {k: v for k, v in os.environ.items() if k not in drop}


def interpret_trailers_add(message: str, trailer: str, cwd: Path) -> str | None:
    """`git interpret-trailers --if-exists doNothing --trailer T` on `message`: git's own
    placement. None when git fails or hangs (git 2.39 loops forever on a `---` line before
    the scissors line), so callers fall back to memwarden.model.trailers.add_trailer."""
    import subprocess

    try:
        proc = subprocess.run(
            ["git", "interpret-trailers", "--if-exists", "doNothing", "--trailer", trailer],
            cwd=cwd, env=clean_env(), capture_output=True, input=message.encode("utf-8"),
            timeout=5,
        )
    except (subprocess.TimeoutExpired, OSError):
        return None
    if proc.returncode != 0:
        return None
    return proc.stdout.decode("utf-8", "surrogateescape")


def git_cli(args: list[str], cwd: Path, extra_env: dict[str, str] | None = None) -> str:
    """Run the git CLI (transport and exact-git-semantics jobs); clear error on failure."""
    import subprocess

    env = {**clean_env(), **(extra_env or {})}
    try:
        proc = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True)
    except OSError as exc:
        raise MemwardenError(f"cannot run git ({exc.strerror}); is git installed?") from None
    if proc.returncode != 0:
        err = proc.stderr.decode("utf-8", "replace").strip()
        raise MemwardenError(f"git {' '.join(args[:2])} failed: {err}")
    # Paths are bytes to git: keep undecodable ones round-trippable, like os.listdir does.
    return proc.stdout.decode("utf-8", "surrogateescape")


class BatchReader:
    """The few object reads of a short command (`memwarden read`) through one `git cat-file
    --batch` process: starting git costs far less than importing pygit2.

    Offers the part of Repo the read side uses (resolve_commit, read_path, entry_at,
    commit_time, cache_dir) with the same answers: replace refs and lazy fetches are off,
    as in libgit2, and trees are parsed here so entry_at sees modes and gitlinks. A name
    the line protocol cannot carry, or a git that fails, is answered by the Repo itself
    (pygit2). Use as a context manager, or call close()."""

    _TYPES = (b"blob", b"tree", b"commit", b"tag")

    def __init__(self, repo: Repo) -> None:
        import subprocess

        self.repo = repo
        self.cache_dir = repo.cache_dir
        self._commits: dict[str, bytes] = {}  # commit id -> raw commit object
        self._resolved: dict[str, str] = {}  # rev -> commit id
        self._tree: tuple[str, dict[bytes, tuple[int, bytes]]] | None = None  # last parsed
        env = {**clean_env(), "GIT_DIR": str(repo.git_dir), "GIT_NO_REPLACE_OBJECTS": "1",
               "GIT_NO_LAZY_FETCH": "1"}
        extra = [os.environ[v] for v in ("GIT_OBJECT_DIRECTORY", "GIT_QUARANTINE_PATH")
                 if os.environ.get(v) and os.path.isdir(os.environ[v])]
        if extra:  # a pre-receive hook's quarantined objects, as Repo._repo adds them
            env["GIT_ALTERNATE_OBJECT_DIRECTORIES"] = os.pathsep.join(extra)
        try:
            self._proc: Any = subprocess.Popen(
                ["git", "cat-file", "--batch"], cwd=repo.root or repo.git_dir, env=env,
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        except OSError:
            self._proc = None

    def __enter__(self) -> BatchReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        proc, self._proc = self._proc, None
        if proc is None:
            return
        try:
            proc.stdin.close()
        except OSError:
            pass
        proc.stdout.close()
        proc.wait()

    def _object(self, name: str) -> tuple[str, bytes, bytes] | None | bool:
        """(id, type, content) of what `name` names, None when it names nothing, False
        when git cannot be asked (the caller then asks the Repo)."""
        if self._proc is None or any(c in name for c in "\n\r\0"):
            return False
        try:
            self._proc.stdin.write(name.encode("utf-8", "surrogateescape") + b"\n")
            self._proc.stdin.flush()
            header = self._proc.stdout.readline()
            parts = header.split()
            if not header.endswith(b"\n"):
                raise OSError("git cat-file stopped")
            if len(parts) != 3 or parts[1] not in self._TYPES or not parts[2].isdigit():
                return None  # "<name> missing" / "<name> ambiguous"
            size = int(parts[2])
            data = self._proc.stdout.read(size + 1)
            if len(data) != size + 1:
                raise OSError("git cat-file stopped")
        except (OSError, ValueError):
            self.close()
            return False
        return parts[0].decode("ascii"), parts[1], data[:-1]

    def resolve_commit(self, rev: str) -> str:
        sha = self._resolved.get(rev)
        if sha is not None:
            return sha
        obj = self._object(f"{rev}^{{commit}}")
        if obj is False:
            return self.repo.resolve_commit(rev)
        if obj is None or obj[1] != b"commit":
            raise MemwardenError(f"{rev}: no such branch or commit")
        self._resolved[rev] = obj[0]
        self._commits[obj[0]] = obj[2]
        return obj[0]

    @staticmethod
    def _plain(path: str) -> bool:
        """A path git's `<rev>:<path>` reads literally (no ./ ../ or empty segments)."""
        return all(s not in ("", ".", "..") for s in path.split("/"))

    def read_path(self, rev: str, path: str) -> bytes | None:
        """The content of `path` at `rev`, or None when absent or not a blob."""
        sha = self.resolve_commit(rev)
        obj = self._object(f"{sha}:{path}") if self._plain(path) else False
        if obj is False:
            return self.repo.read_path(sha, path)
        return obj[2] if obj is not None and obj[1] == b"blob" else None

    def entry_at(self, rev: str, path: str) -> Entry | None:
        """One path of a committed tree, from its parent tree (so modes and gitlinks are
        as Repo.entry_at gives them)."""
        sha = self.resolve_commit(rev)
        parent, _, name = path.rpartition("/")
        entries = self._tree_at(sha, parent) if self._plain(path) else False
        if entries is False:
            return self.repo.entry_at(sha, path)
        found = entries.get(name.encode("utf-8", "surrogateescape")) if entries else None
        if found is None or found[0] == MODE_TREE:
            return None
        return Entry(path, found[0], found[1].hex())

    def _tree_at(self, sha: str, folder: str) -> dict[bytes, tuple[int, bytes]] | None | bool:
        key = f"{sha}:{folder}"
        if self._tree is not None and self._tree[0] == key:
            return self._tree[1]
        obj = self._object(key if folder else f"{sha}^{{tree}}")
        if obj is None or obj is False:
            return obj
        if obj[1] != b"tree":
            return None
        entries: dict[bytes, tuple[int, bytes]] = {}
        data, width, i = obj[2], len(obj[0]) // 2, 0
        try:
            while i < len(data):  # "<octal mode> <name>\0<raw id>" per entry
                sp = data.index(b" ", i)
                nul = data.index(b"\0", sp)
                entries[data[sp + 1:nul]] = (int(data[i:sp], 8), data[nul + 1:nul + 1 + width])
                i = nul + 1 + width
        except ValueError:
            return False
        self._tree = (key, entries)
        return entries

    def commit_time(self, rev: str) -> int:
        """The committer time, as pygit2's Commit.commit_time."""
        sha = self.resolve_commit(rev)
        raw = self._commits.get(sha, b"")
        for line in raw.split(b"\n"):
            if not line:
                break
            if line.startswith(b"committer "):
                try:
                    return int(line.rsplit(b" ", 2)[1])
                except (IndexError, ValueError):
                    break
        return self.repo.commit_time(sha)


def init_and_commit(root: Path, message: str, identity: dict[str, str]) -> str:
    """`git init` a folder and commit everything in it; returns the commit id."""
    git_cli(["init", "-q", "-b", "main"], root, identity)
    git_cli(["add", "-A"], root, identity)
    git_cli(["commit", "-q", "-m", message], root, identity)
    return git_cli(["rev-parse", "HEAD"], root, identity).strip()


# --- writing objects (no working tree involved) -------------------------------------------

def _signature(ident: tuple[str, str], when: int | None) -> object:
    import pygit2

    if when is None:
        return pygit2.Signature(ident[0], ident[1])
    return pygit2.Signature(ident[0], ident[1], when, 0)


_Put = tuple[bytes, "int | None"]  # content, mode (None: keep an executable's, else 100644)
_Changes = dict[str, "_Put | None"]


def _puts(changes: dict[str, bytes | None], modes: dict[str, int] | None) -> _Changes:
    """Changes with the mode each written file gets; a mode that is not a file's or a
    symlink's is a caller's mistake (a gitlink's "content" is no blob)."""
    modes = modes or {}
    for path, mode in modes.items():
        if mode not in MODE_BLOBS:
            raise ValueError(f"{path}: mode {mode:o} is not a file's or a symlink's")
    return {p: None if d is None else (d, modes.get(p)) for p, d in changes.items()}


def _split_changes(changes: _Changes) -> tuple[_Changes, dict[str, _Changes]]:
    """Changes to this folder's own files, and per subfolder the changes below it."""
    files: _Changes = {}
    subdirs: dict[str, _Changes] = {}
    for path, data in changes.items():
        head, sep, rest = path.partition("/")
        if sep:
            subdirs.setdefault(head, {})[rest] = data
        else:
            files[head] = data
    return files, subdirs


def _tree_with(r: Any, tree: Any, changes: _Changes) -> Any:
    """The id of `tree` (None: empty) with `changes` applied, rebuilding only the subtrees
    on changed paths (an index of the whole tree costs every commit its size)."""
    import pygit2

    files, subdirs = _split_changes(changes)
    builder = r.TreeBuilder(tree) if tree is not None else r.TreeBuilder()
    for name, data in sorted(files.items()):
        if data is None:
            if builder.get(name) is not None:
                builder.remove(name)
        else:
            body, mode = data
            if mode is None:
                old = builder.get(name)
                mode = MODE_EXEC if old is not None and old.filemode == MODE_EXEC \
                    else MODE_FILE
            builder.insert(name, r.create_blob(body), mode)
    for name, sub in sorted(subdirs.items()):
        current = builder.get(name)
        sub_tree = r.get(current.id) if current is not None and \
            current.filemode == pygit2.enums.FileMode.TREE else None
        if sub_tree is None and all(v is None for v in sub.values()):
            continue  # deleting below a folder that does not exist
        new_id = _tree_with(r, sub_tree, sub)
        if len(r.get(new_id)) == 0:
            if current is not None:
                builder.remove(name)  # git has no empty folders
        else:
            builder.insert(name, new_id, pygit2.enums.FileMode.TREE)
    return builder.write()


_TREE_MODE = b"40000"
_EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
_FILE_MODE, _EXEC_MODE = b"100644", b"100755"


def _entry_key(raw: bytes, off: int) -> bytes:
    """The sort key of the tree entry at `off`: its name, with "/" after a folder's."""
    sp = raw.index(b" ", off)
    name = raw[sp + 1:raw.index(b"\0", sp)]
    return name + b"/" if raw[off:sp] == _TREE_MODE else name


def _entry_at(raw: bytes, offs: list[int], name: bytes) -> tuple[int, bytes, bytes] | None:
    """(index, mode, id) of the entry called `name` (file or folder), by binary search."""
    import bisect

    for key in (name, name + b"/"):
        i = bisect.bisect_left(offs, key, key=lambda o: _entry_key(raw, o))
        if i < len(offs) and _entry_key(raw, offs[i]) == key:
            off = offs[i]
            sp = raw.index(b" ", off)
            nul = raw.index(b"\0", sp)
            return i, raw[off:sp], raw[nul + 1:nul + 21]
    return None


def _spliced_tree(repo: Repo, tree: str | None, changes: _Changes,
                  held: Any) -> str | None:
    """What _tree_with builds, for a batch whose objects are held in memory: the new tree
    is the old tree's raw bytes with the changed entries cut out and the new ones put in
    their sorted place (a binary search over remembered entry offsets), hashed here and
    handed to `held` directly. libgit2's TreeBuilder parsed, sorted and wrote all 1,000
    entries of memory/ for every commit. None: the tree is empty (tests compare the two
    builders object for object)."""
    import bisect

    r = repo._repo
    raw, offs = repo._tree(tree) if tree is not None else (b"", [])
    offs = offs or []
    files, subdirs = _split_changes(changes)
    edits: dict[bytes, tuple[bytes, bytes] | None] = {}  # name -> (mode, id) | removed
    found: dict[bytes, tuple[int, bytes, bytes] | None] = {}

    def existing(key: bytes) -> tuple[int, bytes, bytes] | None:  # looked up once a name
        if key not in found:
            found[key] = _entry_at(raw, offs, key)
        return found[key]

    for name, data in files.items():
        key = name.encode()
        if data is None:
            edits[key] = None
            continue
        body, mode = data
        blob = r.create_blob(body)
        old = existing(key)
        if old is not None and old[1] != _TREE_MODE:
            held.based_on(str(blob), old[2].hex())
        if mode is None:
            raw_mode = _EXEC_MODE if old is not None and old[1] == _EXEC_MODE else _FILE_MODE
        else:
            raw_mode = b"%o" % mode
        edits[key] = (raw_mode, blob.raw)
    for name, sub in subdirs.items():
        key = name.encode()
        if key in edits:  # the file change came first, as in TreeBuilder
            current = edits[key]
        else:
            old = existing(key)
            current = None if old is None else (old[1], old[2])
        sub_tree = current[1].hex() if current is not None and current[0] == _TREE_MODE \
            else None
        if sub_tree is None and all(v is None for v in sub.values()):
            continue  # deleting below a folder that does not exist
        new = _spliced_tree(repo, sub_tree, sub, held)
        if new is None:
            if current is not None:
                edits[key] = None  # git has no empty folders
        else:
            edits[key] = (_TREE_MODE, bytes.fromhex(new))
    spans: list[tuple[int, int, bytes, bytes]] = []  # start, end in raw, order, new bytes
    for key, entry in edits.items():
        old = existing(key)
        if old is not None:
            end = offs[old[0] + 1] if old[0] + 1 < len(offs) else len(raw)
            spans.append((offs[old[0]], end, b"", b""))
        if entry is not None:
            sort_key = key + b"/" if entry[0] == _TREE_MODE else key
            i = bisect.bisect_left(offs, sort_key, key=lambda o: _entry_key(raw, o))
            at = offs[i] if i < len(offs) else len(raw)
            spans.append((at, at, sort_key, entry[0] + b" " + key + b"\0" + entry[1]))
    if not spans:
        return tree
    spans.sort(key=lambda sp: sp[:3])  # new entries at one place go in name order
    pieces: list[bytes] = []
    new_offs: list[int] = []
    pos = size = 0
    for start, end, _, data in spans:
        lo, hi = bisect.bisect_left(offs, pos), bisect.bisect_left(offs, start)
        new_offs.extend(o - pos + size for o in offs[lo:hi])
        pieces.append(raw[pos:start])
        size += start - pos
        if data:
            new_offs.append(size)
            pieces.append(data)
            size += len(data)
        pos = max(pos, end)
    new_offs.extend(o - pos + size for o in offs[bisect.bisect_left(offs, pos):])
    pieces.append(raw[pos:])
    new_raw = b"".join(pieces)
    if not new_raw and tree is not None:
        return None
    oid = hashlib.sha1(b"tree %d\0" % len(new_raw) + new_raw, usedforsecurity=False).hexdigest()
    held.put(oid, 2, new_raw)
    if tree is not None:
        held.based_on(oid, tree)
    if len(repo._trees) > 512:
        repo._trees.clear()
    repo._trees[oid] = (new_raw, new_offs)
    return oid


class Writer:
    """Builds commits in-process: blobs, a tree derived from a base commit, the commit."""

    def __init__(self, repo: Repo) -> None:
        self.repo = repo

    def commit_changes(self, base: str | None, changes: dict[str, bytes | None], message: str,
                       author: tuple[str, str], committer: tuple[str, str],
                       when: int | None = None, modes: dict[str, int] | None = None) -> str:
        """A new commit on top of `base` (None: a root commit) with `changes` (path ->
        content, None deletes); no ref is moved. A written file gets its mode from `modes`
        (MODE_FILE, MODE_EXEC or MODE_LINK), else keeps an executable file's mode as an
        edit in git does, else is MODE_FILE."""
        puts = _puts(changes, modes)
        r = self.repo._repo
        parent = r.get(self.repo.resolve_commit(base)) if base is not None else None
        held = self.repo._holding()
        if held is not None:
            tree = _spliced_tree(self.repo, str(parent.tree_id) if parent is not None
                                 else None, puts, held) or _EMPTY_TREE
            if tree == _EMPTY_TREE:
                held.put(tree, 2, b"")
        else:
            tree = _tree_with(r, parent.tree if parent is not None else None, puts)
        sig_a = _signature(author, when)
        sig_c = _signature(committer, when)
        parents = [parent.id] if parent is not None else []
        sha = str(r.create_commit(None, sig_a, sig_c, message, tree, parents))
        if parent is not None:
            self.repo._written[sha] = _Written(str(parent.id), int(sig_c.time),
                                               frozenset(changes), message.encode())
        return sha

    def create_branch(self, name: str, commit: str) -> None:
        """Create refs/heads/<name>; refuse to move an existing branch (no lost work)."""
        ref = f"refs/heads/{name}"
        if ref in self.repo._repo.references:
            raise MemwardenError(f"branch {name} already exists; choose another proposal id")
        self.repo._repo.references.create(ref, self.repo.resolve_commit(commit))


def diff_bytes(repo: Repo, old: str, new: str) -> int:
    """Bytes a change adds and removes (what max_auto_diff_bytes bounds): the added plus
    the removed lines of every changed file, without headers, context or the +/- marks,
    so the figure is what the proposal writes, not how git frames it. A binary file counts
    both versions whole, a mode change the two mode lines, a gitlink the `Subproject commit`
    line git shows."""
    import pygit2

    r = repo._repo
    a = r.get(repo.resolve_commit(old)).tree
    b = r.get(repo.resolve_commit(new)).tree
    total = 0
    for path in repo.changed_paths(old, new):
        ea, eb = _tree_entry(a, path), _tree_entry(b, path)
        if ea is not None and eb is not None and ea.filemode != eb.filemode:
            total += 32  # "old mode X\nnew mode Y\n": a mode change is a change too
        x, y = _side_bytes(r, ea), _side_bytes(r, eb)
        patch = pygit2.Patch.create_from(x, y, old_as_path=path, new_as_path=path)
        if patch.delta.is_binary:
            total += len(x) + len(y)
            continue
        total += sum(len(line.raw_content) for h in patch.hunks for line in h.lines
                     if line.origin in "+-")
    return total


def _side_bytes(r: Any, entry: Any) -> bytes:
    """One side of a changed path as the text git diffs: a blob's bytes (a symlink's
    target), a gitlink's `Subproject commit` line, nothing when absent."""
    if entry is None:
        return b""
    if entry.type_str == "commit":
        return f"Subproject commit {entry.id}\n".encode()
    return r[entry.id].data


def patch_bytes(repo: Repo, old: str, new: str) -> int:
    """Size in bytes of the unified diff between two commits (gate JSON `patchBytes`):
    exactly `git diff`'s patch, built file by file from the changed paths, since
    libgit2's whole-tree diff costs every proposal time in the tree's size."""
    import pygit2

    r = repo._repo
    a = r.get(repo.resolve_commit(old)).tree
    b = r.get(repo.resolve_commit(new)).tree
    total = 0
    for path in repo.changed_paths(old, new):
        ea, eb = _tree_entry(a, path), _tree_entry(b, path)
        if (ea and ea.type_str != "blob") or (eb and eb.type_str != "blob"):
            return len((r.diff(a, b).patch or "").encode("utf-8", "surrogateescape"))
        if ea is not None and eb is not None and _KIND[ea.filemode] != _KIND[eb.filemode]:
            pairs = [(ea, None), (None, eb)]  # file <-> symlink: git shows two patches
        else:
            pairs = [(ea, eb)]
        for x, y in pairs:
            patch = pygit2.Patch.create_from(x and r[x.id], y and r[y.id],
                                             old_as_path=path, new_as_path=path)
            size = len(patch.data)
            if x is not None and y is not None and x.filemode != y.filemode:
                # git writes "old mode X\nnew mode Y\n" and no mode on the index line;
                # blob patches know no modes; only the mode changed: a bare header
                size = size - 7 + 32 if size else len(f"diff --git a/{path} b/{path}\n"
                                                      .encode()) + 32
            total += size
    return total


_KIND = {MODE_FILE: "file", MODE_EXEC: "file", MODE_LINK: "link"}


def _tree_entry(tree: Any, path: str) -> Any:
    try:
        entry = tree[_key(path)]
    except KeyError:
        return None
    return None if entry.type_str == "tree" else entry
