"""The injection scanner's tables: the marker lists (policies/pack/markers/) turned into
phrase patterns, role labels, chat tokens and the word-start trigger finders.

Word-start triggers are found two ways with the same result (tests/test_injection_fast.py
checks they agree): compiled tries, fast on large inputs but costly to compile, and a walk
over a flat trie in Python for the first WALK_BUDGET characters a process scans, so a hook
that checks one small file compiles nothing big. The compiled way also finds the signal
keys of signals.py, in the same search (_shared_scan).
"""

from __future__ import annotations

import functools
import os
import re
from collections import namedtuple
from collections.abc import Callable
from typing import Any

from memwarden.policies.rules.injection.common import lazy_in

_lazy = lazy_in(globals())


_MARKER_FILES = ("override_en.txt", "override_uk.txt", "override_ru.txt", "role_labels.txt",
                 "chat_tokens.txt")
def _lines_of(text: str) -> list[str]:
    lines = (ln.strip() for ln in text.splitlines())
    return [ln for ln in lines if ln and not ln.startswith("#")]


@functools.cache
def _tables() -> dict[str, Any]:
    """The scanner's tables, derived from the marker lists once per process (see
    _build_tables)."""
    return _build_tables(_marker_texts())


def marker_text(name: str) -> str:
    """A file of policies/pack/markers/: read straight from the package folder, or through
    importlib.resources when the package is not a folder (a zip)."""
    folder = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__)))), "pack", "markers")
    try:
        with open(os.path.join(folder, name), encoding="utf-8") as fh:
            return fh.read()
    except OSError:
        from importlib import resources

        return (resources.files("memwarden.policies").joinpath("pack", "markers", name)
                .read_text("utf-8"))


def _marker_texts() -> list[str]:
    return [marker_text(name) for name in _MARKER_FILES]


def _build_tables(texts: list[str]) -> dict[str, Any]:
    """Everything the scanner derives from the marker lists (`texts`, in _MARKER_FILES
    order), as marshal-able values:

    - "phrases": each MW303 pattern (group, language, triggers, regex source);
    - "merged": trigger -> the phrases that start with it, shorter triggers' included, as
      indexes into "phrases"; "order": the triggers in file order;
    - "roles": role label -> its class; "chat": the chat-template tokens;
    - "kinds": every word-start trigger -> what it may start (see _trigger_kinds);
    - "actions": per kind of file (0: memory, 1: contract), trigger -> (phrase indexes or
      None, role check, ReAct check) (see _trigger_actions);
    - "trie": every prefix of a trigger -> whether it is one (see _trie_end), and
      "heads": a regex of the triggers' first WALK_HEAD characters; "trie" is None
      where the walk cannot reproduce the tries (see _walk_tables)."""
    phrases: list[tuple[str, str, tuple[str, ...], str]] = []
    by_trigger: dict[str, list[int]] = {}
    for lang, text in zip(("en", "uk", "ru"), texts[:3], strict=True):
        group = "override"
        for line in _lines_of(text):
            if line.startswith("@"):
                group = line[1:].strip()
                continue
            triggers_part, _, rest = line.partition("::")
            triggers = [" ".join(t.split()) for t in triggers_part.split("|") if t.strip()]
            rest = rest.strip() or r"\b"
            alt = "|".join(_phrase_regex(t) for t in sorted(triggers, key=len, reverse=True))
            phrases.append((group, lang, tuple(triggers), f"(?:{alt}){rest}"))
            for t in triggers:
                by_trigger.setdefault(t, []).append(len(phrases) - 1)
    # A hit on "forget about" must also try the phrases of "forget": the triggers that are
    # whole-word prefixes of it, in file order (the order decides which phrase reports).
    order = {t: i for i, t in enumerate(by_trigger)}
    merged: dict[str, list[int]] = {}
    for t in by_trigger:
        words = t.split(" ")
        heads = {" ".join(words[:k]) for k in range(1, len(words) + 1)}
        merged[t] = [i for h in sorted(heads & order.keys(), key=order.__getitem__)
                     for i in by_trigger[h]]
    roles: dict[str, str] = {}
    for line in _lines_of(texts[3]):
        cls, _, label = line.partition(" ")
        roles[" ".join(label.split())] = cls
    kinds: dict[str, str] = dict.fromkeys(by_trigger, "phrase")
    for label in roles:
        first = label.split(" ")[0]
        kinds[first] = "phrase role" if kinds.get(first) == "phrase" else "role"
    for word in ("admin", "administrator"):
        kinds.setdefault(word, "role")
    kinds["action input"] = "react"
    actions = {}
    for contract in (0, 1):
        table: dict[str, tuple[tuple[int, ...] | None, bool, bool]] = {}
        for trig, kind in kinds.items():
            idx = tuple(i for i in merged.get(trig, ())
                        if not (contract and phrases[i][0] == "persona"))
            role = "role" in kind or "role" in kinds.get(trig.split(" ")[0], "")
            table[trig] = (idx if "phrase" in kind and idx else None, role, kind == "react")
        actions[contract] = table
    trie: dict[str, bool] | None = {}
    for word in kinds:
        for k in range(1, len(word)):
            trie.setdefault(word[:k], False)
        trie[word] = True
    firsts = {word[0] for word in kinds if word}
    if any(ch in _PUNCT_CHARS or ch.isspace() for ch in firsts) or any(
            word != " ".join(word.split()) for word in kinds):
        trie = None
    return {"phrases": phrases, "merged": merged, "order": tuple(by_trigger),
            "roles": roles, "chat": tuple(t.lower() for t in _lines_of(texts[4])),
            "kinds": kinds, "actions": actions, "trie": trie,
            "heads": _trie_regex(sorted({word[:WALK_HEAD] for word in kinds if word}))}


class Phrase:
    """One MW303 pattern: its group, language, triggers, and the regex matched at a trigger.
    The regex is compiled on first use: compiling them all up front would slow every hook run,
    and a file seldom reaches more than a few of them."""

    __slots__ = ("group", "lang", "triggers", "pattern", "_regex")

    def __init__(self, group: str, lang: str, triggers: tuple[str, ...], pattern: str) -> None:
        self.group = group
        self.lang = lang
        self.triggers = triggers
        self.pattern = pattern
        self._regex: re.Pattern[str] | None = None

    @property
    def regex(self) -> re.Pattern[str]:
        if self._regex is None:
            self._regex = re.compile(self.pattern)
        return self._regex


def _phrase_regex(trigger: str) -> str:
    return r"\s+".join(re.escape(w) for w in trigger.split())


@functools.cache
def _phrases() -> tuple[dict[str, list[Phrase]], tuple[str, ...]]:
    """Trigger -> phrases that start with it (shorter triggers' phrases included), and the
    triggers in file order."""
    tables, plain = _tables(), _phrase_list()
    return ({t: [plain[i] for i in idx] for t, idx in tables["merged"].items()},
            tables["order"])


@functools.cache
def _phrase_list() -> list[Phrase]:
    """Every MW303 pattern once, in file order (the tables refer to them by index)."""
    return [Phrase(g, lang, tuple(trig), pat) for g, lang, trig, pat in _tables()["phrases"]]


class _Combined:
    """A trigger's phrases and their alternation, compiled on first use: most triggers
    never occur in a given file, and compiling them all up front would slow every hook run."""

    __slots__ = ("phrases", "_regex")

    def __init__(self, phrases: tuple[Phrase, ...]) -> None:
        self.phrases = phrases
        self._regex: re.Pattern[str] | None = None

    @property
    def regex(self) -> re.Pattern[str]:
        if self._regex is None:
            alts = "|".join(f"(?P<p{i}>{p.pattern})"
                            for i, p in enumerate(self.phrases)) or "(?!)"
            self._regex = re.compile(alts)
        return self._regex


class _Action(namedtuple("_Action", "phrases role react")):  # noqa: PYI024
    """What a trigger hit asks for: phrases to match (a _Combined or None), a role-label
    check (bool) or a ReAct check (bool)."""

    __slots__ = ()


@functools.cache
def _trigger_actions(contract: bool) -> dict[str, _Action]:
    """Trigger -> what a hit on it asks for, in a memory file or (`contract`) an agent
    contract, whose persona phrases do not apply (see the module doc)."""
    plain = _phrase_list()
    out = {}
    for trig, (idx, role, react) in _tables()["actions"][int(contract)].items():
        phrases = _Combined(tuple(plain[i] for i in idx)) if idx is not None else None
        out[trig] = _Action(phrases, role, react)
    return out


def _action_for(trig: str, actions: dict[str, _Action]) -> _Action:
    """The action of a hit whose text is not a trigger verbatim: a trigger with unusual
    spacing ("you  are\nnow"), or a role word the trie read on into a longer trigger."""
    norm = " ".join(trig.split())
    act = actions.get(norm)
    if act is None:
        act = actions.get(norm.split(" ")[0], _Action(None, False, False))
    elif not act.role and norm.split(" ")[0] in actions:
        first = actions[norm.split(" ")[0]]
        act = _Action(act.phrases, first.role, act.react)
    return act


class RoleLabel(namedtuple("RoleLabel", "cls label")):  # noqa: PYI024
    """A role label and its class: always | strong | label | turn | turncaps."""

    __slots__ = ()


@functools.cache
def _role_labels() -> dict[str, RoleLabel]:
    return {label: RoleLabel(cls, label) for label, cls in _tables()["roles"].items()}


def _chat_tokens() -> tuple[str, ...]:
    return _tables()["chat"]  # type: ignore[no-any-return]


_TRIE_CHAR = {" ": r"\s+", "$": r"(?!\w)"}


def _trie_regex(words: list[str]) -> str:
    """A regex matching any of `words` (longest first), factored as a trie for speed. A
    space in a word matches any whitespace run; a word ending in `$` must end a word there."""
    trie: dict[str, dict] = {}
    for w in words:
        node = trie
        for ch in w:
            node = node.setdefault(ch, {})
        node[""] = {}

    def emit(node: dict[str, dict]) -> str:
        # a word end (`$`, zero-width) is tried last, so the longest word still wins
        alts = [_TRIE_CHAR.get(ch, re.escape(ch)) + emit(sub)
                for ch, sub in sorted(node.items(), key=lambda kv: (kv[0] == "$", kv[0]))
                if ch]
        if not alts:
            return ""
        body = alts[0] if len(alts) == 1 else "(?:" + "|".join(alts) + ")"
        if "" in node:
            return f"(?:{body})?"
        return body

    return emit(trie)


# Characters that may sit between a word start and whitespace: Markdown emphasis, quotes,
# brackets, blockquote and heading marks, inline code.
_PUNCT = r"""[>*_"'(\[«“„#/<`~|+-]"""
_PUNCT_CHARS = frozenset(""">*_"'([«“„#/<`~|+-""")  # what the class _PUNCT matches


def _trigger_kinds() -> dict[str, str]:
    """Every word-start trigger and what it may start: an MW303 phrase ("phrase"), the first
    word of an MW301 role label ("role"), a ReAct tool call ("react")."""
    return _tables()["kinds"]  # type: ignore[no-any-return]


# Spaces other than U+0020 that may precede a word; the invisible-character pass notes them.
_UNICODE_SPACES = frozenset("\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008"
                            "\u2009\u200a\u202f\u205f\u3000")



# A quoted literal ending its line: `USER: 'maciej',` is a key in code, not a chat turn.
_QUOTED_VALUE = _lazy("_QUOTED_VALUE",
                      r"""[*_]*[ \t]*(['"])[^'"\n]*\1[ \t]*,?[ \t]*(?:\r?\n|\Z)""")
# What may stand between a line start and a role label: indentation, quote marks, one list
# bullet, heading marks, emphasis.
_ROLE_LEAD = _lazy("_ROLE_LEAD",
                   r"[ \t]*(?:>[ \t]*)*(?:[-*+][ \t]+)?(?:#{1,6}[ \t]*)?[*_]{0,2}")


@functools.cache
def _role_line() -> re.Pattern[str]:
    """A line opening with a role label, parsed into its parts (matched at a line start)."""
    firsts = sorted({label.split(" ")[0] for label in _role_labels()}, key=len, reverse=True)
    return re.compile(
        r"[ \t]*(?:>[ \t]*)*(?P<bullet>[-*+][ \t]+)?(?P<hashes>#{1,6}[ \t]*)?[*_]{0,2}"
        r"(?P<label>(?:" + "|".join(re.escape(w) for w in firsts)
        + r")(?![^\W\d_])(?:[ \t]+[^\W\d_]+)?)[*_]{0,2}[ \t]*(?P<colon>:)?[*_]{0,2}")


def _firsts(words: list[str]) -> str:
    return "".join(sorted({re.escape(w[0]) for w in words}))


def _starting(words: list[str]) -> str:
    """A trie of `words` behind a one-character look-ahead on their first letters: at most
    positions the engine then gives up after a single class test."""
    # Zero-width, so a search resumes inside a multi-word trigger: "now act as" must not
    # hide the "act as" that starts within it.
    return f"(?=[{_firsts(words)}])(?=(?P<t>{_trie_regex(sorted(words))}))"


def _after_break(words: list[str]) -> str:
    """What a scanner matches after its break character: the Markdown punctuation run, then
    the longest trigger (group `t`). The engine's cost is per attempt, i.e. per space, so
    every attempt is kept short (measured on a 27 MB corpus, 20% less than the plain
    `_PUNCT*` + `_starting` form, which tests/test_injection_fast.py keeps as the reference):
    - the punctuation run is possessive (`*+`): no trigger starts with punctuation, so giving
      characters back could never help, and a possessive run costs no backtracking frame;
    - the trie is consumed, not looked at: _resumed restarts each search at the trigger
      start, exactly where the zero-width form resumed, so overlapping triggers are found;
    - a sre alternation tries every branch in turn (the ones with another first letter fail
      at once, but there are 35), so the Latin and the Cyrillic triggers are separate tries
      and a one-class look-ahead picks one, marking the Cyrillic case in group `d`.
    Triggers that start with punctuation or whitespace would need the backtracking run:
    then the plain form is used (never with the shipped markers; a test checks)."""
    if any(w[0] in _PUNCT_CHARS or w[0].isspace() for w in words):
        return f"{_PUNCT}*{_starting(words)}"
    latin = [w for w in words if w[0].isascii()]
    other = [w for w in words if not w[0].isascii()]
    if latin and other:
        pick = f"(?=[{_firsts(latin)}]|[{_firsts(other)}](?P<d>))"
        trie = f"(?(d){_trie_regex(other)}|{_trie_regex(latin)})"
    else:
        pick, trie = f"(?=[{_firsts(words)}])", _trie_regex(words)
    return f"{_PUNCT}*+{pick}(?P<t>{trie})"


@functools.cache
def _trigger_scanners(cyrillic: bool) -> tuple[re.Pattern[str], re.Pattern[str]]:
    """Word-start finders: a trigger after a space, optionally behind Markdown punctuation
    (`**Ignore`), searched in a copy of the text whose line breaks and tabs are spaces too
    (see _blanked), so one pass finds the words after all three; and the same at the very
    start of the text (`#SYSTEM`). The search starts with a literal character, which lets
    the regex engine skip ahead at C speed (a character class would be several times
    slower), and at most positions the attempt ends after one class test on the next
    character (see _after_break). For ASCII text the Cyrillic branches are left out."""
    body = _after_break(_script_words(cyrillic))
    _SCANNERS_READY.add(cyrillic)
    return re.compile(f" {body}"), re.compile(body)


def _script_words(cyrillic: bool) -> list[str]:
    return sorted(w for w in _trigger_kinds() if cyrillic or w[0].isascii())


@functools.cache
def _anchored_trie(cyrillic: bool) -> re.Pattern[str]:
    """The bare trie of the triggers, matched where a word is known to start."""
    return re.compile(_starting(_script_words(cyrillic)))


_SCANNERS_READY: set[bool] = set()  # for which scripts compiled word-start finders exist


def _blanked(low: str) -> str:
    """`low` with its line breaks and tabs as spaces (the other word breaks of the scan)."""
    if "\n" in low:
        low = low.replace("\n", " ")
    if "\t" in low:
        low = low.replace("\t", " ")
    return low


def _compiled_triggers(low: str, cyrillic: bool, space_breaks: list[int],
                       blanked: str | None = None) -> list[tuple[str, int]]:
    """(trigger text, offset) of every word-start trigger, through the compiled tries: line
    starts first, then words after spaces, after tabs, after Unicode spaces, each in text
    order (the order the hits are collected in, which _phrase_found relies on). `blanked`
    is _blanked(low), if the caller has it. The scanner gets the same from _shared_scan,
    unless the words need this search of their own."""
    after_break, at_start = _trigger_scanners(cyrillic)
    if blanked is None:
        blanked = _blanked(low)
    first = at_start.match(low)
    found = [] if first is None else [first]
    # One search over the blanked copy finds what a search after each break character
    # would: a trigger's own spaces are `\s+`, which a blanked break matches all the same,
    # and each search restarts at the previous trigger's start (inside the trigger, where
    # the next break may be), where a zero-width match would have let finditer resume.
    after = {"\n": [], " ": [], "\t": []}
    search = after_break.search
    m = search(blanked)
    while m is not None:
        after[low[m.start()]].append(m)
        m = search(blanked, m.start("t"))
    found += after["\n"]
    found += after[" "]
    found += after["\t"]
    return [(low[m.start("t"):m.end("t")], m.start("t")) for m in found] + \
        _after_spaces(low, cyrillic, space_breaks)


def _after_spaces(low: str, cyrillic: bool, space_breaks: list[int]) -> list[tuple[str, int]]:
    """The triggers after a no-break or other Unicode space (noted by the invisible-character
    pass, which reads those characters anyway)."""
    if not space_breaks:
        return []
    match = _anchored_trie(cyrillic).match
    found = (match(low, i + 1) for i in space_breaks)
    return [(low[m.start("t"):m.end("t")], m.start("t")) for m in found if m is not None]


# ---- the triggers and the signal keys in one search
#
# The key search of signals.py tries the places the trigger search tries: every word start
# of the blanked copy, behind the same punctuation. One trie of both word lists finds there
# the longest word of either; a table made with the trie says which trigger and which key
# that word holds (the longest word of one list may end inside the other's).


def _is_word(ch: str) -> bool:
    """Whether `ch` is one character that `\\w` matches (what a `$` key may not end before)."""
    return ch.isalnum() or ch == "_"


@functools.cache
def _shared_finder(cyrillic: bool, keys: tuple[str, ...]) -> tuple[
        re.Pattern[str], dict[str, tuple[str | None, str | None, int]]] | None:
    """The search for the triggers and `keys` (signal keys as written: one ending in `$`
    must end a word) at once, and every word it can match -> (the longest key in it when a
    non-word character follows, the same when a word character follows, the length of the
    longest trigger in it or 0). None when a word is one the shared trie cannot stand for
    (led by punctuation, oddly spaced, a `$` inside): then each list is searched alone."""
    triggers = set(_script_words(cyrillic))
    plain = {k for k in keys if not k.endswith("$")}
    ending = {k[:-1] for k in keys if k.endswith("$")}
    words = triggers | plain | ending
    if any(not w or w[0] in _PUNCT_CHARS or "$" in w or w != " ".join(w.split())
           for w in words):
        return None
    table = {}
    for word in words:
        key = key_w = None
        n = 0
        for j in range(1, len(word) + 1):
            head = word[:j]
            if head in triggers:
                n = j
            if head in plain:
                key = key_w = head
            elif head in ending and j == len(word):
                key = head  # whether it ends a word depends on the next character
            elif head in ending and not _is_word(word[j]):
                key = key_w = head
        if word not in triggers and word not in plain:
            key_w = key  # the search ends such a word only where no word character follows
        table[word] = (key, key_w, n)
    _SCANNERS_READY.add(cyrillic)
    return re.compile(" " + _after_break(sorted(triggers | set(keys)))), table


def _shared_scan(low: str, cyrillic: bool, space_breaks: list[int], blanked: str,
                 keys: tuple[str, ...]) -> tuple[list[tuple[str, int]],
                                                 list[tuple[str, int]]] | None:
    """What _compiled_triggers yields, and (key, offset) of every word start holding one of
    `keys`, in text order (as signals._occurrences finds them), from one search; None when
    the words need a search each (see _shared_finder)."""
    finder = _shared_finder(cyrillic, keys)
    if finder is None:
        return None
    search, table = finder[0].search, finder[1]
    # A lone CR breaks words for the keys (not for the triggers), and a space in front
    # lets the search find a word at the very start: offsets in `text` are one more.
    text = " " + (blanked.replace("\r", " ") if "\r" in blanked else blanked)
    after: dict[str, list[tuple[str, int]]] = {"": [], "\n": [], " ": [], "\t": []}
    found_keys = []
    m = search(text)
    while m is not None:
        word, at = m.group("t"), m.start("t")
        entry = table.get(word)
        raw = word
        if entry is None:  # whitespace other than one space inside the word
            word = " ".join(word.split())
            entry = table[word]
        key, key_w, n = entry
        if key != key_w and _is_word(text[m.end():m.end() + 1]):
            key = key_w
        if key is not None:
            found_keys.append((key, at - 1))
        if n:
            where = after.get(low[m.start() - 1] if m.start() else "")
            if where is not None:  # (not after a lone CR)
                if raw is not word:
                    n = _raw_length(raw, n)
                where.append((low[at - 1:at - 1 + n], at - 1))
        # Restart at the word: a multi-word match may hold the next word start.
        m = search(text, at)
    found = after[""] + after["\n"] + after[" "] + after["\t"]
    return found + _after_spaces(low, cyrillic, space_breaks), found_keys


def _raw_length(raw: str, n: int) -> int:
    """How many characters of `raw` its first `n` make once each whitespace run is one."""
    i = k = 0
    while k < n:
        i += 1
        if raw[i - 1].isspace():
            while i < len(raw) and raw[i].isspace():
                i += 1
        k += 1
    return i


# ---- the same triggers without the tries, for small texts
#
# Compiling the tries costs more than a whole hook run spends scanning its file. For small
# texts the word starts come from one small regex and each is looked up in a trie of the
# same words: the same longest-trigger rule, the same `\s+` for a space in a trigger, the
# same positions in the same order (tests/test_injection_fast.py checks both ways agree on
# the evaluation corpus and on generated text). The small regex finds only the word starts
# where a trigger's first WALK_HEAD characters follow, a small share of a file's word
# starts. The Python walk is slower per character than the tries, so once a process has
# walked WALK_BUDGET characters (about the cost of compiling the tries), or has the tries
# anyway (warm() before forking workers), it uses the tries.
WALK_BUDGET = 200_000
WALK_HEAD = 4
_walk_left = WALK_BUDGET


@functools.cache
def _walk_tables() -> tuple[dict, re.Pattern[str], Callable[[str], int]] | None:
    """The trie of every trigger (see _trie_end), the word-start finder (a break character,
    Markdown punctuation, the head of a trigger) and the punctuation run at the text start;
    None if the walk cannot reproduce the tries exactly (a trigger starting with
    punctuation would need the regex's backtracking over the punctuation run)."""
    tables = _tables()
    if tables["trie"] is None:
        return None
    starts = re.compile(f"[ \\t\\n]{_PUNCT}*(?={tables['heads']})")
    return tables["trie"], starts, _lead_end


def _lead_end(low: str) -> int:
    """Where the run of _PUNCT characters at the start of `low` ends (`_PUNCT*` matched at
    0, without compiling it)."""
    i, n = 0, len(low)
    while i < n and low[i] in _PUNCT_CHARS:
        i += 1
    return i


def _trie_end(low: str, pos: int, trie: dict[str, bool]) -> int:
    """End of the longest trigger at `pos`, or -1. `trie` maps every prefix of a trigger to
    whether it is a whole trigger (a flat dict: it loads from the tables' cache file in a
    tenth of the time nested dicts take). A space in a trigger matches any run of
    whitespace, as `\\s+` in the tries (str.isspace is `\\s` for str patterns)."""
    i, n, end, seen = pos, len(low), -1, ""
    while i < n:
        ch = low[i]
        i += 1
        if ch.isspace():
            ch = " "
            while i < n and low[i].isspace():
                i += 1
        seen += ch
        whole = trie.get(seen)
        if whole is None:
            break
        if whole:
            end = i
    return end


def _walked_triggers(low: str, space_breaks: list[int]) -> list[tuple[str, int]]:
    """What _compiled_triggers yields, in the same order, without compiling the tries."""
    tables = _walk_tables()
    if tables is None:  # never with the shipped markers (a test checks)
        return list(_compiled_triggers(low, True, space_breaks))
    root, starts, lead = tables
    by_break: dict[str, list[int]] = {"\n": [], " ": [], "\t": []}
    for m in starts.finditer(low):
        by_break[low[m.start()]].append(m.end())
    candidates = [lead(low)]
    candidates += by_break["\n"]
    candidates += by_break[" "]
    candidates += by_break["\t"]
    candidates += (i + 1 for i in space_breaks)
    out = []
    for pos in candidates:
        end = _trie_end(low, pos, root)
        if end > 0:
            out.append((low[pos:end], pos))
    return out


def _walk_chosen(n: int, cyrillic: bool) -> bool:
    """Walk (no tries to compile) while the process has budget left and no tries yet."""
    global _walk_left
    if cyrillic in _SCANNERS_READY or n > _walk_left or _walk_tables() is None:
        return False
    _walk_left -= n
    return True


# --------------------------------------------------------------------------- the scanner
