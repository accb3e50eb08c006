"""Findings: what a check reports. Plain frozen data, no knowledge of rules or formats."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from typing import Any

from memwarden.records import FrozenRecord

ERROR = "error"
WARNING = "warning"


def fingerprint(text: str) -> str:
    """A waiver key: the hash of the offending text, stable when lines move."""
    return "sha256:" + hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


class Finding(FrozenRecord):
    """One finding. A plain frozen value (equal, hashed and ordered by its fields, as the
    frozen dataclass it was): building a dataclass class means importing `dataclasses` and
    `inspect`, ~5 ms of a one-file hook run."""

    __slots__ = ("path", "line", "col", "rule", "severity", "message", "fingerprint", "hint",
                 "waived")
    path: str
    line: int
    col: int
    rule: str
    severity: str
    message: str
    fingerprint: str
    hint: str
    waived: bool

    def __init__(self, path: str, line: int, col: int, rule: str, severity: str, message: str,
                 fingerprint: str = "", hint: str = "", waived: bool = False) -> None:
        super().__init__(path, line, col, rule, severity, message, fingerprint, hint, waived)

    def __lt__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._values() < other._values()  # type: ignore[attr-defined, no-any-return]

    # The rest of the order, as functools.total_ordering would derive it (functools costs
    # a one-file hook run ~2.5 ms with collections).
    def __le__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._values() <= other._values()  # type: ignore[attr-defined, no-any-return]

    def __gt__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._values() > other._values()  # type: ignore[attr-defined, no-any-return]

    def __ge__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._values() >= other._values()  # type: ignore[attr-defined, no-any-return]

    def replace(self, **changes: Any) -> Finding:
        """A copy with some fields changed (what dataclasses.replace gave)."""
        values = {k: getattr(self, k) for k in self.__slots__}
        unknown = set(changes) - values.keys()
        if unknown:
            raise TypeError(f"Finding has no field(s) {', '.join(sorted(unknown))}")
        values.update(changes)
        return Finding(**values)

    def to_json(self) -> dict[str, Any]:
        return {
            "rule": self.rule,
            "severity": self.severity,
            "path": self.path,
            "line": self.line,
            "col": self.col,
            "message": self.message,
            "hint": self.hint,
            "fingerprint": self.fingerprint,
            "waived": self.waived,
        }

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Finding:
        return cls(
            path=d["path"], line=d["line"], col=d["col"], rule=d["rule"],
            severity=d["severity"], message=d["message"], fingerprint=d.get("fingerprint", ""),
            hint=d.get("hint", ""), waived=d.get("waived", False),
        )

    def waive(self) -> Finding:
        return self.replace(waived=True)


def make(rule: str, severity: str, path: str, line: int, col: int, message: str,
         snippet: str, hint: str = "") -> Finding:
    """Build a finding whose fingerprint is the hash of `snippet` (the offending text)."""
    return Finding(path=path, line=max(1, line), col=max(1, col), rule=rule, severity=severity,
                   message=message, fingerprint=fingerprint(snippet), hint=hint)


def summarize(findings: Iterable[Finding], files: int) -> dict[str, int]:
    errors = warnings = waived = 0
    for f in findings:
        if f.waived:
            waived += 1
        elif f.severity == ERROR:
            errors += 1
        else:
            warnings += 1
    return {"files": files, "errors": errors, "warnings": warnings, "waived": waived}


def sort_key(f: Finding) -> tuple[str, int, int, str, str]:
    return (f.path, f.line, f.col, f.rule, f.message)
