"""`cache` and `cached_property` without `functools`.

`functools` brings `collections` (with `keyword`, `operator`, `reprlib`) and `types`:
~2.5 ms of a one-file hook run, for two small decorators. These behave as functools'
do for how memwarden uses them: positional, hashable arguments; `cache_clear()`.
"""

from __future__ import annotations

TYPE_CHECKING = False  # `typing` costs a one-file hook ~5 ms: annotations only
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, TypeVar

    F = TypeVar("F", bound=Callable[..., Any])


class _Cached:
    """A function with its results kept by argument tuple (functools.cache's subset)."""

    def __init__(self, fn: Callable[..., Any], maxsize: int | None) -> None:
        self.__wrapped__ = fn
        self.__name__ = fn.__name__
        self.__qualname__ = fn.__qualname__
        self.__doc__ = fn.__doc__
        self.__module__ = fn.__module__
        self._memo: dict[tuple[Any, ...], Any] = {}
        self._maxsize = maxsize

    def __call__(self, *args: Any) -> Any:
        memo = self._memo
        try:
            return memo[args]
        except KeyError:
            pass
        value = self.__wrapped__(*args)
        if self._maxsize is not None and len(memo) >= self._maxsize:
            memo.clear()  # a bound, not an LRU: these memos are of paths and names
        memo[args] = value
        return value

    def cache_clear(self) -> None:
        self._memo.clear()

    def cache_size(self) -> int:
        return len(self._memo)


def cache(fn: F) -> F:
    """functools.cache for plain functions with positional, hashable arguments."""
    return _Cached(fn, None)  # type: ignore[return-value]


def bounded_cache(maxsize: int) -> Callable[[F], F]:
    """Like functools.lru_cache(maxsize), except that a full memo starts over."""
    return lambda fn: _Cached(fn, maxsize)  # type: ignore[return-value]


class cached_property:  # noqa: N801 - functools' name
    """functools.cached_property: computed on first access, then kept in the instance's
    __dict__ (which shadows this non-data descriptor)."""

    def __init__(self, fn: Callable[[Any], Any]) -> None:
        self.fn = fn
        self.name = fn.__name__
        self.__doc__ = fn.__doc__

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, obj: Any, owner: type | None = None) -> Any:
        if obj is None:
            return self
        value = obj.__dict__[self.name] = self.fn(obj)
        return value
