"""memwarden.toml: find it, validate it against its JSON Schema, merge it over the defaults.

The defaults are the policy pack's `defaults.toml` (package data). Errors name the key
path and what was expected ("limits.facts: expected an integer, got 'lots'") and are
raised as ConfigError, which front ends turn into exit code 2.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
import sys
import tomllib
from collections.abc import Mapping
from importlib import resources
from pathlib import Path
from typing import Any

from memwarden.model.errors import ConfigError

CONFIG_NAME = "memwarden.toml"
ENV_VAR = "MEMWARDEN_CONFIG"


_RULE_SEL = re.compile(r"^MW[0-9]{0,3}\Z")


@functools.cache
def default_data() -> dict[str, Any]:
    """The built-in defaults (policy pack `defaults.toml`)."""
    text = (resources.files("memwarden.policies") / "pack" / "defaults.toml").read_text("utf-8")
    return load_toml(text)


class TomlError(ValueError):
    """tomllib.TOMLDecodeError's message, raised by load_toml."""


def load_toml(text: str) -> dict[str, Any]:
    """tomllib.loads(text); invalid TOML raises TomlError with tomllib's message."""
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise TomlError(str(exc)) from None


@functools.cache
def _schema() -> dict[str, Any]:
    return json.loads(_schema_text())  # type: ignore[no-any-return]


@functools.cache
def _schema_text() -> str:
    return (resources.files("memwarden") / "schemas" / "config.schema.json").read_text("utf-8")


def canonical(value: Any) -> str:
    """One text per value of parsed TOML (dicts in key order, lists as they are): what the
    fingerprints hash, without importing `json` on the hook path."""
    if isinstance(value, dict):
        inner = ", ".join(f"{canonical(str(k))}: {canonical(v)}"
                          for k, v in sorted(value.items(), key=lambda kv: str(kv[0])))
        return "{" + inner + "}"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(canonical(v) for v in value) + "]"
    if type(value) in (str, int, float, bool) or value is None:
        return repr(value)
    return repr(str(value))


class Config:
    """The effective configuration: defaults with the user's file merged over them.
    Immutable (a plain class: a frozen dataclass costs a one-file hook run more to build)."""

    __slots__ = ("data", "source", "user_data", "_fingerprint")
    data: dict[str, Any]
    source: str | None
    user_data: dict[str, Any]

    def __init__(self, data: dict[str, Any], source: str | None = None,
                 user_data: dict[str, Any] | None = None) -> None:
        object.__setattr__(self, "data", data)
        object.__setattr__(self, "source", source)
        object.__setattr__(self, "user_data", {} if user_data is None else user_data)
        object.__setattr__(self, "_fingerprint", None)

    def __setattr__(self, key: str, value: Any) -> None:
        raise AttributeError(f"cannot assign to field {key!r}")

    def __delattr__(self, key: str) -> None:
        raise AttributeError(f"cannot delete field {key!r}")

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return (self.data, self.source, self.user_data) == (
            other.data, other.source, other.user_data)  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash((self.data, self.source, self.user_data))  # TypeError, as before

    def __repr__(self) -> str:
        return (f"Config(data={self.data!r}, source={self.source!r}, "
                f"user_data={self.user_data!r})")

    @property
    def encoding(self) -> str:
        return self.data["encoding"]

    @property
    def max_file_bytes(self) -> int:
        """Governed files larger than this are reported (MW206), not read."""
        return int(self.data.get("max_file_bytes", 4 * 1024 * 1024))

    def limit(self, key: str, agent: str | None = None) -> int:
        """A token limit, with the per-agent override when there is one."""
        if agent:
            override = self.data["agents"].get(agent, {}).get("limits", {})
            if key in override:
                return int(override[key])
        return int(self.data["limits"][key])

    def agent_setting(self, agent: str, key: str, default: Any = None) -> Any:
        return self.data["agents"].get(agent, {}).get(key, default)

    def rule_enabled(self, rule_id: str) -> bool:
        """ruff-style selection: the longest matching prefix of select/ignore wins."""
        return rule_selected(rule_id, self.data["select"], self.data["ignore"])

    @property
    def fingerprint(self) -> str:
        """A hash of the effective config, for caches whose results depend on it (computed
        once: `data` is not changed after construction)."""
        fp = self._fingerprint
        if fp is None:
            text = canonical(self.data).encode("utf-8", "surrogatepass")
            fp = hashlib.sha256(text).hexdigest()[:16]
            object.__setattr__(self, "_fingerprint", fp)
        return fp

    def with_selection(self, select: list[str] | None, ignore: list[str] | None) -> Config:
        """A copy with CLI --select/--ignore applied (they replace the file's lists)."""
        data = dict(self.data)
        for key, value in (("select", select), ("ignore", ignore)):
            if value is not None:
                for item in value:
                    if not _RULE_SEL.match(item):
                        raise ConfigError(
                            f"--{key}: expected rule ids or prefixes like MW3 or MW303, "
                            f"got {item!r}"
                        )
                data[key] = list(value)
        return Config(data=data, source=self.source, user_data=self.user_data)


def rule_selected(rule_id: str, select: list[str], ignore: list[str]) -> bool:
    best_sel = max((len(p) for p in select if rule_id.startswith(p)), default=-1)
    best_ign = max((len(p) for p in ignore if rule_id.startswith(p)), default=-1)
    return best_sel >= 0 and best_sel > best_ign


def find_config(explicit: str | None, root: str | Path | None) -> str | Path | None:
    """`--config` > $MEMWARDEN_CONFIG > <repo root>/memwarden.toml > none (defaults)."""
    given = explicit or os.environ.get(ENV_VAR)
    if given:
        from pathlib import Path  # a named file keeps pathlib's spelling in messages

        path = Path(given)
        if not path.is_file():
            where = f"--config {explicit}" if explicit else f"{ENV_VAR}={given}"
            raise ConfigError(f"{where}: no such file")
        return path
    if root is not None:
        found = os.path.join(root, CONFIG_NAME)
        if os.path.isfile(found):
            return found
    return None


def load_config(explicit: str | None = None, root: str | Path | None = None) -> Config:
    """Find and load the configuration for a repository rooted at `root`."""
    path = find_config(explicit, root)
    if path is None:
        return parse_config(None, source=None)
    try:
        with open(path, "rb") as fh:
            text = fh.read().decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not valid UTF-8 ({exc.reason} at byte {exc.start})") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read ({exc.strerror})") from None
    return parse_config(text, source=str(path))


def parse_config(text: str | None, source: str | None = None) -> Config:
    """Parse and validate TOML text (None: defaults only)."""
    label = source or CONFIG_NAME
    user: dict[str, Any] = {}
    if text is not None:
        try:
            user = load_toml(text)
        except TomlError as exc:
            raise ConfigError(f"{label}: invalid TOML: {exc}") from None
    user = _normalise_dates(user, label)
    if user:  # the defaults are valid by construction; skip importing jsonschema
        validate_config_data(user, label)
    data = _merge(default_data(), user)
    return Config(data=data, source=source, user_data=user)


def _normalise_dates(value: Any, label: str, path: str = "") -> Any:
    """TOML dates become ISO strings so the schema (and JSON output) can see them."""
    if isinstance(value, dict):
        return {
            k: _normalise_dates(v, label, f"{path}.{k}" if path else k) for k, v in value.items()
        }
    if isinstance(value, list):
        return [_normalise_dates(v, label, f"{path}[{i}]") for i, v in enumerate(value)]
    _dt = sys.modules.get("datetime")  # no date exists before it is imported
    if _dt is None:
        return value
    if isinstance(value, _dt.datetime):
        raise ConfigError(f"{label}: {path}: expected a date like 2026-12-31, got a date-time")
    if isinstance(value, _dt.date):
        return value.isoformat()
    if isinstance(value, _dt.time):
        raise ConfigError(f"{label}: {path}: expected a date like 2026-12-31, got a time")
    return value


def validate_config_data(user: Mapping[str, Any], label: str = CONFIG_NAME) -> None:
    """Raise ConfigError naming the first invalid key (schema order is deterministic).
    A config that passed once is remembered (a marker per schema+config hash in the user
    cache), so a hook run does not import jsonschema (slow to import) for it again."""
    marker = _valid_marker(user)
    if marker is not None and os.path.exists(marker):
        return
    import jsonschema

    validator = jsonschema.Draft202012Validator(
        _schema(), format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER
    )
    errors = sorted(validator.iter_errors(user), key=lambda e: (list(map(str, e.path)), e.message))
    if errors:
        raise ConfigError(f"{label}: {describe_schema_error(errors[0], _schema())}")
    if marker is not None:
        try:
            os.makedirs(os.path.dirname(marker), exist_ok=True)
            with open(marker, "ab"):
                pass
        except OSError:
            pass  # only a cache: validation works without it
        from memwarden.cachedir import prune

        prune(os.path.dirname(marker), "config-valid-")


def _valid_marker(user: Mapping[str, Any]) -> str | None:
    from memwarden.cachedir import user_cache_dir

    root = user_cache_dir()
    if root is None:
        return None
    key = hashlib.sha256((_schema_text() + "\0" + canonical(user))
                 .encode("utf-8", "surrogatepass")).hexdigest()[:32]
    return os.path.join(root, f"config-valid-{key}")


def key_path(parts: Any) -> str:
    out = ""
    for part in parts:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(top level)"


_TYPE_NAMES = {
    "integer": "an integer",
    "number": "a number",
    "string": "a string",
    "boolean": "true or false",
    "array": "an array",
    "object": "a table",
}


def describe_schema_error(error: Any, schema: Mapping[str, Any]) -> str:
    """Turn a jsonschema ValidationError into 'key.path: expected X, got Y'."""
    where = key_path(error.absolute_path)
    v = error.validator
    inst = error.instance
    if v == "additionalProperties":
        extra = sorted(set(inst) - set(error.schema.get("properties", {})))
        known = sorted(error.schema.get("properties", {}))
        name = extra[0] if extra else "?"
        import difflib

        near = difflib.get_close_matches(name, known, n=1)
        hint = f" (did you mean {near[0]!r}?)" if near else f" (known keys: {', '.join(known)})"
        target = f"{where}.{name}" if error.absolute_path else name
        return f"{target}: unknown key{hint}"
    if v == "type":
        expected = error.validator_value
        names = [expected] if isinstance(expected, str) else list(expected)
        want = " or ".join(_TYPE_NAMES.get(n, n) for n in names)
        return f"{where}: expected {want}, got {_show(inst)}"
    if v == "enum":
        opts = ", ".join(repr(o) for o in error.validator_value)
        return f"{where}: expected one of {opts}, got {_show(inst)}"
    if v in ("minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum"):
        op = {"minimum": ">=", "exclusiveMinimum": ">", "maximum": "<=", "exclusiveMaximum": "<"}[v]
        return f"{where}: must be {op} {error.validator_value}, got {_show(inst)}"
    if v == "required":
        missing = [k for k in error.validator_value if k not in inst]
        return f"{where}: missing required key {missing[0]!r}"
    if v == "pattern":
        return f"{where}: {_show(inst)} does not match the expected form {error.validator_value}"
    if v == "propertyNames":
        return f"{where}: invalid key {_show(inst)}: {error.message}"
    if v == "format":
        return f"{where}: expected a {error.validator_value}, got {_show(inst)}"
    return f"{where}: {error.message}"


def _show(value: Any) -> str:
    if isinstance(value, str):
        return repr(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return "a table"
    if isinstance(value, list):
        return "an array"
    return repr(value)


def _merge(base: Mapping[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {k: (dict(v) if isinstance(v, dict) else v) for k, v in base.items()}
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict) and key != "agents":
            out[key] = _merge(out[key], value)
        else:
            out[key] = value
    return out


def load_config_at(repo: Any, rev: str | None, explicit: str | None = None) -> Config:
    """The policy of a committed tree: `explicit` if given, else `memwarden.toml` at `rev`
    (never the working tree), else the defaults. Gates, hooks and `--rev` checks use it so
    that a change cannot loosen the policy it is judged by."""
    if explicit:
        return load_config(explicit, None)
    data = repo.read_path(rev, CONFIG_NAME) if rev is not None else None
    if data is None:
        return parse_config(None)
    label = f"{rev[:12] if len(rev) == 40 else rev}:{CONFIG_NAME}"
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise ConfigError(f"{label}: not valid UTF-8") from None
    return parse_config(text, source=label)
