"""MW2xx structure rules: frontmatter, schemas, agent contracts, entries, the registry.

Every governed structured file has a JSON Schema (Draft 2020-12) in the policy pack
(`pack/schemas/<kind>.schema.json`); this module validates against them and turns
jsonschema's errors into sentences that name the key, what was expected and where it is
(`frontmatter key 'version': expected a whole number >= 0, got 'two'`). Hostile input
(binary, YAML bombs, deep nesting, duplicate keys, huge files) yields a finding in bounded
time, never a traceback. MW205 (status transitions) needs a diff and lives with the gate.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import re
from collections.abc import Callable, Iterable, Iterator
from importlib import resources
from typing import TYPE_CHECKING, Any

from memwarden.model.entries import fact_problems, loop_problems, parse_decisions, valid_date
from memwarden.model.findings import ERROR, WARNING, Finding, make
from memwarden.model.layout import DATE_FILE_RE, RUN_DIR_RE, RUN_FILE_RE, timeline_date
from memwarden.model.memfile import FrontMatter, MemFile
from memwarden.policies.fastschema import Check, compile_valid
from memwarden.policies.registry import TREE, rule, tree_part
from memwarden.policies.rulecontext import FileContext, TreeContext

if TYPE_CHECKING:  # jsonschema is heavy to import: only files with schemas pay for it
    from jsonschema import FormatChecker, ValidationError

# Memory Markdown kinds: frontmatter optional, schema `<kind>.schema.json` when present.
MEMORY_MD_KINDS = frozenset({"snapshot", "facts", "open_loops", "decisions", "relationships",
                             "changelog", "timeline", "run"})
# Kinds whose text runtimes read; MW206 reports those that do not decode.
TEXT_KINDS = frozenset(MEMORY_MD_KINDS | {"meta", "agent_contract", "agent_jsonl", "registry",
                                          "agent_source", "agent_file", "logic", "logic_pseudo"})
TEXT_SUFFIXES = (".md", ".json", ".jsonl")
# A file reports at most this many findings per rule, then one line saying how many more.
MAX_FINDINGS_PER_FILE = 50
# Registry entry fields that must agree with the agent's _agent.md when both carry them.
REGISTRY_MIRRORED = ("name", "status", "version", "description", "model", "created_at",
                     "updated_at", "created_by", "generated_from")
SAFE_OUTPUT_TOOL = "create-proposal"
REGISTRY_PATH = "registry.json"

_FM_HINT = ("Frontmatter is a plain YAML mapping between two --- lines: `key: value` pairs, "
            "each key once, no anchors (&) or aliases (*).")
_REGISTRY_HINT = "registry.json is a cache: regenerate it from agents/*/_agent.md."


# --------------------------------------------------------------------------- schemas

@functools.cache
def load_schema(name: str) -> dict[str, Any]:
    """A schema of the policy pack by kind (`snapshot`) or file name (`meta.schema.json`)."""
    if not name.endswith(".json"):
        name = f"{name}.schema.json"
    text = (resources.files("memwarden.policies") / "pack" / "schemas" / name).read_text("utf-8")
    return json.loads(text)  # type: ignore[no-any-return]


_ISO_TIME = re.compile(
    r"[0-9]{2}:[0-9]{2}(:[0-9]{2}([.,][0-9]{1,9})?)?(Z|z|[+-][0-9]{2}(:?[0-9]{2})?)?")


def is_iso_date(value: str) -> bool:
    """YYYY-MM-DD and a real calendar day."""
    return valid_date(value)


def is_iso_datetime(value: str) -> bool:
    """ISO 8601 extended date-time: 2026-02-17T14:30(:00(.123))(Z|+02:00); ' ' for 'T' too."""
    if len(value) < 16 or value[10] not in "Tt " or not is_iso_date(value[:10]):
        return False
    time = value[11:]
    if not _ISO_TIME.fullmatch(time):
        return False
    hh, mm = int(time[:2]), int(time[3:5])
    ss = int(time[6:8]) if len(time) >= 8 and time[5] == ":" else 0
    return hh < 24 and mm < 60 and ss < 61


def is_iso8601(value: str) -> bool:
    return is_iso_date(value) or is_iso_datetime(value)


def _format_checker() -> FormatChecker:
    import jsonschema

    checker = jsonschema.FormatChecker(formats=())
    for name, fn in (("iso8601", is_iso8601), ("iso8601-date", is_iso_date),
                     ("iso8601-date-time", is_iso_datetime)):
        checker.checks(name)(_only_strings(fn))
    return checker


def _only_strings(fn: Callable[[str], bool]) -> Callable[[object], bool]:
    return lambda value: not isinstance(value, str) or fn(value)


@functools.cache
def _regex(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


def _pattern(validator: Any, pattern: str, instance: Any, schema: Any) -> Iterator[ValidationError]:
    """`pattern` where `$` means the end of the text (Python's `$` also matches before a
    final newline, so "1.0.0\\n" would pass as a version)."""
    if not isinstance(instance, str):
        return
    m = _regex(pattern).search(instance)
    if m is None or (pattern.endswith("$") and m.end() != len(instance)):
        from jsonschema import ValidationError

        yield ValidationError(f"{instance!r} does not match {pattern!r}")


_FAST_FORMATS = {"iso8601": is_iso8601, "iso8601-date": is_iso_date,
                 "iso8601-date-time": is_iso_datetime}


@functools.cache
def validator(kind: str) -> Any:
    """A compiled validator for one schema of the pack (cached per process)."""
    import jsonschema

    cls = jsonschema.validators.extend(jsonschema.Draft202012Validator, {"pattern": _pattern})
    return cls(load_schema(kind), format_checker=_format_checker())


# --------------------------------------------------------------------------- messages

Path = tuple[str | int, ...]


@dataclasses.dataclass(frozen=True, slots=True)
class Issue:
    """One schema violation, located by its path in the document."""

    path: Path
    message: str


def key_path(path: Path) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def show(value: Any) -> str:
    """A value as a user would recognise it in YAML or JSON."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, dict):
        return "a mapping" if value else "an empty mapping"
    if isinstance(value, list):
        return "a list" if value else "an empty list"
    if isinstance(value, (bytes, bytearray)):
        return "binary data"
    if isinstance(value, str):
        return repr(value if len(value) <= 60 else value[:57] + "...")
    return repr(value)


_TYPE_WORDS = {"integer": "a whole number", "number": "a number", "string": "text",
               "boolean": "true or false", "array": "a list", "object": "a mapping",
               "null": "null"}


def schema_issues(instance: Any, kind: str, where: str) -> list[Issue]:
    """Validate `instance` against the pack schema `kind`; `where` names the document
    ("frontmatter", "meta.json") in messages. Sorted by path, then message."""
    if certainly_valid(kind, instance):
        return []
    issues: list[Issue] = []
    for error in validator(kind).iter_errors(instance):
        issues.extend(_describe(error, where))
    unique = {(i.path, i.message): i for i in issues}
    return sorted(unique.values(), key=lambda i: (tuple(map(str, i.path)), i.message))


@functools.cache
def _fast_parts(kind: str) -> tuple[dict[str, Any], tuple[dict[str, Any], ...],
                                     dict[str, Any] | None, Any]:
    """A pack schema split for the fast yes-path: the part fastschema proves on its own,
    the allOf conditions, and the top-level patternProperties / additionalProperties
    pair (which fastschema leaves to jsonschema)."""
    schema = load_schema(kind)
    strip = {"allOf"}
    pattern_props = schema.get("patternProperties")
    if isinstance(pattern_props, dict):
        strip |= {"patternProperties", "additionalProperties"}
    base = {k: v for k, v in schema.items() if k not in strip}
    conditions = tuple(schema.get("allOf", ()))
    return base, conditions, pattern_props if isinstance(pattern_props, dict) else None, \
        schema.get("additionalProperties", True)


_CONDITION_KEYS = frozenset({"if", "then", "else"})
_OBJECT_KEYS = frozenset({"type", "required", "properties", "additionalProperties"})
_SCALAR_TYPES = frozenset({str, int, float, bool, type(None)})
_PROPERTY_ANSWERS: dict[tuple[str, str, type, Any], bool] = {}


@functools.cache
def _plain_object_schema(kind: str) -> bool:
    """Whether the fast-path part of `kind` is a plain object schema (type, required,
    properties, a boolean additionalProperties): then a document is valid exactly when
    each of its values is, and those answers can be remembered per (key, value)."""
    base = _fast_parts(kind)[0]
    keys = {k for k in base if not k.startswith("x-") and k not in _FAST_ANNOTATIONS}
    return keys <= _OBJECT_KEYS and base.get("type") == "object" \
        and isinstance(base.get("additionalProperties", True), bool) \
        and all(isinstance(k, str) for k in base.get("required", ()))


_FAST_ANNOTATIONS = frozenset({"$id", "$schema", "description", "title", "default", "examples",
                               "$comment"})


@dataclasses.dataclass(frozen=True, slots=True)
class _Checks:
    """A pack schema's fast yes-path compiled once (fastschema.compile_valid): the base
    part, each property of a plain object schema, the top-level patternProperties with
    their additionalProperties, and the allOf conditions with their branches (None when
    one is beyond _surely_matches)."""

    base: Check
    props: dict[str, Check]
    patterns: tuple[tuple[re.Pattern[str], Check], ...] | None
    additional: Check
    conditions: tuple[tuple[Any, Check, Check], ...] | None


@functools.cache
def _checks(kind: str) -> _Checks:
    base, conditions, pattern_props, additional = _fast_parts(kind)
    props = base.get("properties", {})
    compiled_props = {k: compile_valid(sub, _FAST_FORMATS) for k, sub in props.items()} \
        if isinstance(props, dict) else {}
    compiled_patterns = None if pattern_props is None else tuple(
        (re.compile(p), compile_valid(sub, _FAST_FORMATS))
        for p, sub in pattern_props.items())
    compiled_conditions = None
    if all(isinstance(cond, dict) and all(k in _CONDITION_KEYS or k.startswith("x-")
                                          for k in cond) for cond in conditions):
        compiled_conditions = tuple(
            (cond.get("if", True), compile_valid(cond.get("then", True), _FAST_FORMATS),
             compile_valid(cond.get("else", True), _FAST_FORMATS)) for cond in conditions)
    return _Checks(compile_valid(base, _FAST_FORMATS), compiled_props, compiled_patterns,
                   compile_valid(additional, _FAST_FORMATS), compiled_conditions)


def _base_valid(kind: str, base: dict[str, Any], instance: Any) -> bool:
    """is_valid(base, instance) is True; for plain object schemas with the answer for each
    scalar value remembered (memory frontmatter repeats its agents, dates and versions)."""
    checks = _checks(kind)
    if not isinstance(instance, dict) or not _plain_object_schema(kind):
        return checks.base(instance)
    if any(k not in instance for k in base.get("required", ())):
        return False
    props = checks.props
    closed = base.get("additionalProperties", True) is False
    for key, value in instance.items():
        check = props.get(key)
        if check is None:
            if closed:
                return False
            continue
        if type(value) in _SCALAR_TYPES:
            memo = (kind, key, type(value), value)
            ok = _PROPERTY_ANSWERS.get(memo)
            if ok is None:
                ok = bool(check(value))
                if len(_PROPERTY_ANSWERS) < 100_000:
                    _PROPERTY_ANSWERS[memo] = ok
        else:
            ok = check(value)
        if not ok:
            return False
    return True


def certainly_valid(kind: str, instance: Any) -> bool:
    """True only when `instance` surely satisfies the pack schema `kind`: fastschema's proof
    extended to top-level patternProperties and allOf if/then/else (the agent contract and
    meta.json schemas). Anything else (False) goes to jsonschema, which finds the errors."""
    base = _fast_parts(kind)[0]
    if not _base_valid(kind, base, instance):
        return False
    checks = _checks(kind)
    if checks.patterns is not None and isinstance(instance, dict):
        known = base.get("properties", {})
        for key, value in instance.items():
            matched = False
            for rx, check in checks.patterns:
                if rx.search(key):  # jsonschema's patternProperties semantics
                    matched = True
                    if not check(value):
                        return False
            if not matched and key not in known and not checks.additional(value):
                return False
    if checks.conditions is None:
        return False
    for if_schema, then_check, else_check in checks.conditions:
        holds = _surely_matches(if_schema, instance)
        if holds is None:
            return False
        if not (then_check if holds else else_check)(instance):
            return False
    return True


def _surely_matches(schema: Any, value: Any) -> bool | None:
    """Whether `value` matches an `if` schema made of properties / required / const (text);
    None for anything else (then jsonschema decides). Both answers are exact here, unlike
    fastschema's, whose False may only mean "not proven"."""
    if schema is True:
        return True
    if not isinstance(schema, dict):
        return None
    result = True
    for key, want in schema.items():
        if key.startswith("x-") or key in ("description", "title", "$comment"):
            continue
        if key == "const" and isinstance(want, str):
            ok: bool | None = isinstance(value, str) and value == want
        elif key == "required" and isinstance(want, list):
            ok = not isinstance(value, dict) or all(k in value for k in want)
        elif key == "properties" and isinstance(want, dict):
            ok = True
            if isinstance(value, dict):
                for k, sub in want.items():
                    if k in value:
                        r = _surely_matches(sub, value[k])
                        if r is None:
                            return None
                        ok = ok and r
        else:
            return None
        if ok is None:
            return None
        result = result and ok
    return result


def _subject(where: str, path: Path) -> str:
    name = f"key {key_path(path)!r}"
    return f"{where} {name}" if where else name


def _describe(error: ValidationError, where: str) -> list[Issue]:
    path: Path = tuple(error.absolute_path)
    v = error.validator
    inst = error.instance
    sch = error.schema if isinstance(error.schema, dict) else {}
    expected = sch.get("x-expected")
    if v == "required":
        when = f" ({sch['x-when']} needs it)" if "x-when" in sch else ""
        if path:
            owner = f"{_subject(where, path)} is missing"
        else:
            owner = f"{where} is missing" if where else "missing"
        return [Issue(path, f"{owner} required key {k!r}{when}")
                for k in error.validator_value if isinstance(inst, dict) and k not in inst]
    if v == "additionalProperties" and isinstance(inst, dict):
        known = sorted(sch.get("properties", {}))
        prop_patterns = [_regex(p) for p in sch.get("patternProperties", {})]
        out = []
        for extra in sorted(set(inst) - set(known)):
            if any(p.search(extra) for p in prop_patterns):
                continue
            import difflib  # only for this message: a hook run seldom needs it

            near = difflib.get_close_matches(extra, known, n=1)
            if near:
                hint = f"did you mean {near[0]!r}?"
            else:
                hint = "known keys: " + ", ".join(known)
                if "x-pattern-keys" in sch:
                    hint += f", and {sch['x-pattern-keys']}"
            label = f"unknown {where} key" if where else "unknown key"
            out.append(Issue((*path, extra), f"{label} {key_path((*path, extra))!r} ({hint})"))
        return out
    subject = _subject(where, path) if path else (where or "the document")
    if v == "type":
        names = [error.validator_value] if isinstance(error.validator_value, str) \
            else list(error.validator_value)
        want = expected or " or ".join(_TYPE_WORDS.get(n, n) for n in names)
        return [Issue(path, f"{subject}: expected {want}, got {show(inst)}")]
    if v == "enum":
        opts = ", ".join(repr(o) for o in error.validator_value)
        return [Issue(path, f"{subject}: expected one of {opts}, got {show(inst)}")]
    if v in ("pattern", "format", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
        want = expected or _bound_text(v, error.validator_value)
        return [Issue(path, f"{subject}: expected {want}, got {show(inst)}")]
    if v == "minItems":
        want = expected or f"at least {error.validator_value} item(s)"
        return [Issue(path, f"{subject}: expected {want}, got {show(inst)}")]
    if v == "minLength":
        return [Issue(path, f"{subject}: must not be empty")]
    if v == "maxLength":
        return [Issue(path, f"{subject}: longer than {error.validator_value} characters")]
    if v == "uniqueItems" and isinstance(inst, list):
        return [Issue(path, f"{subject}: lists {show(_first_repeat(inst))} more than once")]
    return [Issue(path, f"{subject}: {error.message}")]


def _first_repeat(items: list[Any]) -> Any:
    seen: list[Any] = []
    for item in items:
        if item in seen:
            return item
        seen.append(item)
    return None


def _bound_text(v: str, value: Any) -> str:
    op = {"minimum": ">=", "exclusiveMinimum": ">", "maximum": "<=", "exclusiveMaximum": "<"}
    if v in op:
        return f"a value {op[v]} {value}"
    if v == "format":
        return f"a {value} value"
    return f"a value matching {value}"


# --------------------------------------------------------------------------- JSON

@dataclasses.dataclass(frozen=True, slots=True)
class JsonProblem:
    message: str
    line: int
    col: int


class _DuplicateKey(Exception):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in pairs:
        if k in out:
            raise _DuplicateKey(k)
        out[k] = v
    return out


def _no_constants(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON (use a number or null)")


def load_json(text: str) -> tuple[Any, JsonProblem | None]:
    """Parse strict JSON: no duplicate keys, no NaN/Infinity; a problem instead of raising."""
    import json  # only JSON files need it: a Markdown hook run does without

    try:
        return json.loads(text, object_pairs_hook=_no_duplicates,
                          parse_constant=_no_constants), None
    except _DuplicateKey as exc:
        _, dups = json_positions(text)
        line, col = next((pos for p, pos in dups if p[-1] == exc.key), (1, 1))
        return None, JsonProblem(f"duplicate key {exc.key!r} (each key may appear only once "
                                 "in an object)", line, col)
    except json.JSONDecodeError as exc:
        return None, JsonProblem(f"invalid JSON: {exc.msg}", exc.lineno, exc.colno)
    except RecursionError:
        return None, JsonProblem("JSON nested too deeply to read", 1, 1)
    except ValueError as exc:  # NaN/Infinity, integers with thousands of digits
        return None, JsonProblem(f"invalid JSON: {exc}", 1, 1)


_JSON_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[{}\[\]:,]|[^\s{}\[\]:,"]+')
_NEWLINE = re.compile(r"\r\n|\r|\n")


def json_positions(text: str) -> tuple[dict[Path, tuple[int, int]],
                                        list[tuple[Path, tuple[int, int]]]]:
    """(line, col) of every key and array item of a JSON text, and of repeated keys.

    A token scan, not a parser: call it on text that json already accepted (or to locate
    a duplicate key). Iterative, so nesting depth costs no stack.
    """
    import bisect
    import json  # only JSON files need it: a Markdown hook run does without

    starts = [0] + [m.end() for m in _NEWLINE.finditer(text)]

    def where(offset: int) -> tuple[int, int]:
        i = bisect.bisect_right(starts, offset) - 1
        return i + 1, offset - starts[i] + 1

    out: dict[Path, tuple[int, int]] = {}
    dups: list[tuple[Path, tuple[int, int]]] = []
    # Frames: [is_object, path, current key or index, expecting a key, keys seen].
    stack: list[list[Any]] = []
    for m in _JSON_TOKEN.finditer(text):
        tok = m.group()
        top = stack[-1] if stack else None
        if tok in ("}", "]"):
            if stack:
                stack.pop()
            continue
        if tok == ":":
            continue
        if tok == ",":
            if top is not None:
                if top[0]:
                    top[3] = True
                else:
                    top[2] += 1
            continue
        if top is not None and top[0] and top[3]:
            try:
                key = json.loads(tok)
            except ValueError:
                key = tok.strip('"')
            top[2], top[3] = str(key), False
            path = (*top[1], top[2])
            if top[2] in top[4]:
                dups.append((path, where(m.start())))
            top[4].add(top[2])
            out.setdefault(path, where(m.start()))
            continue
        if top is None:
            vpath: Path = ()
        else:
            vpath = (*top[1], top[2])
            if not top[0]:
                out.setdefault(vpath, where(m.start()))
        if tok == "{":
            stack.append([True, vpath, None, True, set()])
        elif tok == "[":
            stack.append([False, vpath, 0, False, set()])
    return out, dups


def _deepest(positions: dict[Path, tuple[int, int]], path: Path,
             default: tuple[int, int] = (1, 1)) -> tuple[int, int]:
    for n in range(len(path), 0, -1):
        pos = positions.get(tuple(path[:n]))
        if pos is not None:
            return pos
    return default


# --------------------------------------------------------------------------- helpers

class _Capped:
    """Collects one rule's findings for one file, at most MAX_FINDINGS_PER_FILE of them."""

    def __init__(self, rule_id: str, path: str, lines: list[str]) -> None:
        self.rule_id, self.path, self.lines = rule_id, path, lines
        self.items: list[Finding] = []
        self.dropped = 0

    def add(self, severity: str, line: int, col: int, message: str, hint: str = "") -> None:
        if len(self.items) >= MAX_FINDINGS_PER_FILE:
            self.dropped += 1
            return
        # Parsers may point just past the end (JSON's "Expecting value" after a final
        # newline); keep every position inside the file so annotations land on a line.
        # (Undecodable files have no lines: their decode error line is kept as is.)
        if self.lines:
            line = min(max(1, line), len(self.lines))
            col = min(max(1, col), len(self.lines[line - 1]) + 1)
        text = self.lines[line - 1] if 0 < line <= len(self.lines) else ""
        self.items.append(make(self.rule_id, severity, self.path, line, col, message,
                               f"{text}\n{message}", hint))

    def done(self) -> list[Finding]:
        if self.dropped:
            last = self.items[-1]
            self.items.append(make(self.rule_id, last.severity, self.path, last.line, 1,
                                   f"{self.dropped} more {self.rule_id} finding(s) in this file "
                                   "not shown; fix the ones above first",
                                   f"{self.path}:{self.rule_id}:more"))
        return self.items


def _is_markdown(mf: MemFile) -> bool:
    return mf.path.endswith(".md")


def _usable_frontmatter(mf: MemFile) -> FrontMatter | None:
    """The frontmatter when it parsed (MW201 reports the ones that did not)."""
    if mf.too_large or mf.text is None:
        return None
    fm = mf.frontmatter
    if fm is None or fm.error is not None or fm.data is None:
        return None
    return fm


def _frontmatter_issue_findings(out: _Capped, fm: FrontMatter, issues: Iterable[Issue],
                                hint: str, severity: str = ERROR) -> None:
    for issue in issues:
        line, col = fm.position(issue.path)
        out.add(severity, line, col, issue.message, hint)


def _folder_mismatch(key: str, value: Any, expected: str, folder: str) -> str | None:
    if isinstance(value, str) and value != expected:
        return (f"frontmatter key {key!r}: expected {expected!r} (the folder name {folder}), "
                f"got {show(value)}")
    return None


# --------------------------------------------------------------------------- MW201

@rule("MW201", name="bad-frontmatter", severity=ERROR,
      kinds=MEMORY_MD_KINDS | {"agent_contract"},
      summary="YAML frontmatter that cannot be read safely: unclosed, invalid YAML, not a "
              "mapping, anchors/aliases, nested too deep, duplicate keys, or oversized.",
      why="Runtimes and apply parse frontmatter before anything else. A broken block hides "
          "the file's metadata; anchors and aliases allow 'billion laughs' YAML bombs that "
          "exhaust memory; duplicate keys make two parsers disagree about the same file.",
      bad="---\nagent: archivist-violin\nupdated_at: 2026-02-17\nagent: other\n---",
      good="---\nagent: archivist-violin\nupdated_at: 2026-02-17T14:30:00Z\n---",
      fix="Close the block with a --- line and keep it a flat `key: value` mapping; remove "
          "anchors (&x), aliases (*x) and repeated keys.")
def check_frontmatter_yaml(mf: MemFile, ctx: FileContext) -> Iterator[Finding]:
    if not _is_markdown(mf) or mf.too_large or mf.text is None:
        return
    fm = mf.frontmatter
    if fm is not None and fm.error is not None:
        line = fm.error_line if 0 < fm.error_line <= max(1, len(mf.lines)) else 1
        out = _Capped("MW201", mf.path, mf.lines)
        out.add(ERROR, line, 1, f"bad YAML frontmatter: {fm.error}", _FM_HINT)
        yield from out.done()


# --------------------------------------------------------------------------- MW202

@rule("MW202", name="frontmatter-schema", severity=ERROR,
      kinds=MEMORY_MD_KINDS | {"agent_jsonl"},
      summary="Memory frontmatter (when present) or an agents/<slug>/memory/*.jsonl line does "
              "not match its JSON Schema; `agent` must equal the folder.",
      why="apply, the read side and other agents trust these fields: a snapshot whose "
          "`version` is text or whose `agent` names another folder breaks version checks "
          "and cross-agent isolation. Unknown keys are usually typos of real ones.",
      bad="---\nagent: other-agent\nupdated_at: yesterday\nversion: two\nrun_id: run_42\n---",
      good="---\nagent: archivist-violin\nupdated_at: 2026-02-17T14:30:00Z\nversion: 47\n"
           "run_id: run_2026-02-17_143000_abc123\n---",
      fix="Give each key the documented type (`memwarden rule MW202`; schemas in the policy "
          "pack), set `agent` to the folder name, remove unknown keys. Frontmatter is "
          "optional: deleting the whole block is also valid.")
def check_frontmatter_schema(mf: MemFile, ctx: FileContext) -> Iterator[Finding]:
    if mf.info.kind == "agent_jsonl":
        yield from _check_jsonl(mf)
        return
    if not _is_markdown(mf):
        return
    fm = _usable_frontmatter(mf)
    if fm is None or mf.info.agent is None:
        return
    kind = mf.info.kind
    issues = schema_issues(fm.data, kind, "frontmatter")
    data = fm.data or {}
    mismatches = [(key, msg) for key, expected, folder in _folder_bindings(mf, mf.info.agent)
                  if (msg := _folder_mismatch(key, data.get(key), expected, folder))]
    if not issues and not mismatches:
        return  # the common case: nothing to say, nothing to build
    out = _Capped("MW202", mf.path, mf.lines)
    hint = (f"See the {kind} frontmatter schema (policies/pack/schemas/{kind}.schema.json); "
            "frontmatter is optional, but when present it must match.")
    _frontmatter_issue_findings(out, fm, issues, hint)
    for key, msg in mismatches:
        line, col = fm.position((key,))
        out.add(ERROR, line, col, msg, hint)
    yield from out.done()


def _folder_bindings(mf: MemFile, agent: str) -> list[tuple[str, str, str]]:
    """(key, value it must have, where that value comes from) for this file's path."""
    out = [("agent", agent, f"memory/{agent}/")]
    parts = mf.path.split("/")
    if mf.info.kind == "timeline":
        day = timeline_date(mf.path)
        if day and DATE_FILE_RE.match(parts[-1]):
            out.append(("date", day, parts[-1]))
    elif mf.info.kind == "run" and len(parts) >= 4:
        m = RUN_FILE_RE.match(parts[3]) if len(parts) == 4 else RUN_DIR_RE.match(parts[3])
        if m:
            out.append(("run_id", f"run_{m.group(1)}", parts[3]))
    return out


def _check_jsonl(mf: MemFile) -> Iterator[Finding]:
    """Each non-blank line: a JSON object with `ts` (ISO 8601 date-time) and `run`."""
    if mf.too_large or mf.text is None:
        return
    out = _Capped("MW202", mf.path, mf.lines)
    hint = ("Each line is one JSON object such as "
            '{"ts":"2026-02-14T08:02:34Z","run":"run_2026-02-14_080000_abc123",...}.')
    for idx, line in enumerate(mf.lines):
        if not line.strip():
            continue
        lineno = idx + 1
        value, problem = load_json(line)
        if problem is not None:
            out.add(ERROR, lineno, problem.col, f"line {lineno}: {problem.message}", hint)
            continue
        if not isinstance(value, dict):
            out.add(ERROR, lineno, 1, f"line {lineno}: expected a JSON object, got "
                    f"{_json_show(value)}", hint)
            continue
        if _jsonl_fast_ok(value):
            continue
        positions: dict[Path, tuple[int, int]] | None = None
        for issue in schema_issues(value, "agent_jsonl", ""):
            if positions is None:
                positions = json_positions(line)[0]
            _, col = _deepest(positions, issue.path)
            out.add(ERROR, lineno, col, f"line {lineno}: {issue.message}", hint)
        if out.dropped > 10 * MAX_FINDINGS_PER_FILE:
            break  # enough evidence; keep huge broken files cheap
    yield from out.done()


_ID_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")


def _jsonl_fast_ok(value: dict[str, Any]) -> bool:
    """The common valid line, checked without jsonschema (jsonl files can be long)."""
    ts, run = value.get("ts"), value.get("run")
    return (isinstance(ts, str) and is_iso_datetime(ts) and isinstance(run, str)
            and _ID_RE.fullmatch(run) is not None)


def _json_show(value: Any) -> str:
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    return show(value)


# --------------------------------------------------------------------------- MW203

@rule("MW203", name="agent-contract", severity=ERROR, kinds={"agent_contract"},
      summary="agents/<slug>/_agent.md breaks the agent contract (docs/memory-format.md): missing "
              "or mistyped fields, slug not the folder name, no safe-output tool; or an "
              "agents/<slug>/ folder has no _agent.md.",
      why="The runtime builds an agent from this file alone. An active agent without a "
          "safe-output tool (create-proposal or a propose-* tool) cannot affect anything; a "
          "slug that differs from its folder breaks identity and ownership; a wrong type "
          "(temperature: high) fails only at run time. A folder without _agent.md is not an "
          "agent at all, so its files are orphaned.",
      bad='---\nname: "Archivist"\nslug: archivist\nversion: "1.2"\nmodel: claude-sonnet\n'
          "tools: [read-notes]\nsafe_outputs: []\nstatus: active\ntemperature: 1.5\n---",
      good='---\nname: "Архіваріус Violin"\nslug: "archivist-violin"\nversion: "1.2.0"\n'
           'description: "Summarises new notes"\nmodel: "claude-sonnet-4-5-20250929"\n'
           "tools: [read-notes, create-proposal]\nsafe_outputs: [propose-summary]\n"
           'created_at: "2026-02-01T10:00:00Z"\nupdated_at: "2026-02-14T12:00:00Z"\n'
           'created_by: "owner"\nstatus: "active"\n---\n# Instructions\n...',
      fix="Fill in the contract's fields with their documented types "
          "(docs/memory-format.md); an active agent needs description, model, tools "
          "(with a safe-output tool), safe_outputs and updated_at. A draft needs only "
          "name, slug, version, status, created_at and created_by.")
def check_agent_contract(mf: MemFile, ctx: FileContext) -> Iterator[Finding]:
    yield from contract_findings(mf)


def contract_findings(mf: MemFile) -> list[Finding]:
    """MW203 findings for one _agent.md (pure over its content and path)."""
    if mf.too_large or mf.text is None:
        return []  # MW105 / MW206 report these
    out = _Capped("MW203", mf.path, mf.lines)
    slug = mf.info.agent or ""
    fm = mf.frontmatter
    if fm is None:
        out.add(ERROR, 1, 1, "_agent.md has no YAML frontmatter: an agent contract starts with "
                "--- and the fields name, slug, version, status, created_at, created_by "
                "(docs/memory-format.md)", "Add the frontmatter block; see `memwarden rule MW203`.")
        return out.done()
    if fm.error is not None or fm.data is None:
        return []  # MW201
    data = fm.data
    hint = "See the agent contract schema (policies/pack/schemas/agent_contract.schema.json)."
    _frontmatter_issue_findings(out, fm, schema_issues(data, "agent_contract", "frontmatter"),
                                hint)
    msg = _folder_mismatch("slug", data.get("slug"), slug, f"agents/{slug}/")
    if msg:
        line, col = fm.position(("slug",))
        out.add(ERROR, line, col, msg, "The slug is the agent's identity: rename the folder "
                "or the slug so they agree.")
    if data.get("status") == "active":
        _activation_checks(out, mf, fm, data)
    return out.done()


def safe_output_tools(tools: list[Any], safe_outputs: list[Any]) -> list[str]:
    """The tools that count as safe outputs (create-proposal, propose-*, or a name
    listed in safe_outputs)."""
    named = {s for s in safe_outputs if isinstance(s, str)}
    return [t for t in tools if isinstance(t, str)
            and (t == SAFE_OUTPUT_TOOL or t.startswith("propose-") or t in named)]


def _activation_checks(out: _Capped, mf: MemFile, fm: FrontMatter, data: dict[str, Any]) -> None:
    tools, outputs = data.get("tools"), data.get("safe_outputs")
    if isinstance(tools, list) and tools and isinstance(outputs, list):
        if not safe_output_tools(tools, outputs):
            line, col = fm.position(("tools",))
            listed = ", ".join(repr(s) for s in outputs if isinstance(s, str)) or "none"
            out.add(ERROR, line, col,
                    "frontmatter key 'tools': an active agent needs a safe-output tool "
                    f"(create-proposal, a propose-* tool, or one of safe_outputs: {listed}); "
                    "without one it cannot be activated",
                    "Add create-proposal (or the propose-* tool it uses) to tools.")
    if not any(line.strip() for line in mf.lines[mf.body_start:]):
        out.add(WARNING, fm.end_line, 1, "_agent.md has no instructions after the frontmatter: "
                "the Markdown body is the agent's system prompt",
                "Write the agent's instructions below the closing --- line.")


@tree_part("MW203")
def folders_without_contract(ctx: TreeContext) -> Iterator[Finding]:
    folders: dict[str, list[str]] = {}
    for info in ctx.files():
        if info.area == "agents" and info.agent:
            folders.setdefault(info.agent, []).append(info.path)
    for slug, paths in sorted(folders.items()):
        contract = f"agents/{slug}/_agent.md"
        if contract in ctx.infos:
            continue
        target = next((p for p in sorted(paths) if ctx.in_focus(p)), None)
        if target is None:
            continue
        yield make("MW203", WARNING, target, 1, 1,
                   f"agents/{slug}/ has no _agent.md, so it is not an agent: "
                   "its files are read by nothing", f"{contract}:missing",
                   f"Add {contract} (status: draft is enough) or move the files elsewhere.")


# --------------------------------------------------------------------------- MW204

@rule("MW204", name="meta-schema", severity=ERROR, kinds={"meta"},
      summary="memory/<agent>/meta.json is not valid JSON or does not match its schema "
              "(agentId = folder, integer version, schemaVersion).",
      why="apply's stale check compares a proposal's Expected-Version with meta.json's "
          "version; a text version, a duplicate key or an agentId of another folder makes "
          "that check wrong or impossible, so conflicting updates could overwrite each other.",
      bad='{"agentId": "archivist-violin", "version": "42", "version": 43}',
      good='{"agentId": "archivist-violin", "version": 42, "lastUpdate": '
           '"2026-02-17T14:30:00Z", "lastRunId": "run_abc123", "snapshotTokenCount": 1200, '
           '"factsTokenCount": 6800, "openLoopsCount": 3, "decisionsCount": 12, '
           '"schemaVersion": "1.0"}',
      fix="meta.json is apply-owned: let apply rewrite it, or fix the named key by hand.")
def check_meta(mf: MemFile, ctx: FileContext) -> Iterator[Finding]:
    if mf.too_large or mf.text is None:
        return
    out = _Capped("MW204", mf.path, mf.lines)
    hint = "See policies/pack/schemas/meta.schema.json; apply rewrites meta.json on each apply."
    value, problem = load_json(mf.text)
    if problem is not None:
        out.add(ERROR, problem.line, problem.col, f"meta.json: {problem.message}", hint)
        yield from out.done()
        return
    issues = [(i.path, i.message) for i in schema_issues(value, "meta", "meta.json")]
    agent = mf.info.agent
    if isinstance(value, dict) and agent and isinstance(value.get("agentId"), str) \
            and value["agentId"] != agent:
        issues.append((("agentId",), f"meta.json key 'agentId': expected {agent!r} (the folder "
                       f"name memory/{agent}/), got {show(value['agentId'])}"))
    positions = json_positions(mf.text)[0] if issues else {}
    for path, message in issues:
        line, col = _deepest(positions, path)
        out.add(ERROR, line, col, message, hint)
    yield from out.done()


# --------------------------------------------------------------------------- MW206

_ENTRY_HINTS = {
    "facts": "Facts are '- ' bullets under '## ' sections, optionally starting with "
             "[YYYY-MM-DD].",
    "open_loops": "Loops are '- [ ] loop_<id>: text (opened YYYY-MM-DD, priority normal)' or "
                  "'- [x] ... — closed YYYY-MM-DD | run_<id>'.",
    "decisions": "Decisions are '## YYYY-MM-DD — title' blocks followed by **Status:**, "
                 "**Context:**, **Decision:** ... lines.",
}


@rule("MW206", name="malformed-entries", severity=ERROR, kinds=TEXT_KINDS,
      summary="Entries of facts.md, open_loops.md or decisions.md that do not follow their "
              "format, or a governed text file that is not UTF-8 text (binary, invalid UTF-8, "
              "UTF-16), too large to check (over max_file_bytes) or not readable at all.",
      why="Eviction, loop expiry and the 'last 5 decisions' read work entry by entry; an "
          "entry they cannot parse is never evicted, never expires and may be dropped from "
          "reads. A file that is not UTF-8 text cannot be checked for injection at all.",
      bad="## Критичні\n- [ ] loop_a1: renew the certificate (opened 2026-02-30)\n"
          "- renew the domain",
      good="## Критичні\n- [ ] loop_a1: renew the certificate (opened 2026-02-13, priority "
           "high)\n- [x] Renew the domain — closed 2026-02-16 | run_abc123",
      fix="Rewrite the entry in its canonical form (see the message); save files as UTF-8.")
def check_entries(mf: MemFile, ctx: FileContext) -> Iterator[Finding]:
    if mf.unreadable is not None:
        yield make("MW206", ERROR, mf.path, 1, 1,
                   f"not checked: the file is {mf.unreadable}, so no rule could read it",
                   f"{mf.path}:unreadable",
                   "Governed files must be regular, readable files: replace it with one.")
        return
    if mf.too_large:  # fail closed: a file no rule can read in bounded time is an error
        yield make("MW206", ERROR, mf.path, 1, 1,
                   f"too large to check: {mf.size} bytes, over the {mf.cap} byte cap "
                   "(max_file_bytes in memwarden.toml); no content rule has read it",
                   f"{mf.path}:too-large:{mf.size}",
                   "Split or shorten the file (memory files are meant to stay small), or "
                   "raise max_file_bytes in memwarden.toml.")
        return
    if not mf.path.endswith(TEXT_SUFFIXES):
        return
    if mf.decode_error is not None:
        out = _Capped("MW206", mf.path, mf.lines)
        out.add(ERROR, mf.decode_error_line, 1, f"not readable as UTF-8 text: {mf.decode_error}",
                "Governed files must be UTF-8 text: re-save it as UTF-8, or move binary data "
                "out of the memory repository.")
        yield from out.done()
        return
    kind = mf.info.kind
    if kind not in _ENTRY_HINTS or not _is_markdown(mf):
        return
    fm = mf.frontmatter
    if fm is not None and fm.error is not None:
        return  # MW201; the body's start is unknown
    if kind == "facts":  # only the problems: no Fact or Loop objects
        problems = fact_problems(mf.lines, mf.body_start, mf.text)
    elif kind == "open_loops":
        problems = loop_problems(mf.lines, mf.body_start)
    else:
        _, problems = parse_decisions(mf.lines, mf.body_start)
    if not problems:
        return
    hint = _ENTRY_HINTS[kind]
    out = _Capped("MW206", mf.path, mf.lines)
    for p in sorted(problems, key=lambda p: (p.line, p.col, p.message)):
        out.add(p.severity if p.severity in (ERROR, WARNING) else ERROR, p.line, p.col,
                p.message, hint)
    yield from out.done()


# --------------------------------------------------------------------------- MW207

@rule("MW207", name="registry-drift", severity=ERROR, scope=TREE,
      summary="registry.json disagrees with agents/*/_agent.md: missing or extra agents, "
              "different status/version/name, invalid JSON; or it is missing (warning).",
      why="registry.json is a cache the runtime and the UI read to decide which agents exist "
          "and may run. A stale entry can keep a paused agent running or hide a new one; "
          "the _agent.md files are the source of truth. With agents but no "
          "registry.json at all, a whole-tree check warns (a check of single files does "
          "not: a repository may choose to build the registry elsewhere).",
      bad='agents/archivist-violin/_agent.md says status: paused\nregistry.json: '
          '{"agents": [{"slug": "archivist-violin", "status": "active", ...}]}',
      good='registry.json: {"version": "1", "agents": [{"slug": "archivist-violin", '
           '"name": "Архіваріус Violin", "status": "paused", "version": "1.2.0"}]}',
      fix="Run `memwarden maintain` (it rebuilds registry.json from agents/*/_agent.md), or "
          "edit registry.json to match and commit it with the change to the contract.")
def check_registry(ctx: TreeContext) -> Iterator[Finding]:
    contracts = {info.agent: info.path for info in ctx.files("agent_contract") if info.agent}
    registry_in_focus = ctx.in_focus(REGISTRY_PATH)
    if REGISTRY_PATH not in ctx.infos:
        if contracts and registry_in_focus:
            yield make("MW207", WARNING, REGISTRY_PATH, 1, 1,
                       f"registry.json is missing but {len(contracts)} agent(s) exist under "
                       "agents/: runtimes that read the registry see none of them",
                       "registry.json:missing", _REGISTRY_HINT)
        return
    if not registry_in_focus and not any(ctx.in_focus(p) for p in contracts.values()):
        return
    mf = ctx.load(REGISTRY_PATH)
    if mf is None or mf.too_large or mf.text is None:
        return  # unreadable: MW206
    yield from _RegistryCheck(ctx, mf, contracts, registry_in_focus).run()


_REGISTRY_PARTS: dict[str, tuple[Any, JsonProblem | None, dict[Path, tuple[int, int]],
                                  list[Issue]]] = {}


def registry_parts(text: str) -> tuple[Any, JsonProblem | None, dict[Path, tuple[int, int]],
                                       list[Issue]]:
    """registry.json parsed, its key positions and its schema issues (the part of MW207
    that needs no contract). Remembered for the latest text, so a whole-tree check can
    work it out while the workers still check files (see engine.prepare_tree_rules).
    The positions (a token scan of the whole file) are worked
    out only for schema issues here; _RegistryCheck scans when it reports anything else."""
    hit = _REGISTRY_PARTS.get(text)
    if hit is not None:
        return hit
    value, problem = load_json(text)
    if problem is not None:
        parts: tuple[Any, JsonProblem | None, dict[Path, tuple[int, int]], list[Issue]] = (
            None, problem, {}, [])
    else:
        issues = schema_issues(value, "registry", "registry.json")
        parts = (value, None, json_positions(text)[0] if issues else {}, issues)
    _REGISTRY_PARTS.clear()
    _REGISTRY_PARTS[text] = parts
    return parts


class _RegistryCheck:
    """Compare registry.json with the contracts; report on registry.json when it is being
    checked, else on the _agent.md whose edit made the registry stale."""

    def __init__(self, ctx: TreeContext, mf: MemFile, contracts: dict[str, str],
                 on_registry: bool) -> None:
        self.ctx, self.mf, self.contracts, self.on_registry = ctx, mf, contracts, on_registry
        self.out = _Capped("MW207", REGISTRY_PATH, mf.lines)
        self.extra: list[Finding] = []
        self.positions: dict[Path, tuple[int, int]] = {}

    def run(self) -> list[Finding]:
        value, problem, positions, issues = registry_parts(self.mf.text or "")
        if problem is not None:
            if self.on_registry:
                self.out.add(ERROR, problem.line, problem.col, f"registry.json: {problem.message}",
                             _REGISTRY_HINT)
            return self.out.done()
        self.positions = positions
        if self.on_registry:
            for issue in issues:
                line, col = self._where(issue.path)
                self.out.add(ERROR, line, col, issue.message, _REGISTRY_HINT)
        agents = value.get("agents") if isinstance(value, dict) else None
        if isinstance(agents, list):
            self._compare(agents)
        return self.out.done() + self.extra

    def _where(self, path: Path) -> tuple[int, int]:
        """(line, col) of a registry path; the positions are scanned on first need."""
        if not self.positions and self.mf.text:
            self.positions = json_positions(self.mf.text)[0]
        return _deepest(self.positions, path)

    def _compare(self, agents: list[Any]) -> None:
        entries: dict[str, tuple[int, dict[str, Any]]] = {}
        for i, entry in enumerate(agents):
            if not isinstance(entry, dict) or not isinstance(entry.get("slug"), str):
                continue
            slug = entry["slug"]
            if slug in entries:
                self._on_registry(("agents", i, "slug"), f"registry.json lists agent {slug!r} "
                                  f"twice (agents[{entries[slug][0]}] and agents[{i}])")
                continue
            entries[slug] = (i, entry)
        for slug, path in sorted(self.contracts.items()):
            if slug not in entries:
                self._report(slug, ("agents",), (), f"registry.json has no entry for agent "
                             f"{slug!r} ({path} exists)")
                continue
            i, entry = entries[slug]
            self._compare_fields(slug, i, entry)
        for slug, (i, _) in sorted(entries.items()):
            if slug not in self.contracts:
                self._on_registry(("agents", i), f"registry.json lists agent {slug!r} "
                                  f"(agents[{i}]) but agents/{slug}/_agent.md does not exist")

    def _compare_fields(self, slug: str, i: int, entry: dict[str, Any]) -> None:
        mf = self.ctx.load(self.contracts[slug])
        fm = _usable_frontmatter(mf) if mf is not None else None
        if fm is None:
            return  # the contract itself is broken: MW201/MW203 say so
        data = fm.data or {}
        for key in REGISTRY_MIRRORED:
            if key not in entry or entry[key] == data.get(key):
                continue
            said = show(data[key]) if key in data else "nothing"
            self._report(slug, ("agents", i, key), (key,),
                         f"registry.json agents[{i}].{key} is {show(entry[key])} but "
                         f"agents/{slug}/_agent.md says {said}")

    def _report(self, slug: str, reg_path: Path, fm_path: Path, message: str) -> None:
        if self.on_registry:
            self._on_registry(reg_path, message)
            return
        path = self.contracts[slug]
        if not self.ctx.in_focus(path):
            return
        mf = self.ctx.load(path)
        fm = _usable_frontmatter(mf) if mf is not None else None
        line, col = fm.position(fm_path) if fm is not None and fm_path else (1, 1)
        lines = mf.lines if mf is not None else []
        text = lines[line - 1] if 0 < line <= len(lines) else ""
        self.extra.append(make("MW207", ERROR, path, line, col, message + " (registry.json is "
                               "now stale)", f"{text}\n{message}", _REGISTRY_HINT))

    def _on_registry(self, reg_path: Path, message: str) -> None:
        if self.on_registry:
            line, col = self._where(reg_path)
            self.out.add(ERROR, line, col, message, _REGISTRY_HINT)
