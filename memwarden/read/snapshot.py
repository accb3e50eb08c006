"""Snapshots of an agent's memory and their verified restore.

An agent snapshot is a deterministic `.tar.gz` of the agent's files at one commit, read
from git objects (never the working tree): `memory/<agent>/**` plus `agents/<agent>/**`
and `logic/<agent>/**` when present (the contract and logic belong to the agent's state;
a restore without them could not run it). The first member is `memwarden-snapshot.json`:
label, agentId, commit, commit time, git tree ids of the three folders, and every file's
sha256, size, mode and git blob id. Members are sorted, mtimes are the commit time,
uid/gid 0, gzip mtime 0, so one commit and label always give the same bytes. Symlinks and
submodules are not archived (they are MW502 findings); the manifest lists them as skipped.

`--all` writes a git bundle of the commit's whole history (ref
`refs/memwarden/snapshot/<label>`) and a sidecar `<out>.json` with the bundle's sha256.

Restore verifies everything before it writes anything: gzip CRC and length, no trailing
data, only regular members with safe relative paths under the agent's folders, no
duplicates, bounded sizes, the manifest's schema, the member set equal to the manifest's
files, each size, sha256 and blob id, the folder tree ids, and (when the snapshot's commit
is in the repository) the files of that commit. Any failure refuses the whole archive
(SnapshotRefused, exit 1) naming the member. Targets:
- default: a commit on a new branch `restore/<label>` (or `--branch NAME`) on top of main,
  built with memwarden.git.repo.Writer (no working tree, bare repositories work), carrying
  `Human-Edit: true`, so it is reviewed and landed like any human edit. Main never moves.
  Apply-owned files (meta.json, changelog.md, timeline/) stay as they are on main, so the
  version keeps counting up; the agent's other files become exactly the snapshot's.
- `--into DIR`: the files are written under DIR. In a git work tree a file may be replaced
  or removed only when it is clean (equal to HEAD); anything else (local edits, untracked
  files, a plain directory) is a conflict that `--force` overrides.
- bundles: sidecar hash, `git bundle verify`, then fetch into `refs/restore/<label>`
  (`--branch NAME`: refs/heads/NAME; `--into DIR`: a new repository in DIR).
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import os
import re
import tarfile
import tempfile
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memwarden.git.repo import MODE_EXEC, MODE_FILE, Repo, Writer, git_cli, hash_blob
from memwarden.model.errors import ConfigError, MemwardenError
from memwarden.model.layout import (
    AGENT_ID_RE,
    APPLY_OWNED_KINDS,
    ID_RE,
    classify,
    unsafe_path_reason,
)
from memwarden.model.times import iso_utc
from memwarden.version import __version__

MANIFEST_NAME = "memwarden-snapshot.json"
FORMAT = "memwarden-snapshot/1"
BUNDLE_FORMAT = "memwarden-bundle/1"
BUNDLE_REF = "refs/memwarden/snapshot/"
MAX_ARCHIVE = 256 * 1024 * 1024  # compressed input read into memory
MAX_TOTAL = 256 * 1024 * 1024  # decompressed tar stream
MAX_MEMBER = 32 * 1024 * 1024  # one file (memory files are kilobytes)
MAX_MANIFEST = 16 * 1024 * 1024
MAX_MEMBERS = 200_000
_HEX = re.compile(r"^(?:[0-9a-f]{40}|[0-9a-f]{64})\Z")
_SHA256 = re.compile(r"^[0-9a-f]{64}\Z")
_MODES = {"100644": MODE_FILE, "100755": MODE_EXEC}
_BUNDLE_MAGIC = (b"# v2 git bundle\n", b"# v3 git bundle\n")


class SnapshotRefused(MemwardenError):
    """The archive failed verification; nothing was written."""

    exit_code = 1


def label_ok(label: Any) -> bool:
    """A label is an id that is also safe in a branch name and a file name."""
    return (isinstance(label, str) and bool(ID_RE.match(label)) and ".." not in label
            and not label.endswith((".", ".lock")))


def validate_label(label: str) -> str:
    if not label_ok(label):
        raise MemwardenError(f"--label {label!r}: use letters, digits, '.', '_' and '-' "
                             "(starting with a letter or digit, no '..', at most 128)")
    return label


def agent_prefixes(agent: str) -> tuple[str, str, str]:
    return f"memory/{agent}/", f"agents/{agent}/", f"logic/{agent}/"


def default_rev(repo: Repo) -> str:
    """main_branch of the committed config when that branch exists, else HEAD."""
    from memwarden.model.config import load_config_at, parse_config

    try:
        head: str | None = repo.resolve_commit("HEAD")
    except MemwardenError:
        head = None
    try:
        main = (load_config_at(repo, head) if head else parse_config(None)).data["main_branch"]
    except ConfigError:
        main = "main"  # a broken config must not block a backup
    if repo.ref_target(f"refs/heads/{main}"):
        return f"refs/heads/{main}"
    if head is None:
        raise MemwardenError("the repository has no main branch and no HEAD commit; "
                             "pass --at REV")
    return "HEAD"


def _iso(ts: int) -> str:
    return iso_utc(ts)


# --------------------------------------------------------------------------- tree ids

def tree_id(entries: list[tuple[str, str, str]]) -> str:
    """The git tree id of a folder from (relative path, mode string, blob id) of every
    file below it: git's tree encoding, so a restore can check it without the repo."""
    files: dict[str, tuple[str, str]] = {}
    subs: dict[str, list[tuple[str, str, str]]] = {}
    for path, mode, oid in entries:
        head, sep, rest = path.partition("/")
        if sep:
            subs.setdefault(head, []).append((rest, mode, oid))
        else:
            files[head] = (mode, oid)
    algo = hashlib.sha256 if entries and len(entries[0][2]) == 64 else hashlib.sha1
    items = [(name, mode, oid) for name, (mode, oid) in files.items()]
    items += [(name, "40000", tree_id(sub)) for name, sub in subs.items()]
    items.sort(key=lambda t: t[0].encode() + (b"/" if t[1] == "40000" else b""))
    body = b"".join(f"{mode} {name}".encode() + b"\0" + bytes.fromhex(oid)
                    for name, mode, oid in items)
    return algo(b"tree %d\0" % len(body) + body).hexdigest()


def _trees(agent: str, files: dict[str, dict[str, Any]], skipped: list[dict[str, Any]]
           ) -> dict[str, str]:
    out = {}
    rows = [(p, f["mode"], f["blob"]) for p, f in files.items()]
    rows += [(s["path"], s["mode"], s["blob"]) for s in skipped]
    for prefix in agent_prefixes(agent):
        inside = [(p[len(prefix):], m, b) for p, m, b in rows if p.startswith(prefix)]
        if inside:
            out[prefix.rstrip("/")] = tree_id(inside)
    return out


# --------------------------------------------------------------------------- snapshot

def agent_snapshot(repo: Repo, agent: str, label: str, rev: str) -> tuple[bytes, dict[str, Any]]:
    """(archive bytes, manifest) of `agent` at `rev`; deterministic."""
    if not AGENT_ID_RE.match(agent):
        raise MemwardenError(f"{agent!r} is not an agent id (lowercase letters, digits, '-')")
    validate_label(label)
    commit = repo.resolve_commit(rev)
    when = repo.commit_time(commit)
    prefixes = agent_prefixes(agent)
    contents: dict[str, bytes] = {}
    files: dict[str, dict[str, Any]] = {}
    skipped: list[dict[str, Any]] = []
    for e in repo.tree_entries(commit):
        if not e.path.startswith(prefixes) or e.oid is None:
            continue
        mode = f"{e.mode:o}"
        if e.mode not in (MODE_FILE, MODE_EXEC):
            skipped.append({"path": e.path, "mode": mode, "blob": e.oid})
            continue
        data = repo.read_blob(e.oid)
        contents[e.path] = data
        files[e.path] = {"sha256": hashlib.sha256(data).hexdigest(), "size": len(data),
                         "mode": mode, "blob": e.oid}
    if not files:
        raise MemwardenError(f"agent {agent!r} has no files at {rev} ({commit[:12]}); "
                             "nothing to snapshot")
    manifest = {
        "format": FORMAT, "label": label, "agentId": agent, "commit": commit,
        "commitTime": _iso(when), "tree": _trees(agent, files, skipped).get(f"memory/{agent}"),
        "trees": _trees(agent, files, skipped), "files": dict(sorted(files.items())),
        "skipped": sorted(skipped, key=lambda s: s["path"]), "memwardenVersion": __version__,
    }
    return _pack(manifest, contents, when), manifest


def _manifest_bytes(manifest: dict[str, Any]) -> bytes:
    return (json.dumps(manifest, ensure_ascii=False, indent=2, sort_keys=True) + "\n").encode()


def _pack(manifest: dict[str, Any], contents: dict[str, bytes], when: int) -> bytes:
    """A reproducible tar.gz: manifest first, then files sorted by path."""
    buf = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=buf, mtime=0, compresslevel=9) as gz:
        with tarfile.open(fileobj=gz, mode="w", format=tarfile.PAX_FORMAT) as tf:
            members = [(MANIFEST_NAME, _manifest_bytes(manifest), 0o644)]
            members += [(p, contents[p], 0o755 if manifest["files"][p]["mode"] == "100755"
                         else 0o644) for p in sorted(contents)]
            for name, data, mode in members:
                info = tarfile.TarInfo(name)
                info.size, info.mode, info.mtime = len(data), mode, when
                info.uid = info.gid = 0
                info.uname = info.gname = ""
                info.type = tarfile.REGTYPE
                tf.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def _check_out(out: Path, force: bool) -> None:
    if out.is_dir():
        raise MemwardenError(f"--output {out}: is a directory")
    if out.exists() and not force:
        raise MemwardenError(f"--output {out}: already exists; pass --force to replace it")


def _write_atomic(out: Path, data: bytes) -> None:
    try:
        fd, tmp = tempfile.mkstemp(dir=out.parent, prefix=f".{out.name}.")
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.chmod(tmp, 0o644)
        os.replace(tmp, out)
    except OSError as exc:
        raise MemwardenError(f"--output {out}: cannot write ({exc.strerror})") from None


def write_agent_snapshot(repo: Repo, agent: str, label: str, rev: str, out: Path,
                         force: bool) -> dict[str, Any]:
    """Write the archive; the summary is deterministic (no wall clock)."""
    _check_out(out, force)
    data, manifest = agent_snapshot(repo, agent, label, rev)
    _write_atomic(out, data)
    return {"snapshotId": f"snapshot_{label}", "label": label, "agentId": agent,
            "gitCommit": manifest["commit"], "commitTime": manifest["commitTime"],
            "path": str(out), "size": len(data), "sha256": hashlib.sha256(data).hexdigest(),
            "files": len(manifest["files"]),
            "skipped": [s["path"] for s in manifest["skipped"]], "restorable": True}


def _git(repo: Repo, args: list[str], cwd: Path | None = None) -> str:
    return git_cli(args, cwd or repo.root or repo.git_dir, {"GIT_DIR": str(repo.git_dir)})


def write_bundle(repo: Repo, label: str, rev: str, out: Path, force: bool) -> dict[str, Any]:
    """A git bundle of `rev`'s history plus `<out>.json` (label, commit, ref, sha256)."""
    validate_label(label)
    side = Path(f"{out}.json")
    _check_out(out, force)
    _check_out(side, force)
    commit = repo.resolve_commit(rev)
    ref = BUNDLE_REF + label
    # A bundle lists refs, not bare commits: name the commit for the time it takes.
    if repo.ref_target(ref) is not None:
        _git(repo, ["update-ref", "-d", ref])
    _git(repo, ["update-ref", ref, commit, "0" * len(commit)])
    tmp = out.parent / f".{out.name}.tmp{os.getpid()}"
    try:
        _git(repo, ["bundle", "create", "--quiet", str(tmp.absolute()), ref])
        data = tmp.read_bytes()
        os.replace(tmp, out)
    except OSError as exc:
        raise MemwardenError(f"--output {out}: cannot write ({exc.strerror})") from None
    finally:
        tmp.unlink(missing_ok=True)
        _git(repo, ["update-ref", "-d", ref, commit])
    doc = {"format": BUNDLE_FORMAT, "label": label, "commit": commit, "ref": ref,
           "commitTime": _iso(repo.commit_time(commit)), "size": len(data),
           "sha256": hashlib.sha256(data).hexdigest(), "memwardenVersion": __version__}
    _write_atomic(side, (json.dumps(doc, indent=2, sort_keys=True) + "\n").encode())
    return {"snapshotId": f"snapshot_{label}", "label": label, "gitCommit": commit,
            "path": str(out), "manifest": str(side), "size": len(data),
            "sha256": doc["sha256"], "ref": ref, "restorable": True}


# --------------------------------------------------------------------------- verification

@dataclass
class Snapshot:
    """A verified agent archive: its manifest and every file's bytes."""

    manifest: dict[str, Any]
    contents: dict[str, bytes] = field(default_factory=dict)

    @property
    def agent(self) -> str:
        return self.manifest["agentId"]

    @property
    def label(self) -> str:
        return self.manifest["label"]

    @property
    def commit(self) -> str:
        return self.manifest["commit"]


def unsafe_path(name: str) -> str | None:
    """Why a member name may not be written (None: a plain relative POSIX path that git
    would check out: no `.git` component by git's rules, no invisible characters)."""
    if not name:
        return "empty name"
    if name.startswith("/") or re.match(r"^[A-Za-z]:", name):
        return "absolute path"
    if "\\" in name or "\x00" in name or any(ord(c) < 32 for c in name):
        return "backslash or control character in the name"
    parts = name.split("/")
    if ".." in parts:
        return "'..' path traversal"
    if any(p in ("", ".") for p in parts):
        return "empty or '.' path component"
    return unsafe_path_reason(name)


def outside_layout(path: str, agent: str) -> str | None:
    """Why a path is not one of the agent's files in the memory layout, or None."""
    if not path.startswith(agent_prefixes(agent)):
        return f"outside the folders of agent {agent}"
    info = classify(path)
    if info is None or info.agent != agent or (info.area == "memory" and info.kind == "unknown"):
        return "not a file of the memory layout (see `memwarden rule MW506`)"
    return None


def _refuse(what: str, why: str) -> SnapshotRefused:
    return SnapshotRefused(f"restore refused: {what}: {why}; nothing was written")


def _gunzip(raw: bytes, label: str) -> bytes:
    """The tar stream, bounded; a corrupt, truncated or padded gzip is refused."""
    if raw[:2] != b"\x1f\x8b":
        raise _refuse(label, "not a gzip file (expected a memwarden .tar.gz or git bundle)")
    d = zlib.decompressobj(wbits=31)
    try:
        data = d.decompress(raw, MAX_TOTAL + 1)
    except zlib.error as exc:
        raise _refuse(label, f"corrupt gzip data ({exc})") from None
    if len(data) > MAX_TOTAL or d.unconsumed_tail:
        raise _refuse(label, f"expands to more than {MAX_TOTAL} bytes")
    if not d.eof:
        raise _refuse(label, "truncated (the gzip stream ends early)")
    if d.unused_data:
        raise _refuse(label, f"{len(d.unused_data)} unexpected bytes after the gzip stream")
    return data


def _members(data: bytes, label: str) -> list[tuple[str, int, bytes]]:
    """(name, permission bits, bytes) of every member; only regular files with safe
    names, no duplicates, bounded sizes."""
    out: list[tuple[str, int, bytes]] = []
    seen: set[str] = set()
    try:
        tf = tarfile.open(fileobj=io.BytesIO(data), mode="r:")
    except tarfile.TarError as exc:
        raise _refuse(label, f"not a readable tar archive ({exc})") from None
    with tf:
        while True:
            try:
                m = tf.next()
            except tarfile.TarError as exc:
                raise _refuse(label, f"corrupt tar header after {len(out)} members "
                                     f"({exc})") from None
            if m is None:
                break
            name = m.name
            why = unsafe_path(name)
            if why:
                raise _refuse(f"member {name!r}", why)
            if m.type not in (tarfile.REGTYPE, tarfile.AREGTYPE):
                kind = ("symlink" if m.issym() else "hard link" if m.islnk() else
                        "directory" if m.isdir() else "device or special file")
                raise _refuse(f"member {name}", f"is a {kind}; only regular files are allowed")
            if name in seen:
                raise _refuse(f"member {name}", "appears twice")
            seen.add(name)
            limit = MAX_MANIFEST if not out else MAX_MEMBER
            if m.size > limit:
                raise _refuse(f"member {name}", f"is {m.size} bytes, over the {limit} limit")
            if len(out) >= MAX_MEMBERS:
                raise _refuse(label, f"more than {MAX_MEMBERS} members")
            try:
                fh = tf.extractfile(m)
                body = fh.read() if fh is not None else b""
            except (tarfile.TarError, OSError) as exc:
                raise _refuse(f"member {name}", f"cannot be read ({exc})") from None
            if len(body) != m.size:
                raise _refuse(f"member {name}", "is truncated")
            out.append((name, m.mode & 0o7777, body))
        end = tf.offset
    if data[end:].strip(b"\0"):
        raise _refuse(label, "data after the end of the tar archive")
    return out


def _check_manifest(doc: Any) -> dict[str, Any]:
    """The manifest's schema: every field present, typed and sane."""
    what = f"member {MANIFEST_NAME}"
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise _refuse(what, f"not a {FORMAT} manifest")
    label, agent, commit = doc.get("label"), doc.get("agentId"), doc.get("commit")
    if not label_ok(label):
        raise _refuse(what, "invalid label")
    if not isinstance(agent, str) or not AGENT_ID_RE.match(agent):
        raise _refuse(what, "invalid agentId")
    if not isinstance(commit, str) or not _HEX.match(commit):
        raise _refuse(what, "invalid commit id")
    files, skipped, trees = doc.get("files"), doc.get("skipped", []), doc.get("trees")
    if not isinstance(files, dict) or not files or not isinstance(skipped, list) \
            or not isinstance(trees, dict):
        raise _refuse(what, "files, skipped or trees missing or of the wrong type")
    prefixes = agent_prefixes(agent)
    for path, f in files.items():
        bad = (unsafe_path(path) if isinstance(path, str) else "not text") or outside_layout(
            path, agent)
        if bad:
            raise _refuse(f"manifest entry {path!r}", bad)
        if not (isinstance(f, dict) and isinstance(f.get("sha256"), str)
                and _SHA256.match(f["sha256"]) and type(f.get("size")) is int
                and f["size"] >= 0 and f.get("mode") in _MODES
                and isinstance(f.get("blob"), str) and _HEX.match(f["blob"])):
            raise _refuse(f"manifest entry {path}", "needs sha256, size, mode "
                          "(100644|100755) and blob")
    for s in skipped:
        if not (isinstance(s, dict) and isinstance(s.get("path"), str)
                and s["path"].startswith(prefixes) and unsafe_path(s["path"]) is None
                and isinstance(s.get("mode"), str)
                and re.fullmatch(r"[0-7]{5,6}", s["mode"])
                and isinstance(s.get("blob"), str) and _HEX.match(s["blob"])):
            raise _refuse(what, "malformed skipped entry")
    return doc


def verify_archive(raw: bytes, label: str = "archive") -> Snapshot:
    """Every check before anything is written (see the module docstring)."""
    members = _members(_gunzip(raw, label), label)
    if not members or members[0][0] != MANIFEST_NAME:
        raise _refuse(label, f"the first member must be {MANIFEST_NAME}")
    try:
        doc = json.loads(members[0][2].decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise _refuse(f"member {MANIFEST_NAME}", f"not valid JSON ({exc})") from None
    manifest = _check_manifest(doc)
    files = manifest["files"]
    snap = Snapshot(manifest)
    for name, perm, body in members[1:]:
        f = files.get(name)
        if f is None:
            raise _refuse(f"member {name}", "is not listed in the manifest (extra member)")
        if len(body) != f["size"]:
            raise _refuse(f"member {name}", f"is {len(body)} bytes, the manifest says "
                                            f"{f['size']}")
        if hashlib.sha256(body).hexdigest() != f["sha256"]:
            raise _refuse(f"member {name}", "sha256 differs from the manifest (altered or "
                                            "corrupt)")
        if hash_blob(body) != f["blob"] and len(f["blob"]) == 40:
            raise _refuse(f"member {name}", "git blob id differs from the manifest")
        if bool(perm & 0o100) != (f["mode"] == "100755"):
            raise _refuse(f"member {name}", "file mode differs from the manifest")
        snap.contents[name] = body
    for path in sorted(files):
        if path not in snap.contents:
            raise _refuse(f"member {path}", "is listed in the manifest but missing")
    expected = _trees(manifest["agentId"], files, manifest["skipped"])
    if expected != manifest["trees"] or manifest.get("tree") != expected.get(
            f"memory/{manifest['agentId']}"):
        raise _refuse(f"member {MANIFEST_NAME}", "tree ids do not match the listed files")
    return snap


def check_against_repo(repo: Repo, snap: Snapshot) -> bool:
    """When the snapshot's commit is in `repo`, its files must be exactly the archive's.
    False when the commit is unknown here (the archive alone was verified)."""
    try:
        commit = repo.resolve_commit(snap.commit)
    except MemwardenError:
        return False
    prefixes = agent_prefixes(snap.agent)
    have = {e.path: (e.oid, e.mode) for e in repo.tree_entries(commit)
            if e.path.startswith(prefixes) and e.mode in (MODE_FILE, MODE_EXEC)}
    want = {p: (f["blob"], _MODES[f["mode"]]) for p, f in snap.manifest["files"].items()}
    for path in sorted(set(have) | set(want)):
        if have.get(path) != want.get(path):
            raise _refuse(f"member {path}", f"differs from commit {commit[:12]} in this "
                                            "repository, which the manifest names")
    for folder, tree in sorted(snap.manifest["trees"].items()):
        if repo.folder_id(commit, folder.rstrip("/")) != tree:
            raise _refuse(f"member {MANIFEST_NAME}", f"tree id of {folder} differs from "
                                                     f"commit {commit[:12]} in this repository")
    return True


def vouch(repo: Repo | None, snap: Snapshot, trust: bool) -> bool:
    """Whether the repository vouches for the archive (its commit is here and holds exactly
    its files and trees); an archive of an unknown commit is refused unless `trust`
    (anyone can recompute an archive's hashes: only the repository can vouch)."""
    known = check_against_repo(repo, snap) if repo is not None else False
    if not known and not trust:
        raise _refuse(f"member {MANIFEST_NAME}",
                      f"names commit {snap.commit[:12]}, which is not in this repository, so "
                      "nothing vouches for the archive's content; pass --trust-archive to "
                      "restore it anyway (its files are still checked by every policy)")
    return known


class _ArchiveSource:
    """The archive's files as a check source (memwarden.git.source's interface), so
    restored files go through every policy before anything is written."""

    def __init__(self, snap: Snapshot) -> None:
        from memwarden.git.files import Entry
        from memwarden.model.memfile import MAX_FILE_BYTES

        self.snap = snap
        self.label = f"snapshot {snap.label}"
        self.max_bytes = MAX_FILE_BYTES
        self.entries = {p: Entry(p, _MODES[snap.manifest["files"][p]["mode"]],
                                 hash_blob(body)) for p, body in snap.contents.items()}

    def all_entries(self) -> dict[str, Any]:
        return dict(self.entries)

    def entry(self, path: str) -> Any:
        return self.entries.get(path)

    def known_blob_id(self, entry: Any) -> str | None:
        return None  # never from a cache: the archive is untrusted

    def remember(self, path: str, stat_key: Any, blob: str) -> None:
        pass

    def forget(self, path: str) -> None:
        pass

    def save(self) -> None:
        pass

    def glob(self, pattern: str) -> list[str]:
        import fnmatch

        return sorted(p for p in self.entries if fnmatch.fnmatchcase(p, pattern))

    def load(self, entry: Any) -> Any:
        from memwarden.model.memfile import MemFile

        info = classify(entry.path)
        if info is None:
            return None
        body = self.snap.contents[entry.path]
        data = body if len(body) <= self.max_bytes else b""
        return MemFile(info, data, entry.mode, entry.oid, len(body), self.max_bytes)


def policy_check(snap: Snapshot, config: Any, strict: bool) -> int:
    """Every policy over the archive's files (the same check `memwarden check` runs); the
    number of errors. `strict` (an archive no commit here vouches for): errors refuse the
    restore. A vouched archive holds exactly a commit's files, whose state the history
    already shows; its restore is a Human-Edit the gate and hooks check again."""
    from memwarden.policies.engine import check

    result = check(_ArchiveSource(snap), config, sorted(snap.contents))  # type: ignore[arg-type]
    errors = [f for f in result.findings if f.severity == "error" and not f.waived]
    if errors and strict:
        shown = "; ".join(f"{f.path}:{f.line}: {f.rule} {f.message}" for f in errors[:5])
        more = f" (and {len(errors) - 5} more)" if len(errors) > 5 else ""
        raise _refuse("the archive's files", f"{len(errors)} policy error(s): {shown}{more}")
    return len(errors)


def restore_archive(repo: Repo | None, raw: bytes, label: str, into: Path | None,
                    branch: str | None, base: str | None, force: bool,
                    trust: bool = False) -> dict[str, Any]:
    """Verify an agent archive, have the repository vouch for it (or `trust` it), check its
    files with every policy, then restore it to a branch or under `into`."""
    from memwarden.model.config import load_config, load_config_at

    snap = verify_archive(raw, label)
    known = vouch(repo, snap, trust)
    if repo is not None:
        try:
            config = load_config_at(repo, repo.resolve_commit(base or default_rev(repo)))
        except MemwardenError:
            config = load_config(None, into)
    else:
        config = load_config(None, into)
    errors = policy_check(snap, config, strict=not known)
    if into is not None:
        result = restore_to_dir(snap, into, force, repo)
    else:
        if repo is None:
            raise MemwardenError("restore onto a branch needs a git repository (run it "
                                 "inside one) or --into DIR")
        result = restore_to_branch(repo, snap, branch, base, force)
    result["verified"] = {"files": len(snap.contents), "againstRepository": known,
                          "trusted": trust and not known, "policyErrors": errors}
    return result


def read_archive(path: Path) -> bytes:
    try:
        size = path.stat().st_size
        if size > MAX_ARCHIVE:
            raise _refuse(str(path), f"is {size} bytes, over the {MAX_ARCHIVE} limit")
        return path.read_bytes()
    except OSError as exc:
        raise MemwardenError(f"{path}: cannot read ({exc.strerror})") from None


def is_bundle(raw: bytes) -> bool:
    return raw.startswith(_BUNDLE_MAGIC)


# --------------------------------------------------------------------------- restore

def _identity(repo: Repo, var: str) -> tuple[str, str]:
    try:
        ident = _git(repo, ["var", var]).strip()
        m = re.match(r"^(.*?) <([^>]*)>", ident)
        if m and m.group(1):
            return m.group(1), m.group(2)
    except MemwardenError:
        pass
    return "memwarden restore", "restore@memwarden.invalid"


def _branch_name(repo: Repo, name: str, main: str) -> str:
    try:
        _git(repo, ["check-ref-format", "--branch", name])
    except MemwardenError:
        raise MemwardenError(f"--branch {name!r}: not a valid branch name") from None
    if name == main.removeprefix("refs/heads/"):
        raise MemwardenError(f"--branch {name}: restore never moves the main branch; "
                             "name a new branch and land it through review")
    return name


def restore_to_branch(repo: Repo, snap: Snapshot, branch: str | None, base: str | None,
                      force: bool) -> dict[str, Any]:
    """A Human-Edit commit on a new branch: the agent's folders become the snapshot's,
    except apply-owned files, which stay as on the base."""
    main = default_rev(repo)
    base_commit = repo.resolve_commit(base or main)
    name = _branch_name(repo, branch or f"restore/{snap.label}", main)
    ref = f"refs/heads/{name}"
    old = repo.ref_target(ref)
    if old is not None and not force:
        raise MemwardenError(f"branch {name} already exists; pass --force to replace it or "
                             "--branch NAME")
    prefixes = agent_prefixes(snap.agent)
    current = {e.path: e for e in repo.tree_entries(base_commit) if e.path.startswith(prefixes)}

    def apply_owned(path: str) -> bool:
        info = classify(path)
        return info is not None and info.kind in APPLY_OWNED_KINDS

    changes: dict[str, bytes | None] = {}
    modes = {p: _MODES[f["mode"]] for p, f in snap.manifest["files"].items()}
    for path in current:
        if path not in snap.contents and not apply_owned(path):
            changes[path] = None
    for path, body in snap.contents.items():
        if apply_owned(path) and path in current:
            continue
        e = current.get(path)
        if e is None or e.oid != hash_blob(body) or e.mode != modes[path]:
            changes[path] = body
    if not changes:
        return {"status": "unchanged", "target": "branch", "agentId": snap.agent,
                "label": snap.label, "base": base_commit, "files": len(snap.contents),
                "message": "the base already holds the snapshot's files; no branch created"}
    message = (f"restore: {snap.agent} from snapshot {snap.label}\n\n"
               f"Restores memory/{snap.agent}/ (and the agent's agents/ and logic/ files) "
               f"to commit {snap.commit[:12]}\nas recorded by snapshot {snap.label!r}; "
               "apply-owned files keep their current state.\n\nHuman-Edit: true\n")
    new = Writer(repo).commit_changes(base_commit, changes, message,
                                      _identity(repo, "GIT_AUTHOR_IDENT"),
                                      _identity(repo, "GIT_COMMITTER_IDENT"),
                                      modes={p: modes[p] for p in changes
                                             if changes[p] is not None})
    if old is None:
        Writer(repo).create_branch(name, new)
    elif not repo.compare_and_swap(ref, new, old):
        raise MemwardenError(f"branch {name} moved while restoring; run restore again")
    return {"status": "restored", "target": "branch", "branch": name, "commit": new,
            "base": base_commit, "agentId": snap.agent, "label": snap.label,
            "snapshotCommit": snap.commit, "files": len(snap.contents),
            "changed": sorted(changes)}


def _clean_in_head(repo: Repo | None, root: Path, path: str, data: bytes) -> bool:
    """True when `data` at `path` is what HEAD holds (safe to replace in a work tree)."""
    if repo is None or repo.root is None or repo.root != root.resolve():
        return False
    try:
        e = repo.entry_at("HEAD", path)
    except MemwardenError:
        return False
    return e is not None and e.oid == hash_blob(data)


def _local_files(root: Path, folder: Path) -> list[str]:
    """Files (and symlinks) below `folder`, relative to `root`; symlinks are not followed."""
    out = []
    for dirpath, dirnames, filenames in os.walk(folder):
        base = Path(dirpath)
        links = [d for d in dirnames if (base / d).is_symlink()]
        dirnames[:] = [d for d in dirnames if d not in links and d != ".git"]
        out += [(base / n).relative_to(root).as_posix() for n in filenames + links]
    return sorted(out)


def _no_symlink_parents(root: Path, path: str) -> None:
    cur = root
    for part in path.split("/")[:-1]:
        cur = cur / part
        if cur.is_symlink() or (cur.exists() and not cur.is_dir()):
            raise MemwardenError(f"--into {root}: {cur.relative_to(root)} is a symlink or "
                                 "a file; refusing to write through it")


def restore_to_dir(snap: Snapshot, into: Path, force: bool,
                   repo: Repo | None) -> dict[str, Any]:
    """Write the snapshot's files under `into`; local changes are conflicts unless force."""
    if into.exists() and not into.is_dir():
        raise MemwardenError(f"--into {into}: not a directory")
    conflicts: list[str] = []
    removals: list[str] = []
    writes: list[str] = []
    for path, body in sorted(snap.contents.items()):
        _no_symlink_parents(into, path)
        target = into / path
        if target.is_symlink() or target.is_dir():
            raise MemwardenError(f"--into {into}: {path} is a symlink or a directory")
        if target.exists():
            local = target.read_bytes()
            if local == body:
                continue
            if not _clean_in_head(repo, into, path, local):
                conflicts.append(path)
        writes.append(path)
    for prefix in agent_prefixes(snap.agent):
        folder = into / prefix
        if folder.is_symlink():
            raise MemwardenError(f"--into {into}: {prefix} is a symlink")
        if not folder.is_dir():
            continue
        for rel in _local_files(into, folder):
            if rel in snap.contents:
                continue
            removals.append(rel)
            p = into / rel
            if p.is_symlink() or not _clean_in_head(repo, into, rel, p.read_bytes()):
                conflicts.append(rel)
    if conflicts and not force:
        shown = ", ".join(conflicts[:10]) + (" ..." if len(conflicts) > 10 else "")
        raise MemwardenError(f"--into {into}: {len(conflicts)} file(s) have local changes or "
                             f"are not in the snapshot: {shown}; commit or move them, or "
                             "pass --force")
    for path in writes:
        target = into / path
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".restore-")
        with os.fdopen(fd, "wb") as fh:
            fh.write(snap.contents[path])
        os.chmod(tmp, 0o755 if snap.manifest["files"][path]["mode"] == "100755" else 0o644)
        os.replace(tmp, target)
    for rel in removals:
        (into / rel).unlink()
    return {"status": "restored", "target": "directory", "into": str(into),
            "agentId": snap.agent, "label": snap.label, "snapshotCommit": snap.commit,
            "files": len(snap.contents), "written": writes, "removed": removals}


def verify_bundle(path: Path, raw: bytes) -> dict[str, Any]:
    """The sidecar manifest must exist and match the bundle's bytes and header."""
    side = Path(f"{path}.json")
    try:
        doc = json.loads(side.read_text("utf-8"))
    except OSError:
        raise _refuse(str(path), f"its manifest {side.name} is missing; a bundle is restored "
                                 "only with the manifest written next to it") from None
    except ValueError as exc:
        raise _refuse(side.name, f"not valid JSON ({exc})") from None
    if not (isinstance(doc, dict) and doc.get("format") == BUNDLE_FORMAT
            and label_ok(doc.get("label")) and isinstance(doc.get("commit"), str)
            and _HEX.match(doc["commit"]) and doc.get("ref") == BUNDLE_REF + doc["label"]):
        raise _refuse(side.name, f"not a {BUNDLE_FORMAT} manifest")
    if doc.get("size") != len(raw) or doc.get("sha256") != hashlib.sha256(raw).hexdigest():
        raise _refuse(str(path), "size or sha256 differs from its manifest (altered, "
                                 "truncated or corrupt)")
    header = raw.split(b"\n\n", 1)[0].decode("utf-8", "replace").splitlines()[1:]
    if header != [f"{doc['commit']} {doc['ref']}"]:
        raise _refuse(str(path), "its refs differ from the manifest")
    return doc


def restore_bundle(repo: Repo | None, path: Path, raw: bytes, into: Path | None,
                   branch: str | None, force: bool) -> dict[str, Any]:
    doc = verify_bundle(path, raw)
    src = str(path.absolute())
    if into is not None:
        if into.exists() and (not into.is_dir() or any(into.iterdir())):
            raise MemwardenError(f"--into {into}: must be a new or empty directory for a "
                                 "bundle restore")
        created = not into.exists()
        into.mkdir(parents=True, exist_ok=True)
        env = {"GIT_DIR": str(into / ".git")}
        try:
            git_cli(["init", "-q", "-b", "main", str(into)], into)
            git_cli(["bundle", "verify", "--quiet", src], into, env)
            git_cli(["fetch", "-q", "--no-tags", "--update-head-ok", src,
                     f"{doc['ref']}:refs/heads/main"], into, env)
            git_cli(["reset", "-q", "--hard"], into, {**env, "GIT_WORK_TREE": str(into)})
        except MemwardenError as exc:
            import shutil

            # DIR was new or empty: everything in it is this run's.
            for child in into.iterdir():
                shutil.rmtree(child) if child.is_dir() and not child.is_symlink() \
                    else child.unlink()
            if created:
                into.rmdir()
            raise _refuse(str(path), f"git could not restore it ({exc})") from None
        return {"status": "restored", "target": "repository", "into": str(into),
                "branch": "main", "commit": doc["commit"], "label": doc["label"]}
    if repo is None:
        raise MemwardenError("restore of a bundle needs a git repository (run it inside "
                             "one) or --into DIR")
    if branch is not None:
        main = default_rev(repo)
        ref = f"refs/heads/{_branch_name(repo, branch, main)}"
    else:
        ref = f"refs/restore/{doc['label']}"
    if repo.ref_target(ref) is not None and (not force or ref.startswith("refs/heads/")):
        raise MemwardenError(f"{ref} already exists" + ("" if ref.startswith("refs/heads/")
                                                        else "; pass --force to replace it"))
    try:
        _git(repo, ["bundle", "verify", "--quiet", src])
    except MemwardenError as exc:
        raise _refuse(str(path), f"git bundle verify failed ({exc})") from None
    _git(repo, ["fetch", "-q", "--no-tags", src, f"+{doc['ref']}:{ref}"])
    return {"status": "restored", "target": "ref", "ref": ref, "commit": doc["commit"],
            "label": doc["label"]}
