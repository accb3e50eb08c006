"""A memory file as the rules see it: bytes decoded once, frontmatter parsed safely, lazily.

Decoding is strict (UTF-8, an optional BOM, any line ending) and never raises: a file that
is binary or not UTF-8 carries a `decode_error` the rules report. YAML frontmatter is
parsed with hard bounds (size, nesting depth, no anchors/aliases/merge keys, no duplicate
keys) so a YAML bomb costs microseconds, not gigabytes.
"""

from __future__ import annotations

import dataclasses
import functools
import re
import sys
from typing import Any

from memwarden.model.layout import FileInfo

MAX_FRONTMATTER_BYTES = 64 * 1024
MAX_YAML_DEPTH = 20
# Files larger than this are reported as errors (MW206), not tokenized or scanned (bounded
# time and memory); memwarden.toml's `max_file_bytes` overrides it.
MAX_FILE_BYTES = 4 * 1024 * 1024

# Only CRLF, CR and LF end a line: str.splitlines() also splits on U+2028, form feed and
# friends, which would make our line numbers disagree with git, editors and annotations.
_LINE_BREAK = re.compile(r"\r\n|\r|\n")

# A path into a parsed document: mapping keys (text) and sequence indexes.
Path = tuple[str | int, ...]


@dataclasses.dataclass(slots=True)
class FrontMatter:
    """Parsed frontmatter: the mapping, where each key sits, and any error.

    `key_lines` maps each top-level key to its file line; `positions` maps the path of
    every key or sequence item at any depth (("triggers", "cron"), ("tools", 0)) to its
    file (line, column), so schema errors can point at the offending value.
    """

    data: dict[str, Any] | None
    start_line: int  # line of the opening ---
    end_line: int  # line of the closing --- (or last line when unclosed)
    key_lines: dict[str, int] = dataclasses.field(default_factory=dict)
    error: str | None = None
    error_line: int = 1
    raw: str = ""
    positions: dict[Path, tuple[int, int]] = dataclasses.field(default_factory=dict)

    def position(self, path: Path) -> tuple[int, int]:
        """File (line, col) of the deepest known prefix of `path` (the opening --- else)."""
        for n in range(len(path), 0, -1):
            pos = self.positions.get(tuple(path[:n]))
            if pos is not None:
                return pos
        return self.start_line, 1


class MemFile:
    """One governed file's content and lazily derived views."""

    def __init__(self, info: FileInfo, data: bytes, mode: int, blob_id: str,
                 size: int | None = None, cap: int = MAX_FILE_BYTES,
                 unreadable: str | None = None) -> None:
        self.info = info
        self.path = info.path
        self.data = data
        self.mode = mode
        self.blob_id = blob_id
        self.size = len(data) if size is None else size
        self.cap = cap  # the byte cap in force (config `max_file_bytes`)
        # Why the content could not be read at all (a FIFO, a device, a socket, an I/O
        # error): such a file is a finding, never skipped and never read.
        self.unreadable = unreadable
        self.stat_key: list[int] | None = None  # worktree files: stat before the read
        self.link_at: str | None = None  # a symlinked folder the file was reached through

    @property
    def too_large(self) -> bool:
        return self.size > self.cap or self.unreadable is not None

    @functools.cached_property
    def _decoded(self) -> tuple[str | None, str | None, bool, int]:
        """(text, decode error, had a BOM, line of the decode error)."""
        data = self.data
        if self.unreadable is not None:
            return None, self.unreadable, False, 1
        if self.too_large:
            return (None, f"file is {self.size} bytes, over the {self.cap} byte cap "
                    "(max_file_bytes)", False, 1)
        if data.startswith((b"\xff\xfe", b"\xfe\xff")):
            return None, "UTF-16 text (byte order mark at the start): save it as UTF-8", False, 1
        nul = data.find(b"\x00")
        if nul >= 0:
            line = data.count(b"\n", 0, nul) + 1
            return None, f"binary file (NUL byte at offset {nul}, line {line})", False, line
        bom = data.startswith(b"\xef\xbb\xbf")
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            offset = exc.start + (3 if bom else 0)  # utf-8-sig counts after the BOM
            line = data.count(b"\n", 0, offset) + 1
            return None, f"invalid UTF-8 at byte {offset} (line {line})", bom, line
        return text, None, bom, 1

    @property
    def text(self) -> str | None:
        """The decoded text (BOM removed), or None for binary / non-UTF-8 / oversized files."""
        return self._decoded[0]

    @property
    def decode_error(self) -> str | None:
        return self._decoded[1]

    @property
    def decode_error_line(self) -> int:
        """The line where decoding failed (1 when it failed as a whole)."""
        return self._decoded[3]

    @property
    def has_bom(self) -> bool:
        return self._decoded[2]

    @functools.cached_property
    def lines(self) -> list[str]:
        """Lines without their endings (CRLF, CR and LF all end a line)."""
        return split_lines(self.text) if self.text is not None else []

    @functools.cached_property
    def frontmatter(self) -> FrontMatter | None:
        """The YAML frontmatter, or None when the file has none."""
        return parse_frontmatter(self.lines) if self.text is not None else None

    @property
    def body_start(self) -> int:
        """Index into `lines` of the first body line (after any frontmatter)."""
        fm = self.frontmatter
        return fm.end_line if fm is not None else 0


def split_lines(text: str) -> list[str]:
    """Split on CRLF, CR and LF only; a final line ending does not start a new line."""
    # Without a CR the regex would split on LF alone: str.split does that ~10x faster.
    lines = text.split("\n") if "\r" not in text else _LINE_BREAK.split(text)
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def parse_frontmatter(lines: list[str]) -> FrontMatter | None:
    """Frontmatter opens with `---` on line 1 and closes with `---` or `...`."""
    if not lines or lines[0].rstrip() != "---":
        return None
    end = None
    for i in range(1, len(lines)):
        if lines[i].rstrip() in ("---", "..."):
            end = i
            break
    if end is None:
        return FrontMatter(None, 1, len(lines), error="frontmatter opened with --- on line 1 "
                           "is never closed (add a --- line after the last key)", error_line=1)
    raw = "\n".join(lines[1:end])
    fm = FrontMatter(None, 1, end + 1, raw=raw)
    size = len(raw.encode("utf-8", "surrogatepass"))
    if size > MAX_FRONTMATTER_BYTES:
        fm.error = (f"frontmatter is {size} bytes, larger than the {MAX_FRONTMATTER_BYTES} byte "
                    "cap (keep metadata in frontmatter and content in the body)")
        return fm
    fast = simple_block(lines[1:end])
    if fast is not None:  # the common plain block, without PyYAML's cost
        fm.data, fm.key_lines, fm.positions = fast
        return fm
    try:
        doc = load_yaml_doc(raw, line_offset=1)  # the YAML starts after the opening ---
    except YamlProblem as exc:
        fm.error = exc.message
        fm.error_line = exc.line
        return fm
    data = {} if doc.value is None else doc.value
    if not isinstance(data, dict):
        fm.error = ("frontmatter must be a mapping of keys to values, got "
                    f"{_yaml_type_name(data)}")
        fm.error_line = 2
        return fm
    if doc.odd_keys:
        source, type_name, line = doc.odd_keys[0]
        fm.error = (f"frontmatter key {source!r} is read by YAML as {type_name}, not text: "
                    f"quote it ('{source}':) or rename it")
        fm.error_line = line
        return fm
    fm.data = data
    fm.key_lines = doc.key_lines
    fm.positions = doc.positions
    return fm


class YamlProblem(Exception):
    def __init__(self, message: str, line: int) -> None:
        super().__init__(message)
        self.message = message
        self.line = line  # 1-based within the YAML text (plus any line_offset)


@dataclasses.dataclass(slots=True)
class YamlDoc:
    """A parsed YAML document with the (line, col) of its keys (1-based, plus line_offset)."""

    value: Any
    key_lines: dict[str, int]
    positions: dict[Path, tuple[int, int]]
    # Top-level keys YAML did not read as text: (source text, type name, line).
    odd_keys: list[tuple[str, str, int]]


_MERGE_TAG = "tag:yaml.org,2002:merge"
_YAML: dict[str, Any] = {}


def _yaml() -> tuple[Any, type, type]:
    """(the yaml module, the base loader, our _Loader), built on first use: PyYAML is slow
    to import and most files (and every one-file hook run on a memory file) take the
    plain-block fast path without it."""
    if not _YAML:
        import yaml

        base: type = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml when available
        loader = _make_loader(base)
        loader.add_constructor("tag:yaml.org,2002:timestamp", loader.construct_yaml_str)
        _YAML.update(yaml=yaml, base=base, loader=loader)
    return _YAML["yaml"], _YAML["base"], _YAML["loader"]


def _make_loader(base: type) -> type:
    class _Loader(base):  # type: ignore[misc, valid-type]
        """SafeLoader that rejects duplicate keys and merge keys and records where keys sit.

        Timestamps stay the text that was written (so `updated_at` is validated as written
        and an impossible date is a schema finding, not a constructor crash).
        """

        def __init__(self, stream: str, line_offset: int = 0) -> None:
            super().__init__(stream)
            self.line_offset = line_offset
            self.records: dict[int, list[tuple[str, Any, Any]]] = {}
            self.top: Any = None
            self.odd_keys: list[tuple[str, str, int]] = []

        def construct_mapping(self, node: Any, deep: bool = False) -> dict[Any, Any]:
            seen: dict[str, int] = {}
            records: list[tuple[str, Any, Any]] = []
            for key_node, value_node in node.value:
                line = key_node.start_mark.line + 1 + self.line_offset
                if key_node.tag == _MERGE_TAG:
                    raise YamlProblem("YAML merge keys (<<) are not allowed in memory "
                                      "frontmatter", line)
                key = self.construct_object(key_node, deep=deep)
                try:
                    hash(key)
                except TypeError:
                    raise YamlProblem("a mapping key must be a plain value, not a list or "
                                      "mapping", line) from None
                name = str(key)
                if name in seen:
                    raise YamlProblem(f"duplicate key {name!r} (first on line {seen[name]})",
                                      line)
                seen[name] = line
                if node is self.top and not isinstance(key, str):
                    self.odd_keys.append((str(key_node.value), _yaml_type_name(key), line))
                records.append((name, key_node, value_node))
            self.records[id(node)] = records
            return super().construct_mapping(node, deep=deep)

    return _Loader


def load_yaml_bounded(text: str) -> tuple[Any, dict[str, int]]:
    """Parse YAML with no anchors/aliases, bounded depth, unique keys.

    Returns the value (timestamps as the text written, keys of nested mappings as text) and,
    for a top-level mapping, the 1-based line of each key.
    """
    doc = load_yaml_doc(text)
    return doc.value, doc.key_lines


_QUOTABLE = "[^\"'\\\\\\x00-\\x1f\\x7f-\\x9f\\u2028\\u2029\\ud800-\\udfff\\ufeff\\ufffe\\uffff]"


def _simple_line() -> re.Pattern[str]:
    """simple_mapping's line pattern, compiled on first use (frontmatter goes through
    simple_block; this older fast path is kept for its callers and tests)."""
    return re.compile(
        r"([A-Za-z_][A-Za-z0-9_-]*): "
        rf'(?:"({_QUOTABLE}*)"|\'({_QUOTABLE}*)\'|(-?(?:0|[1-9][0-9]{{0,17}}))'
        r"|([A-Za-z][A-Za-z0-9._/-]*))"
    )
# Words YAML 1.1 (PyYAML) reads as booleans or null: never plain strings on the fast path.
_YAML_WORDS = frozenset({"y", "n", "yes", "no", "true", "false", "on", "off", "null"})


def simple_mapping(lines: list[str]) -> tuple[dict[str, Any], dict[str, int]] | None:
    """Parse a flat block of `key: value` lines whose meaning in YAML is beyond doubt
    (double/single-quoted text without escapes, decimal integers, plain words); None for
    anything else, which then goes through the full, bounded YAML parser. Values are what
    PyYAML's safe loader would give (tested against it)."""
    data: dict[str, Any] = {}
    key_lines: dict[str, int] = {}
    simple_line = _simple_line()  # (re keeps compiled patterns: one compile per process)
    for i, line in enumerate(lines):
        m = simple_line.fullmatch(line)
        if m is None:
            return None
        key = m.group(1)
        if key in data or key.lower() in _YAML_WORDS:
            return None
        if m.group(2) is not None:
            value: Any = m.group(2)
        elif m.group(3) is not None:
            value = m.group(3)
        elif m.group(4) is not None:
            value = int(m.group(4))
        else:
            value = m.group(5)
            if value.lower() in _YAML_WORDS:
                return None
        data[key] = value
        key_lines[key] = i + 2  # file line: after the opening ---
    return data, key_lines


# Inside double quotes only `"` and `\` are special, inside single quotes only `'`.
_IN_DOUBLE = _QUOTABLE.replace("\"'", '"')
_IN_SINGLE = _QUOTABLE.replace("\"'", "'")
SIMPLE_VALUE_PATTERN = (
    rf'"({_IN_DOUBLE}*)"|\'({_IN_SINGLE}*)\'|(-?(?:0|[1-9][0-9]{{0,17}}))'
    r"|(-?(?:0|[1-9][0-9]{0,8})\.[0-9]{1,9})|([A-Za-z][A-Za-z0-9._/-]*)"
)
_SIMPLE_VALUE: re.Pattern[str] | None = None  # compiled on first need
_SIMPLE_KEY = re.compile(r"([A-Za-z_][A-Za-z0-9_-]*):(?: (.*))?")
_SIMPLE_ITEM = re.compile(r"  - (.*)")
_SIMPLE_NESTED = re.compile(r"  ([A-Za-z_][A-Za-z0-9_-]*): (.*)")
_NO_VALUE = object()


def _simple_value(text: str) -> Any:
    """The value of a plain scalar whose YAML meaning is beyond doubt, else _NO_VALUE:
    quoted text without escapes, decimal integers and short decimals, `true`/`false`,
    plain words that YAML 1.1 reads as text."""
    if len(text) >= 2 and text[0] == '"' == text[-1]:
        inner = text[1:-1]  # the usual value: printable ASCII in double quotes, no escapes
        if inner.isascii() and inner.isprintable() and '"' not in inner and "\\" not in inner:
            return inner
    global _SIMPLE_VALUE
    if _SIMPLE_VALUE is None:
        _SIMPLE_VALUE = re.compile(SIMPLE_VALUE_PATTERN)
    m = _SIMPLE_VALUE.fullmatch(text)
    if m is None:
        return _NO_VALUE
    if m.group(1) is not None:
        return m.group(1)
    if m.group(2) is not None:
        return m.group(2)
    if m.group(3) is not None:
        return int(m.group(3))
    if m.group(4) is not None:
        return float(m.group(4))
    word = m.group(5)
    if word == "true" or word == "false":
        return word == "true"
    if word.lower() in _YAML_WORDS:
        return _NO_VALUE
    return word


def simple_block(lines: list[str]) -> tuple[dict[str, Any], dict[str, int],
                                             dict[Path, tuple[int, int]]] | None:
    """(data, key lines, positions) of a frontmatter block in the plain shape contracts
    and memory files use: `key: value` lines (see _simple_value), and `key:` lines followed
    by a two-space indented block of `- value` items or of `key: value` pairs. None for
    anything else (comments, flow style, anchors, deeper nesting, unusual spacing), which
    then goes through the full, bounded YAML parser. Values and positions are what the
    YAML path gives (tested against it); file lines start after the opening ---."""
    data: dict[str, Any] = {}
    key_lines: dict[str, int] = {}
    positions: dict[Path, tuple[int, int]] = {}
    i, n = 0, len(lines)
    while i < n:
        parsed = _top_line(lines[i])
        if parsed is None:
            return None
        key, value = parsed
        if key in data:
            return None
        line = i + 2  # file line: after the opening ---
        key_lines[key] = line
        positions[(key,)] = (line, 1)
        i += 1
        if value is not _NESTED:
            data[key] = value
            continue
        block = _simple_nested(lines, i, key, positions)
        if block is None:
            return None
        data[key], i = block
    return data, key_lines, positions


_NESTED = object()
_TOP_LINES: dict[str, tuple[str, Any] | None] = {}


def _top_line(line: str) -> tuple[str, Any] | None:
    """(key, value) of a top-level `key: value` line, (key, _NESTED) of a `key:` line, None
    for anything else. Remembered per line: memory files repeat their `agent:` and
    `updated_at:` lines (values are immutable scalars, safe to share)."""
    try:
        return _TOP_LINES[line]
    except KeyError:
        pass
    m = _SIMPLE_KEY.fullmatch(line)
    parsed: tuple[str, Any] | None = None
    if m is not None and m.group(1).lower() not in _YAML_WORDS:
        if m.group(2) is None:
            parsed = (m.group(1), _NESTED)
        else:
            value = _simple_value(m.group(2))
            parsed = None if value is _NO_VALUE else (m.group(1), value)
    if len(_TOP_LINES) >= 50_000:
        _TOP_LINES.clear()
    _TOP_LINES[line] = parsed
    return parsed


def _simple_nested(lines: list[str], i: int, key: str,
                   positions: dict[Path, tuple[int, int]]) -> tuple[Any, int] | None:
    """The indented block after `key:` at lines[i:]: a list of `  - value` items or a
    mapping of `  key: value` pairs, and the index after it; None if it is neither."""
    n = len(lines)
    if i >= n:
        return None
    if lines[i].startswith("  - "):
        items: list[Any] = []
        while i < n and lines[i].startswith("  "):
            value = _item_line(lines[i])
            if value is _NO_VALUE:
                return None
            positions[(key, len(items))] = (i + 2, 5)
            items.append(value)
            i += 1
        return items, i
    mapping: dict[str, Any] = {}
    while i < n and lines[i].startswith("  "):
        pair = _pair_line(lines[i])
        if pair is None or pair[0] in mapping:
            return None
        sub, value = pair
        positions[(key, sub)] = (i + 2, 3)
        mapping[sub] = value
        i += 1
    return (mapping, i) if mapping else None


# Nested lines, remembered like _TOP_LINES: agent contracts repeat their tools, triggers and
# context lines (values are immutable scalars, safe to share).
_ITEM_LINES: dict[str, Any] = {}
_PAIR_LINES: dict[str, tuple[str, Any] | None] = {}


def _item_line(line: str) -> Any:
    """The value of a `  - value` line, _NO_VALUE for anything else."""
    try:
        return _ITEM_LINES[line]
    except KeyError:
        pass
    m = _SIMPLE_ITEM.fullmatch(line)
    value = _simple_value(m.group(1)) if m is not None else _NO_VALUE
    if len(_ITEM_LINES) >= 50_000:
        _ITEM_LINES.clear()
    _ITEM_LINES[line] = value
    return value


def _pair_line(line: str) -> tuple[str, Any] | None:
    """(key, value) of a `  key: value` line, None for anything else."""
    try:
        return _PAIR_LINES[line]
    except KeyError:
        pass
    m = _SIMPLE_NESTED.fullmatch(line)
    pair: tuple[str, Any] | None = None
    if m is not None and m.group(1).lower() not in _YAML_WORDS:
        value = _simple_value(m.group(2))
        if value is not _NO_VALUE:
            pair = (m.group(1), value)
    if len(_PAIR_LINES) >= 50_000:
        _PAIR_LINES.clear()
    _PAIR_LINES[line] = pair
    return pair


def load_yaml_doc(text: str, line_offset: int = 0) -> YamlDoc:
    """Like load_yaml_bounded, with the position of every key and item; raises YamlProblem.

    `line_offset` is added to every line (in errors, messages and positions), so text cut
    out of a file reports file lines.
    """
    yaml, _, loader_class = _yaml()
    try:
        _check_events(text, line_offset)
        loader = loader_class(text, line_offset)
        try:
            node = loader.get_single_node()
            loader.top = node
            value = loader.construct_document(node) if node is not None else None
            positions: dict[Path, tuple[int, int]] = {}
            if node is not None:
                _collect_positions(loader, node, (), positions, line_offset)
            key_lines = {p[0]: pos[0] for p, pos in positions.items()
                         if len(p) == 1 and isinstance(p[0], str)}
            odd = list(loader.odd_keys)
        finally:
            loader.dispose()
    except YamlProblem:
        raise
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = (mark.line + 1 if mark else 1) + line_offset
        raise YamlProblem(f"invalid YAML: {exc.problem or exc.context}", line) from None
    except yaml.reader.ReaderError as exc:
        line = text.count("\n", 0, max(0, exc.position)) + 1 + line_offset
        char = exc.character if isinstance(exc.character, int) else ord(str(exc.character)[:1])
        raise YamlProblem(f"invalid YAML: character U+{char:04X} is not allowed", line) \
            from None
    except (yaml.YAMLError, RecursionError, ValueError, OverflowError, TypeError) as exc:
        raise YamlProblem(f"invalid YAML: {exc}", 1 + line_offset) from None
    return YamlDoc(_plain(value), key_lines, positions, odd)


def _check_events(text: str, line_offset: int) -> None:
    """Reject anchors/aliases and deep nesting from the event stream, before composing."""
    yaml, base, _ = _yaml()
    depth = 0
    try:
        events = list(yaml.parse(text, Loader=base))
    except yaml.YAMLError:
        # Some PyYAML builds refuse deep flow nesting themselves, each in its own words:
        # name the problem ours, whatever the installed version says.
        deep = _deep_flow_line(text)
        if deep is not None:
            raise YamlProblem(f"YAML nested deeper than {MAX_YAML_DEPTH} levels",
                              deep + line_offset) from None
        raise
    for event in events:
        if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None):
            raise YamlProblem(
                "YAML anchors and aliases are not allowed in memory frontmatter",
                event.start_mark.line + 1 + line_offset,
            )
        if isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
            depth += 1
            if depth > MAX_YAML_DEPTH:
                raise YamlProblem(f"YAML nested deeper than {MAX_YAML_DEPTH} levels",
                                  event.start_mark.line + 1 + line_offset)
        elif isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
            depth -= 1


def _deep_flow_line(text: str) -> int | None:
    """The 1-based line where flow collections (`[`, `{`) nest deeper than MAX_YAML_DEPTH,
    skipping quoted text and comments; None when they never do."""
    depth, line, quote = 0, 1, ""
    prev = "\n"
    for ch in text:
        if ch == "\n":
            line += 1
        if quote:
            if ch == quote:
                quote = ""
        elif ch in "\"'" and prev in " \t\n[{,:":
            quote = ch
        elif ch in "[{":
            depth += 1
            if depth > MAX_YAML_DEPTH:
                return line
        elif ch in "]}":
            depth = max(0, depth - 1)
        prev = ch
    return None


def _collect_positions(loader: Any, node: Any, path: Path,
                       out: dict[Path, tuple[int, int]], offset: int) -> None:
    """Record (line, col) of every key and item; depth is bounded by MAX_YAML_DEPTH."""
    yaml = _YAML["yaml"]
    if isinstance(node, yaml.MappingNode):
        for name, key_node, value_node in loader.records.get(id(node), ()):
            p = (*path, name)
            mark = key_node.start_mark
            out.setdefault(p, (mark.line + 1 + offset, mark.column + 1))
            _collect_positions(loader, value_node, p, out, offset)
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            p = (*path, i)
            out[p] = (item.start_mark.line + 1 + offset, item.start_mark.column + 1)
            _collect_positions(loader, item, p, out, offset)


def _yaml_type_name(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, (list, tuple)):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, str):
        return "text"
    return type(value).__name__


def _plain(value: Any) -> Any:
    """Text keys everywhere; dates as ISO strings, so JSON Schema and JSON output cope."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    _dt = sys.modules.get("datetime")  # no date exists before it is imported
    if _dt is not None and isinstance(value, _dt.date):
        if isinstance(value, _dt.datetime):
            return value.isoformat().replace("+00:00", "Z")
        return value.isoformat()
    return value
