"""BM25 search over the memory committed in one tree.

The index is SQLite FTS5 from the standard library (tokenizer `unicode61 remove_diacritics
2`), one database file per git tree under `<git dir>/memwarden/search/`, so a query on an
unchanged commit opens a finished file and runs one MATCH. Scores are BM25 over exactly
the documents of that tree, never over whatever older trees happened to be indexed, so the
same commit and query always give the same results whatever the cache held before. A new
tree starts from a copy of the most recent index and re-indexes only the files whose blob
changed. Files are published by atomic rename, builds take a lock, and a file that does
not open or check out is deleted and rebuilt: the index is a cache, never trusted.

Documents are entries, not whole files, so an excerpt is the fact, loop or decision that
matched: in facts, open loops, snapshots, sources and other Markdown every top-level bullet
and every paragraph is one entry (the nearest heading is its section); in decisions,
changelog, timeline and run files a `##`/`###` heading and everything under it is one
block. Indexed: Markdown under `memory/<agent>/` (Layer 1 and Layer 2),
`logic/<agent>/current.pseudo.md`, and Markdown or text files in `agents/<slug>/sources/`.
A query covers Layer 1, logic and sources (one FTS table, shared statistics); Layer 2 has
its own table and is searched only on request.

Every file owns a block of 2**20 rowids placed in path order (new paths get a block
between their neighbours), so ordering by (score, rowid) breaks ties by path and line
inside SQLite, on fresh and incrementally built indexes alike. Large queries run as rowid
ranges on worker threads (bm25() statistics are table-wide, so scores do not change), and
a query holding a very common word skips rows that provably cannot reach the top k
(MaxScore, see SearchIndex._plan).
"""

from __future__ import annotations

import json
import math
import os
import queue
import re
import shutil
import sqlite3
import tempfile
import threading
import time
import unicodedata
from collections import deque
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memwarden.model.entries import FENCE_RE, HEADING_RE, body_start
from memwarden.model.errors import MemwardenError
from memwarden.model.layout import classify

SCHEMA = 1  # bump when chunking, folding or the table layout changes
TOKENIZER = "unicode61 remove_diacritics 2"
KEEP_INDEXES = 4  # tree databases kept; the least recently used beyond this are deleted
MAX_TERMS = 32  # distinct query words used (bounds the cost of a pasted paragraph)
MAX_TOP_K = 1000
EXCERPT_CHARS = 400  # longer entries are shown as a snippet around the best match
SNIPPET_TOKENS = 48
# FTS5's snippet() weighs every match against every other (quadratic): an entry with more
# words than this gets a linear snippet around its first match (long_snippet) instead.
SNIPPET_MAX_WORDS = 1000
BATCH_DOCS = 200  # files read and split per batch while SQLite indexes the last one
MAX_ENTRY_CHARS = 2000  # blocks longer than this are split at a blank line
MAX_DOC_BYTES = 4 * 1024 * 1024  # larger files are not indexed (as memfile.MAX_FILE_BYTES)
REBUILD_RATIO = 0.5  # a tree this different (and > 64 files) is built from scratch
MAX_GENERATIONS = 25  # incremental builds in a row before a compact fresh build
STALE_TEMP_SECONDS = 3600
MAX_SHARDS = 8  # a large query runs as up to this many rowid ranges on worker threads
MIN_SHARDED_ENTRIES = 20_000  # smaller indexes answer from one thread
THREADS = min(os.cpu_count() or 1, MAX_SHARDS)
BM25_K1 = 1.2  # FTS5's bm25() constant (fts5_aux.c), for the pruning bounds
FREQ_SHARE = 0.005  # words in at least this share of entries get their counts stored
FREQ_MIN = 100
STOP_SHARE = 0.1  # a query with a word in this share of entries uses the MaxScore plan
MMAP_BYTES = 1 << 30  # read indexes through the page cache, without copying pages
ROW_BITS = 20  # rowid = file base + entry ordinal; a file holds < 2**20 entries
ROW_SPAN = 1 << ROW_BITS
MAX_BASE = 1 << 62
BLOCK_KINDS = frozenset({"decisions", "changelog", "timeline", "run"})
SOURCE_SUFFIXES = (".md", ".markdown", ".txt")
LAYER_SCOPE = {1: "l1", 2: "l2"}
REGULAR = (0o100644, 0o100755)  # git modes of plain files (not links or submodules)

_BULLET = re.compile(r"^ ?(?:[-*+]|\d{1,9}[.)])(?:[ \t]|$)")
_LINE_BREAK = re.compile(r"\r\n|\r|\n")
_TREE_LINE = re.compile(rb"^tree ([0-9a-f]{40,64})\n")
# A query word: letters and digits (what unicode61 keeps), optionally ending in * (prefix).
_WORD = re.compile(r"([^\W_]+)(\*?)")

# How indexes were obtained in this process (tests and benchmarks read these).
STATS = {"cached": 0, "full": 0, "incremental": 0, "docs_indexed": 0}


@dataclass(frozen=True)
class Doc:
    """One indexable file of a tree."""

    path: str
    oid: str
    kind: str
    agent: str
    layer: int | None
    scope: str  # l1 | l2 | pseudo | src

    @property
    def table(self) -> str:
        return "fts2" if self.scope == "l2" else "fts"


@dataclass(frozen=True)
class Passage:
    """One indexed entry: lines [line, end_line] (1-based) of a file."""

    line: int
    end_line: int
    section: str
    body: str


class _Rebuild(Exception):
    """An incremental build is not possible or not worth it: build from scratch."""


def fold(text: str) -> str:
    """What the index sees: NFC (a decomposed й is й) with ё read as е. Neither moves a
    token boundary, so snippets computed on the stored text still line up."""
    if not text.isascii():
        text = unicodedata.normalize("NFC", text)
        if "ё" in text or "Ё" in text:
            text = text.replace("ё", "е").replace("Ё", "Е")
    return text


def agent_key(agent: str) -> str:
    """The agent as one FTS token (unicode61 splits slugs at '-')."""
    return "a" + agent.encode("utf-8", "surrogatepass").hex()


# ------------------------------------------------------------------------------ documents

def doc_for(path: str, oid: str, mode: int) -> Doc | None:
    """The Doc for a tree entry, or None when search does not index it."""
    if mode not in REGULAR:
        return None  # symlinks, submodules
    info = classify(path)
    if info is None or info.agent is None:
        return None
    if info.area == "memory":
        if not path.endswith(".md"):
            return None
        layer = info.layer or 2  # stray Markdown in memory/<agent>/ is explicit-only
        return Doc(path, oid, info.kind, info.agent, layer, LAYER_SCOPE[layer])
    if info.kind == "logic_pseudo":
        return Doc(path, oid, info.kind, info.agent, None, "pseudo")
    if info.kind == "agent_source" and path.lower().endswith(SOURCE_SUFFIXES):
        return Doc(path, oid, info.kind, info.agent, None, "src")
    return None


def decode(data: bytes) -> str | None:
    """Text of a blob, or None for binary, non-UTF-8 or oversized content."""
    if len(data) > MAX_DOC_BYTES or b"\x00" in data:
        return None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return None


def split_entries(text: str, blocks: bool) -> list[Passage]:
    """Cut a Markdown file into entries (the rules are in the module docstring).

    One pass over the lines with cheap first-character tests: a cold index splits the
    whole repository (275k entries for 1,000 agents), so this loop is on the clock."""
    lines = _LINE_BREAK.split(text)
    out: list[Passage] = []
    cur: list[str] = []  # lines of the entry being collected
    start = 0  # index of its first line
    section = ""
    chars = 0
    headings_only = True  # blocks mode: nothing but headings collected so far
    fence = ""

    def flush() -> None:
        body = "\n".join(cur).strip()
        if body:
            n = len(cur)
            while not cur[n - 1].strip():
                n -= 1
            out.append(Passage(start + 1, start + n, section, body))

    for i in range(body_start(lines), len(lines)):
        line = lines[i]
        stripped = line.lstrip(" ")
        first = stripped[:1]
        if fence:
            content = True
            if stripped.startswith(fence):
                fence = ""
        elif first in ("`", "~") and len(line) - len(stripped) <= 3 and FENCE_RE.match(line):
            fence = FENCE_RE.match(line).group(1)  # type: ignore[union-attr]
            content = True
        elif first == "#" and (h := HEADING_RE.match(line)) is not None:
            title = (h.group(2) or "").strip()
            if blocks and len(h.group(1)) > 1:
                if cur and not headings_only:
                    flush()
                    cur, chars, headings_only = [], 0, True
                # `## 2026-02-17` then `### 10:56 — run` make one block titled by both
                section = f"{section} › {title}" if cur and section else title
                if not cur:
                    start = i
                cur.append(line)
                chars += len(line) + 1
            else:
                flush()
                cur, chars, headings_only = [], 0, True
                section = title
            continue
        elif not stripped.strip():
            if not blocks or chars > MAX_ENTRY_CHARS:
                flush()
                cur, chars, headings_only = [], 0, True
            elif cur:
                cur.append(line)
            continue
        else:
            content = True
            if not blocks and cur and _BULLET.match(line):
                flush()
                cur, chars, headings_only = [], 0, True
        if not cur:
            start = i
        cur.append(line)
        chars += len(line) + 1
        headings_only = headings_only and not content
        if chars > 2 * MAX_ENTRY_CHARS and not fence:
            flush()
            cur, chars, headings_only = [], 0, True
    flush()
    return out


# -------------------------------------------------------------------------------- queries

def match_terms(query: str) -> list[str]:
    """The words of free text as quoted FTS5 phrases (`"word"`, or `"word"*` for a prefix).

    User text never reaches FTS5 syntax: `NOT`, `"`, `-`, `:`, `^` and parentheses are
    words or separators here; a word ending in `*` is a prefix search. Raises when the
    query is empty; returns [] when it holds no word at all (nothing can match)."""
    if not query or not query.strip():
        raise MemwardenError("search: the query is empty; give some words to look for")
    terms: list[str] = []
    # Marks left after NFC (a stress accent on a Cyrillic vowel) are dropped, as unicode61
    # drops them inside a word; otherwise they would split the word in two here.
    text = "".join(c for c in fold(query) if not unicodedata.combining(c))
    for word, star in _WORD.findall(text):
        term = f'"{word.lower()}"' + ("*" if star else "")
        if term not in terms:
            terms.append(term)
        if len(terms) >= MAX_TERMS:
            break
    return terms


def _words_at_most(text: str, limit: int) -> bool:
    """Whether `text` holds at most `limit` words. Every unicode61 token a query word can
    match holds one of these words, so its matches are at most as many."""
    return sum(1 for _ in zip(range(limit + 1), _WORD.finditer(text), strict=False)) <= limit


def _plain(word: str) -> str:
    """A word as unicode61 with remove_diacritics compares it: no marks, lower case."""
    word = fold(word)
    if not word.isascii():
        word = "".join(c for c in unicodedata.normalize("NFKD", word)
                       if not unicodedata.combining(c))
    return word.lower()


def long_snippet(body: str, terms: list[str], size: int = SNIPPET_TOKENS) -> str:
    """An excerpt of `size` words around the first word matching `terms` (match_terms
    output), in one pass over the text: for entries too long for FTS5's snippet()."""
    wanted = [(_plain(t[1:t.rindex('"')]), t.endswith("*")) for t in terms]
    before: deque[tuple[int, int]] = deque(maxlen=size // 4)
    after: list[tuple[int, int]] = []
    seen = 0  # words before the match, kept or not
    for m in _WORD.finditer(body):
        if after:
            after.append(m.span(1))
            if len(before) + len(after) >= size:
                break
            continue
        word = _plain(m.group(1))
        if any(word.startswith(w) if star else word == w for w, star in wanted):
            after.append(m.span(1))
        else:
            before.append(m.span(1))
            seen += 1
    if not after:  # no word matched as this reads it: the entry's first words
        before.clear()
        seen = 0
        after = [m.span(1) for _, m in zip(range(size), _WORD.finditer(body), strict=False)]
    spans = [*before, *after]
    if not spans:
        return body[:EXCERPT_CHARS]
    start = spans[0][0] if seen > len(before) else 0
    end = spans[-1][1]
    return ("…" if start else "") + body[start:end] + ("…" if body[end:].strip() else "")


def match_expression(query: str) -> str:
    """An FTS5 expression for free text: its words (match_terms) joined by OR."""
    return " OR ".join(match_terms(query))


def _any_of(terms: list[str]) -> str:
    return f"body : ({' OR '.join(terms)})"


def _expression(table: str, candidates: list[str], also: list[str],
                without: Sequence[str] = ()) -> str:
    """Rows holding a `candidates` word and none of `without`, scored on `candidates` and
    `also`: those join through an OR with the scope column's tokens, which every row has
    and whose column weighs 0, so they add their BM25 share where present without adding
    rows to score."""
    expr = _any_of(candidates)
    if also:
        every = "scope : l2" if table == "fts2" else \
            "scope : l1 OR scope : pseudo OR scope : src"
        expr = f"({expr} AND ({_any_of(also)} OR {every}))"
    if without:
        expr = f"({expr} NOT {_any_of(list(without))})"
    return expr


# ---------------------------------------------------------------------------- open index

class SearchIndex:
    """A finished index database of one tree, opened read-only."""

    def __init__(self, conn: sqlite3.Connection, path: Path, how: str,
                 ident: tuple[Any, ...] = ()) -> None:
        self.conn = conn
        self.path = path
        self.how = how  # cached | full | incremental
        self.ident = ident or (str(path),)  # (path, inode, size): which file exactly

    def close(self) -> None:
        self.conn.close()

    def meta(self, key: str) -> str | None:
        row = self.conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    def has_agent(self, agent: str) -> bool:
        row = self.conn.execute("SELECT 1 FROM agents WHERE agent = ?", (agent,)).fetchone()
        return row is not None

    def files(self, kind: str, agent: str) -> list[tuple[str, str]]:
        """(path, blob id) of the tree's files of `kind` for `agent`, by path."""
        return self.conn.execute(
            "SELECT path, oid FROM files WHERE kind = ? AND agent = ? ORDER BY path",
            (kind, agent)).fetchall()

    def query(self, terms: list[str], agent: str | None = None, layer: int | None = None,
              top_k: int = 10, exclude: Iterable[str] = (), text: bool = False
              ) -> list[dict[str, Any]]:
        """The best `top_k` entries for match_terms() output; score ties go by path, then
        line. `exclude`: paths left out; `text`: add the whole entry as "text"."""
        if not terms:
            return []
        table = "fts2" if layer == 2 else "fts"
        filters = ""
        if agent is not None:
            filters += f' AND akey : "{agent_key(agent)}"'
        if layer == 1:
            filters += " AND scope : l1"
        where, params = self._excluding(exclude)
        # bm25() spelled out: ~1.5x faster than FTS5's configurable `rank` column.
        sql = (f"SELECT rowid, bm25({table}, 1.0, 0.0, 0.0) AS s FROM {table} "  # noqa: S608
               f"WHERE {table} MATCH ?{where}")
        ranges = self._shards() if table == "fts" and agent is None else []

        def top(expr: str) -> list[tuple[int, float]]:
            expr = f"({expr}){filters}"
            if len(ranges) > 1:
                return self._parallel(sql, [expr, *params], ranges, top_k)
            return self.conn.execute(sql + " ORDER BY s, rowid LIMIT ?",
                                     (expr, *params, top_k)).fetchall()

        hits = self._describe(self._plan(table, terms, top_k, top))
        plain = f"({_any_of(terms)}){filters}"
        for h in hits:
            body = h["excerpt"]
            if text:
                h["text"] = body
            if len(body) > EXCERPT_CHARS:
                h["excerpt"] = self._snippet(table, plain, h["_rowid"]) \
                    if _words_at_most(body, SNIPPET_MAX_WORDS) else long_snippet(body, terms)
            del h["_rowid"]
        return hits

    def _plan(self, table: str, terms: list[str], top_k: int,
              top: Any) -> list[tuple[int, float]]:
        """Exact top-k without scoring every row that holds a frequent word (MaxScore).

        A word's BM25 share in any row is below bound = IDF * (k1 + 1). First score the
        rows holding a rare word or the rarest frequent word, on all words; their k-th
        score theta is at most the true k-th score, so rows holding only frequent words
        whose bounds add up to less than theta cannot make the top k and are never
        scored. The rows holding the remaining words but no word of the first query are
        scored second (the first query's words add nothing to them), and the two top-k
        lists merge. Frequent words' document counts are stored by the build (a lower
        bound after incremental builds, which only loosens the bound)."""
        n = int(self.meta(f"rows_{table}") or 0)
        counts = self._counts(table, terms)
        # Worth two queries only when a very common word ("the", "і") would otherwise
        # add most of the table to the rows to score.
        if len(terms) < 2 or not any(df >= STOP_SHARE * n for df in counts.values()):
            return top(_any_of(terms))
        bounds = {t: max(1e-6, math.log((n - df + 0.5) / (df + 0.5))) * (BM25_K1 + 1.0)
                  for t, df in counts.items()}
        first = [t for t in terms if t not in bounds]
        first.append(max((t for t in terms if t in bounds),
                         key=lambda t: (bounds[t], -terms.index(t))))
        first.sort(key=terms.index)
        rest = [t for t in terms if t not in first]
        rows = top(_expression(table, first, rest))
        theta = -rows[-1][1] if len(rows) >= top_k else 0.0
        skipped, total = [], 0.0
        for t in sorted(rest, key=lambda t: (bounds[t], terms.index(t))):
            if (total + bounds[t]) * (1 + 1e-9) >= theta:
                break
            skipped.append(t)
            total += bounds[t]
        second = [t for t in rest if t not in skipped]
        if second:
            more = top(_expression(table, second, [t for t in rest if t in skipped], first))
            rows = sorted(rows + more, key=lambda r: (r[1], r[0]))[:top_k]
        return rows

    def _counts(self, table: str, terms: list[str]) -> dict[str, int]:
        """Lower bounds of the number of rows holding each frequent plain word."""
        slack = int(self.meta(f"slack_{table}") or 0)
        out: dict[str, int] = {}
        for t in terms:
            if t.endswith("*"):
                continue  # a prefix stands for many words: always scored in full
            row = self.conn.execute("SELECT df FROM freq WHERE tbl = ? AND term = ?",
                                    (table, t[1:-1])).fetchone()
            if row and row[0] - slack > 0:
                out[t] = row[0] - slack
        return out

    def _shards(self) -> list[tuple[int, int]]:
        """Rowid ranges holding about equal numbers of entries, one per worker thread."""
        workers = THREADS
        bounds = json.loads(self.meta("shards") or "[]")
        if workers < 2 or len(bounds) < 2:
            return []
        step = (len(bounds) - 1) / workers
        cuts = sorted({bounds[round(i * step)] for i in range(workers + 1)})
        cuts[0], cuts[-1] = 0, MAX_BASE + ROW_SPAN  # whatever an incremental build added
        return list(zip(cuts, cuts[1:], strict=False))

    def _parallel(self, sql: str, params: list[Any], ranges: list[tuple[int, int]],
                  top_k: int) -> list[tuple[int, float]]:
        """Top-k of each rowid range on its own connection and thread, merged.

        Exact: bm25() takes N, average length and document frequencies from the whole
        table whatever the rowid constraint, so scores are the same as one query's, and
        SQLite steps without the GIL, so ranges run on all cores at once."""
        sql += " AND rowid >= ? AND rowid < ? ORDER BY s, rowid LIMIT ?"

        def run(rng: tuple[int, int]) -> list[tuple[int, float]]:
            conn = _worker_conn(self.ident, self.path)
            return conn.execute(sql, (*params, rng[0], rng[1], top_k)).fetchall()

        rows = [r for part in _pool().map(run, ranges) for r in part]
        rows.sort(key=lambda r: (r[1], r[0]))
        return rows[:top_k]

    def _excluding(self, paths: Iterable[str]) -> tuple[str, list[int]]:
        sql, params = "", []
        for path in sorted(set(paths)):
            row = self.conn.execute("SELECT base FROM files WHERE path = ?", (path,)).fetchone()
            if row and row[0] is not None:
                sql += " AND NOT (rowid >= ? AND rowid < ?)"
                params += [row[0], row[0] + ROW_SPAN]
        return sql, params

    def _describe(self, rows: list[tuple[int, float]]) -> list[dict[str, Any]]:
        out = []
        for rowid, rank in rows:
            line, end, section, body, path, kind, agent, layer = self.conn.execute(
                "SELECT c.line, c.end_line, c.section, c.body, f.path, f.kind, f.agent, "
                "f.layer FROM chunks c JOIN files f ON f.base = ? WHERE c.id = ?",
                (rowid >> ROW_BITS << ROW_BITS, rowid)).fetchone()
            out.append({"score": round(-rank, 6), "file": path, "line": line,
                        "end_line": end, "section": section, "excerpt": body,
                        "layer": layer, "agent": agent, "kind": kind, "_rowid": rowid})
        return out

    def _snippet(self, table: str, expr: str, rowid: int) -> str:
        row = self.conn.execute(
            f"SELECT snippet({table}, 0, '', '', '…', ?) FROM {table} "  # noqa: S608
            f"WHERE {table} MATCH ? AND rowid = ?", (SNIPPET_TOKENS, expr, rowid)).fetchone()
        return row[0] if row else ""


def tree_of(repo: Any, commit: str) -> str:
    """The tree id of a commit, from the commit object's first header line."""
    m = _TREE_LINE.match(repo.read_blob(commit))
    return m.group(1).decode() if m else commit


def index_dir(repo: Any) -> Path:
    return Path(repo.cache_dir) / "search" / f"v{SCHEMA}"


def _spare_dir(repo: Any) -> Path:
    """Where to keep indexes when the repository's own cache folder is read-only (a
    repository owned by another user): a per-user temp folder, one per git dir."""
    import hashlib

    user = os.getuid() if hasattr(os, "getuid") else os.environ.get("USERNAME", "user")
    key = hashlib.sha1(str(repo.git_dir).encode(), usedforsecurity=False).hexdigest()[:16]
    return Path(tempfile.gettempdir()) / f"memwarden-{user}" / key / "search" / f"v{SCHEMA}"


def find_index(repo: Any, commit: str) -> SearchIndex | None:
    """The finished index of `commit`'s tree if one is cached (never builds)."""
    return _find(repo, tree_of(repo, commit))


def _find(repo: Any, tree: str) -> SearchIndex | None:
    for folder in (index_dir(repo), _spare_dir(repo)):
        idx = _open_published(folder / f"{tree}.db", tree)
        if idx is not None:
            return idx
    return None


def open_index(repo: Any, commit: str) -> SearchIndex:
    """The index of `commit`'s tree: the cached file if sound, else built now."""
    tree = tree_of(repo, commit)
    idx = _find(repo, tree)
    if idx is not None:
        STATS["cached"] += 1
        _touch(idx.path)
        return idx
    folder = index_dir(repo)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        if not os.access(folder, os.W_OK):
            raise PermissionError(13, "not writable")
    except OSError:
        folder = _spare_dir(repo)
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise MemwardenError(f"search: cannot create an index folder ({folder}: "
                                 f"{exc.strerror})") from None
    target = folder / f"{tree}.db"
    with _build_lock(folder):
        idx = _open_published(target, tree)  # another process built it while we waited
        if idx is not None:
            STATS["cached"] += 1
            return idx
        try:
            how = _build(repo, commit, tree, folder, target)
        except (OSError, sqlite3.Error) as exc:  # disk full, read-only file system, ...
            raise MemwardenError(f"search: cannot build the index in {folder}: {exc}") \
                from None
        STATS[how] += 1
        _evict(folder, keep=target)
    idx = _open_published(target, tree)
    if idx is None:
        raise MemwardenError(f"search: the index {target} was built but does not open")
    idx.how = how
    return idx


def drop_index(idx: SearchIndex) -> None:
    """Forget an index that failed while being read (corrupt pages): it gets rebuilt."""
    idx.close()
    _unlink(idx.path)


def _connect_ro(path: Path) -> sqlite3.Connection:
    """A read-only connection. `immutable`: published files are only ever replaced by
    rename, never changed in place, so SQLite can skip locking and change checks."""
    conn = sqlite3.connect(path.resolve().as_uri() + "?mode=ro&immutable=1", uri=True,
                           check_same_thread=False)
    conn.execute(f"PRAGMA mmap_size = {MMAP_BYTES}")
    return conn


_pool_lock = threading.Lock()
_pool_obj: list[Any] = []
_local = threading.local()


def _pool() -> Any:
    """The worker threads for sharded queries (created on first use)."""
    with _pool_lock:
        if not _pool_obj:
            from concurrent.futures import ThreadPoolExecutor

            _pool_obj.append(ThreadPoolExecutor(MAX_SHARDS, "memwarden-search"))
        return _pool_obj[0]


def _worker_conn(ident: tuple[Any, ...], path: Path) -> sqlite3.Connection:
    """This worker thread's connection to one index file, kept for the next query (its
    page cache stays warm); at most two files per thread."""
    conns: dict[tuple[Any, ...], sqlite3.Connection] = getattr(_local, "conns", {})
    _local.conns = conns
    conn = conns.get(ident)
    if conn is None:
        while len(conns) >= 2:
            conns.pop(next(iter(conns))).close()
        conn = conns[ident] = _connect_ro(path)
    return conn


def _open_published(path: Path, tree: str) -> SearchIndex | None:
    """The finished index at `path`, or None when absent, foreign, truncated or corrupt
    (then the file is deleted so that it is rebuilt)."""
    try:
        st = path.stat()
    except OSError:
        return None
    size = st.st_size
    conn = None
    try:
        conn = _connect_ro(path)
        pages = conn.execute("PRAGMA page_count").fetchone()[0]
        page_size = conn.execute("PRAGMA page_size").fetchone()[0]
        meta = dict(conn.execute("SELECT key, value FROM meta").fetchall())
        if (pages * page_size != size or meta.get("schema") != str(SCHEMA)
                or meta.get("tree") != tree or meta.get("complete") != "1"):
            raise sqlite3.DatabaseError("not a finished index of this tree")
        return SearchIndex(conn, path, "cached", (str(path), st.st_ino, size))
    except sqlite3.Error:
        if conn is not None:
            conn.close()
        _unlink(path)
        return None


def _touch(path: Path) -> None:
    """Mark an index as recently used (eviction keeps the most recently used)."""
    try:
        os.utime(path)
    except OSError:
        pass


def _unlink(p: Path) -> None:
    try:
        p.unlink()
    except OSError:
        pass


@contextmanager
def _build_lock(folder: Path) -> Iterator[None]:
    """One builder at a time per repository; the others wait, then reuse its result."""
    try:
        import fcntl
    except ImportError:  # Windows: temp file + atomic rename still keep files whole
        yield
        return
    try:
        fh = open(folder / ".build.lock", "a+b")  # noqa: SIM115 - held for the block
    except OSError:
        yield
        return
    try:
        fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
        yield
    finally:
        fh.close()


# ---------------------------------------------------------------------------------- build

def _build(repo: Any, commit: str, tree: str, folder: Path, target: Path) -> str:
    """Write the index of `tree` to a temp file (from a copy of the most recently used
    index when the trees are close) and publish it by rename; "full" or "incremental"."""
    docs, others, agents = _scan_tree(repo, commit)
    fd, name = tempfile.mkstemp(dir=folder, prefix=".tmp-", suffix=".db")
    os.close(fd)
    tmp = Path(name)
    try:
        how = "incremental"
        deleted = {"fts": 0, "fts2": 0}
        conn = _incremental(repo, _pick_base(folder, target), tmp, docs, deleted)
        if conn is None:
            how = "full"
            _unlink(tmp)
            conn = _fresh(tmp)
            conn.execute("BEGIN")
            _full(repo, conn, docs)
        _statistics(conn, how, deleted)
        _finish(conn, tree, commit, others, agents, how)
        try:
            os.chmod(tmp, 0o644)  # mkstemp made it private; it is a cache like any other
        except OSError:
            pass
        os.replace(tmp, target)
    except BaseException:
        _unlink(tmp)
        raise
    return how


def _scan_tree(repo: Any, commit: str) -> tuple[dict[str, Doc], list[tuple[str, ...]],
                                                set[str]]:
    """Indexable docs by path, the other source files (path, oid, agent), all agents."""
    docs: dict[str, Doc] = {}
    others: list[tuple[str, ...]] = []
    agents: set[str] = set()
    for e in repo.tree_entries(commit):
        info = classify(e.path)
        if info is None or info.agent is None or e.oid is None:
            continue
        agents.add(info.agent)
        doc = doc_for(e.path, e.oid, e.mode)
        if doc is not None:
            docs[e.path] = doc
        elif info.kind == "agent_source" and e.mode in REGULAR:
            others.append((e.path, e.oid, info.agent))
    return docs, others, agents


def _pick_base(folder: Path, target: Path) -> Path | None:
    """The most recently used other index (the next tree usually differs little)."""
    best: tuple[float, str] | None = None
    for p in folder.glob("*.db"):
        if p == target or p.name.startswith("."):  # pathlib's glob matches .tmp- files
            continue
        try:
            key = (p.stat().st_mtime, p.name)
        except OSError:
            continue
        best = max(best, key) if best else key
    return folder / best[1] if best else None


def _tune(conn: sqlite3.Connection) -> None:
    # A private temp file published by rename: no journal and no fsync while writing.
    conn.execute("PRAGMA journal_mode = OFF")
    conn.execute("PRAGMA synchronous = OFF")
    conn.execute("PRAGMA cache_size = -65536")


def _fresh(path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(path, isolation_level=None)
    _tune(conn)
    fts = (f"USING fts5(body, akey, scope, content='content', content_rowid='id', "
           f"tokenize='{TOKENIZER}')")
    conn.executescript(f"""
        CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
        CREATE TABLE files (path TEXT PRIMARY KEY, base INTEGER UNIQUE, oid TEXT NOT NULL,
                            kind TEXT NOT NULL, agent TEXT NOT NULL, layer INTEGER,
                            scope TEXT, akey TEXT);
        CREATE INDEX files_agent ON files (agent, kind);
        CREATE TABLE agents (agent TEXT PRIMARY KEY);
        CREATE TABLE freq (tbl TEXT NOT NULL, term TEXT NOT NULL, df INTEGER NOT NULL,
                           PRIMARY KEY (tbl, term)) WITHOUT ROWID;
        CREATE TABLE chunks (id INTEGER PRIMARY KEY, line INTEGER NOT NULL,
                             end_line INTEGER NOT NULL, section TEXT NOT NULL,
                             body TEXT NOT NULL);
        CREATE VIEW content AS SELECT c.id AS id, c.body AS body, f.akey AS akey,
                                      f.scope AS scope
            FROM chunks c JOIN files f ON f.base = (c.id >> {ROW_BITS}) << {ROW_BITS};
        CREATE VIRTUAL TABLE fts {fts};
        CREATE VIRTUAL TABLE fts2 {fts};
    """)
    return conn


def _full(repo: Any, conn: sqlite3.Connection, docs: dict[str, Doc]) -> None:
    """Index every doc, bases spread evenly over the rowid space in path order."""
    paths = sorted(docs)
    stride = (MAX_BASE // (len(paths) + 1)) >> ROW_BITS << ROW_BITS
    bases = {p: (i + 1) * stride for i, p in enumerate(paths)}
    _insert(repo, conn, docs, bases)


def _insert(repo: Any, conn: sqlite3.Connection, docs: dict[str, Doc],
            bases: dict[str, int]) -> None:
    """Add the file rows and entries of `docs` at their rowid bases.

    Reading and splitting (Python) run in a thread while SQLite indexes the previous
    batch (it releases the GIL), which overlaps the two halves of a cold build."""
    conn.executemany("INSERT INTO files VALUES (?, ?, ?, ?, ?, ?, ?, ?)", [
        (d.path, bases[d.path], d.oid, d.kind, d.agent, d.layer, d.scope, agent_key(d.agent))
        for d in docs.values()])
    paths = sorted(docs)
    batches = [paths[i:i + BATCH_DOCS] for i in range(0, len(paths), BATCH_DOCS)]
    if len(batches) <= 1:
        for batch in batches:
            _write_batch(conn, _split_batch(repo, docs, bases, batch))
        return
    ready: queue.Queue[Any] = queue.Queue(maxsize=4)
    stop = threading.Event()

    def produce() -> None:
        try:
            for batch in batches:
                if stop.is_set():
                    return
                ready.put(_split_batch(repo, docs, bases, batch))
        except BaseException as exc:  # handed to the writer, which raises it
            ready.put(exc)
            return
        ready.put(None)

    worker = threading.Thread(target=produce, name="memwarden-search-split", daemon=True)
    worker.start()
    try:
        while (item := ready.get()) is not None:
            if isinstance(item, BaseException):
                raise item
            _write_batch(conn, item)
    finally:
        stop.set()
        while worker.is_alive():  # unblock a producer waiting on a full queue
            try:
                ready.get(timeout=0.05)
            except queue.Empty:
                pass
        worker.join()


def _split_batch(repo: Any, docs: dict[str, Doc], bases: dict[str, int],
                 paths: list[str]) -> tuple[list[tuple[Any, ...]], dict[str, list[Any]]]:
    """Rows for the chunks table and for each FTS table, for some docs."""
    chunks: list[tuple[Any, ...]] = []
    fts: dict[str, list[tuple[Any, ...]]] = {"fts": [], "fts2": []}
    for path in paths:
        doc = docs[path]
        text = decode(repo.read_blob(doc.oid))
        STATS["docs_indexed"] += 1
        if text is None:
            continue
        akey, rows = agent_key(doc.agent), fts[doc.table]
        passages = split_entries(text, doc.kind in BLOCK_KINDS)[:ROW_SPAN - 1]
        for n, e in enumerate(passages, start=bases[path] + 1):
            chunks.append((n, e.line, e.end_line, e.section, e.body))
            rows.append((n, fold(e.body), akey, doc.scope))
    return chunks, fts


def _write_batch(conn: sqlite3.Connection,
                 batch: tuple[list[tuple[Any, ...]], dict[str, list[Any]]]) -> None:
    chunks, fts = batch
    conn.executemany("INSERT INTO chunks VALUES (?, ?, ?, ?, ?)", chunks)
    for table, rows in fts.items():
        conn.executemany(f"INSERT INTO {table} (rowid, body, akey, scope) "  # noqa: S608
                         "VALUES (?, ?, ?, ?)", rows)


def _incremental(repo: Any, base: Path | None, tmp: Path, docs: dict[str, Doc],
                 deleted: dict[str, int]) -> sqlite3.Connection | None:
    """A copy of `base` brought up to `docs`, or None when a fresh build is better (no
    base, unreadable, other schema, too different, or too many generations old)."""
    if base is None:
        return None
    try:
        shutil.copyfile(base, tmp)
        conn = sqlite3.connect(tmp, isolation_level=None)
    except (OSError, sqlite3.Error):
        return None
    try:
        _tune(conn)
        meta = dict(conn.execute("SELECT key, value FROM meta").fetchall())
        if (meta.get("schema") != str(SCHEMA) or meta.get("complete") != "1"
                or int(meta.get("generation", "0")) >= MAX_GENERATIONS):
            raise _Rebuild
        old = {p: (b, o) for p, b, o in conn.execute(
            "SELECT path, base, oid FROM files WHERE base IS NOT NULL")}
        gone = sorted(p for p in old if p not in docs)
        changed = sorted(p for p in old if p in docs and docs[p].oid != old[p][1])
        added = sorted(p for p in docs if p not in old)
        if len(gone) + len(changed) + len(added) > max(64, REBUILD_RATIO * len(docs)):
            raise _Rebuild
        conn.execute("BEGIN")
        for path in gone + changed:
            _delete_entries(conn, old[path][0], deleted)
        conn.executemany("DELETE FROM files WHERE path = ?", [(p,) for p in gone])
        bases = {p: old[p][0] for p in changed}
        for path in added:  # in path order, so each new base sits between its neighbours
            bases[path] = _between(conn, path)
            conn.execute("INSERT INTO files (path, base, oid, kind, agent) "
                         "VALUES (?, ?, '', '', '')", (path, bases[path]))
        conn.executemany("DELETE FROM files WHERE path = ?", [(p,) for p in changed + added])
        _insert(repo, conn, {p: docs[p] for p in bases}, bases)
        return conn
    except (_Rebuild, sqlite3.Error, ValueError):
        conn.close()
        return None


def _between(conn: sqlite3.Connection, path: str) -> int:
    """A free rowid base between the bases of the paths just before and after `path`."""
    lo = conn.execute("SELECT base FROM files WHERE path < ? AND base IS NOT NULL "
                      "ORDER BY path DESC LIMIT 1", (path,)).fetchone()
    hi = conn.execute("SELECT base FROM files WHERE path > ? AND base IS NOT NULL "
                      "ORDER BY path LIMIT 1", (path,)).fetchone()
    low, high = (lo[0] if lo else 0), (hi[0] if hi else MAX_BASE + ROW_SPAN)
    mid = ((low + high) // 2) >> ROW_BITS << ROW_BITS
    if mid <= low or mid + ROW_SPAN > high:
        raise _Rebuild  # this corner of the rowid space is full: renumber everything
    return mid


def _delete_entries(conn: sqlite3.Connection, base: int, deleted: dict[str, int]) -> None:
    """Remove a file's entries (FTS5 external content: hand back the indexed values)."""
    rows = conn.execute(
        "SELECT c.id, c.body, f.akey, f.scope FROM chunks c JOIN files f ON f.base = ? "
        "WHERE c.id >= ? AND c.id < ?", (base, base, base + ROW_SPAN)).fetchall()
    for rowid, body, akey, scope in rows:
        table = "fts2" if scope == "l2" else "fts"
        deleted[table] += 1
        conn.execute(f"INSERT INTO {table} ({table}, rowid, body, akey, scope) "  # noqa: S608
                     "VALUES ('delete', ?, ?, ?, ?)", (rowid, fold(body), akey, scope))
    conn.execute("DELETE FROM chunks WHERE id >= ? AND id < ?", (base, base + ROW_SPAN))


def _statistics(conn: sqlite3.Connection, how: str, deleted: dict[str, int]) -> None:
    """Rows per FTS table and the document counts of frequent words, for _plan's bounds.

    A full build counts them (fts5vocab, one pass over the index). An incremental build
    recounts rows exactly but keeps the word counts, remembering how many rows were
    deleted since: a stored count minus that slack is still a lower bound."""
    for table in ("fts", "fts2"):
        conn.execute(f"CREATE VIRTUAL TABLE temp.vocab USING fts5vocab(main, {table}, col)")
        try:
            rows = conn.execute("SELECT coalesce(sum(doc), 0) FROM temp.vocab WHERE "
                                "col = 'scope' AND term IN ('l1', 'l2', 'pseudo', 'src')"
                                ).fetchone()[0]
            slack = deleted[table]
            if how == "full":
                floor = max(FREQ_MIN, int(rows * FREQ_SHARE))
                conn.execute("DELETE FROM freq WHERE tbl = ?", (table,))
                conn.execute("INSERT INTO freq SELECT ?, term, doc FROM temp.vocab "
                             "WHERE col = 'body' AND doc >= ?", (table, floor))
            else:
                row = conn.execute("SELECT value FROM meta WHERE key = ?",
                                   (f"slack_{table}",)).fetchone()
                slack += int(row[0]) if row else 0
            conn.executemany("INSERT OR REPLACE INTO meta VALUES (?, ?)", [
                (f"rows_{table}", str(rows)), (f"slack_{table}", str(slack))])
        finally:
            conn.execute("DROP TABLE temp.vocab")


def _finish(conn: sqlite3.Connection, tree: str, commit: str, others: list[tuple[str, ...]],
            agents: set[str], how: str) -> None:
    """Replace the non-indexed file rows, agents and metadata; commit; close."""
    gen = 0
    if how == "incremental":
        row = conn.execute("SELECT value FROM meta WHERE key = 'generation'").fetchone()
        gen = int(row[0]) + 1 if row else 1
    conn.execute("DELETE FROM files WHERE base IS NULL")
    conn.executemany("INSERT INTO files (path, oid, kind, agent) "
                     "VALUES (?, ?, 'agent_source', ?)", others)
    conn.execute("DELETE FROM agents")
    conn.executemany("INSERT INTO agents VALUES (?)", [(a,) for a in sorted(agents)])
    if how == "full":  # an incremental build keeps the base's ranges (any cuts are exact)
        ids = [r[0] for r in conn.execute("SELECT id FROM chunks ORDER BY id")]
        shards = [ids[i * len(ids) // MAX_SHARDS] for i in range(MAX_SHARDS)] + \
            [ids[-1] + 1] if len(ids) >= MIN_SHARDED_ENTRIES else []
        conn.execute("INSERT OR REPLACE INTO meta VALUES ('shards', ?)", (json.dumps(shards),))
    conn.executemany("INSERT OR REPLACE INTO meta VALUES (?, ?)", [
        ("schema", str(SCHEMA)), ("tree", tree), ("commit", commit),
        ("generation", str(gen)), ("complete", "1")])
    conn.execute("COMMIT")
    conn.close()


def _evict(folder: Path, keep: Path) -> None:
    """Delete all but the KEEP_INDEXES most recently used indexes, and stale temp files."""
    now = time.time()
    dbs: list[tuple[float, str]] = []
    for p in folder.iterdir():
        try:
            mtime = p.stat().st_mtime
        except OSError:
            continue
        if p.name.startswith(".tmp-"):
            if now - mtime > STALE_TEMP_SECONDS:
                _unlink(p)
        elif p.suffix == ".db" and p != keep:
            dbs.append((mtime, p.name))
    dbs.sort(reverse=True)
    for _, name in dbs[KEEP_INDEXES - 1:]:
        _unlink(folder / name)


# ------------------------------------------------------------------------------ front door

def resolve_rev(repo: Any, at: str | None, config: Any = None) -> str:
    """The commit to read: `at`, else the configured main branch, else HEAD."""
    if at:
        try:
            return repo.resolve_commit(at)
        except MemwardenError:
            raise MemwardenError(f"--at {at}: not a commit in this repository") from None
    from memwarden.read.budget import main_commit  # one rule for every read-side command

    return main_commit(repo, config)


def check_options(agent: str | None, layer: int | None, top_k: int) -> None:
    """Clear messages for option values the CLI types cannot rule out."""
    from memwarden.model.layout import AGENT_ID_RE

    if layer not in (None, 1, 2):
        raise MemwardenError(f"--layer {layer}: expected 1 or 2")
    if not 1 <= top_k <= MAX_TOP_K:
        raise MemwardenError(f"--top-k {top_k}: expected a number from 1 to {MAX_TOP_K}")
    if agent is not None and not AGENT_ID_RE.match(agent):
        raise MemwardenError(f"agent {agent!r}: not an agent id (lowercase letters, digits "
                             "and '-', starting with a letter or digit)")


def run_query(repo: Any, commit: str, terms: list[str], agent: str | None = None,
              layer: int | None = None, top_k: int = 10, exclude: Iterable[str] = (),
              text: bool = False) -> list[dict[str, Any]]:
    """Query the index of `commit`; an index that turns out corrupt is rebuilt once."""
    for attempt in (1, 2):
        idx = open_index(repo, commit)
        try:
            if agent is not None and not idx.has_agent(agent):
                raise MemwardenError(f"agent {agent}: not found at {commit[:12]} (nothing "
                                     f"under memory/{agent}/, agents/{agent}/ or "
                                     f"logic/{agent}/)")
            return idx.query(terms, agent, layer, top_k, exclude, text)
        except sqlite3.DatabaseError:
            drop_index(idx)
            if attempt == 2:
                raise MemwardenError(f"search: the index under {index_dir(repo)} keeps "
                                     "failing; delete that folder and retry") from None
        finally:
            idx.close()
    raise AssertionError("unreachable")


def search(repo: Any, query: str, agent: str | None = None, layer: int | None = None,
           top_k: int = 10, at: str | None = None, config: Any = None) -> list[dict[str, Any]]:
    """The BM25 top-k entries for `query` in the memory of a commit, best first.

    Each result: score (higher is better), file, line, end_line, section, excerpt, layer
    (1, 2, or None for logic and sources), agent, kind."""
    check_options(agent, layer, top_k)
    terms = match_terms(query)
    commit = resolve_rev(repo, at, config)
    return run_query(repo, commit, terms, agent, layer, top_k)
