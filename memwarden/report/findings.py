"""Reporters: turn findings into text, json, sarif or GitHub workflow commands.

They know nothing about rules beyond the metadata dicts handed to them (`Rule.to_doc()`),
and every format carries the same facts: each finding and the summary counts.
Paths and messages may hold anything a file name can (newlines, commas, bidi controls,
undecodable bytes kept as surrogate escapes), so each format escapes them its own way:
text shows control characters as visible escapes (one finding per line, nothing a terminal
would act on), json and sarif keep the exact text, and the GitHub format uses the
workflow-command escapes.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping, Sequence
from typing import Any

from memwarden.model.findings import ERROR, Finding
from memwarden.version import __version__

FORMATS = ("text", "json", "sarif", "github")
EXTENSIONS = {".json": "json", ".sarif": "sarif", ".txt": "text", ".log": "text"}
GITHUB_ANNOTATION_CAP = 10  # GitHub shows at most 10 error and 10 warning annotations a step

SARIF_SCHEMA_URI = (
    "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
)
SARIF_FINGERPRINT_KEY = "memwardenContentHash/v1"
SARIF_SRCROOT = "%SRCROOT%"

_FAMILY_TAGS = {
    "MW0": ["config"],
    "MW1": ["tokens"],
    "MW2": ["structure"],
    "MW3": ["injection", "security"],
    "MW4": ["commits"],
    "MW5": ["paths", "security"],
}


def render(fmt: str, findings: Sequence[Finding], summary: Mapping[str, Any],
           rules: Sequence[Mapping[str, Any]] = (),
           extra: Mapping[str, Any] | None = None) -> str:
    """Render `findings` and `summary` in `fmt` (one of FORMATS)."""
    if fmt == "text":
        return render_text(findings, summary)
    if fmt == "json":
        return render_json(findings, summary, extra)
    if fmt == "sarif":
        return render_sarif(findings, rules, summary, extra)
    if fmt == "github":
        return render_github(findings, summary, rules)
    raise ValueError(f"unknown report format {fmt!r}; expected one of {', '.join(FORMATS)}")


# -- text ---------------------------------------------------------------------------------

_VISIBLE = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def printable(value: str, keep_newlines: bool = False) -> str:
    """`value` with control, format (bidi, zero-width) and undecodable characters escaped.

    Text reports go to terminals and CI logs: a newline in a file name must not start a
    fake finding line, and an escape sequence or a right-to-left override must not change
    what the reader sees.
    """
    out = []
    for ch in value:
        if keep_newlines and ch in "\r\n":
            out.append(ch)
        elif ch in _VISIBLE:
            out.append(_VISIBLE[ch])
        elif "\udc80" <= ch <= "\udcff":  # a byte that was not UTF-8 (surrogateescape)
            out.append(f"\\x{ord(ch) - 0xDC00:02x}")
        elif unicodedata.category(ch) in ("Cc", "Cf", "Cs", "Zl", "Zp"):
            out.append(f"\\x{ord(ch):02x}" if ord(ch) < 0x100 else f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    return "".join(out)


_COMMAND_START = ("::", "##[")


def not_a_command(line: str) -> str:
    """`line`, with a leading `::` or `##[` shown as `\\x3a`/`\\x23` escapes.

    A CI runner reads every line a step prints: the GitHub runner takes a line that starts
    (after white space) with `::` as a workflow command, so quoted memory text must not
    start a line that way in any format.
    """
    body = line.lstrip()
    if body.startswith(_COMMAND_START):
        cut = len(line) - len(body)
        return f"{line[:cut]}\\x{ord(body[0]):02x}{body[1:]}"
    return line


def summary_line(summary: Mapping[str, Any]) -> str:
    s = summary
    return (f"memwarden: {s['files']} file(s) checked, {s['errors']} error(s), "
            f"{s['warnings']} warning(s), {s['waived']} waived")


def render_text(findings: Sequence[Finding], summary: Mapping[str, Any]) -> str:
    """`path:line:col: MWxxx message` per finding, then the summary line."""
    lines = []
    for f in findings:
        tag = " (waived)" if f.waived else ("" if f.severity == ERROR else " [warning]")
        lines.append(not_a_command(f"{printable(f.path)}:{f.line}:{f.col}: {f.rule} "
                                   f"{printable(f.message)}{tag}"))
    lines.append(summary_line(summary))
    return "\n".join(lines) + "\n"


# -- json ---------------------------------------------------------------------------------

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def dump_json(doc: Any, indent: int | None = 2) -> str:
    """JSON that is always encodable as UTF-8: lone surrogates become `\\udcXX` escapes.

    Undecodable bytes in file names reach us as lone surrogates; written raw they would
    crash the UTF-8 encoder, escaped they are valid JSON that round-trips to the same str.
    """
    import json  # text output (a hook run) does without it

    text = json.dumps(doc, ensure_ascii=False, indent=indent)
    return _LONE_SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def render_json(findings: Sequence[Finding], summary: Mapping[str, Any],
                extra: Mapping[str, Any] | None = None) -> str:
    """`{"findings": [...], "summary": {...}}` plus any command-specific keys in `extra`."""
    doc: dict[str, Any] = {"findings": [f.to_json() for f in findings], "summary": dict(summary)}
    if extra:
        doc.update(extra)
    return dump_json(doc) + "\n"


# -- sarif --------------------------------------------------------------------------------

_LEVEL = {"error": "error", "warning": "warning"}
_PROBLEM_SEVERITY = {"error": "error", "warning": "warning"}


def path_bytes(path: str) -> bytes:
    """The bytes of a path: undecodable bytes come back from their surrogate escapes."""
    try:
        return path.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:  # a surrogate no file system decoder produced
        return path.encode("utf-8", "surrogatepass")


def sarif_uri(path: str) -> str:
    """A relative URI reference for a repo path (RFC 3986: every byte outside the
    unreserved set and '/' percent-encoded, so ':', '%', '#', '?' and spaces are safe).
    urllib.parse is imported here: with ipaddress it would slow every text-output hook run."""
    from urllib.parse import quote

    return quote(path_bytes(path), safe="/")


def _pascal(name: str) -> str:
    return "".join(p[:1].upper() + p[1:] for p in re.compile(r"[-_\s]+").split(name) if p)


def _tags(rule_id: str) -> list[str]:
    return ["memwarden", *_FAMILY_TAGS.get(rule_id[:3], [])]


def _help_text(r: Mapping[str, Any]) -> str:
    parts = [f"{r['id']} {r.get('name', '')}".strip(), r.get("summary", ""), r.get("why", "")]
    if r.get("bad"):
        parts.append(f"Bad:\n{r['bad']}")
    if r.get("good"):
        parts.append(f"Good:\n{r['good']}")
    if r.get("fix"):
        parts.append(f"Fix: {r['fix']}")
    return "\n\n".join(p for p in parts if p)


def _fence(text: str) -> str:
    """A Markdown code fence long enough that `text` cannot close it."""
    runs = [len(m) for m in re.compile(r"`{3,}").findall(text)]
    tick = "`" * max(3, max(runs, default=0) + 1)
    return f"{tick}\n{text}\n{tick}"


def _help_markdown(r: Mapping[str, Any]) -> str:
    title = f"{r['id']} {r.get('name', '')}".strip()
    parts = [f"**{title}**", r.get("summary", ""), r.get("why", "")]
    if r.get("bad"):
        parts.append("Bad:\n\n" + _fence(r["bad"]))
    if r.get("good"):
        parts.append("Good:\n\n" + _fence(r["good"]))
    if r.get("fix"):
        parts.append(f"Fix: {r['fix']}")
    return "\n\n".join(p for p in parts if p)


def sarif_rule(r: Mapping[str, Any]) -> dict[str, Any]:
    """A SARIF reportingDescriptor from a rule's documentation dict."""
    rid = r["id"]
    summary = r.get("summary") or rid
    severity = r.get("severity", "error")
    full = " ".join(p for p in (r.get("summary", ""), r.get("why", "")) if p) or rid
    return {
        "id": rid,
        "name": _pascal(r.get("name") or rid),
        "shortDescription": {"text": summary},
        "fullDescription": {"text": full},
        "help": {"text": _help_text(r), "markdown": _help_markdown(r)},
        "defaultConfiguration": {"level": _LEVEL.get(severity, "error")},
        "properties": {
            "tags": _tags(rid),
            "precision": "very-high",
            "problem.severity": _PROBLEM_SEVERITY.get(severity, "error"),
        },
    }


def artifact_location(path: str) -> dict[str, str]:
    """Repo paths are relative to %SRCROOT%; an absolute path (MW502 reports a path given
    outside the repository as typed) becomes a file: URI with no base."""
    if path.startswith("/"):
        return {"uri": "file://" + sarif_uri(path)}
    return {"uri": sarif_uri(path), "uriBaseId": SARIF_SRCROOT}


def _sarif_result(f: Finding, index: int) -> dict[str, Any]:
    text = f.message + (f" Fix: {f.hint}" if f.hint else "")
    res: dict[str, Any] = {
        "ruleId": f.rule,
        "ruleIndex": index,
        "level": _LEVEL.get(f.severity, "error"),
        "message": {"text": text},
        "locations": [{
            "physicalLocation": {
                "artifactLocation": artifact_location(f.path),
                "region": {"startLine": max(1, f.line), "startColumn": max(1, f.col)},
            }
        }],
    }
    if f.fingerprint:
        res["partialFingerprints"] = {SARIF_FINGERPRINT_KEY: f.fingerprint}
    if f.waived:
        res["suppressions"] = [{
            "kind": "external",
            "status": "accepted",
            "justification": "waived by a [[waivers]] entry in memwarden.toml "
                             f"(rule {f.rule}, fingerprint {f.fingerprint})",
        }]
    return res


def render_sarif(findings: Sequence[Finding], rules: Sequence[Mapping[str, Any]],
                 summary: Mapping[str, Any] | None = None,
                 extra: Mapping[str, Any] | None = None) -> str:
    """One SARIF 2.1.0 run for GitHub code scanning and other SARIF viewers.

    The driver lists every rule (not only those that fired) so code scanning can close an
    alert whose rule ran and found nothing. Waived findings stay in the log as accepted
    external suppressions; nothing depends on the wall clock, so output is reproducible.
    """
    meta = {r["id"]: r for r in rules}
    ids = sorted(set(meta) | {f.rule for f in findings})
    index = {rid: i for i, rid in enumerate(ids)}
    descriptors = [sarif_rule(meta.get(rid) or {"id": rid}) for rid in ids]
    run: dict[str, Any] = {
        "tool": {"driver": {
            "name": "memwarden",
            "version": __version__,
            "semanticVersion": __version__,
            "rules": descriptors,
        }},
        "invocations": [{"executionSuccessful": True}],
        "results": [_sarif_result(f, index[f.rule]) for f in findings],
        "columnKind": "unicodeCodePoints",
    }
    props: dict[str, Any] = {}
    if summary is not None:
        props["summary"] = dict(summary)
    if extra:
        props.update(extra)
    if props:
        run["properties"] = {"memwarden": props}
    doc = {"$schema": SARIF_SCHEMA_URI, "version": "2.1.0", "runs": [run]}
    return dump_json(doc) + "\n"


# -- github -------------------------------------------------------------------------------

def escape_data(value: str) -> str:
    """GitHub workflow command message escaping (`%`, CR, LF)."""
    return value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(value: str) -> str:
    """GitHub workflow command property escaping (also ':' and ',')."""
    return escape_data(value).replace(":", "%3A").replace(",", "%2C")


def _exact(value: str) -> str:
    """The exact text, except undecodable bytes, which cannot be written, shown as \\xNN."""
    return path_bytes(value).decode("utf-8", "backslashreplace")


def github_annotation(f: Finding, title: str) -> str:
    """One `::error file=..,line=..,col=..,title=..::message` workflow command."""
    kind = "error" if f.severity == ERROR else "warning"
    # The file property is the exact repo path, so GitHub can place the annotation on it.
    props = (f"file={escape_property(_exact(f.path))},line={f.line},col={f.col},"
             f"title={escape_property(printable(title))}")
    text = printable(f.message, keep_newlines=True)
    if f.hint:
        text += "\n" + f"Fix: {printable(f.hint, keep_newlines=True)}"
    return f"::{kind} {props}::{escape_data(text)}"


def render_github(findings: Sequence[Finding], summary: Mapping[str, Any],
                  rules: Sequence[Mapping[str, Any]] = ()) -> str:
    """Annotations for unwaived findings (at most 10 per type), then the summary line.

    GitHub drops annotations past 10 errors and 10 warnings per step, so the rest are
    counted in one notice instead of being silently lost.
    """
    names = {r["id"]: r.get("name", "") for r in rules}
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
        out.append(github_annotation(f, f"{f.rule} {names.get(f.rule, '')}".strip()))
    for kind, n in hidden.items():
        if n:
            out.append(f"::notice title=memwarden::{n} more {kind}(s) not annotated (GitHub "
                       f"shows {GITHUB_ANNOTATION_CAP} per type); see the SARIF or text report")
    out.append(summary_line(summary))
    return "\n".join(out) + "\n"
