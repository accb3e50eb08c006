"""Run the policies over a source: file rules (cached per blob), tree rules, waivers.

Cold runs of many files check them in forked worker processes on every core while this
process does the bookkeeping; warm runs reuse per-blob results from `.git/memwarden/` and
touch the tokenizer not at all.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import hashlib
import os
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, NoReturn

from memwarden.cachedir import ShardedCache, read_sealed, write_sealed
from memwarden.git.files import Entry
from memwarden.git.source import Source, WorktreeSource
from memwarden.model.config import Config
from memwarden.model.errors import MemwardenError
from memwarden.model.findings import ERROR, Finding, make
from memwarden.model.layout import LAYER1, classify, is_governed
from memwarden.model.memfile import MemFile
from memwarden.policies.registry import FAMILIES, FILE, Rule, check_rules, tree_checks
from memwarden.policies.rulecontext import FileContext, TreeContext
from memwarden.tokens.counter import TokenCounter, get_encoder, verify_encoding
from memwarden.version import __version__


@dataclasses.dataclass(slots=True)
class CheckResult:
    """What a check found and how many files it checked."""

    findings: list[Finding]
    files: int

    @property
    def failed(self) -> bool:
        return any(f.severity == ERROR and not f.waived for f in self.findings)


def normalise_path(raw: str, root: str | Path | None) -> str | None:
    """A repo-relative POSIX path, or None when it lies outside the repository."""
    if root is not None:
        try:
            rel = os.path.relpath(os.path.abspath(raw), root)
        except ValueError:
            return None
    else:
        rel = raw
    rel = os.path.normpath(rel).replace(os.sep, "/")
    if rel == ".." or rel.startswith("../") or rel.startswith("/") or os.path.isabs(rel):
        return None
    return rel


def check(source: Source, config: Config, paths: list[str] | None = None,
          cache_dir: str | Path | None = None, today: _dt.date | None = None,
          raw_outside: Iterable[str] = ()) -> CheckResult:
    """Check the whole source (paths None) or just `paths` (repo-relative) in context;
    the caches are written before returning."""
    rules = [r for r in check_rules() if config.rule_enabled(r.id)]
    source.max_bytes = config.max_file_bytes  # larger files: MW206, never read
    # A small partial check of a working tree (a hook run) keeps its token counts in the
    # findings shards of the files' owners instead of reading and rewriting the whole
    # repository's count file (gates and audits of commits keep using that file).
    small = (paths is not None and len(paths) <= SMALL_CHECK
             and isinstance(source, WorktreeSource))
    counter = TokenCounter(config.encoding, None if small else cache_dir,
                           parts_dir=cache_dir if small else None)
    cache = FindingsCache(cache_dir, config)
    findings: list[Finding] = []

    for raw in raw_outside:
        findings.append(make("MW502", ERROR, raw, 1, 1,
                             f"{raw}: path lies outside the repository", raw,
                             "Check only files inside the memory repository."))

    file_rules = [r for r in rules if r.scope == FILE and r.check is not None]
    workers = _Workers.early(source, config, cache_dir, file_rules) if paths is None else None
    try:
        if paths is None:
            entries = source.all_entries()
            focus: set[str] | None = None
            infos = {p: info for p in sorted(entries) if (info := classify(p)) is not None}
            context_paths = list(infos)
        else:
            focus = {p for p in paths if is_governed(p)}
            entries = {}
            for p in sorted(focus):
                e = source.entry(p)
                if e is not None:
                    entries[p] = e
            for p in _context_paths(focus, source):
                if p not in entries:
                    e = source.entry(p)
                    if e is not None:
                        entries[p] = e
            infos = {p: info for p in sorted(entries) if (info := classify(p)) is not None}
            context_paths = list(infos)

        checked = [p for p in context_paths if focus is None or p in focus]
        loaded: dict[str, MemFile | None] = {}

        shared_fm: dict[str, tuple[str, Any]] = {}

        def load(path: str) -> MemFile | None:
            if path not in loaded:
                e = entries.get(path)
                mf = source.load(e) if e is not None else None
                hit = shared_fm.get(path)
                if mf is not None and hit is not None and hit[0] == mf.blob_id:
                    mf.__dict__["frontmatter"] = hit[1]  # parsed by a worker already
                loaded[path] = mf
            return loaded[path]

        # Blob ids that need no read (stat cache, committed trees) decide the cache hits; every
        # other checked file is read, hashed and checked in one pass, on all cores when large.
        blob_ids: dict[str, str] = {}
        for path in context_paths:
            blob = source.known_blob_id(entries[path])
            if blob is not None:
                blob_ids[path] = blob
        if small:
            for path, blob in blob_ids.items():
                n = cache.get_count(blob, path)
                if n is not None:
                    counter.merge({blob: n})
        pending: list[Entry] = []
        for path in checked:
            blob = blob_ids.get(path)
            hit = cache.get(blob, path) if blob is not None else None
            if hit is not None:
                findings.extend(hit)
            else:
                pending.append(entries[path])

        if pending and any(r.id.startswith("MW1") for r in rules):
            # Fail early on a missing encoding; build tiktoken's encoder only before forking
            # workers (they share it; early workers build their own); a few files are counted
            # in Python (memwarden/bpe.py).
            if len(pending) >= PARALLEL_FILES and workers is None:
                get_encoder(config.encoding)
            else:
                verify_encoding(config.encoding)

        def meanwhile() -> None:  # parent work while forked workers check the files
            if paths is None and config.rule_enabled("MW207") and "registry.json" in entries:
                prepare_tree_rules(load("registry.json"))

        for res in evaluate_entries(source, pending, file_rules, config, counter, meanwhile,
                                    workers):
            counter.merge(res.counts)
            if res.blob_id is None:
                continue
            if res.frontmatter is not None:
                shared_fm[res.path] = (res.blob_id, res.frontmatter)
            blob_ids[res.path] = res.blob_id
            source.remember(res.path, res.stat_key, res.blob_id)
            cache.put(res.blob_id, res.path, res.findings)
            n = res.counts.get(res.blob_id)
            if n is not None:
                cache.put_count(res.blob_id, res.path, n)
            findings.extend(res.findings)
        for path in context_paths:
            if path not in blob_ids:
                mf = load(path)
                if mf is not None:
                    blob_ids[path] = mf.blob_id

        tctx = TreeContext(config, counter, infos, blob_ids, load, focus)
        tree_key = _tree_key(config, blob_ids, focus)
        cached_tree = cache.get_tree(tree_key)
        if cached_tree is not None:
            findings.extend(cached_tree)
        else:
            tree_findings = []
            for r in rules:
                for check_fn in tree_checks(r):
                    for f in check_fn(tctx):
                        if f.rule == r.id and tctx.in_focus(f.path):
                            tree_findings.append(f)
            cache.put_tree(tree_key, tree_findings)
            findings.extend(tree_findings)

        findings = apply_waivers(findings, config, today, focus)
        if small:  # the context's counts (tree rules may have counted files just now)
            for path, blob in blob_ids.items():
                n = counter.cached(blob)
                if n is not None:
                    cache.put_count(blob, path, n)
        counter.save()
        cache.save()
        source.save()
        findings.sort(key=lambda f: (f.path, f.line, f.col, f.rule, f.message))
        return CheckResult(_dedupe(findings), len(checked) + len(list(raw_outside)))
    finally:
        if workers is not None:
            workers.close()


# An index at least this large suggests enough files for the workers (~70 bytes an entry).
LARGE_INDEX_BYTES = 400 * 72


class _Workers:
    """Forked processes that check files, and the job they inherit (source, rules, config,
    token counter; the files come in chunks, one pipe per worker). The first worker warms
    up (tokenizer, patterns) and then forks the others, so that warm-up is paid once."""

    def __init__(self, source: Source, rules: list[Rule], config: Config,
                 counter: TokenCounter | None) -> None:
        # The workers allocate a lot and keep little. Frozen, the parent's objects (modules;
        # when started late, the patterns and the file list) are never traversed by a
        # worker's collections, nor their pages copied on write; a larger first generation
        # collects far less often.
        import gc
        import multiprocessing

        global _JOB
        _JOB = (source, rules, config, counter)
        self.size = min(os.cpu_count() or 1, 8)
        self._thresholds = gc.get_threshold()
        gc.freeze()
        gc.set_threshold(10_000, *self._thresholds[1:])
        # Plain processes driven from this thread: a Pool's helper threads would contend for
        # the GIL with the bookkeeping done here, and its workers would each warm up.
        pipes = [multiprocessing.Pipe() for _ in range(self.size)]
        self.conns: list[Any] = [here for here, _ in pipes]
        ends = [there for _, there in pipes]
        try:
            self.first: int | None = os.fork()
        except OSError as exc:  # out of processes or memory: nothing started, nothing held
            for conn in (*self.conns, *ends):
                conn.close()
            self.first = None
            self._release()
            raise MemwardenError(f"cannot start the check's worker processes ({exc})") from None
        if self.first == 0:
            _first_worker(self.conns, ends)  # never returns
        for end in ends:
            end.close()

    @classmethod
    def early(cls, source: Source, config: Config, cache_dir: str | Path | None,
              rules: list[Rule]) -> _Workers | None:
        """Workers started before the file listing, for a cold check (no findings cached)
        of a large repository (a large git index): the first one builds the tokenizer and
        compiles the rules' patterns on another core while this process lists the files.
        None for any other run."""
        if (os.cpu_count() or 1) < 2:
            return None
        if cache_dir is not None and os.path.isdir(os.path.join(cache_dir, "findings")):
            return None
        git_dir = getattr(getattr(source, "repo", None), "git_dir", None)
        try:
            if git_dir is None or (os.stat(os.path.join(git_dir, "index")).st_size
                                   < LARGE_INDEX_BYTES):
                return None
        except OSError:
            return None
        return cls(source, rules, config, None)

    def run(self, pending: list[Entry], meanwhile: Any = None) -> Iterator[FileResult]:
        """Each file's results, in no particular order, a chunk's as soon as it is done.
        Each worker holds two chunks, so it never waits for this process between chunks;
        when all are done the workers are told to exit (close() then finds them gone)."""
        from multiprocessing.connection import wait

        chunks = _chunks(pending, self.size)
        chunks.reverse()  # handed out from the end
        held = dict.fromkeys(self.conns, 0)

        def hand_out(conn: Any) -> None:
            if chunks:
                try:
                    conn.send(chunks.pop())
                except OSError:
                    raise _lost() from None
                held[conn] += 1

        for _ in range(2):
            for conn in self.conns:
                hand_out(conn)
        if meanwhile is not None:
            meanwhile()
        while any(held.values()):
            for conn in wait([c for c, n in held.items() if n]):
                try:
                    ok, value = conn.recv()
                except (EOFError, OSError):
                    raise _lost() from None
                held[conn] -= 1
                if not ok:
                    raise value
                hand_out(conn)
                yield from value
        for conn in self.conns:
            conn.close()  # end of input: each worker exits while this process goes on

    def close(self) -> None:
        """Stop the workers (at once: they hold nothing to save); closing twice is fine.
        After a finished run they are exiting already; otherwise the first worker is told
        to stop, and it stops and reaps the others."""
        import signal

        if self.first is None:
            return
        for conn in self.conns:
            conn.close()
        try:
            if os.waitpid(self.first, os.WNOHANG) == (0, 0):
                os.kill(self.first, signal.SIGTERM)
                os.waitpid(self.first, 0)
        except ChildProcessError:
            pass  # reaped already
        self.first = None
        self._release()

    def _release(self) -> None:
        """Drop the job and give the collector back its settings."""
        import gc

        global _JOB
        _JOB = None
        gc.set_threshold(*self._thresholds)
        gc.unfreeze()


# The last chunks of a run hold about this many files (see _chunks).
MIN_CHUNK = 16


def _chunks(pending: list[Entry], workers: int) -> list[list[Entry]]:
    """Chunks for `workers` processes, each a fixed share of the files still left (guided
    scheduling): few hand-overs early, and near the end chunks so small that no core idles
    long while another finishes. The files are dealt out of the sorted list with a
    stride, so each chunk holds a like mix of kinds and sizes and costs about its length."""
    stride = 64
    order = [e for i in range(stride) for e in pending[i::stride]]
    out = []
    pos = 0
    while pos < len(order):
        n = max(MIN_CHUNK, (len(order) - pos) // (4 * workers))
        out.append(order[pos:pos + n])
        pos += n
    return out


def _lost() -> MemwardenError:
    return MemwardenError("a check worker process stopped before finishing its files; nothing "
                          "was decided for them: run the check again")


def _first_worker(parent_ends: list[Any], ends: list[Any]) -> NoReturn:
    """The first worker: warm up, fork the others (they start warm), serve its own pipe,
    then reap the others. Told to stop (SIGTERM), it stops them first. Ctrl-C is the
    parent's to handle. It never returns into the caller's code."""
    import signal

    others: list[int] = []
    code = 1
    try:
        for conn in parent_ends:
            conn.close()
        signal.signal(signal.SIGINT, signal.SIG_IGN)

        def stop(_signo: int, _frame: Any) -> None:
            for pid in others:
                _kill_and_reap(pid)
            os._exit(1)

        signal.signal(signal.SIGTERM, stop)
        _worker_start()
        # No stop between a fork and noting its pid: a sibling is never left running.
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})
        for i in range(1, len(ends)):
            pid = os.fork()
            if pid == 0:
                signal.signal(signal.SIGTERM, signal.SIG_DFL)
                signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})
                for j, end in enumerate(ends):
                    if j != i:
                        end.close()
                _serve(ends[i])
                os._exit(0)
            others.append(pid)
        for end in ends[1:]:
            end.close()
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})
        _serve(ends[0])
        for pid in others:
            os.waitpid(pid, 0)
        code = 0
    finally:
        os._exit(code)


def _kill_and_reap(pid: int) -> None:
    import signal

    try:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    except (ProcessLookupError, ChildProcessError):
        pass


def _serve(conn: Any) -> None:
    """Check each chunk the pipe brings until it closes. Errors go back to the parent,
    which raises them."""
    while True:
        try:
            chunk = conn.recv()
        except (EOFError, OSError):
            return
        try:
            reply: tuple[bool, Any] = (True, _evaluate_chunk(chunk))
        except Exception as exc:  # noqa: BLE001 - raised again in the parent
            reply = (False, exc)
        try:
            conn.send(reply)
        except OSError:
            return  # the parent is gone or stopped listening
        except Exception as exc:  # noqa: BLE001 - an exception that does not pickle
            conn.send((False, MemwardenError(f"check worker: {type(exc).__name__}: {exc}")))


def _worker_start() -> None:
    """A worker's warm-up: the tokenizer and the patterns (no-ops when the parent made
    them before forking). Errors are left for the check itself, which reports them."""
    global _JOB
    assert _JOB is not None
    source, rules, config, counter = _JOB
    if counter is None:
        _JOB = (source, rules, config, TokenCounter(config.encoding))
    try:
        if any(r.id.startswith("MW1") for r in rules):
            get_encoder(config.encoding)
    except Exception:  # noqa: BLE001 - reported when a file is counted
        pass
    _warm_families()


# Cold runs over at least this many files are spread over processes.
PARALLEL_FILES = 400
# Partial checks of at most this many paths keep token counts in the findings shards.
SMALL_CHECK = 32
_JOB: tuple[Source, list[Rule], Config, TokenCounter | None] | None = None


class FileResult:
    """One checked file's results, as a worker sends them back."""

    __slots__ = ("path", "blob_id", "stat_key", "findings", "counts", "frontmatter")

    def __init__(self, path: str, blob_id: str | None, stat_key: list[int] | None,
                 findings: list[Finding], counts: dict[str, int], frontmatter: Any = None
                 ) -> None:
        self.path = path
        self.blob_id = blob_id
        self.stat_key = stat_key
        self.findings = findings
        self.counts = counts
        self.frontmatter = frontmatter  # parsed frontmatter of contracts, for tree rules

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:  # (see Entry.__reduce__)
        return FileResult, (self.path, self.blob_id, self.stat_key, self.findings, self.counts,
                            self.frontmatter)


_SHARE_FRONTMATTER = frozenset({"agent_contract"})


def prepare_tree_rules(registry: MemFile | None) -> None:
    """Work out what MW207 needs from registry.json alone (parse, positions, schema), so
    the serial tree-rule pass after the workers is shorter."""
    if registry is None or registry.too_large or registry.text is None:
        return
    from memwarden.policies.rules.structure import registry_parts

    registry_parts(registry.text)


def evaluate_entries(source: Source, pending: list[Entry], rules: list[Rule], config: Config,
                     counter: TokenCounter, meanwhile: Any = None,
                     workers: _Workers | None = None) -> Iterator[FileResult]:
    """Read, hash and check each pending file: in this process for small jobs, else in
    forked workers on every core (`workers`, or forked now; rules are pure per file; only
    findings, blob ids and new token counts come back). Results come in no particular
    order, so the caller's bookkeeping runs while the workers work, as does `meanwhile()`."""
    if (workers is None and (os.cpu_count() or 1) < 2) or len(pending) < PARALLEL_FILES:
        if workers is not None:
            workers.close()  # started for a cold run that turned out small: not needed
        yield from _evaluate(source, pending, rules, config, counter)
        return
    if workers is not None:
        yield from workers.run(pending, meanwhile)
        return
    _warm_families()  # compile patterns once, before the fork, not once per worker
    late = _Workers(source, rules, config, counter)
    try:
        yield from late.run(pending, meanwhile)
    finally:
        late.close()


def _warm_families() -> None:
    """Compile the loaded rule families' patterns now (each family's `warm()`)."""
    for family in FAMILIES:
        warm = getattr(sys.modules.get(f"memwarden.policies.rules.{family}"), "warm", None)
        if warm is not None:
            warm()


def _evaluate(source: Source, pending: list[Entry], rules: list[Rule], config: Config,
              counter: TokenCounter, keep: bool = True) -> list[FileResult]:
    """Check each pending file; `keep` False (a worker: nothing after it needs the files)
    lets each file go once checked, so a worker does not hold its share of the repository
    for its garbage collections to walk."""
    ctx = FileContext(config, counter)
    by_kind: dict[str, list[Rule]] = {}  # the rules for each file kind, in rule order
    out = []
    for entry in pending:
        mf = source.load(entry)
        if not keep:
            source.forget(entry.path)  # its text, lines and frontmatter go with `mf` below
        if mf is None:
            out.append(FileResult(entry.path, None, None, [], {}))
            continue
        kind = mf.info.kind
        if kind not in by_kind:
            by_kind[kind] = [r for r in rules if r.kinds is None or kind in r.kinds]
        found = _run(by_kind[kind], mf, ctx)
        n = counter.cached(mf.blob_id)
        fm = mf.frontmatter if mf.info.kind in _SHARE_FRONTMATTER and mf.text else None
        out.append(FileResult(mf.path, mf.blob_id, mf.stat_key, found,
                              {mf.blob_id: n} if n is not None else {}, fm))
    return out


def _evaluate_chunk(chunk: list[Entry]) -> list[FileResult]:
    assert _JOB is not None
    source, rules, config, counter = _JOB
    assert counter is not None
    return _evaluate(source, chunk, rules, config, counter, keep=False)


def _tree_key(config: Config, blob_ids: dict[str, str], focus: set[str] | None) -> str:

    h = hashlib.sha256(config.fingerprint.encode())
    for path in sorted(blob_ids):
        h.update(f"{path}\0{blob_ids[path]}\n".encode("utf-8", "surrogateescape"))
    h.update(repr(sorted(focus) if focus is not None else None).encode())
    return h.hexdigest()


def _dedupe(findings: list[Finding]) -> list[Finding]:
    out: list[Finding] = []
    seen: set[Finding] = set()
    for f in findings:
        if f not in seen:
            seen.add(f)
            out.append(f)
    return out


def _run(rules: list[Rule], mf: MemFile, ctx: FileContext) -> list[Finding]:
    """The findings of `rules`, all meant for `mf`'s kind."""
    out: list[Finding] = []
    for r in rules:
        assert r.check is not None
        out.extend(r.check(mf, ctx))
    return out


def _context_paths(focus: set[str], source: Source) -> list[str]:
    """Files a partial check needs besides the focus: Layer 1 siblings, contracts, registry."""
    extra: set[str] = set()
    contracts = False
    for p in focus:
        info = classify(p)
        if info is None:
            continue
        if info.area == "memory" and info.agent:
            for name in LAYER1:
                extra.add(f"memory/{info.agent}/{name}")
        contracts = contracts or info.area in ("agents", "registry")
    if contracts:  # once: a glob per contract was quadratic
        extra.update(source.glob("agents/*/_agent.md"))
        extra.add("registry.json")
    return sorted(extra - focus)


def apply_waivers(findings: list[Finding], config: Config, today: _dt.date | None,
                  focus: set[str] | None) -> list[Finding]:
    """Mark findings matched by a live waiver; report expired waivers as MW001. `today`
    None is the local date (datetime is imported only when there are waivers)."""
    waivers = config.data.get("waivers", [])
    if not waivers:
        return findings
    import datetime as _dt

    today = today or _dt.date.today()
    live, expired = [], []
    for i, w in enumerate(waivers):
        (expired if _dt.date.fromisoformat(w["expires"]) < today else live).append((i, w))
    out = []
    for f in findings:
        if any(w["rule"] == f.rule and w["path"] == f.path and w["fingerprint"] == f.fingerprint
               for _, w in live):
            f = f.waive()
        out.append(f)
    if config.rule_enabled("MW001"):
        src = config.source or "memwarden.toml"
        for i, w in expired:
            if focus is None or w["path"] in focus or "memwarden.toml" in focus:
                line = _waiver_line(config.source, w["fingerprint"])
                out.append(make("MW001", ERROR, _config_path(src), line, 1,
                                f"waivers[{i}] for {w['rule']} on {w['path']} expired on "
                                f"{w['expires']}", w["fingerprint"],
                                "Renew it with a new date and reason, or remove it."))
    return out


def _config_path(src: str) -> str:
    return "memwarden.toml" if src.endswith("memwarden.toml") else src


def _waiver_line(source: str | None, needle: str) -> int:
    if not source:
        return 1
    try:
        with open(source, encoding="utf-8") as fh:
            text = fh.read()
        for n, line in enumerate(text.splitlines(), 1):
            if needle in line:
                return n
    except OSError:
        pass
    return 1


class FindingsCache:
    """File-rule findings per (blob id, path) for one effective config and version.

    Kept in sealed shards by path (cachedir.ShardedCache), so a
    one-file check reads and rewrites one small shard; findings are stored as plain tuples
    under "<blob>:<path>", token counts (for small partial checks) under "<blob>#<path>".
    A shard that is not intact, or written for another version or config, reads as empty
    and is rebuilt, never trusted. The latest tree-rule findings sit in their own file.
    """

    def __init__(self, cache_dir: str | Path | None, config: Config) -> None:
        self.cache_dir = cache_dir
        self.key = f"{__version__}:{config.fingerprint}"
        self.shards = ShardedCache(os.path.join(cache_dir, "findings") if cache_dir else None,
                                   ("findings", 3, self.key))
        self.tree: dict[str, list[tuple[Any, ...]]] | None = None
        self.tree_dirty = False

    @staticmethod
    def _decode(hit: list[tuple[Any, ...]] | None) -> list[Finding] | None:
        if hit is None:
            return None
        try:
            return [Finding(*t) for t in hit]
        except TypeError:
            return None  # a damaged entry is recomputed, never trusted

    @staticmethod
    def _encode(findings: list[Finding]) -> list[tuple[Any, ...]]:
        return [(f.path, f.line, f.col, f.rule, f.severity, f.message, f.fingerprint, f.hint,
                 f.waived) for f in findings]

    def get(self, blob: str, path: str) -> list[Finding] | None:
        return self._decode(self.shards.table(path)[1].get(f"{blob}:{path}"))

    def put(self, blob: str, path: str, findings: list[Finding]) -> None:
        if blob.startswith("large:"):
            return
        i, table = self.shards.table(path)
        table[f"{blob}:{path}"] = self._encode(findings)
        self.shards.dirty.add(i)

    def get_count(self, blob: str, path: str) -> int | None:
        """The token count remembered for a file (same encoding: the config is the key)."""
        n = self.shards.table(path)[1].get(f"{blob}#{path}")
        return n if isinstance(n, int) else None

    def put_count(self, blob: str, path: str, n: int) -> None:
        if blob.startswith("large:"):
            return
        i, table = self.shards.table(path)
        key = f"{blob}#{path}"
        if table.get(key) != n:
            table[key] = n
            self.shards.dirty.add(i)

    def _tree_path(self) -> str | None:
        return os.path.join(self.cache_dir, "tree.marshal") if self.cache_dir else None

    def get_tree(self, key: str) -> list[Finding] | None:
        if self.tree is None:
            self.tree = {}
            path = self._tree_path()
            raw = read_sealed(path, ("tree", 2, self.key)) if path is not None else None
            if isinstance(raw, dict):
                self.tree = raw
        return self._decode(self.tree.get(key))

    def put_tree(self, key: str, findings: list[Finding]) -> None:
        self.tree = {key: self._encode(findings)}  # only the latest tree is kept
        self.tree_dirty = True

    @property
    def dirty(self) -> bool:
        return self.tree_dirty or bool(self.shards.dirty)

    def save(self) -> None:
        if not self.dirty:
            return
        self.shards.save()
        path = self._tree_path()
        if self.tree_dirty and path is not None:
            write_sealed(path, ("tree", 2, self.key), self.tree)
            self.tree_dirty = False
