"""tiktoken's split pattern for Python's own `re`, so a one-file check need not import `regex`.

memwarden/bpe.py splits text with tiktoken's pattern. That pattern is written for the
`regex` module (`\\p{L}`, `\\p{N}`, ... and a case-insensitive group), and importing
`regex` costs ~14 ms, a sixth of a one-file hook run. Python's `re` (3.11+) has the same
possessive quantifiers, look-ahead and anchors, but no Unicode property classes and its
own `\\s` and case folding. So each `\\p{..}`, `\\s`, `\\S` and `(?i:..)` is spelled out as
the code points the `regex` module itself matches there (listed once by running `regex`
over every code point), and the two patterns match alike by construction;
tests/test_splitpattern.py checks them against each other on generated text and every
code point.

The spelled-out pattern is kept in a sealed file in the user cache folder, with the
identity (path, size, mtime) of the `regex` build it was listed from: a changed `regex`
(whose Unicode tables may be newer) is listed again. A pattern this translator does not
know raises Unsupported, and the caller keeps using `regex`.
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import TypeAlias

MAGIC = b"MWSPLIT\x01"


class Unsupported(ValueError):
    """A construct the translation does not handle: use the `regex` module."""


Split: TypeAlias = "Callable[[str], list[str]]"  # names: type checkers only
# Code points past U+FFFF: classes holding them are several times slower in `re` (those
# ranges are tested one by one), so texts without any use a pattern that leaves them out.
_ASTRAL = re.compile("[\U00010000-\U0010ffff]")


def splitter(pattern: str, cache_dir: str | Path | None) -> Split | None:
    """findall of `pattern` through `re`, from the stored translation (made now if it is
    missing or was made from another `regex`); None when the pattern is not translatable."""
    pair = cached(pattern, cache_dir)
    if pair is None:
        try:
            pair = build(pattern, cache_dir)
        except Unsupported:
            return None
    full, bmp = pair
    bmp_findall = re.compile(bmp).findall
    full_findall: list[Split] = []

    def split(text: str) -> list[str]:
        if _ASTRAL.search(text) is None:
            return bmp_findall(text)
        if not full_findall:
            full_findall.append(re.compile(full).findall)
        return full_findall[0](text)

    return split


def cached(pattern: str, cache_dir: str | Path | None) -> tuple[str, str] | None:
    """The stored (full, BMP-only) translations of `pattern`, if they were made from the
    installed `regex`."""
    from memwarden.cachedir import read_sealed

    if cache_dir is None:
        return None
    value = read_sealed(_path(pattern, cache_dir), MAGIC)
    if not (isinstance(value, tuple) and len(value) == 4 and value[0] == pattern):
        return None
    _, identity, full, bmp = value
    if not (isinstance(full, str) and isinstance(bmp, str) and isinstance(identity, tuple)
            and identity == _identity(identity[0])):
        return None
    return full, bmp


def build(pattern: str, cache_dir: str | Path | None) -> tuple[str, str]:
    """Translate `pattern` (importing `regex`) and store it; raises Unsupported."""
    import regex

    from memwarden.cachedir import write_sealed

    full, bmp = translate(pattern), translate(pattern, bmp=True)
    origin = getattr(getattr(regex, "_regex", None), "__file__", None)
    identity = _identity(origin) if origin else None
    if cache_dir is not None and identity is not None:
        write_sealed(_path(pattern, cache_dir), MAGIC, (pattern, identity, full, bmp))
    return full, bmp


def translate(pattern: str, bmp: bool = False) -> str:
    """`pattern` with its Unicode classes and case-insensitive groups spelled out; `bmp`
    leaves out code points past U+FFFF (for texts that hold none)."""
    import regex

    def body(expr: str) -> str:
        """A class body holding exactly the code points `regex` matches with `expr`."""
        parts = []
        for a, b in _ranges(expr):
            if bmp:
                if a > 0xFFFF:
                    continue
                b = min(b, 0xFFFF)
            parts.append(_esc(a) if a == b else f"{_esc(a)}-{_esc(b)}")
        return "".join(parts)

    out: list[str] = []
    i, n = 0, len(pattern)
    in_class = False
    fold_depth: int | None = None  # paren depth of the open (?i:...) group
    depth = 0
    while i < n:
        ch = pattern[i]
        if ch == "\\":
            if pattern.startswith("\\p{", i):
                end = pattern.index("}", i)
                expr = pattern[i:end + 1]
                i = end + 1
            elif pattern[i + 1:i + 2] in ("s", "S"):
                expr = pattern[i:i + 2]
                i += 2
            elif pattern[i + 1:i + 2] in ("r", "n", "t"):
                out.append(pattern[i:i + 2])
                i += 2
                continue
            else:
                raise Unsupported(f"escape {pattern[i:i + 2]!r}")
            if expr == "\\S":
                if in_class:
                    raise Unsupported("\\S inside a class")
                out.append(f"[^{body(chr(92) + 's')}]")
            else:
                out.append(body(expr) if in_class else f"[{body(expr)}]")
            continue
        if pattern.startswith("(?i:", i):
            if fold_depth is not None or in_class:
                raise Unsupported("nested case-insensitive group")
            depth += 1
            fold_depth = depth
            out.append("(?:")
            i += 4
            continue
        if ch == "(" and not in_class:
            if pattern.startswith(("(?:", "(?!", "(?="), i):
                depth += 1
                out.append(pattern[i:i + 3])
                i += 3
                continue
            if pattern.startswith("(?", i):
                raise Unsupported(f"group {pattern[i:i + 3]!r}")
            depth += 1
        elif ch == ")" and not in_class:
            if depth == fold_depth:
                fold_depth = None
            depth -= 1
        elif ch == "[" and not in_class:
            in_class = True
        elif ch == "]" and in_class:
            in_class = False
        elif fold_depth is not None and ch.isalpha():
            folded = body(f"(?i:{regex.escape(ch)})")
            out.append(folded if in_class else f"[{folded}]")
            i += 1
            continue
        elif ch.isalnum() or ch in " '|^$?*+{},-/":
            pass
        else:
            raise Unsupported(f"character {ch!r}")
        out.append(ch)
        i += 1
    if in_class or depth or fold_depth is not None:
        raise Unsupported("unbalanced pattern")
    return "".join(out)


@functools.cache
def _ranges(expr: str) -> tuple[tuple[int, int], ...]:
    """The code point ranges `regex` matches with `expr`, listed over every code point once
    per process (both translations of `build` ask for the same classes)."""
    import regex

    return tuple((m.start(), m.end() - 1)
                 for m in regex.finditer(f"(?:{expr})+", _every_code_point()))


@functools.cache
def _every_code_point() -> str:
    return "".join(map(chr, range(0x110000)))


def _esc(cp: int) -> str:
    return f"\\u{cp:04x}" if cp <= 0xFFFF else f"\\U{cp:08x}"


def _identity(origin: str) -> tuple[str, int, int] | None:
    try:
        st = os.stat(origin)
    except (OSError, TypeError, ValueError):
        return None
    return (origin, st.st_size, st.st_mtime_ns)


def _path(pattern: str, cache_dir: str | Path) -> str:

    digest = hashlib.sha256(pattern.encode()).hexdigest()[:16]
    return os.path.join(cache_dir, f"split-{digest}.marshal")
