"""Plain value classes for the hook path: what a dataclass gives (equality and repr by
field; frozen ones also hash and refuse assignment) without building a dataclass at
import, which costs a one-file hook run ~0.7 ms a class. Fields are the __slots__ of the
class itself."""

from __future__ import annotations

TYPE_CHECKING = False  # `typing` costs a one-file hook ~5 ms: annotations only
if TYPE_CHECKING:
    from typing import Any


class Record:
    """Equality and repr by field. Mutable, so unhashable (as a plain dataclass)."""

    __slots__: tuple[str, ...] = ()
    __hash__ = None  # type: ignore[assignment]

    def _values(self) -> tuple[Any, ...]:
        return tuple(getattr(self, k) for k in self.__slots__)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._values() == other._values()  # type: ignore[attr-defined]

    def __repr__(self) -> str:
        inner = ", ".join(f"{k}={getattr(self, k)!r}" for k in self.__slots__)
        return f"{type(self).__name__}({inner})"


class FrozenRecord(Record):
    """An immutable Record, built from its field values in order; hashable."""

    __slots__ = ()

    def __init__(self, *values: Any) -> None:
        for key, value in zip(self.__slots__, values, strict=True):
            object.__setattr__(self, key, value)

    def __setattr__(self, key: str, value: Any) -> None:
        raise AttributeError(f"cannot assign to field {key!r}")

    def __delattr__(self, key: str) -> None:
        raise AttributeError(f"cannot delete field {key!r}")

    def __hash__(self) -> int:  # type: ignore[override]
        return hash(self._values())

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        """Pickled by its values (forked workers send findings back): the default would set
        the slots one by one, which a frozen record refuses."""
        return self.__class__, self._values()


def tuple_record(name: str, fields: str) -> type[tuple[Any, ...]]:
    """A named tuple class as collections.namedtuple(name, fields) makes it, for
    positional use: fields read by name (C-level getters), repr by field, pickled by value.
    `collections` (with `keyword`, `operator`, `reprlib`) costs a one-file hook ~1.5 ms."""
    from _operator import itemgetter

    names = tuple(fields.split())
    size = len(names)

    def __new__(cls: type[tuple[Any, ...]], *values: Any) -> tuple[Any, ...]:  # noqa: N807
        if len(values) != size:
            raise TypeError(f"{cls.__name__}() takes {size} arguments, got {len(values)}")
        return tuple.__new__(cls, values)

    def __repr__(self: tuple[Any, ...]) -> str:  # noqa: N807
        inner = ", ".join(f"{k}={v!r}" for k, v in zip(names, self, strict=True))
        return f"{type(self).__name__}({inner})"

    def __getnewargs__(self: tuple[Any, ...]) -> tuple[Any, ...]:  # noqa: N807
        return tuple(self)

    namespace: dict[str, Any] = {"__slots__": (), "__new__": __new__, "__repr__": __repr__,
                                 "__getnewargs__": __getnewargs__, "_fields": names}
    for i, key in enumerate(names):
        namespace[key] = property(itemgetter(i), doc=f"Field {i}: {key}.")
    return type(name, (tuple,), namespace)
