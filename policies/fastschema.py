"""A fast yes-path for JSON Schema: most memory documents are valid, and proving that with
plain Python is ~20x cheaper than jsonschema's full walk. Only a "valid" answer is trusted;
anything invalid or beyond the supported keywords goes to jsonschema for its messages.

is_valid walks the schema on every call; compile_valid gives the same answers from
closures built once per schema (what the structure rules use: a whole-tree check
validates thousands of documents against a dozen schemas).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import Any, TypeAlias

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


@functools.cache
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


Check: TypeAlias = "Callable[[object], bool]"  # names: type checkers only


def _always(value: Any) -> bool:
    return True


def _never(value: Any) -> bool:
    return False


def compile_valid(schema: Any, formats: dict[str, Callable[[str], bool]]) -> Check:
    """A function of a value that returns True exactly when is_valid(schema, value,
    formats) is True, with the schema's keywords looked at once instead of on every call
    (a whole-tree check validates thousands of documents against the same few schemas).
    Keywords are checked in the schema's order and the first failure ends the check, as
    in is_valid."""
    if schema is True:
        return _always
    if not isinstance(schema, dict):
        return _never  # False, or no schema at all (is_valid: None)
    checks = [_compile_check(key, want, schema, formats) for key, want in schema.items()
              if key not in _ANNOTATIONS and not key.startswith("x-")]
    if not checks:
        return _always
    if len(checks) == 1:
        return checks[0]
    steps = tuple(checks)

    def valid(value: Any) -> bool:
        for step in steps:
            if not step(value):
                return False
        return True

    return valid


def _compile_check(key: str, want: Any, schema: dict[str, Any],
                   formats: dict[str, Callable[[str], bool]]) -> Check:
    """One keyword of compile_valid: True exactly when _check(key, ...) is True."""
    if key == "type":
        return _compile_type([want] if isinstance(want, str) else want)
    if key == "enum":
        return _compile_enum(want)
    if key == "const":
        return lambda v: v == want and type(v) is type(want)
    if key == "required":
        return lambda v: not isinstance(v, dict) or all(k in v for k in want)
    if key == "properties":
        return _compile_properties(want, formats)
    if key == "additionalProperties":
        return _compile_additional(want, schema, formats)
    if key == "items":
        item = compile_valid(want, formats)
        return lambda v: not isinstance(v, list) or all(map(item, v))
    if key == "minItems":
        return lambda v: not isinstance(v, list) or len(v) >= want
    if key == "maxItems":
        return lambda v: not isinstance(v, list) or len(v) <= want
    if key == "uniqueItems":
        return lambda v: not isinstance(v, list) or not want \
            or len({repr(x) for x in v}) == len(v)
    if key in ("minLength", "maxLength", "pattern", "format"):
        return _compile_text(key, want, formats)
    if key in ("minimum", "maximum"):
        number = _TYPES["number"]
        if key == "minimum":
            return lambda v: not number(v) or v >= want
        return lambda v: not number(v) or v <= want
    return _never  # allOf, if/then, patternProperties...: is_valid says None


def _compile_type(names: Any) -> Check:
    tests = tuple(_TYPES[n] for n in names if n in _TYPES)
    if len(tests) == 1:
        return tests[0]
    return lambda v: any(t(v) for t in tests)


def _compile_enum(options: Any) -> Check:
    if all(type(o) is str for o in options):  # the common enum: text options
        texts = frozenset(options)
        return lambda v: type(v) is str and v in texts
    return lambda v: any(v == o and type(v) is type(o) for o in options)


def _compile_properties(props: dict[str, Any],
                        formats: dict[str, Callable[[str], bool]]) -> Check:
    subs = tuple((k, compile_valid(sub, formats)) for k, sub in props.items())

    def properties(v: Any) -> bool:
        if not isinstance(v, dict):
            return True
        for k, sub in subs:
            if k in v and not sub(v[k]):
                return False
        return True

    return properties


def _compile_additional(want: Any, schema: dict[str, Any],
                        formats: dict[str, Callable[[str], bool]]) -> Check:
    if "patternProperties" in schema:
        return _never  # left to jsonschema (is_valid: None)
    known = schema.get("properties", {})
    if want is False:
        return lambda v: not isinstance(v, dict) or all(k in known for k in v)
    extra = compile_valid(want, formats)
    return lambda v: not isinstance(v, dict) or all(extra(v[k]) for k in v if k not in known)


def _compile_text(key: str, want: Any, formats: dict[str, Callable[[str], bool]]) -> Check:
    if key == "minLength":
        return lambda v: not isinstance(v, str) or len(v) >= want
    if key == "maxLength":
        return lambda v: not isinstance(v, str) or len(v) <= want
    if key == "pattern":
        rx, to_end = _regex(want), want.endswith("$")

        def pattern(v: Any) -> bool:
            if not isinstance(v, str):
                return True
            m = rx.search(v)
            return m is not None and (not to_end or m.end() == len(v))

        return pattern
    fmt = formats.get(want)
    if fmt is None:
        return lambda v: not isinstance(v, str)
    return lambda v: not isinstance(v, str) or fmt(v) is True
