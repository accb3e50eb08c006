"""The small-input trigger scan (a dict trie walked from word starts) must find exactly what
the compiled trigger tries find: same triggers, same offsets, same order, hence the same
hits; and the search that finds the triggers and the signal keys at once must find what
the two searches it replaced find. Checked on the whole evaluation corpus, on generated
text and (for the shared search) on generated word lists; plus the laziness that keeps a
one-file hook run from compiling what it does not use."""

from __future__ import annotations

import json
import re
from collections import Counter

import pytest
from conftest import bench_module
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memwarden.policies.rules.injection import (
    common,
    markers,
    rules,
    scan,
    scanner,
    signals,
    tables,
)

KINDS = ("facts", "snapshot", common.CONTRACT)


def _found_both(text: str) -> tuple[list[tuple[str, int]], list[tuple[str, int]]]:
    """Triggers found each way, with the same inputs _Scanner._triggers would give."""
    sc = scanner._Scanner(text, "facts")
    if not text.isascii() or text.encode().translate(None, markers._PRINTABLE_ASCII):
        sc._invisible()  # notes the Unicode spaces, as run() does first
    low, breaks = sc.low, sc.space_breaks
    walked = tables._walked_triggers(low, breaks)
    compiled = list(tables._compiled_triggers(low, not text.isascii(), breaks))
    return walked, compiled


def assert_same(text: str, json_mode: bool = False) -> None:
    if text and not json_mode:
        walked, compiled = _found_both(text)
        assert walked == compiled, text
        assert_shared_same(text)
    for kind in KINDS:
        fast = scan(text, kind, json_mode, walk=True)
        assert fast == scan(text, kind, json_mode, walk=False), (kind, text)


# --------------------------------------------------------------------------- the corpus


def _corpus_texts() -> list[str]:
    return bench_module("injection_eval").corpus_texts()


def test_walk_equals_tries_on_the_evaluation_corpus() -> None:
    texts = _corpus_texts()
    assert len(texts) > 300
    hits = 0
    for text in texts:
        assert_same(text)
        hits += len(scan(text, walk=True))
    assert hits > 100  # the corpus really exercises the rules


def test_walk_equals_tries_on_json_strings() -> None:
    for text in _corpus_texts()[:400]:
        assert_same(json.dumps({"note": text, "n": 1}) + "\n", json_mode=True)


# --------------------------------------------------------------------------- generated text

_TRIGGERS = sorted(tables._trigger_kinds())
_SPACES = sorted(tables._UNICODE_SPACES) + ["\x1c", "\x1f", "\x85", "\u2028", "\x0b", "\x0c"]
_PIECES = [" ", "  ", "\t", "\n", "\r\n", "\r", "**", "- ", "> ", "#", "`", "~", "|", "+",
           "«", "“", "„", "(", "[", "<", "/", "'", '"', "_", ",", ".", ":", "—", "x", "İ",
           "don't", "n't", "не "]


def _cased(word: str, mode: int, gap: str) -> str:
    """A trigger in one of four casings, its spaces replaced by a whitespace run."""
    return (word, word.upper(), word.title(), word.swapcase())[mode % 4].replace(" ", gap)


_GAPS = [" ", " ", "  ", "\t", "\n", " \n ", "\r\n", "\u00a0", "\u2003", "\x1c", "\x85"]
_WORDS = st.builds(_cased, st.sampled_from(_TRIGGERS), st.integers(0, 3), st.sampled_from(_GAPS))
_TEXT = st.lists(st.one_of(
    _WORDS, st.sampled_from(_PIECES), st.sampled_from(_SPACES),
    st.text(alphabet="abcdefgijklmnoprstuvwyzABCIOSTабвгдезиікнопрстуАБВІПТ \t\n*>-_#`",
            max_size=6),
), max_size=40).map("".join)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=_TEXT)
def test_walk_equals_tries_on_generated_text(text: str) -> None:
    assert_same(text)


@settings(max_examples=200, deadline=None)
@given(text=st.text(max_size=80))
def test_walk_equals_tries_on_arbitrary_unicode(text: str) -> None:
    assert_same(text)


@settings(max_examples=200, deadline=None)
@given(words=st.lists(_WORDS, min_size=1, max_size=6),
       seps=st.lists(st.sampled_from([" ", "\t", "\n", " \u00a0", "\u3000", " \n\t "]),
                     min_size=6, max_size=6))
def test_multiword_triggers_with_any_whitespace(words: list[str], seps: list[str]) -> None:
    """A space in a trigger is `\\s+` in the tries; the walk must read any run of it."""
    text = "".join(w.replace(" ", s) + s for w, s in zip(words, seps, strict=False))
    assert_same(text)
    assert_same(text.replace(" ", "\u2003"))


# --------------------------------------------------------------------------- one search


def assert_shared_same(text: str) -> None:
    """word_starts (triggers and keys from one search) equals the two searches it
    replaced: tables._compiled_triggers and signals._occurrences."""
    sc = scanner._Scanner(text, "facts")
    if not text.isascii() or text.encode().translate(None, markers._PRINTABLE_ASCII):
        sc._invisible()
    low, breaks, blanked = sc.low, sc.space_breaks, tables._blanked(sc.low)
    flags = (False, True) if text.isascii() else (True,)
    for cyrillic in flags:
        want = (tables._compiled_triggers(low, cyrillic, breaks), signals._occurrences(low))
        assert signals.word_starts(low, cyrillic, breaks, blanked) == want, (cyrillic, text)


def test_one_search_equals_two_on_the_evaluation_corpus() -> None:
    for text in _corpus_texts():
        for variant in (text, text.upper(), text.replace("\n", "\r\n").replace(" ", "\t", 5),
                        text.replace("\n", "\r"), text.replace(" ", "  ")):
            if variant:
                assert_shared_same(variant)


_KEYS = sorted({k.rstrip("$") for k in signals._keys(True)})
_KEY_WORDS = st.builds(_cased, st.sampled_from(_KEYS), st.integers(0, 3),
                       st.sampled_from(_GAPS))
_KEY_TEXT = st.lists(st.one_of(
    _KEY_WORDS, _WORDS, st.sampled_from(_PIECES + ["$", "2026", "a", "_", "\r"]),
    st.sampled_from(_SPACES), st.text(alphabet="adeoinstuyабвгдезиікнопрстуАБВІПТ _-'", max_size=4),
), max_size=40).map("".join)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=_KEY_TEXT)
def test_one_search_equals_two_on_generated_text(text: str) -> None:
    if text:
        assert_shared_same(text)


@settings(max_examples=200, deadline=None)
@given(text=st.text(max_size=80))
def test_one_search_equals_two_on_arbitrary_unicode(text: str) -> None:
    if text:
        assert_shared_same(text)


def _two_searches(low: str, cyrillic: bool, keys: list[str]) -> tuple[list, list]:
    """The triggers and (key, offset) pairs as the separate searches find them."""
    found = []
    if keys:
        finder = re.compile(f" (?={tables._after_break(sorted(keys))})")
        text = " " + tables._blanked(low).replace("\r", " ")
        found = [(" ".join(m.group("t").split()), m.start("t") - 1)
                 for m in finder.finditer(text)]
    return tables._compiled_triggers(low, cyrillic, []), found


_LETTERS = "abdeost" + "абвіо"
_WORD = st.text(alphabet=_LETTERS + "'-_", min_size=1, max_size=5).filter(
    lambda w: w[0] not in "'-_")
_WORD_LIST = st.lists(st.lists(_WORD, min_size=1, max_size=3).map(" ".join), min_size=1,
                      max_size=8, unique=True)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(triggers=_WORD_LIST.filter(lambda ws: any(w[0].isascii() for w in ws)),
       keys=_WORD_LIST, ends=st.lists(st.sampled_from(["", "$", "both"]), min_size=8,
                                      max_size=8), data=st.data())
def test_one_search_equals_two_for_any_word_lists(triggers: list[str], keys: list[str],
                                                  ends: list[str], data) -> None:
    """For any triggers and keys (a key ending in `$` must end a word), the shared trie
    and its table find what a trie of each list finds."""
    keys = sorted({k + e for k, end in zip(keys, ends, strict=False)
                   for e in (("", "$") if end == "both" else (end,))})
    words = st.builds(str.replace, st.sampled_from(triggers + [k.rstrip("$") for k in keys]),
                      st.just(" "), st.sampled_from(_GAPS))
    pieces = st.one_of(words,
                       st.sampled_from([" ", "  ", "\n", "\t", "\r", "\r\n", "**", "(", "x",
                                        "\xa0", "'", "_", "-", "2", "\u2003"]),
                       st.text(alphabet=_LETTERS, max_size=4))
    low = "".join(data.draw(st.lists(pieces, max_size=30)))
    cyrillic = not low.isascii()
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(tables, "_script_words", lambda flag: sorted(
            w for w in triggers if flag or w[0].isascii()))
        for fn in (tables._trigger_scanners, tables._shared_finder):
            fn.cache_clear()
        try:
            shared = tables._shared_scan(low, cyrillic, [], tables._blanked(low), tuple(keys))
            assert shared is not None
            want = _two_searches(low, cyrillic, [k for k in keys if cyrillic or k.isascii()])
        finally:
            for fn in (tables._trigger_scanners, tables._shared_finder):
                fn.cache_clear()
    assert shared == want, (triggers, keys, low)


def test_words_the_shared_trie_cannot_hold_get_two_searches() -> None:
    assert tables._shared_finder(True, ("*bold", "ignore")) is None
    assert tables._shared_finder(True, ("two  spaces",)) is None
    assert tables._shared_finder(True, ("a$b",)) is None
    assert tables._shared_finder(True, signals._keys(True)) is not None  # the shipped keys


# --------------------------------------------------------------------------- the premises


def test_str_isspace_is_regex_backslash_s() -> None:
    """The walk reads a run of whitespace with str.isspace where the tries use `\\s+`."""
    every = "".join(map(chr, range(0x110000)))
    assert re.findall(r"\s", every) == [c for c in every if c.isspace()]


def test_is_word_is_regex_backslash_w() -> None:
    """A `$` key ends a word where the next character is no `\\w` (tables._is_word)."""
    every = "".join(map(chr, range(0x110000)))
    assert re.findall(r"\w", every) == [c for c in every if tables._is_word(c)]


def test_walk_is_available_for_the_shipped_markers() -> None:
    """No trigger starts with Markdown punctuation or whitespace (else the walk would have
    to backtrack over the punctuation run like the regex): the small path is really used."""
    assert tables._walk_tables() is not None


def test_small_texts_walk_until_the_budget_is_spent(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tables, "_SCANNERS_READY", set())
    monkeypatch.setattr(tables, "_walk_left", 1000)
    assert tables._walk_chosen(600, False)
    assert not tables._walk_chosen(600, True)  # over the remaining budget
    assert tables._walk_chosen(400, True)
    tables._SCANNERS_READY.add(False)  # compiled tries exist: use them
    monkeypatch.setattr(tables, "_walk_left", 1000)
    assert not tables._walk_chosen(10, False)
    assert tables._walk_chosen(10, True)


def test_prefix_triggers_lend_their_phrases() -> None:
    """A hit on "forget about" tries the phrases of "forget" too (whole-word prefixes)."""
    merged, order = tables._phrases()
    every = {id(p): p for ps in merged.values() for p in ps}.values()
    for t, ps in merged.items():
        heads = [s for s in order if t == s or t.startswith(s + " ")]
        want = Counter(id(p) for s in heads for p in every for x in p.triggers if x == s)
        assert Counter(map(id, ps)) == want, t
    assert any(len(set(map(id, ps))) > 1 for ps in merged.values())


def test_warm_leaves_no_lazy_pattern_behind() -> None:
    scanner.warm()
    lazy = [(m.__name__, k) for m in (common, tables, markers, scanner, rules)
            for k, v in vars(m).items() if isinstance(v, common.Lazy)
            and vars(m) is v.namespace]
    assert not lazy  # every _lazy(name, ...) was given its own variable's name

