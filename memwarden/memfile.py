"""A memory file as the rules see it: bytes decoded once, frontmatter parsed safely, lazily.

Decoding is strict (UTF-8, an optional BOM, any line ending) and never raises: a file that
is binary or not UTF-8 carries a `decode_error` the rules report. YAML frontmatter is
parsed with hard bounds (size, nesting depth, no anchors/aliases, no duplicate keys) so a
YAML bomb costs microseconds, not gigabytes.
"""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import yaml

from memwarden.layout import FileInfo

MAX_FRONTMATTER_BYTES = 64 * 1024
MAX_YAML_DEPTH = 20
# Files larger than this are reported, not tokenized or scanned (bounded time and memory).
MAX_FILE_BYTES = 4 * 1024 * 1024


@dataclass
class FrontMatter:
    """Parsed frontmatter: the mapping, where each top-level key sits, and any error."""

    data: dict[str, Any] | None
    start_line: int  # line of the opening ---
    end_line: int  # line of the closing --- (or last line when unclosed)
    key_lines: dict[str, int] = field(default_factory=dict)
    error: str | None = None
    error_line: int = 1
    raw: str = ""


class MemFile:
    """One governed file's content and lazily derived views."""

    def __init__(self, info: FileInfo, data: bytes, mode: int, blob_id: str,
                 size: int | None = None) -> None:
        self.info = info
        self.path = info.path
        self.data = data
        self.mode = mode
        self.blob_id = blob_id
        self.size = len(data) if size is None else size

    @property
    def too_large(self) -> bool:
        return self.size > MAX_FILE_BYTES

    @cached_property
    def _decoded(self) -> tuple[str | None, str | None, bool]:
        data = self.data
        if self.too_large:
            return None, f"file is {self.size} bytes, over the {MAX_FILE_BYTES} byte cap", False
        nul = data.find(b"\x00")
        if nul >= 0:
            return None, f"binary file (NUL byte at offset {nul})", False
        bom = data.startswith(b"\xef\xbb\xbf")
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            line = data.count(b"\n", 0, exc.start) + 1
            return None, f"invalid UTF-8 at byte {exc.start} (line {line})", bom
        return text, None, bom

    @property
    def text(self) -> str | None:
        """The decoded text (BOM removed), or None for binary / non-UTF-8 / oversized files."""
        return self._decoded[0]

    @property
    def decode_error(self) -> str | None:
        return self._decoded[1]

    @property
    def has_bom(self) -> bool:
        return self._decoded[2]

    @cached_property
    def lines(self) -> list[str]:
        """Lines without their endings (CRLF, CR and LF all end a line)."""
        return self.text.splitlines() if self.text is not None else []

    @cached_property
    def frontmatter(self) -> FrontMatter | None:
        """The YAML frontmatter, or None when the file has none."""
        return parse_frontmatter(self.lines) if self.text is not None else None

    @property
    def body_start(self) -> int:
        """Index into `lines` of the first body line (after any frontmatter)."""
        fm = self.frontmatter
        return fm.end_line if fm is not None else 0


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
    if len(raw.encode("utf-8", "surrogatepass")) > MAX_FRONTMATTER_BYTES:
        fm.error = f"frontmatter is larger than {MAX_FRONTMATTER_BYTES} bytes"
        return fm
    try:
        data, key_lines = load_yaml_bounded(raw)
    except YamlProblem as exc:
        fm.error = exc.message
        fm.error_line = exc.line + 1  # +1 for the opening ---
        return fm
    if data is None:
        data = {}
    if not isinstance(data, dict):
        fm.error = f"frontmatter must be a mapping of keys to values, got {type(data).__name__}"
        fm.error_line = 2
        return fm
    fm.data = {str(k): v for k, v in data.items()}
    fm.key_lines = {k: v + 1 for k, v in key_lines.items()}
    return fm


class YamlProblem(Exception):
    def __init__(self, message: str, line: int) -> None:
        super().__init__(message)
        self.message = message
        self.line = line  # 1-based within the YAML text


class _Loader(yaml.SafeLoader):
    """SafeLoader that rejects duplicate keys instead of silently keeping the last one."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: dict[Any, int] = {}
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            try:
                hash(key)
            except TypeError:
                raise YamlProblem("a mapping key must be a plain value",
                                  key_node.start_mark.line + 1) from None
            if key in seen:
                raise YamlProblem(
                    f"duplicate key {key!r} (first on line {seen[key] + 1})",
                    key_node.start_mark.line + 1,
                )
            seen[key] = key_node.start_mark.line + 1
        return super().construct_mapping(node, deep=deep)


def load_yaml_bounded(text: str) -> tuple[Any, dict[str, int]]:
    """Parse YAML with no anchors/aliases, bounded depth, unique keys.

    Returns the value (dates as ISO strings) and, for a top-level mapping, the 1-based line
    of each key.
    """
    depth = 0
    try:
        for event in yaml.parse(text, Loader=yaml.SafeLoader):
            if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None):
                raise YamlProblem(
                    "YAML anchors and aliases are not allowed in memory frontmatter",
                    event.start_mark.line + 1,
                )
            if isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
                depth += 1
                if depth > MAX_YAML_DEPTH:
                    raise YamlProblem(f"YAML nested deeper than {MAX_YAML_DEPTH} levels",
                                      event.start_mark.line + 1)
            elif isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
                depth -= 1
        loader = _Loader(text)
        try:
            node = loader.get_single_node()
            key_lines: dict[str, int] = {}
            if isinstance(node, yaml.MappingNode):
                for key_node, _ in node.value:
                    key_lines.setdefault(str(key_node.value), key_node.start_mark.line + 1)
            value = loader.construct_document(node) if node is not None else None
        finally:
            loader.dispose()
    except YamlProblem:
        raise
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark else 1
        raise YamlProblem(f"invalid YAML: {exc.problem or exc.context}", line) from None
    except (yaml.YAMLError, RecursionError, ValueError, OverflowError) as exc:
        raise YamlProblem(f"invalid YAML: {exc}", 1) from None
    return _plain(value), key_lines


def _plain(value: Any) -> Any:
    """Dates and times as ISO strings so JSON Schema and JSON output can handle them."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, _dt.datetime):
        return value.isoformat().replace("+00:00", "Z")
    if isinstance(value, _dt.date):
        return value.isoformat()
    return value
