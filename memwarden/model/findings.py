"""Findings: what a check reports. Plain frozen data, no knowledge of rules or formats."""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Iterable
from typing import Any

ERROR = "error"
WARNING = "warning"


def fingerprint(text: str) -> str:
    """A waiver key: the hash of the offending text, stable when lines move."""
    return "sha256:" + hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


@dataclasses.dataclass(frozen=True, slots=True, order=True)
class Finding:
    """One finding: a frozen value, equal, hashed and ordered by its fields."""

    path: str
    line: int
    col: int
    rule: str
    severity: str
    message: str
    fingerprint: str = ""
    hint: str = ""
    waived: bool = False

    def replace(self, **changes: Any) -> Finding:
        """A copy with some fields changed."""
        return dataclasses.replace(self, **changes)

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
