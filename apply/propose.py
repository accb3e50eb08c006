"""`memwarden propose`: turn a propose-memory-update request into a proposal branch.

The request (agentId, runId, updates[] with file + operation
append|replace|close|remove_entry|add_loop|add_decision, reasoning, priority,
expectedVersion, factsUsed, entityRefs; camelCase or snake_case, optionally under
"params") becomes ONE commit on `proposals/<agentId>/<proposalId>`, written in-process
from the base branch without touching any working tree. Bad requests raise MemwardenError
naming the update index (exit 2).
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import re
from dataclasses import dataclass, field
from typing import Any

from memwarden.git.repo import Repo, Writer, diff_bytes
from memwarden.model.config import Config
from memwarden.model.entries import loop_span, parse_facts, parse_loops
from memwarden.model.errors import MemwardenError
from memwarden.model.factids import word_of
from memwarden.model.layout import (
    AGENT_ID_RE,
    APPLY_OWNED_KINDS,
    ID_RE,
    classify,
    unsafe_path_reason,
    valid_ref_id,
)
from memwarden.model.memfile import split_lines

OPERATIONS = ("append", "replace", "close", "remove_entry", "add_loop", "add_decision")
DEFAULT_FILES = {"close": "open_loops.md", "add_loop": "open_loops.md",
                 "add_decision": "decisions.md"}
# Caps when the config names none (memwarden.toml max_update_bytes / max_request_bytes).
MAX_UPDATE_BYTES = 64 * 1024
MAX_REQUEST_BYTES = 256 * 1024
# A request is a flat document: nothing in it needs more nesting than this.
MAX_DEPTH = 32
# The raw JSON may escape text (\uXXXX is 6 bytes for 1-3): this many times the cap.
RAW_FACTOR = 8


@dataclass
class Request:
    agent: str
    run: str
    proposal: str
    updates: list[dict[str, Any]]
    reasoning: str = ""
    priority: str = "normal"
    expected_version: int | None = None
    facts_used: list[str] = field(default_factory=list)
    entity_refs: list[str] = field(default_factory=list)
    extra: dict[str, str] = field(default_factory=dict)


def _get(d: dict[str, Any], *names: str, default: Any = None) -> Any:
    for n in names:
        if n in d:
            return d[n]
    return default


def _ids(value: Any, what: str) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        value = [v.strip() for v in value.split(",") if v.strip()]
    if not isinstance(value, list) or not all(isinstance(v, str) and ID_RE.match(v)
                                              for v in value):
        raise MemwardenError(f"request: {what} must be a list of ids "
                             "([A-Za-z0-9._-], no '/')")
    return value


def caps(config: Config | None) -> tuple[int, int]:
    """(bytes per update, bytes per request) from the config, else the defaults."""
    data = config.data if config is not None else {}
    return (int(data.get("max_update_bytes", MAX_UPDATE_BYTES)),
            int(data.get("max_request_bytes", MAX_REQUEST_BYTES)))


def _size(value: Any, name: str, limit: int) -> int:
    """The text bytes in a JSON value (each scalar counts at least 1), without recursion;
    stops once over `limit`. Raises for nesting deeper than MAX_DEPTH and for text that
    is not valid Unicode (a lone surrogate from a \\ud800 escape), naming the field."""
    total = 0
    stack: list[tuple[Any, str, int]] = [(value, name, 0)]
    while stack and total <= limit:
        v, where, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise MemwardenError(f"{name}: nested more than {MAX_DEPTH} levels deep")
        if isinstance(v, str):
            try:
                total += max(1, len(v.encode("utf-8")))
            except UnicodeEncodeError:
                raise MemwardenError(f"{where}: not valid Unicode text (a lone surrogate "
                                     "such as \\ud800)") from None
        elif isinstance(v, dict):
            total += 1
            for k, x in v.items():
                total += len(str(k))
                stack.append((k, f"{where} key", depth + 1))
                stack.append((x, f"{where}.{k}", depth + 1))
        elif isinstance(v, list):
            total += 1
            stack.extend((x, f"{where}[{j}]", depth + 1) for j, x in enumerate(v))
        else:
            total += 1
    return total


def check_sizes(doc: dict[str, Any], config: Config | None = None) -> None:
    """Refuse a request over the configured caps, naming the field that is too large."""
    per_update, per_request = caps(config)
    for key, value in doc.items():
        n = _size(value, f"request: {key}", per_request)
        if key != "updates" and n > per_update:
            raise MemwardenError(f"request: {key} is over the {per_update}-byte cap for one "
                                 "field (max_update_bytes in memwarden.toml)")
    updates = doc.get("updates")
    for i, u in enumerate(updates if isinstance(updates, list) else []):
        if isinstance(u, dict):
            for key, value in u.items():
                if _size(value, f"updates[{i}].{key}", per_update) > per_update:
                    raise MemwardenError(
                        f"updates[{i}].{key} is over the {per_update}-byte cap per update "
                        "(max_update_bytes in memwarden.toml): propose smaller updates")
        if _size(u, f"updates[{i}]", per_update) > per_update:
            raise MemwardenError(f"updates[{i}] is over the {per_update}-byte cap per update "
                                 "(max_update_bytes in memwarden.toml): split it")
    if _size(doc, "request", per_request) > per_request:
        raise MemwardenError(f"request: over the {per_request}-byte cap per request "
                             "(max_request_bytes in memwarden.toml): split it into several "
                             "proposals")


def load_request(text: str, source: str, config: Config | None = None) -> Any:
    """A request's JSON text as a document: exit-2 errors for oversized, invalid or too
    deeply nested JSON, naming the field (never a RecursionError)."""
    per_request = caps(config)[1]
    if len(text) > RAW_FACTOR * per_request:
        raise MemwardenError(f"{source}: the request is {len(text)} characters, over "
                             f"{RAW_FACTOR} x the {per_request}-byte cap per request "
                             "(max_request_bytes in memwarden.toml)")
    deep = _too_deep(text)
    if deep is not None:
        raise MemwardenError(f"{source}: {deep} is nested more than {MAX_DEPTH} levels deep")
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise MemwardenError(f"{source}: invalid JSON at line {exc.lineno} column {exc.colno}:"
                             f" {exc.msg}") from None
    except RecursionError:  # (_too_deep should have caught it)
        raise MemwardenError(f"{source}: the request is nested too deeply") from None


_JSON_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}:]')


def _too_deep(text: str) -> str | None:
    """The top-level field (or "the request") holding nesting deeper than MAX_DEPTH, found
    by a scan that needs no parse (json.loads recurses and would fail on it)."""
    if text.count("[") + text.count("{") <= MAX_DEPTH:
        return None
    depth, key, last = 0, None, None
    for m in _JSON_TOKEN.finditer(text):
        tok = m.group()
        if tok in "[{":
            depth += 1
            if depth > MAX_DEPTH + 1:
                return f"request field {key!r}" if key is not None else "the request"
        elif tok in "]}":
            depth -= 1
        elif tok == ":":
            if depth == 1 and last is not None and last.startswith('"'):
                try:
                    key = json.loads(last)
                except ValueError:
                    key = last
        last = tok
    return None


def as_read(doc: dict[str, Any]) -> dict[str, Any]:
    """The request as parse_request reads it: a "params" object merged over the top level
    (the service checks this same view, so nothing inside it slips past)."""
    params = doc.get("params")
    return {**doc, **params} if isinstance(params, dict) else doc


def parse_request(doc: Any, config: Config | None = None) -> Request:
    """Validate and normalise a request document (dict from JSON)."""
    if not isinstance(doc, dict):
        raise MemwardenError("request: expected a JSON object")
    check_sizes(doc, config)
    doc = as_read(doc)
    agent = _get(doc, "agentId", "agent_id")
    run = _get(doc, "runId", "run_id")
    if not isinstance(agent, str) or not AGENT_ID_RE.match(agent) or len(agent) > 64:
        raise MemwardenError(f"request: agentId {agent!r} is not an agent id "
                             "(lowercase letters, digits, hyphens, at most 64)")
    if not isinstance(run, str) or not ID_RE.match(run):
        raise MemwardenError(f"request: runId {run!r} must match [A-Za-z0-9][A-Za-z0-9._-]*")
    updates = doc.get("updates")
    if not isinstance(updates, list) or not updates:
        raise MemwardenError("request: updates must be a non-empty list")
    for i, u in enumerate(updates):
        if not isinstance(u, dict):
            raise MemwardenError(f"updates[{i}]: expected an object")
    priority = _get(doc, "priority", default="normal")
    if priority not in ("normal", "high"):
        raise MemwardenError(f"request: priority {priority!r}: expected 'normal' or 'high'")
    ev = _get(doc, "expectedVersion", "expected_version")
    if ev is not None and (isinstance(ev, bool) or not isinstance(ev, int) or ev < 0):
        raise MemwardenError(f"request: expectedVersion {ev!r}: expected an integer >= 0")
    reasoning = _get(doc, "reasoning", "summary", "reason")
    if reasoning is None:
        reasoning = ""
    if not isinstance(reasoning, str):
        raise MemwardenError(f"request: reasoning must be text, got {type(reasoning).__name__}")
    proposal = _get(doc, "proposalId", "proposal_id")
    if proposal is None:
        digest = hashlib.sha256(json.dumps(doc, sort_keys=True, ensure_ascii=False,
                                           default=str).encode()).hexdigest()[:12]
        proposal = f"p-{run[:40]}-{digest}"
    if not isinstance(proposal, str) or not valid_ref_id(proposal):
        raise MemwardenError(f"request: proposalId {proposal!r} must match "
                             "[A-Za-z0-9][A-Za-z0-9._-]* and be a valid git branch name "
                             "component (no '..', not ending with '.' or '.lock')")
    extra = {}
    for key, names in (("Task", ("task",)), ("Result", ("result",))):
        v = _get(doc, *names)
        if v is not None:
            extra[key] = " ".join(str(v).split())[:200]
    seconds = _get(doc, "durationSeconds", "duration_seconds")
    if seconds is not None:
        if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or \
                not 0 <= seconds < 10**9:
            raise MemwardenError(f"request: durationSeconds {seconds!r}: expected a number of "
                                 "seconds >= 0")
        extra["Duration-Seconds"] = f"{seconds:.6f}".rstrip("0").rstrip(".")
    return Request(agent, run, proposal, updates, reasoning, priority, ev,
                   _ids(_get(doc, "factsUsed", "facts_used"), "factsUsed"),
                   _ids(_get(doc, "entityRefs", "entity_refs"), "entityRefs"), extra)


def _target(agent: str, update: dict[str, Any], i: int, op: str) -> str:
    name = update.get("file") or DEFAULT_FILES.get(op)
    if not isinstance(name, str) or not name:
        raise MemwardenError(f"updates[{i}]: missing 'file'")
    path = name if name.startswith("memory/") else f"memory/{agent}/{name}"
    unsafe = unsafe_path_reason(path)
    if unsafe is not None or "%" in path:
        raise MemwardenError(f"updates[{i}]: file {name!r} is not a plain path inside "
                             f"memory/{agent}/ ({unsafe or 'a percent escape'})")
    info = classify(path)
    if info is None or info.agent != agent:
        raise MemwardenError(f"updates[{i}]: file {name!r} is outside memory/{agent}/ "
                             "(an agent may only propose changes to its own memory)")
    if info.kind in APPLY_OWNED_KINDS:
        raise MemwardenError(f"updates[{i}]: {name} is written only by apply (meta.json, "
                             "changelog.md, timeline/)")
    if info.kind == "unknown":
        raise MemwardenError(f"updates[{i}]: {name} is not a memory file (see "
                             "`memwarden rule MW506`)")
    return path


def _text(update: dict[str, Any], i: int, key: str = "content") -> str:
    v = update.get(key)
    if not isinstance(v, str) or not v.strip():
        raise MemwardenError(f"updates[{i}]: '{key}' must be non-empty text")
    return v


def _line(update: dict[str, Any], i: int, key: str) -> None:
    """Fields that become part of one line (a heading, a status) must be one line."""
    v = update.get(key)
    if v is not None and (not isinstance(v, str) or "\n" in v or "\r" in v):
        raise MemwardenError(f"updates[{i}]: '{key}' must be one line of text")


def _section_name(raw: str) -> str:
    return re.sub(r"^#+\s*", "", raw.strip())


def _append_section(text: str, section: str, content: str) -> str:
    """Insert `content` at the end of `## section` (created at the end if absent)."""
    lines = text.split("\n")
    name = _section_name(section).casefold()
    start = None
    for n, line in enumerate(lines):
        if line.startswith("## ") and _section_name(line).casefold() == name:
            start = n
            break
    block = content.rstrip("\n").split("\n")
    if start is None:
        base = text.rstrip("\n")
        return (base + "\n\n" if base else "") + f"## {_section_name(section)}\n" + \
            "\n".join(block) + "\n"
    end = len(lines)
    for n in range(start + 1, len(lines)):
        if lines[n].startswith("#") and re.match(r"^#{1,2}\s", lines[n]):
            end = n
            break
    insert = end
    while insert > start + 1 and not lines[insert - 1].strip():
        insert -= 1
    return "\n".join(lines[:insert] + block + lines[insert:])


def _fact_lines(content: str, i: int) -> str:
    """Appended facts as facts.md holds them: a line starting `- ` or `* ` starts a fact
    (the first line always does), any other line continues the fact above, indented
    (memory-format.md); blank lines go. A line that would still end its fact (a heading,
    a code fence or a comment opener, which indentation does not hide) is refused."""
    block: list[str] = []
    for line in split_lines(content):
        text = line.strip()
        if not text:
            continue
        if not block:
            block.append(text if text.startswith(("- ", "* ")) else "- " + text)
        elif line.startswith(("- ", "* ")):
            block.append(line.rstrip())
        else:
            block.append("  " + text)
    facts, _ = parse_facts(["## _", *block])
    held = {n for f in facts for n in range(f.line, f.end_line + 1)}
    for n, line in enumerate(block, start=2):
        if n not in held:
            raise MemwardenError(f"updates[{i}].content: the line {line.strip()[:60]!r} "
                                 "would not stay part of a fact (a heading, code fence or "
                                 "comment opener ends one); put it on one line with its fact "
                                 "or drop it")
    return "\n".join(block)


def _apply_one(text: str, update: dict[str, Any], i: int, op: str, path: str, req: Request,
               today: str) -> str:
    kind = classify(path).kind  # type: ignore[union-attr]
    for key in ("section", "status", "title"):
        _line(update, i, key)
    if op == "replace":
        return _text(update, i).rstrip("\n") + "\n"
    if op == "append":
        content = _text(update, i)
        section = update.get("section")
        if kind == "facts":
            if not isinstance(section, str) or not section.strip():
                raise MemwardenError(f"updates[{i}]: appending to facts.md needs 'section' "
                                     "(the ## heading the fact belongs under)")
            return _append_section(text, section, _fact_lines(content, i))
        if isinstance(section, str) and section.strip():
            return _append_section(text, section, content)
        base = text.rstrip("\n")
        return (base + "\n\n" if base else "") + content.rstrip("\n") + "\n"
    if op == "close":
        return _close_loop(text, update, i, req, today)
    if op == "remove_entry":
        return _remove_entry(text, update, i, kind)
    if op == "add_loop":
        if kind != "open_loops":
            raise MemwardenError(f"updates[{i}]: add_loop works on open_loops.md")
        content = " ".join(_text(update, i).split())
        prio = update.get("loopPriority", update.get("loop_priority", "normal"))
        if prio not in ("high", "normal", "low"):
            raise MemwardenError(f"updates[{i}]: loopPriority {prio!r}: expected high, "
                                 "normal or low")
        loop_id = update.get("loopId", update.get("loop_id"))
        if loop_id is None:
            loop_id = "loop_" + hashlib.sha256(content.encode()).hexdigest()[:8]
        if not isinstance(loop_id, str) or not re.fullmatch(r"loop_[A-Za-z0-9._-]{1,120}",
                                                            loop_id):
            raise MemwardenError(f"updates[{i}]: loopId {loop_id!r} must look like loop_<id>")
        loops, _ = parse_loops(split_lines(text))
        if any(lp.id == loop_id for lp in loops):
            raise MemwardenError(f"updates[{i}]: loop {loop_id} already exists")
        line = f"- [ ] {loop_id}: {content} (opened {today}, priority {prio})"
        return _append_section(text, update.get("section") or "Open", line)
    if op == "add_decision":
        if kind != "decisions":
            raise MemwardenError(f"updates[{i}]: add_decision works on decisions.md")
        title = " ".join(_text(update, i, "title").split())
        status = update.get("status", "Accepted")
        body = update.get("content", "")
        if not isinstance(body, str) or not isinstance(status, str):
            raise MemwardenError(f"updates[{i}]: content and status must be text")
        block = f"## {today} — {title}\n**Status:** {status}\n"
        if body.strip():
            block += body.strip("\n") + "\n"
        block += f"**Run:** {req.run}\n"
        base = text.rstrip("\n")
        return (base + "\n\n" if base else "") + block
    raise AssertionError(op)


def _close_loop(text: str, update: dict[str, Any], i: int, req: Request, today: str) -> str:
    loop_id = update.get("loopId", update.get("loop_id", update.get("entryId",
                                                                    update.get("entry_id"))))
    if not isinstance(loop_id, str):
        raise MemwardenError(f"updates[{i}]: close needs 'loopId'")
    lines = split_lines(text)
    loops, _ = parse_loops(lines)
    match = [lp for lp in loops if lp.id == loop_id]
    if not match:
        raise MemwardenError(f"updates[{i}]: loop {loop_id} not found in open_loops.md "
                             f"(open loops: {', '.join(lp.id for lp in loops if not lp.closed)})")
    lp = match[0]
    if lp.closed:
        raise MemwardenError(f"updates[{i}]: loop {loop_id} is already closed")
    resolution = update.get("resolution")
    tail = f" — {' '.join(str(resolution).split())}" if resolution else ""
    label = f"{lp.id}: " if lp.explicit_id else ""
    run_ref = req.run if req.run.startswith("run_") else f"run_{req.run}"
    lines[lp.line - 1] = f"- [x] {label}{lp.text} — closed {today} | {run_ref}{tail}"
    return "\n".join(lines) + "\n"


def _remove_entry(text: str, update: dict[str, Any], i: int, kind: str) -> str:
    entry_id = update.get("entryId", update.get("entry_id", update.get("loopId",
                                                                       update.get("loop_id"))))
    if not isinstance(entry_id, str):
        raise MemwardenError(f"updates[{i}]: remove_entry needs 'entryId'")
    lines = split_lines(text)
    if kind == "facts":
        facts, _ = parse_facts(lines)
        spans = [(f.line, f.end_line) for f in facts if f.id == entry_id] or [
            (f.line, f.end_line) for f in facts if word_of(f.id) == entry_id]  # a short id
        if len(spans) > 1:
            raise MemwardenError(f"updates[{i}]: fact id {entry_id} names {len(spans)} "
                                 "facts; use the full id")
    elif kind == "open_loops":
        loops, _ = parse_loops(lines)
        spans = [loop_span(lines, lp.line) for lp in loops if lp.id == entry_id]
    else:
        raise MemwardenError(f"updates[{i}]: remove_entry works on facts.md and open_loops.md")
    if not spans:
        raise MemwardenError(f"updates[{i}]: entry {entry_id} not found (fact ids are shown "
                             "by `memwarden read`; loop ids are loop_<id>)")
    a, b = spans[0]
    del lines[a - 1:b]
    return "\n".join(lines) + "\n"


@dataclass
class Proposal:
    proposal_id: str
    branch: str
    commit: str
    target_files: list[str]
    diff_bytes: int

    def to_json(self) -> dict[str, Any]:
        return {"proposalId": self.proposal_id, "status": "pending", "branch": self.branch,
                "commit": self.commit, "targetFiles": self.target_files,
                "diffBytes": self.diff_bytes}


def _message(req: Request, files: list[str]) -> str:
    subject = f"memory-update: {req.agent} / {req.run} / {req.proposal}"
    body = req.reasoning.strip()
    trailers = [("Agent-Id", req.agent), ("Run-Id", req.run), ("Proposal-Id", req.proposal),
                ("Priority", req.priority), ("Expected-Version", str(req.expected_version))]
    if body:
        trailers.append(("Reason", " ".join(body.split())[:200]))
    if req.facts_used:
        trailers.append(("Facts-Used", ", ".join(req.facts_used)))
    if req.entity_refs:
        trailers.append(("Entity-Refs", ", ".join(req.entity_refs)))
    trailers.append(("Files", ", ".join(files)))
    trailers += sorted(req.extra.items())
    parts = [subject]
    if body:
        # the body must never look like a trailer block of its own
        parts.append("\n".join(line if ":" not in line.split(" ")[0] else "  " + line
                               for line in body.splitlines()))
    parts.append("\n".join(f"{k}: {v}" for k, v in trailers))
    return "\n\n".join(parts) + "\n"


def current_version(repo: Repo, rev: str, agent: str) -> int:
    data = repo.read_path(rev, f"memory/{agent}/meta.json")
    if data is None:
        return 0
    try:
        v = json.loads(data).get("version", 0)
    except (ValueError, AttributeError):
        return 0
    return v if isinstance(v, int) and not isinstance(v, bool) else 0


def propose(repo: Repo, config: Config, doc: Any, base: str | None = None,
            now: _dt.datetime | None = None) -> Proposal:
    """Create the proposal branch and its commit; returns what was created."""
    req = parse_request(doc, config)
    now = now or _dt.datetime.now(_dt.UTC)
    today = now.date().isoformat()
    base = base or config.data["main_branch"]
    base_commit = repo.resolve_commit(base)
    if (repo.entry_at(base_commit, f"agents/{req.agent}/_agent.md") is None
            and not repo.has_folder(base_commit, f"memory/{req.agent}")):
        raise MemwardenError(f"request: agentId {req.agent!r} is not a known agent (no "
                             f"agents/{req.agent}/_agent.md and no memory/{req.agent}/ on "
                             f"{base}); an owner adds agents")
    if req.expected_version is None:
        req.expected_version = current_version(repo, base_commit, req.agent)
    contents: dict[str, str] = {}
    for i, u in enumerate(req.updates):
        op = u.get("operation", u.get("op"))
        if op not in OPERATIONS:
            raise MemwardenError(f"updates[{i}]: unknown operation {op!r}; expected one of "
                                 f"{', '.join(OPERATIONS)}")
        path = _target(req.agent, u, i, op)
        if path not in contents:
            raw = repo.read_path(base_commit, path)
            try:
                contents[path] = raw.decode("utf-8-sig") if raw is not None else ""
            except UnicodeDecodeError:
                raise MemwardenError(f"updates[{i}]: {path} on {base} is not UTF-8 text; "
                                     "fix it with a human edit first") from None
        if classify(path).kind == "run" and op not in ("append", "replace"):  # type: ignore
            raise MemwardenError(f"updates[{i}]: runs/ files take append or replace")
        contents[path] = _apply_one(contents[path], u, i, op, path, req, today)
    changes = {p: t.encode("utf-8") for p, t in contents.items()}
    originals = {p: repo.read_path(base_commit, p) for p in changes}
    changes = {p: d for p, d in changes.items() if originals[p] != d}
    if not changes:
        raise MemwardenError("request: the updates change nothing")
    files = sorted(p.split("/", 2)[2] for p in changes)
    ident = (req.agent, f"{req.agent}@agents.memwarden.invalid")
    commit = Writer(repo).commit_changes(base_commit, changes, _message(req, files), ident,
                                         ident, int(now.timestamp()))
    branch = f"{config.data['proposal_prefix']}{req.agent}/{req.proposal}"
    Writer(repo).create_branch(branch, commit)
    return Proposal(req.proposal, branch, commit, files, diff_bytes(repo, base_commit, commit))
