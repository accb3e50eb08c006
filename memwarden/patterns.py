"""Regular expressions compiled from a per-user cache, for pattern sets compiled in bulk.

Python's `re` parses and compiles every pattern in Python code. The injection scanner's
full set (~150 patterns, mostly tries of every trigger word) costs ~0.14 s per process,
which a cold whole-tree check pays on one core before it forks its workers. `_sre` takes
the compiled program itself (a list of ints it validates), so inside `cached()` each
pattern's program is looked up in a sealed file in the user cache folder, one file per
Python build, and compiled from there in microseconds (~6 ms for the whole set). The file
is rewritten when the block compiled something new or left entries unused.

The file has the trust of the installed package: it sits in the user's own cache folder
and is sealed with a checksum against torn writes, and _sre refuses malformed programs.
Any failure falls back to `re.compile`: another Python's private compiler, a missing
home, an unreadable or foreign file. The patterns are the same either way; only the time
differs. tests/test_patterns.py checks both give equal patterns that match alike.
"""

from __future__ import annotations

import os
import re
import sys

TYPE_CHECKING = False  # `typing` costs a one-file hook ~5 ms: annotations only
if TYPE_CHECKING:
    from pathlib import Path  # with urllib.parse: ~4 ms of a one-file hook
    from typing import Any

# (pattern, flags) -> (flags, program, groups, group index, index group): _sre.compile's
# arguments after the pattern.
Program = tuple[int, list[int], int, dict[str, int], tuple[str | None, ...]]
Key = tuple[str | bytes, int]  # (pattern, flags)

MAGIC = b"MWRE\x01\x00\x00\x00"
_active: dict[tuple[str, int], Program] | None = None
_used: set[tuple[str, int]] = set()
_added = False


def compile(pattern: str, flags: int = 0) -> re.Pattern[str]:  # noqa: A001 - re's name
    """re.compile(pattern, flags); from the cached program inside a `cached()` block."""
    global _added
    table = _active
    if table is None:
        return re.compile(pattern, flags)
    key = (pattern, int(flags))
    program = table.get(key)
    if program is not None:
        try:
            compiled = _from_program(pattern, program)
        except Exception:  # noqa: BLE001 - a program this Python rejects: compile afresh
            table.pop(key, None)
        else:
            _used.add(key)
            return compiled
    try:
        program = _program(pattern, int(flags))
        compiled = _from_program(pattern, program)
    except Exception:  # noqa: BLE001 - the private compiler differs: the public one
        return re.compile(pattern, flags)
    table[key] = program
    _used.add(key)
    _added = True
    return compiled


class cached:  # lower case: used as `with patterns.cached():`, like a function
    """Compile through the cache file in `cache_dir` (default: the user cache folder) while
    the block runs; store what is new afterwards. Not re-entrant (one bulk compile).
    A plain class rather than a contextlib generator: contextlib is ~1 ms of a hook run."""

    def __init__(self, cache_dir: str | Path | None = None) -> None:
        self._dir = cache_dir
        self._path: str | None = None

    def __enter__(self) -> None:
        global _active, _added
        path = _cache_path(self._dir)
        if path is None or _active is not None:
            return
        self._path = path
        _active, _added = _read(path), False
        _used.clear()

    def __exit__(self, *exc: object) -> None:
        global _active
        if self._path is None:
            return
        table, added = _active, _added
        _active = None
        assert table is not None
        if added or set(table) - _used:
            _write(self._path, {k: table[k] for k in _used if k in table})
        _used.clear()
        self._path = None


def preload(name: str, cache_dir: str | Path | None = None) -> set[Key]:
    """Put the stored programs of pattern set `name` into `re`'s own cache, so the
    `re.compile` calls a run makes (module-level patterns included: call this before the
    imports) find their patterns compiled. Returns the keys put there (for `remember`).
    Does nothing where `re` keeps no such cache."""
    try:
        return _preload(name, cache_dir)
    except Exception:  # noqa: BLE001 - only a cache: the patterns compile as usual
        return set()


def _preload(name: str, cache_dir: str | Path | None) -> set[Key]:
    cache = getattr(re, "_cache", None)
    path = _cache_path(cache_dir, name)
    if not isinstance(cache, dict) or path is None:
        return set()
    put: set[Key] = set()
    for key, program in _read(path).items():
        pattern, flags = key
        if (type(pattern), pattern, flags) in cache:
            put.add(key)
            continue
        try:
            cache[type(pattern), pattern, flags] = _from_program(pattern, program)
        except Exception:  # noqa: BLE001 - another build's program: compiled when used
            continue
        put.add(key)
    return put


def remember(name: str, loaded: set[Key], cache_dir: str | Path | None = None) -> None:
    """Store the programs of the patterns `re` compiled in this run beyond the `loaded`
    ones (the first runs of a new version; later runs find nothing new and write nothing)."""
    try:
        _remember(name, loaded, cache_dir)
    except Exception:  # noqa: BLE001 - only a cache
        pass


def _remember(name: str, loaded: set[Key], cache_dir: str | Path | None) -> None:
    cache = getattr(re, "_cache", None)
    path = _cache_path(cache_dir, name)
    if not isinstance(cache, dict) or path is None:
        return
    new = {(k[1], k[2]) for k in list(cache)
           if len(k) == 3 and k[0] in (str, bytes) and isinstance(k[2], int)} - loaded
    if not new:
        return
    table = _read(path)
    if len(table) + len(new) > MAX_PRELOAD:
        table = {}  # grown with patterns no run uses now: start over from this run's
    for key in new:
        try:
            table[key] = _program(*key)
        except Exception:  # noqa: BLE001 - not ours to store
            continue
    _write(path, table)


MAX_PRELOAD = 300  # re keeps 512 patterns; a check compiles ~70


def _program(pattern: str | bytes, flags: int) -> Program:
    """What re._compiler.compile hands to _sre.compile, as plain marshal-able values."""
    from re import _compiler, _parser  # type: ignore[attr-defined]

    parsed = _parser.parse(pattern, flags)
    code = [int(op) for op in _compiler._code(parsed, flags)]
    groupindex = {str(k): int(v) for k, v in parsed.state.groupdict.items()}
    indexgroup: list[str | None] = [None] * parsed.state.groups
    for name, i in groupindex.items():
        indexgroup[i] = name
    return (int(flags | parsed.state.flags), code, parsed.state.groups - 1, groupindex,
            tuple(indexgroup))


def _from_program(pattern: str | bytes, program: Program) -> re.Pattern[Any]:
    import _sre

    flags, code, groups, groupindex, indexgroup = program
    return _sre.compile(pattern, flags, code, groups, groupindex, indexgroup)  # type: ignore[no-any-return]


def _cache_path(cache_dir: str | Path | None, name: str = "bulk") -> str | None:
    from memwarden.cachedir import user_cache_dir
    from memwarden.digest import sha256

    base = cache_dir if cache_dir is not None else user_cache_dir()
    if base is None:
        return None
    try:
        import _sre

        from memwarden import __version__

        build = (f"{sys.version}|{sys.implementation.cache_tag}|{_sre.MAGIC}|{_sre.CODESIZE}"
                 f"|{__version__}")
    except (ImportError, AttributeError):
        return None
    return os.path.join(base, f"patterns-{name}-{sha256(build.encode()).hexdigest()[:16]}.marshal")


def _read(path: str) -> dict[Key, Program]:
    from memwarden.cachedir import read_sealed

    value: Any = read_sealed(path, MAGIC)
    return value if isinstance(value, dict) else {}


def _write(path: str, table: dict[Key, Program]) -> None:
    from memwarden.cachedir import write_sealed

    write_sealed(path, MAGIC, table)
