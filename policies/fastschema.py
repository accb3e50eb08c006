"""A fast yes-path for JSON Schema: most memory documents are valid, and proving that with
plain Python is ~20x cheaper than jsonschema's full walk. Only a "valid" answer is trusted;
anything invalid or beyond the supported keywords goes to jsonschema for its messages.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import cache
from typing import Any

_ANNOTATIONS = frozenset({"$id", "$schema", "description", "title", "default", "examples",
                          "$comment"})
_TYPES: dict[str, Callable[[Any], bool]] = {
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: (isinstance(v, int) and not isinstance(v, bool))
    or (isinstance(v, float) and v.is_integer()),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "null": lambda v: v is None,
}


@cache
def _regex(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


def _pattern_ok(pattern: str, value: str) -> bool:
    """memwarden's pattern semantics: `$` at the end means the true end of the text."""
    m = _regex(pattern).search(value)
    return m is not None and (not pattern.endswith("$") or m.end() == len(value))


def is_valid(schema: Any, value: Any, formats: dict[str, Callable[[str], bool]]) -> bool | None:
    """True when `value` certainly satisfies `schema`; False or None (unsupported) otherwise."""
    if schema is True:
        return True
    if schema is False or not isinstance(schema, dict):
        return None if not isinstance(schema, dict) else False
    for key, want in schema.items():
        if key in _ANNOTATIONS or key.startswith("x-"):
            continue
        ok = _check(key, want, schema, value, formats)
        if ok is not True:
            return ok
    return True


def _check(key: str, want: Any, schema: dict[str, Any], value: Any,
           formats: dict[str, Callable[[str], bool]]) -> bool | None:
    if key == "type":
        names = [want] if isinstance(want, str) else want
        return any(_TYPES[n](value) for n in names if n in _TYPES)
    if key == "enum":
        return any(value == e and type(value) is type(e) for e in want)
    if key == "const":
        return value == want and type(value) is type(want)
    if key == "required":
        return not isinstance(value, dict) or all(k in value for k in want)
    if key == "properties":
        if not isinstance(value, dict):
            return True
        for k, sub in want.items():
            if k in value:
                r = is_valid(sub, value[k], formats)
                if r is not True:
                    return r
        return True
    if key == "additionalProperties":
        if not isinstance(value, dict) or "patternProperties" in schema:
            return None if "patternProperties" in schema else True
        extra = [k for k in value if k not in schema.get("properties", {})]
        if want is False:
            return not extra
        for k in extra:
            r = is_valid(want, value[k], formats)
            if r is not True:
                return r
        return True
    if key == "items":
        if not isinstance(value, list):
            return True
        for item in value:
            r = is_valid(want, item, formats)
            if r is not True:
                return r
        return True
    if key in ("minItems", "maxItems", "uniqueItems"):
        if not isinstance(value, list):
            return True
        if key == "minItems":
            return len(value) >= want
        if key == "maxItems":
            return len(value) <= want
        return not want or len({repr(v) for v in value}) == len(value)
    if key in ("minLength", "maxLength", "pattern", "format"):
        if not isinstance(value, str):
            return True
        if key == "minLength":
            return len(value) >= want
        if key == "maxLength":
            return len(value) <= want
        if key == "pattern":
            return _pattern_ok(want, value)
        fmt = formats.get(want)
        return None if fmt is None else fmt(value)
    if key in ("minimum", "maximum"):
        if not _TYPES["number"](value):
            return True
        return value >= want if key == "minimum" else value <= want
    return None  # allOf, if/then, patternProperties...: let jsonschema decide
