"""memwarden/memo.py and records.tuple_record: what functools and collections gave the hook
path, without importing them."""

from __future__ import annotations

import pickle

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memwarden.memo import bounded_cache, cache, cached_property
from memwarden.records import tuple_record


def test_cache_calls_once_per_arguments_and_clears() -> None:
    calls: list[tuple[int, str]] = []

    @cache
    def f(a: int, b: str) -> str:
        """doc"""
        calls.append((a, b))
        return b * a

    assert (f(2, "x"), f(2, "x"), f(3, "x")) == ("xx", "xx", "xxx")
    assert calls == [(2, "x"), (3, "x")] and f.cache_size() == 2  # type: ignore[attr-defined]
    assert f.__name__ == "f" and f.__doc__ == "doc" and f.__wrapped__(1, "y") == "y"  # type: ignore[attr-defined]
    f.cache_clear()  # type: ignore[attr-defined]
    f(2, "x")
    assert calls[-1] == (2, "x") and len(calls) == 4  # (1, "y") came from __wrapped__


def test_cache_keeps_none_results() -> None:
    calls = []

    @cache
    def nothing() -> None:
        calls.append(1)

    assert nothing() is None and nothing() is None and calls == [1]


def test_bounded_cache_starts_over_when_full() -> None:
    @bounded_cache(3)
    def square(n: int) -> int:
        return n * n

    for n in range(10):
        assert square(n) == n * n
        assert square.cache_size() <= 3  # type: ignore[attr-defined]


def test_cached_property_computes_once_per_instance() -> None:
    class Thing:
        def __init__(self) -> None:
            self.calls = 0

        @cached_property
        def value(self) -> int:
            self.calls += 1
            return 42

    a, b = Thing(), Thing()
    assert (a.value, a.value, b.value) == (42, 42, 42)
    assert (a.calls, b.calls) == (1, 1)
    assert isinstance(Thing.value, cached_property)


Pair = tuple_record("Pair", "left right")


class Named(tuple_record("Named", "rule start text")):
    __slots__ = ()


@given(st.text(), st.integers(), st.text())
def test_tuple_record_is_the_named_tuple_it_replaces(rule: str, start: int, text: str) -> None:
    from collections import namedtuple

    ref = namedtuple("Named", "rule start text")(rule, start, text)
    mine = Named(rule, start, text)
    assert mine == ref and tuple(mine) == tuple(ref) and hash(mine) == hash(ref)
    assert (mine.rule, mine.start, mine.text) == (rule, start, text)
    assert repr(mine) == repr(ref)
    assert mine._fields == ref._fields
    back = pickle.loads(pickle.dumps(mine))
    assert back == mine and type(back) is Named


def test_tuple_record_refuses_a_wrong_count_and_assignment() -> None:
    with pytest.raises(TypeError, match="takes 2 arguments"):
        Pair(1)
    p = Pair(1, 2)
    with pytest.raises(AttributeError):
        p.left = 3  # type: ignore[misc]
    assert (p.left, p.right) == (1, 2)
