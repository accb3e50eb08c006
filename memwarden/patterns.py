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

The hook path compiles every pattern through `compile` too, after `preload`, which makes
the stored programs of a named set its answers: a warm one-file check never imports `re`
(with `enum`, ~5 ms of the run). Flags are plain ints here for the same reason.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # `typing` costs a one-file hook ~5 ms: annotations only
if TYPE_CHECKING:
    import re  # `re` itself (with enum) costs a one-file hook ~5 ms: see `compile`
    from pathlib import Path  # with urllib.parse: ~4 ms of a one-file hook
    from typing import Any

# (pattern, flags) -> (flags, program, groups, group index, index group): _sre.compile's
# arguments after the pattern.
Program = tuple[int, list[int], int, dict[str, int], tuple[str | None, ...]]
Key = tuple[str | bytes, int]  # (pattern, flags)

# re's flags as plain ints (re.RegexFlag is an enum: importing it is importing `re`).
IGNORECASE = 2
MULTILINE = 8
DOTALL = 16
VERBOSE = 64
ASCII = 256

MAGIC = b"MWRE\x01\x00\x00\x00"
_active: dict[tuple[str, int], Program] | None = None
_used: set[tuple[str, int]] = set()
_added = False
# The preloaded set (`preload`): programs, replaced by their patterns once compiled, and
# the keys this run had to compile without it (stored by `remember`).
_preloaded: dict[Key, Any] | None = None
_missed: set[Key] = set()


def compile(pattern: str, flags: int = 0) -> re.Pattern[str]:  # noqa: A001 - re's name
    """re.compile(pattern, flags); from the cached program inside a `cached()` block or
    after `preload`, without importing `re` (~5 ms of a one-file hook run with `enum`)."""
    global _added
    flags = int(flags)
    table = _active
    if table is None:
        pre = _preloaded
        if pre is not None:
            key = (pattern, flags)
            hit = pre.get(key)
            if type(hit) is tuple:  # a program, compiled on first use
                try:
                    hit = pre[key] = _from_program(pattern, hit)
                except Exception:  # noqa: BLE001 - a program this Python rejects
                    hit = None
            elif not hasattr(hit, "match"):  # neither a program nor a pattern: not ours
                hit = None
            if hit is not None:
                return hit  # type: ignore[no-any-return]
            _missed.add(key)
        import re

        return re.compile(pattern, flags)
    key = (pattern, flags)
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
        program = _program(pattern, flags)
        compiled = _from_program(pattern, program)
    except Exception:  # noqa: BLE001 - the private compiler differs: the public one
        import re

        return re.compile(pattern, flags)
    table[key] = program
    _used.add(key)
    _added = True
    return compiled


_SPECIAL = {i: "\\" + chr(i) for i in b"()[]{}?*+-|^$\\.&~# \t\n\r\v\f"}


def escape(text: str) -> str:
    """re.escape(text), without importing `re`."""
    return text.translate(_SPECIAL)


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
    """Make the stored programs of pattern set `name` what `compile` returns from now on
    (module-level patterns included: call this before the imports), so a run that
    compiles only known patterns never imports `re`. Returns the keys loaded."""
    global _preloaded
    try:
        path = _cache_path(cache_dir, name)
        table = _read(path) if path is not None else {}
    except Exception:  # noqa: BLE001 - only a cache: the patterns compile as usual
        table = {}
    _preloaded = table  # a fresh dict from _read: compiled patterns replace programs
    _missed.clear()
    return set(table)


def remember(name: str, loaded: set[Key], cache_dir: str | Path | None = None) -> None:
    """Store the programs of the patterns `compile` had to compile in this run beyond the
    `loaded` ones (the first runs of a new version; later runs find nothing new and
    write nothing)."""
    try:
        _remember(name, loaded, cache_dir)
    except Exception:  # noqa: BLE001 - only a cache
        pass


def _remember(name: str, loaded: set[Key], cache_dir: str | Path | None) -> None:
    new = _missed - loaded
    path = _cache_path(cache_dir, name)
    if not new or path is None:
        return
    table = _read(path)
    if len(table) + len(new) > MAX_PRELOAD:
        table = {}  # grown with patterns no run uses now: start over from this run's
        new = set(_missed)
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

        from memwarden.version import __version__

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
