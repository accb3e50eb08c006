"""The service core: every operation MCP and REST offer, over the same functions the CLI
calls (memwarden.read.*, memwarden.apply.propose, memwarden.apply.status).

Reads name one commit of the main branch, resolved per request (or `at`, a commit id on
main's history), so a reader never sees a half-landed apply and sees a new commit on its
next request. Results are cached by commit id (a commit fixes its tree), and a read of an
agent also by what it depends on (readcache.py), so landing another agent's change does
not make it be built again; the cache is bounded in entries and in bytes. Writes are
proposals: `memwarden propose`'s code, under one in-process lock, each a new branch
created exactly once; the service never moves main. Every operation checks the caller's
scope and agent first, so both fronts enforce the same rules.
"""

from __future__ import annotations

import datetime as _dt
import logging
import os
import re
import sys
import tempfile
import threading
import time
from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from memwarden.git.repo import Repo, limit_object_cache, open_repo
from memwarden.model.config import CONFIG_NAME, Config, load_config, load_config_at
from memwarden.model.errors import MemwardenError
from memwarden.read.budget import iso
from memwarden.read.reader import MODE_BUDGETS
from memwarden.service.errors import Principal, ServiceError
from memwarden.service.readcache import Basis, Facts, make_slot, patched, tokens_alone
from memwarden.service.request import check_request
from memwarden.version import __version__

AGENT_RE = re.compile(r"^[a-z0-9][a-z0-9-]{0,127}$")
ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")
COMMIT_RE = re.compile(r"^[0-9a-f]{7,40}$")
LABEL_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")
MODES = ("basic", "wide", "deep", "temporal")
MAX_TOP_K = 50
MAX_QUERY_CHARS = 1000
BLOB_MEMO = 4 << 20  # bytes of blobs each thread's Repo remembers (the CLI's is 64 MiB)
OBJECT_CACHE = 4 << 20  # libgit2's parsed objects, all repositories of the process
WRITER_RECYCLE = 100
TRIM_SECONDS = 10.0  # proposals written through one Repo before it is reopened
REPO_RECYCLE = 5000  # requests a thread's Repo serves before it is reopened (bounds caches)
WRITES = ("propose", "snapshot")  # the operations that take _write_lock
CACHE_BYTES = 64 << 20  # what finished responses may hold in memory ([service] cache_bytes)
_log = logging.getLogger("memwarden.service")



def _malloc_trim() -> Any:
    """glibc's malloc_trim, or None on other C libraries."""
    import ctypes

    try:
        return ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):
        return None


class _Cache:
    """A bounded LRU of finished responses keyed by (operation, commit, arguments), bounded
    both in entries and in the bytes its keys and values take (what a caller's distinct
    arguments can make it hold)."""

    def __init__(self, size: int, max_bytes: int = CACHE_BYTES) -> None:
        self.size = size
        self.max_bytes = max_bytes
        self.data: OrderedDict[tuple[Any, ...], tuple[Any, int]] = OrderedDict()
        self.bytes = 0
        self.lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def get(self, key: tuple[Any, ...]) -> Any:
        with self.lock:
            held = self.data.get(key)
            if held is None:
                self.misses += 1
                return None
            self.hits += 1
            self.data.move_to_end(key)
            return held[0]

    def put(self, key: tuple[Any, ...], value: Any) -> None:
        if self.size <= 0 or self.max_bytes <= 0:
            return
        n = footprint(key) + footprint(value)
        if n > self.max_bytes:
            return  # larger than the whole cache: keeping it would evict everything else
        with self.lock:
            old = self.data.pop(key, None)
            if old is not None:
                self.bytes -= old[1]
            self.data[key] = (value, n)
            self.bytes += n
            while len(self.data) > self.size or self.bytes > self.max_bytes:
                self.bytes -= self.data.popitem(last=False)[1][1]

    def state(self) -> dict[str, int]:
        with self.lock:
            return {"entries": len(self.data), "capacity": self.size, "bytes": self.bytes,
                    "capacityBytes": self.max_bytes, "hits": self.hits,
                    "misses": self.misses}


def footprint(value: Any) -> int:
    """The bytes `value` takes in memory (its objects' sys.getsizeof, summed without
    recursion); a shared object is counted each time it is met, which errs high."""
    total = 0
    stack = [value]
    while stack:
        v = stack.pop()
        total += sys.getsizeof(v)
        if isinstance(v, dict):
            stack.extend(v.keys())
            stack.extend(v.values())
        elif isinstance(v, (list, tuple)):
            stack.extend(v)
    return total


def _folders(repo: Repo, snapshot_dir: Path) -> tuple[str, ...]:
    """The server's own folders as an error message could name them: the repository, its
    caches (the search index, or the per-user one in the temp folder when the repository's
    is read-only) and the snapshots."""
    user = os.getuid() if hasattr(os, "getuid") else os.environ.get("USERNAME", "user")
    out = set()
    for folder in (repo.root, repo.git_dir, repo.cache_dir, snapshot_dir,
                   Path(tempfile.gettempdir()) / f"memwarden-{user}"):
        if folder is not None:
            out.update({str(folder), str(Path(folder).resolve())})
    return tuple(sorted(out))


def _names_folder(text: str, folders: tuple[str, ...], given: Any) -> bool:
    """Whether `text` names one of `folders` anywhere but inside a string of `given` (what
    the caller sent, walked through lists and dicts) that it echoes: a caller who sent a
    folder's name gets the usual answer, which confirms no guess of where the server keeps
    its files."""
    spans = []
    stack = [given]
    while stack:
        value = stack.pop()
        if isinstance(value, dict):
            stack.extend(value.keys())
            stack.extend(value.values())
        elif isinstance(value, list | tuple):
            stack.extend(value)
        elif isinstance(value, str) and any(f in value for f in folders):
            for echo in {value, repr(value)[1:-1]}:
                at = text.find(echo)
                while at >= 0:
                    if text[at + len(echo):at + len(echo) + 1] not in ("/", os.sep):
                        spans.append((at, at + len(echo)))  # not the head of a longer path
                    at = text.find(echo, at + 1)
    for folder in folders:
        at = text.find(folder)
        while at >= 0:
            if not any(a <= at and at + len(folder) <= b for a, b in spans):
                return True
            at = text.find(folder, at + 1)
    return False


def _check_since(since: Any) -> None:
    """A `since` the read functions can use, else 422 invalid_since (the same message for a
    date that is not one and for one outside the calendar in UTC)."""
    from memwarden.read.diff import parse_since

    if not isinstance(since, str):
        raise ServiceError(422, "invalid_since", f"since {since!r}: expected a date")
    try:
        parse_since(since)
    except MemwardenError:
        raise ServiceError(422, "invalid_since", f"since {since[:40]!r}: expected a date like "
                           "2026-02-10 or an ISO date-time like 2026-02-10T08:00:00Z, between "
                           "the years 1 and 9999") from None


def _proposal_taken(pid: str) -> ServiceError:
    """The one 409 for an id in use, whoever proposed it (so it tells nothing about them)."""
    return ServiceError(409, "proposal_exists", f"proposal id {pid!r} is taken; a retry of "
                        "the same request was already recorded (check it with "
                        "proposal-status), else choose another proposalId")


def service_config(repo: Repo, explicit: str | None) -> Config:
    """memwarden.toml for the service: --config, else the work tree's (or
    $MEMWARDEN_CONFIG), else the one committed on main (bare repositories)."""
    if explicit or repo.root is not None:
        return load_config(explicit, repo.root)
    main = load_config(None, None).data["main_branch"]
    return load_config_at(repo, repo.ref_target(f"refs/heads/{main}"))


class MemoryService:
    """One repository served to many callers (thread-safe)."""

    def __init__(self, repo_path: str | Path, config: Config | None = None,
                 config_path: str | None = None) -> None:
        repo = open_repo(Path(repo_path))
        if repo is None:
            raise MemwardenError(f"{repo_path}: not a git repository")
        self.git_dir = repo.git_dir
        self.start = repo.root or repo.git_dir
        self.config = config if config is not None else service_config(repo, config_path)
        self.settings: dict[str, Any] = self.config.data["service"]
        self.main_ref = f"refs/heads/{self.config.data['main_branch']}"
        self.cap = int(self.settings["max_tokens_cap"])
        self.cache = _Cache(int(self.settings["cache_entries"]),
                            int(self.settings.get("cache_bytes", CACHE_BYTES)))
        self._local = threading.local()
        self._commit_facts: dict[str, Facts] = {}
        self._trim = _malloc_trim()
        self._trimmed = time.monotonic()
        self.executor = ThreadPoolExecutor(int(self.settings["threads"]),
                                           thread_name_prefix="memwarden")
        self._write_lock = threading.Lock()
        self._write_slot: Any = None  # (event loop, its asyncio.Semaphore(1))
        self._writer: Repo | None = None
        self._writes = 0
        self._gone_logged = False  # whether the log has said the repository is gone
        self._applied: Any = None  # apply's AppliedIndex over the writer (ids on main)
        self._notes_tip: str | None = None
        self._noted: dict[str, str] = {}  # lifecycle note path -> its proposal id
        self.proposals_created = 0
        self.last_commit: str | None = None
        snap = self.settings.get("snapshot_dir") or ""
        self.snapshot_dir = Path(snap) if snap else self.git_dir / "memwarden" / "snapshots"
        self._folders = _folders(repo, self.snapshot_dir)
        # A long-running reader of a moving main: every new commit brings new trees, and
        # the hot ones (main's memory/ and the agents' folders) are far smaller than this.
        limit_object_cache(OBJECT_CACHE)

    # -- repositories --------------------------------------------------------------------

    def repo(self) -> Repo:
        """This thread's Repo (libgit2 objects are not shared between threads)."""
        loc = self._local
        repo = getattr(loc, "repo", None)
        loc.count = getattr(loc, "count", 0) + 1
        if repo is None or loc.count > REPO_RECYCLE:
            repo = open_repo(self.start)
            if repo is None:
                raise self._gone()
            repo._BLOB_MEMO_BYTES = BLOB_MEMO  # type: ignore[misc]  # per thread, so small
            loc.repo, loc.count = repo, 0
            self._gone_logged = False
        return repo

    def _gone(self) -> ServiceError:
        """The 503 for a served repository that is no longer one: its folder goes to the
        operator's log (once until it opens again, as every request would say it), never
        to a caller."""
        if not self._gone_logged:
            self._gone_logged = True
            _log.error("%s is no longer a git repository; the service answers 503 until it "
                       "is one again", self.start)
        return ServiceError(503, "repository_gone", "the server's repository is no longer "
                            "a git repository; the operator must fix the service")

    def head(self, repo: Repo) -> str:
        """The main branch's commit now (read per request: a new commit is seen at once)."""
        sha = repo.ref_target(self.main_ref)
        if sha is None:
            raise ServiceError(503, "no_main", f"the repository has no {self.main_ref}; "
                               "nothing to serve yet")
        self.last_commit = sha
        return sha

    def commit(self, repo: Repo, at: str | None, what: str = "at") -> str:
        """`at` (a commit id on main's history) or the main branch's commit."""
        head = self.head(repo)
        if at is None or at == "":
            return head
        if not isinstance(at, str) or not COMMIT_RE.match(at):
            raise ServiceError(422, "invalid_commit", f"{what} {at!r}: expected a commit id "
                               "(7-40 lowercase hex digits) from the main branch's history")
        # One answer for "no such commit" and "a commit off main": which ids exist (another
        # agent's proposal commits) must not leak.
        unknown = ServiceError(404, "unknown_commit", f"{what} {at}: no such commit on the "
                               "main branch's history; take a commit id from a read response "
                               "or `git log main`")
        try:
            sha = repo.resolve_commit(at)
        except MemwardenError:
            raise unknown from None
        if sha != head and not repo.is_ancestor(sha, head):
            raise unknown
        return sha

    def _agent(self, repo: Repo, commit: str, agent: Any) -> str:
        if not isinstance(agent, str) or not AGENT_RE.match(agent):
            raise ServiceError(422, "invalid_agent", f"agent {agent!r}: not an agent id "
                               "(lowercase letters, digits and '-', like archivist-violin)")
        if repo.subtree_id(commit, f"memory/{agent}") is None:
            raise ServiceError(404, "unknown_agent", f"agent {agent!r}: no memory/{agent}/ at "
                               f"{commit[:12]}; check the agent id")
        return agent

    def _budget(self, max_tokens: Any, default: int | None = None) -> int:
        if max_tokens is None:
            return default if default is not None else self.cap
        if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 1:
            raise ServiceError(422, "invalid_max_tokens", f"maxTokens {max_tokens!r}: expected "
                               "a positive integer")
        if max_tokens > self.cap:
            raise ServiceError(422, "max_tokens_over_cap", f"maxTokens {max_tokens} is over "
                               f"this server's cap of {self.cap}; ask for at most {self.cap} "
                               "(a smaller mode, or memory-layer2 for one file)")
        return max_tokens

    # -- reads -----------------------------------------------------------------------------

    def read(self, who: Principal, agent: str, mode: str = "basic",
             max_tokens: int | None = None, at: str | None = None,
             since: str | None = None) -> str:
        """The `memwarden read --format json` text for the same commit and budget."""
        from memwarden.read.budget import serialize
        from memwarden.read.reader import read_memory

        who.require("memory:read", agent)
        if mode not in MODES:
            raise ServiceError(422, "invalid_mode", f"mode {mode!r}: expected one of "
                               f"{', '.join(MODES)} (basic first; wide when you need facts)")
        if since is not None:
            # before any cache lookup: a cached answer must not make a bad since pass
            if mode != "temporal":
                raise ServiceError(422, "invalid_since", "since applies to mode temporal "
                                   "only; leave it out, or ask for mode temporal")
            _check_since(since)
        repo = self.repo()
        sha = self.commit(repo, at)
        budget = self._read_budget(mode, max_tokens)
        if mode != "temporal":
            hit = self._slot_read(repo, sha, agent, mode, budget, at is None)
            if hit is not None:
                return hit
        key = ("read", sha, agent, mode, budget, since)
        hit = self.cache.get(key)
        if hit is not None:
            return hit
        self._agent(repo, sha, agent)
        doc = self._run(read_memory, repo, agent, mode, max_tokens=budget, at=sha,
                        since=since)
        text = serialize(doc)
        if mode == "temporal" or at is not None:
            self.cache.put(key, text)
        else:  # since is None here (read_memory refuses it for other modes)
            facts = self._facts(repo, sha)
            self.cache.put(("slot", agent, mode, budget),
                           make_slot(doc, text, self._basis(repo, facts, agent, mode), facts))
        return text

    def cached_read(self, who: Principal, agent: str, mode: str = "basic",
                    max_tokens: int | None = None, since: str | None = None) -> str | None:
        """`read` of main now when its answer is cached (for this commit, or for another
        with the same memory/<agent>/), else None: a few object lookups, cheap enough for
        the event loop's thread, sparing the hop to a worker thread."""
        who.require("memory:read", agent)
        if mode not in MODES or mode == "temporal" or since is not None:
            return None
        repo = self.repo()
        return self._slot_read(repo, self.head(repo), agent, mode,
                               self._read_budget(mode, max_tokens), True)

    def _slot_read(self, repo: Repo, sha: str, agent: str, mode: str, budget: int | None,
                   keep: bool) -> str | None:
        """The cached response for (agent, mode, budget) when it was made at `sha`, or at
        a commit with the same basis (readcache.py); `keep` stores the patched text as the
        new slot (reads of main: the slot follows main)."""
        if not isinstance(agent, str) or not AGENT_RE.match(agent):
            return None  # read() refuses it with the usual message
        key = ("slot", agent, mode, budget)
        slot = self.cache.get(key)
        if slot is None:
            return None
        if slot.sha == sha:
            return slot.text
        facts = self._facts(repo, sha)
        if self._basis(repo, facts, agent, mode) != slot.basis:
            return None
        text = patched(slot, facts, MODE_BUDGETS[mode] if budget is None
                       else min(budget, MODE_BUDGETS[mode]))  # as read_memory
        if text is None:
            return None
        if keep:
            self.cache.put(key, slot._replace(text=text, sha=sha, date=facts.date))
        return text

    def _facts(self, repo: Repo, sha: str) -> Facts:
        """What every read at commit `sha` shares, remembered for the last few commits."""
        from memwarden.read.budget import config_at

        facts = self._commit_facts.get(sha)
        if facts is None:
            date = iso(repo.commit_time(sha))
            encoding = self._run(config_at, repo, sha).encoding
            facts = Facts(sha, date, date[:10], repo.subtree_id(sha, CONFIG_NAME), encoding,
                          tokens_alone(sha, encoding) + tokens_alone(date, encoding))
            if len(self._commit_facts) >= 64:
                self._commit_facts.clear()
            self._commit_facts[sha] = facts
            self._release_memory()
        return facts

    def _release_memory(self) -> None:
        """Hand the allocator's free pages back to the system, at most every TRIM_SECONDS,
        when main moves: glibc keeps what was freed inside its per-thread arenas (a
        response rebuilt on another thread leaves its old copy's pages there), and the
        process would keep them for good."""
        now = time.monotonic()
        if self._trim is None or now - self._trimmed < TRIM_SECONDS:
            return
        self._trimmed = now
        self._trim(0)

    def _basis(self, repo: Repo, facts: Facts, agent: str, mode: str) -> Basis:
        """What a read at `facts.sha` depends on besides the commit's id and date."""
        tree = repo.subtree_id(facts.sha, f"memory/{agent}")
        if tree is None:
            raise ServiceError(404, "unknown_agent", f"agent {agent!r}: no memory/{agent}/ at "
                               f"{facts.sha[:12]}; check the agent id")
        return Basis(tree, facts.config, facts.encoding, facts.day if mode == "deep" else None)

    def _read_budget(self, mode: str, max_tokens: int | None) -> int | None:
        from memwarden.read.reader import MODE_BUDGETS

        if max_tokens is None and MODE_BUDGETS[mode] <= self.cap:
            return None  # the mode's own budget, as the CLI without --max-tokens
        return self._budget(max_tokens, min(MODE_BUDGETS[mode], self.cap))

    def diff(self, who: Principal, agent: str, since: str | None = None,
             frm: str | None = None, to: str | None = None, files: list[str] | None = None,
             max_tokens: int | None = None) -> str:
        from memwarden.read.budget import serialize
        from memwarden.read.diff import memory_diff

        who.require("memory:read", agent)
        if (since is None) == (frm is None):
            raise ServiceError(422, "invalid_range", "give either since (a date) or from (a "
                               "commit id), with to optional (default: main)")
        repo = self.repo()
        to_sha = self.commit(repo, to, "to")
        frm_sha = self.commit(repo, frm, "from") if frm is not None else None
        budget = self._budget(max_tokens)
        key = ("diff", to_sha, agent, since, frm_sha, tuple(files or ()), budget)
        hit = self.cache.get(key)
        if hit is not None:
            return hit
        self._agent(repo, to_sha, agent)
        if since is not None:
            _check_since(since)
        text = serialize(self._run(memory_diff, repo, agent, since, frm_sha, to_sha,
                                   list(files) if files else None, budget, None,
                                   cache_dir=None))
        self.cache.put(key, text)
        return text

    def search(self, who: Principal, query: str, agent: str | None = None,
               layer: int | None = None, top_k: int = 10, at: str | None = None
               ) -> dict[str, Any]:
        """As `memwarden search --format json`. Without `agent` it spans every agent, so it
        needs a principal that reads everything."""
        from memwarden.read.search import check_options, match_terms, run_query

        who.require("memory:read", agent)
        if agent is None and not who.reads_everything:
            raise ServiceError(403, "search_scope", "searching every agent needs a grant for "
                               "all agents; pass agent=<your agent id> to search your memory")
        if not isinstance(query, str) or not query.strip() or len(query) > MAX_QUERY_CHARS:
            raise ServiceError(422, "invalid_query", f"q: give 1 to {MAX_QUERY_CHARS} "
                               "characters of words to search for")
        if isinstance(top_k, bool) or not isinstance(top_k, int) or not 1 <= top_k <= MAX_TOP_K:
            raise ServiceError(422, "invalid_top_k", f"top_k {top_k!r}: expected 1 to "
                               f"{MAX_TOP_K}")
        if layer not in (None, 1, 2):
            raise ServiceError(422, "invalid_layer", f"layer {layer!r}: expected 1 or 2")
        repo = self.repo()
        sha = self.commit(repo, at)
        if agent is not None:
            self._agent(repo, sha, agent)
        key = ("search", sha, query, agent, layer, top_k)
        hit = self.cache.get(key)
        if hit is not None:
            return hit
        self._run(check_options, agent, layer, top_k)
        terms = self._run(match_terms, query)
        doc = {"query": query, "commit": sha,
               "results": self._run(run_query, repo, sha, terms, agent, layer, top_k)}
        self.cache.put(key, doc)
        return doc

    def context(self, who: Principal, agent: str, hint: str | None = None,
                max_tokens: int | None = None, top_k: int = 10, at: str | None = None
                ) -> dict[str, Any]:
        """As `memwarden context --budget N` (the budget is at most the server's cap). The
        hint searches only `agent`'s files unless the caller may read every agent (the
        grant a search of every agent needs)."""
        from memwarden.read.context import build_context

        who.require("memory:read", agent)
        if hint is not None and (not isinstance(hint, str) or len(hint) > MAX_QUERY_CHARS):
            raise ServiceError(422, "invalid_hint", f"hint: at most {MAX_QUERY_CHARS} "
                               "characters")
        if isinstance(top_k, bool) or not isinstance(top_k, int) or not 1 <= top_k <= MAX_TOP_K:
            raise ServiceError(422, "invalid_top_k", f"top_k {top_k!r}: expected 1 to "
                               f"{MAX_TOP_K}")
        budget = self._budget(max_tokens)
        repo = self.repo()
        sha = self.commit(repo, at)
        scope = None if who.reads_everything else agent
        key = ("context", sha, agent, hint, budget, top_k, scope)
        hit = self.cache.get(key)
        if hit is not None:
            return hit
        self._agent(repo, sha, agent)
        doc = self._run(build_context, repo, agent, hint, budget, top_k, sha,
                        search_agent=scope)
        self.cache.put(key, doc)
        return doc

    def layer2(self, who: Principal, agent: str, file: str, max_tokens: int | None = None,
               at: str | None = None) -> dict[str, Any]:
        """One Layer 2 file (decisions, changelog, relationships, timeline/, runs/) on
        explicit request, cut at a line boundary to the budget (reported)."""
        from memwarden.model.layout import classify
        from memwarden.read.budget import config_at, decode
        from memwarden.tokens.counter import count_text

        who.require("memory:read", agent)
        if (not isinstance(file, str) or not file or len(file) > 200 or file.startswith("/")
                or any(p in ("", ".", "..") for p in file.split("/")) or "\\" in file):
            raise ServiceError(422, "invalid_file", f"file {file!r}: expected a path inside "
                               f"memory/{agent}/ like decisions.md or timeline/2026-02-17.md")
        path = f"memory/{agent}/{file}"
        info = classify(path)
        if info is None or info.agent != agent or info.layer != 2:
            raise ServiceError(422, "not_layer2", f"file {file!r} is not a Layer 2 file; use "
                               "decisions.md, changelog.md, relationships.md, "
                               "timeline/<date>.md or runs/run_<id>.md (Layer 1 comes from "
                               "read-memory)")
        budget = self._budget(max_tokens)
        repo = self.repo()
        sha = self.commit(repo, at)
        key = ("layer2", sha, path, budget)
        hit = self.cache.get(key)
        if hit is not None:
            return hit
        self._agent(repo, sha, agent)
        data = repo.read_path(sha, path)
        if data is None:
            raise ServiceError(404, "no_such_file", f"{path} does not exist at {sha[:12]}; "
                               "memory-search with layer=2 finds Layer 2 files")
        text = decode(data)
        if text is None:
            raise ServiceError(422, "not_text", f"{path} is not UTF-8 text")
        encoding = self._run(config_at, repo, sha).encoding
        lines = text.splitlines(keepends=True)
        total = count_text(text, encoding)
        kept, tokens = lines, total
        if total > budget:  # whole lines from the top while they fit
            kept, tokens = [], 0
            for line in lines:
                n = count_text(line, encoding)
                if tokens + n > budget:
                    break
                kept.append(line)
                tokens += n
        doc = {"agentId": agent, "commit": sha, "file": file, "layer": 2,
               "tokenCount": tokens, "totalTokens": total, "content": "".join(kept),
               "truncated": len(kept) < len(lines),
               "lines": {"shown": len(kept), "total": len(lines)}}
        self.cache.put(key, doc)
        return doc

    def entity(self, who: Principal, entity_id: str | None = None, at: str | None = None,
               limit: int = 100) -> dict[str, Any]:
        """One entity with its edges (as `memwarden entities ID --format json`), or without
        an id the first `limit` entity ids (the whole graph can be large)."""
        from memwarden.read.entities import entity_graph, node_view

        who.require("memory:read")
        if entity_id is not None and (not isinstance(entity_id, str) or not entity_id.strip()
                                      or len(entity_id) > 200):
            raise ServiceError(422, "invalid_entity", "entity id: 1 to 200 characters, like "
                               "person:ivan-petrenko or a plain name")
        repo = self.repo()
        sha = self.commit(repo, at)
        graph = self.cache.get(("entities", sha))
        if graph is None:
            graph = self._run(entity_graph, repo, sha)
            self.cache.put(("entities", sha), graph)
        if entity_id is None:
            nodes = graph["nodes"]
            return {"commit": sha, "total": len(nodes),
                    "entities": [n["entity_id"] for n in nodes[:limit]],
                    "truncated": len(nodes) > limit}
        view = node_view(graph, entity_id)
        if view is None:
            raise ServiceError(404, "unknown_entity", f"unknown entity {entity_id!r} at "
                               f"{sha[:12]}; call memory-entities without an id to list them")
        return view

    def proposal_status(self, who: Principal, proposal_id: str) -> dict[str, Any]:
        """As `memwarden status ID --format json`; only for the caller's agents."""
        from memwarden.apply.status import status

        if not (who.has("memory:read") or who.has("memory:propose")):
            who.require("memory:read")
        if not isinstance(proposal_id, str) or not ID_RE.match(proposal_id):
            raise ServiceError(422, "invalid_proposal_id", f"proposal id {proposal_id!r}: "
                               "expected [A-Za-z0-9][A-Za-z0-9._-]* as propose returned it")
        repo = self.repo()
        self.head(repo)
        config = self._main_config(repo)
        # One answer for "no such proposal" and "another agent's": ids must not leak.
        unknown = ServiceError(404, "unknown_proposal", f"no proposal {proposal_id!r} of "
                               "yours; check the id propose-memory-update returned")
        try:
            doc = status(repo, config, proposal_id)
        except MemwardenError:
            raise unknown from None
        agent = doc.get("agentId")
        if not isinstance(agent, str) or not who.acts_for(agent):
            raise unknown
        return doc

    # -- writes ----------------------------------------------------------------------------

    def snapshot(self, who: Principal, agent: str, label: str, at: str | None = None
                 ) -> dict[str, Any]:
        """`memwarden snapshot AGENT --label L` into the service's snapshot folder."""
        from memwarden.read.snapshot import write_agent_snapshot

        who.require("memory:snapshot", agent)
        if not isinstance(label, str) or not LABEL_RE.match(label):
            raise ServiceError(422, "invalid_label", f"label {label!r}: expected "
                               "[A-Za-z0-9][A-Za-z0-9._-]*, at most 100 characters")
        repo = self.repo()
        sha = self.commit(repo, at)
        self._agent(repo, sha, agent)
        out = self.snapshot_dir / agent / f"{label}.tar.gz"
        with self._write_lock:
            if out.exists():
                raise ServiceError(409, "label_taken", f"a snapshot labelled {label!r} of "
                                   f"{agent} exists already; choose another label")
            out.parent.mkdir(parents=True, exist_ok=True)
            return self._run(write_agent_snapshot, repo, agent, label, sha, out, False)

    def propose(self, who: Principal, agent: str, request: Any,
                now: _dt.datetime | None = None) -> dict[str, Any]:
        """`memwarden propose` for `agent`: one new branch with one commit, or nothing."""
        from memwarden.apply.propose import parse_request, propose

        who.require("memory:propose", agent)
        if not isinstance(agent, str) or not AGENT_RE.match(agent):
            raise ServiceError(422, "invalid_agent", f"agent {agent!r}: not an agent id")
        doc = check_request(agent, request, int(self.settings["max_updates"]),
                            int(self.settings["max_update_bytes"]))
        with self._write_lock:
            repo = self._writer_repo()
            head = self.head(repo)
            self._agent(repo, head, agent)
            config = self._run(load_config_at, repo, head)
            pid = self._run(parse_request, doc, config).proposal
            if self._proposal_known(repo, config, head, pid):
                raise _proposal_taken(pid)
            try:
                result = propose(repo, config, doc, head, now)
            except MemwardenError as exc:
                if str(exc).startswith("branch ") and "already exists" in str(exc):
                    raise _proposal_taken(pid) from None
                raise self._refusal(exc, doc) from None
            self.proposals_created += 1
        out = result.to_json()
        out["agentId"] = agent
        out["base"] = head
        return out

    def _proposal_known(self, repo: Repo, config: Config, main: str, pid: str) -> bool:
        """Whether any agent's proposal already has the id `pid`: a branch, an applied
        commit on main, or a lifecycle note (ids are global: apply and status look a
        proposal up by its id alone). Only under the write lock."""
        from memwarden.apply import lifecycle
        from memwarden.apply.apply import AppliedIndex

        prefix = "refs/heads/" + config.data["proposal_prefix"]
        if any(r.rsplit("/", 1)[-1] == pid for r in repo.refs(prefix)):
            return True
        if self._applied is None or self._applied.repo is not repo:
            self._applied = AppliedIndex(repo)  # walks main once, then only new commits
        if self._applied.lookup(main, pid):
            return True
        notes = repo.ref_target(lifecycle.NOTES_REF)
        if notes is not None and notes != self._notes_tip:
            for e in repo.tree_entries(notes, everything=True):
                if e.oid is not None and e.path not in self._noted:
                    # a note's first event names its proposal, and later events keep it
                    events = lifecycle.parse_note(repo.read_blob(e.oid))
                    if events:
                        self._noted[e.path] = str(events[0].get("proposalId"))
            self._notes_tip = notes
        return pid in self._noted.values()

    def _writer_repo(self) -> Repo:
        """The Repo proposals are written through (only under the write lock); reopened now
        and then so what it remembers of written commits stays bounded."""
        self._writes += 1
        if self._writer is None or self._writes > WRITER_RECYCLE:
            self._writer = open_repo(self.start)
            self._writes = 0
            if self._writer is None:
                raise self._gone()
            self._writer._BLOB_MEMO_BYTES = BLOB_MEMO  # type: ignore[misc]
        return self._writer

    def _main_config(self, repo: Repo) -> Config:
        from memwarden.read.budget import config_at

        return self._run(config_at, repo, self.head(repo))

    # -- health ------------------------------------------------------------------------------

    def health(self) -> dict[str, Any]:
        repo = self.repo()
        sha = repo.ref_target(self.main_ref)
        # only what docs/service.md lists: /health needs no token
        return {"status": "ok" if sha else "no_main", "version": __version__,
                "commit": sha, "cache": self.cache.state(),
                "proposalsCreated": self.proposals_created}

    async def call(self, method: Any, *args: Any, **kwargs: Any) -> Any:
        """Run a blocking core method on the service's threads (a fixed set, so the
        per-thread repositories stay few) from async code."""
        import asyncio
        import functools

        loop = asyncio.get_running_loop()
        run = functools.partial(method, *args, **kwargs)
        if getattr(method, "__self__", None) is self and method.__name__ in WRITES:
            # Writes run one at a time under _write_lock anyway: queued here instead of on
            # the threads, a burst of proposals cannot hold every thread reads need.
            if self._write_slot is None or self._write_slot[0] is not loop:
                self._write_slot = (loop, asyncio.Semaphore(1))  # a semaphore is per loop
            async with self._write_slot[1]:
                return await loop.run_in_executor(self.executor, run)
        return await loop.run_in_executor(self.executor, run)

    def close(self) -> None:
        self.executor.shutdown(wait=True)

    def _run(self, fn: Any, *args: Any, **kwargs: Any) -> Any:
        """Call into the core, turning its user errors into 422 with the same message."""
        try:
            return fn(*args, **kwargs)
        except ServiceError:
            raise
        except MemwardenError as exc:
            raise self._refusal(exc, (args, kwargs)) from None

    def _refusal(self, exc: MemwardenError, given: Any = ()) -> ServiceError:
        """The refusal for an error of the core: 422 with its message, unless the message
        names one of the server's own folders (other than in what the caller sent,
        `given`), which is the operator's business (the log gets it) and no caller's: then
        a message that names none."""
        text = str(exc)
        if not _names_folder(text, self._folders, given):
            return ServiceError(422, "invalid_request", text)
        _log.warning("%s", text)
        if text.startswith("search:"):
            return ServiceError(503, "search_unavailable", "the search index on the server "
                                "is damaged and rebuilding it did not help; retry later, "
                                "and tell the operator, whose log names the folder to "
                                "delete (the index is a cache, built again on the next "
                                "search)")
        return ServiceError(500, "internal_error", "the server failed on its own files for "
                            "this request; the operator's log has the details")
