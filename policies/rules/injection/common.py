"""What every part of the injection scanner shares: scanned kinds, limits, the hit record,
lazily compiled patterns and small text helpers."""

from __future__ import annotations

import re
from collections import namedtuple
from collections.abc import Callable, Iterator
from typing import TypeAlias

# Every governed kind except `config` (see the package docstring).
SCANNED_KINDS = frozenset({
    "snapshot", "facts", "open_loops", "decisions", "relationships", "changelog", "timeline",
    "run", "meta", "unknown", "agent_contract", "agent_jsonl", "agent_source", "agent_file",
    "logic_pseudo", "logic", "registry",
})
CONTRACT = "agent_contract"
MAX_PER_RULE = 50  # findings per rule and file; the last one says how many more there were
BASE64_MIN = 200
HEX_MIN = 256
SNIPPET_MAX = 400

_LINE_BREAK = re.compile(r"\r\n|\r|\n")  # as memwarden.model.memfile.split_lines


class Lazy:
    """A module-level regex compiled on first use: most files never reach most of them, and
    a hook run would pay at import for compiling them all. The first use puts the
    compiled pattern into the defining module's globals under `name`, so later uses there
    go straight to it; other modules holding the proxy reach the same compiled pattern."""

    __slots__ = ("namespace", "name", "pattern", "flags", "compiled")

    def __init__(self, namespace: dict[str, object], name: str, pattern: str,
                 flags: int = 0) -> None:
        self.namespace, self.name, self.pattern, self.flags = namespace, name, pattern, flags
        self.compiled: re.Pattern[str] | None = None

    def compile(self) -> re.Pattern[str]:
        if self.compiled is None:
            self.compiled = re.compile(self.pattern, self.flags)
            self.namespace[self.name] = self.compiled
        return self.compiled

    def __getattr__(self, attr: str) -> object:
        return getattr(self.compile(), attr)


LAZY: list[Lazy] = []  # every lazy pattern of the package, for warm()


def lazy_in(namespace: dict[str, object]) -> Callable[..., re.Pattern[str]]:
    """A `_lazy(name, pattern, flags=0)` that defines lazy patterns in `namespace`."""

    def make_lazy(name: str, pattern: str, flags: int = 0) -> re.Pattern[str]:
        proxy = Lazy(namespace, name, pattern, flags)
        LAZY.append(proxy)
        return proxy  # type: ignore[return-value]  # quacks like one

    return make_lazy


_lazy = lazy_in(globals())




class Hit(namedtuple("Hit", "rule severity start end message snippet")):  # noqa: PYI024
    """One marker: which rule (str), its severity (str), where (start and end offsets into
    the scanned text), why (message) and the text (snippet). A plain named tuple: cheap to
    define on a hook run, compared by value in tests."""

    __slots__ = ()


LinePattern: TypeAlias = "tuple[re.Pattern[str], re.Pattern[str]]"  # names: type checkers only


def _line_pattern(body: str) -> LinePattern:
    """`body` after a newline (a literal first character keeps the search fast) and at the
    very start of the text; see _line_matches."""
    return re.compile("\\n" + body), re.compile(body)


def _line_matches(pattern: LinePattern, s: str) -> Iterator[re.Match[str]]:
    after_newline, at_start = pattern
    m = at_start.match(s)
    if m is not None:
        yield m
    yield from after_newline.finditer(s)


# How far _line_start and _line_end look: a line longer than this is cut there, so a
# text of one huge line costs each lookup a bounded time, never a scan of the whole line.
LINE_REACH = 1024


def _line_start(s: str, pos: int) -> int:
    lo = max(0, pos - LINE_REACH)
    nl = s.rfind("\n", lo, pos)
    start = max(nl, s.rfind("\r", max(nl + 1, lo), pos)) + 1
    return start if start > 0 or lo == 0 else lo


def _line_end(s: str, pos: int) -> int:
    hi = min(len(s), pos + LINE_REACH)
    m = _LINE_BREAK.search(s, pos, hi)
    return m.start() if m else hi


def _quote(s: str, limit: int = 80) -> str:
    s = " ".join(s.split())
    return '"' + (s if len(s) <= limit else s[:limit - 1] + "…") + '"'


def _short(url: str) -> str:
    return url if len(url) <= 100 else url[:99] + "…"

