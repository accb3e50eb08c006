"""Reporters: turn findings into text, json, sarif or GitHub workflow commands.

They know nothing about rules beyond the metadata dicts handed to them (for SARIF).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from memwarden import __version__
from memwarden.findings import ERROR, Finding

FORMATS = ("text", "json", "sarif", "github")
EXTENSIONS = {".json": "json", ".sarif": "sarif", ".txt": "text", ".log": "text"}
GITHUB_ANNOTATION_CAP = 10


def render(fmt: str, findings: Sequence[Finding], summary: dict[str, Any],
           rules: Sequence[dict[str, Any]] = (), extra: dict[str, Any] | None = None) -> str:
    if fmt == "text":
        return render_text(findings, summary)
    if fmt == "json":
        return render_json(findings, summary, extra)
    if fmt == "sarif":
        return render_sarif(findings, rules)
    if fmt == "github":
        return render_github(findings, summary)
    raise ValueError(fmt)


def render_text(findings: Sequence[Finding], summary: dict[str, Any]) -> str:
    lines = []
    for f in findings:
        tag = " (waived)" if f.waived else ("" if f.severity == ERROR else " [warning]")
        lines.append(f"{f.path}:{f.line}:{f.col}: {f.rule} {f.message}{tag}")
    s = summary
    lines.append(
        f"memwarden: {s['files']} file(s) checked, {s['errors']} error(s), "
        f"{s['warnings']} warning(s), {s['waived']} waived"
    )
    return "\n".join(lines) + "\n"


def render_json(findings: Sequence[Finding], summary: dict[str, Any],
                extra: dict[str, Any] | None = None) -> str:
    doc: dict[str, Any] = {"findings": [f.to_json() for f in findings], "summary": summary}
    if extra:
        doc.update(extra)
    return json.dumps(doc, ensure_ascii=False, indent=2, sort_keys=False) + "\n"


_LEVEL = {"error": "error", "warning": "warning"}


def render_sarif(findings: Sequence[Finding], rules: Sequence[dict[str, Any]]) -> str:
    used = sorted({f.rule for f in findings})
    meta = {r["id"]: r for r in rules}
    ids = sorted(set(used) | set(meta))
    index = {rid: i for i, rid in enumerate(ids)}
    sarif_rules = []
    for rid in ids:
        r = meta.get(rid, {"id": rid, "name": rid, "summary": rid, "severity": "error"})
        help_text = r.get("why", "")
        help_md = (
            f"**{rid} {r.get('name', '')}**\n\n{r.get('summary', '')}\n\n{help_text}\n\n"
            f"Bad:\n\n```\n{r.get('bad', '')}\n```\n\nGood:\n\n```\n{r.get('good', '')}\n```\n"
        )
        sarif_rules.append({
            "id": rid,
            "name": _camel(r.get("name", rid)),
            "shortDescription": {"text": r.get("summary", rid)},
            "fullDescription": {"text": (r.get("summary", "") + " " + help_text).strip() or rid},
            "help": {"text": help_text or r.get("summary", rid), "markdown": help_md},
            "defaultConfiguration": {"level": _LEVEL.get(r.get("severity", "error"), "error")},
            "properties": {"tags": ["memwarden"]},
        })
    results = []
    for f in findings:
        res: dict[str, Any] = {
            "ruleId": f.rule,
            "ruleIndex": index[f.rule],
            "level": _LEVEL.get(f.severity, "error"),
            "message": {"text": f.message + (f" Fix: {f.hint}" if f.hint else "")},
            "locations": [{
                "physicalLocation": {
                    "artifactLocation": {"uri": _uri(f.path), "uriBaseId": "%SRCROOT%"},
                    "region": {"startLine": max(1, f.line), "startColumn": max(1, f.col)},
                }
            }],
        }
        if f.fingerprint:
            res["partialFingerprints"] = {"memwardenContentHash/v1": f.fingerprint}
        if f.waived:
            res["suppressions"] = [{"kind": "external",
                                    "justification": "waived in memwarden.toml"}]
        results.append(res)
    doc = {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "memwarden",
                "version": __version__,
                "semanticVersion": __version__,
                "informationUri": "https://memwarden.invalid/docs/rules",
                "rules": sarif_rules,
            }},
            "results": results,
            "columnKind": "unicodeCodePoints",
        }],
    }
    return json.dumps(doc, ensure_ascii=False, indent=2) + "\n"


def _uri(path: str) -> str:
    from urllib.parse import quote

    return quote(path, safe="/")


def _camel(name: str) -> str:
    parts = name.replace("_", "-").split("-")
    return parts[0] + "".join(p[:1].upper() + p[1:] for p in parts[1:])


def escape_data(value: str) -> str:
    """GitHub workflow command message escaping."""
    return value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(value: str) -> str:
    """GitHub workflow command property escaping (also ':' and ',')."""
    return escape_data(value).replace(":", "%3A").replace(",", "%2C")


def render_github(findings: Sequence[Finding], summary: dict[str, Any]) -> str:
    """`::error file=..,line=..::` lines, at most 10 per type (GitHub shows no more)."""
    out = []
    shown = {"error": 0, "warning": 0}
    hidden = {"error": 0, "warning": 0}
    for f in findings:
        if f.waived:
            continue
        kind = "error" if f.severity == ERROR else "warning"
        if shown[kind] >= GITHUB_ANNOTATION_CAP:
            hidden[kind] += 1
            continue
        shown[kind] += 1
        props = (f"file={escape_property(f.path)},line={f.line},col={f.col},"
                 f"title={escape_property(f.rule)}")
        out.append(f"::{kind} {props}::{escape_data(f.rule + ' ' + f.message)}")
    for kind, n in hidden.items():
        if n:
            out.append(f"::notice title=memwarden::{n} more {kind}(s) not annotated; see the "
                       "job summary or the SARIF report")
    out.append(render_text([], summary).rstrip("\n"))
    return "\n".join(out) + "\n"
