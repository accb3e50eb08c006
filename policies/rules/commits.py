"""MW4xx commits: classify a commit by its message and touched paths, check its trailers.

Trailers are read exactly as git reads them (memwarden.model.trailers). A commit is a proposal
(`memory-update:` subject), an apply-made commit (applied proposal, eviction, maintenance),
a human edit (touches governed files, carries `Human-Edit: true`) or unrelated (touches no
governed file). Forgery attempts — look-alike keys, trailers outside the trailer block,
conflicting duplicates, NUL bytes — are findings, never silently accepted.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from memwarden.model.findings import ERROR, Finding, make
from memwarden.model.layout import AGENT_ID_RE, ID_RE, classify, is_governed
from memwarden.model.trailers import Trailer, parse_trailers, trailer_block
from memwarden.policies.registry import COMMIT, Rule, register

PROPOSAL_RE = re.compile(r"^memory-update: (?P<agent>\S+) / (?P<run>\S+) / (?P<proposal>\S+)$")
EVICT_RE = re.compile(r"^memory-evict: (?P<agent>\S+) / (?P<kind>\S+)$")
MAINTAIN_RE = re.compile(r"^memory-maintain: (?P<scope>\S.*)$")
PREFIXES = ("memory-update:", "memory-evict:", "memory-maintain:")

PROPOSAL_KEYS = ("Agent-Id", "Run-Id", "Proposal-Id", "Priority", "Expected-Version")
APPLIED_KEYS = ("Applied-Proposal", "Proposal-Head", "Auto-Approved")
KNOWN_KEYS = PROPOSAL_KEYS + APPLIED_KEYS + (
    "Approved-By", "Reason", "Facts-Used", "Entity-Refs", "Files", "Human-Edit",
    "Memory-Eviction", "Memory-Maintenance",
)
SINGLE_VALUED = frozenset(k.lower() for k in KNOWN_KEYS if k not in ("Approved-By",))
EVICTION_REASONS = ("stale-fact", "overflow", "frozen-loop", "expired-loop")
MAINTENANCE_KINDS = ("retention", "rotation", "registry", "overflow")
MAX_MESSAGE_BYTES = 1024 * 1024

_DASHES = dict.fromkeys(map(ord, "\u2010\u2011\u2012\u2013\u2014\u2015\u2212\ufe58\ufe63\uff0d"),
                        "-")
_KEYLIKE = re.compile(r"^([^\s:]{1,60})\s*[:\uff1a]")


@dataclass
class CommitInfo:
    """What the MW4xx rules need about one commit."""

    message: str
    touched: Sequence[str]
    label: str  # where findings point: a message file or a commit id
    kind: str = ""
    trailers: list[Trailer] = field(default_factory=list)
    agent: str | None = None


def decode_message(raw: bytes, label: str) -> tuple[str | None, list[Finding]]:
    """Bytes of a message as text; NUL bytes, bad UTF-8 and huge messages are findings."""
    if len(raw) > MAX_MESSAGE_BYTES:
        return None, [make("MW402", ERROR, label, 1, 1, f"commit message is {len(raw)} bytes, "
                           f"over {MAX_MESSAGE_BYTES}: not checked, rejected", label)]
    nul = raw.find(b"\x00")
    if nul >= 0:
        line = raw.count(b"\n", 0, nul) + 1
        return None, [make("MW402", ERROR, label, line, 1, "commit message contains a NUL byte "
                           "(git would cut the message there)", label)]
    try:
        return raw.decode("utf-8"), []
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        return None, [make("MW402", ERROR, label, line, 1, f"commit message is not valid UTF-8 "
                           f"(byte {exc.start})", label)]


def subject_of(message: str) -> str:
    return message.split("\n", 1)[0].rstrip("\r")


def classify_commit(message: str, touched: Iterable[str]) -> str:
    """proposal | applied | eviction | maintenance | human | unrelated."""
    subject = subject_of(message)
    keys = {t.key.lower() for t in parse_trailers(message)}
    if subject.startswith("memory-update:"):
        return "applied" if "applied-proposal" in keys else "proposal"
    if subject.startswith("memory-evict:"):
        return "eviction"
    if subject.startswith("memory-maintain:"):
        return "maintenance"
    if any(is_governed(p) for p in touched):
        return "human"
    return "unrelated"


def _first(trailers: list[Trailer], key: str) -> Trailer | None:
    for t in trailers:
        if t.key.lower() == key.lower():
            return t
    return None


def check_commit(info: CommitInfo) -> list[Finding]:
    """All MW401–MW404 findings for one commit."""
    msg = info.message
    label = info.label
    out: list[Finding] = []
    trailers = parse_trailers(msg)
    info.trailers = trailers
    kind = classify_commit(msg, info.touched)
    info.kind = kind
    out += _lookalikes(msg, label)
    out += _outside_block(msg, label)
    out += _duplicates(trailers, label)
    subject = subject_of(msg)
    if kind in ("proposal", "applied"):
        out += _check_proposal(info, subject, trailers)
    elif kind == "eviction":
        m = EVICT_RE.match(subject)
        if not m:
            out.append(make("MW403", ERROR, label, 1, 1, "eviction subject must be "
                            "'memory-evict: <agentId> / <kind>'", subject))
        _require(out, trailers, label, ("Agent-Id", "Memory-Eviction"), kind)
        t = _first(trailers, "Memory-Eviction")
        if t and t.value not in EVICTION_REASONS:
            out.append(make("MW402", ERROR, label, t.line, 1, f"Memory-Eviction {t.value!r}: "
                            f"expected one of {', '.join(EVICTION_REASONS)}", t.value))
        out += _check_agent(info, trailers, m.group("agent") if m else None)
    elif kind == "maintenance":
        if not MAINTAIN_RE.match(subject):
            out.append(make("MW403", ERROR, label, 1, 1, "maintenance subject must be "
                            "'memory-maintain: <scope>'", subject))
        _require(out, trailers, label, ("Memory-Maintenance",), kind)
        t = _first(trailers, "Memory-Maintenance")
        if t and t.value not in MAINTENANCE_KINDS:
            out.append(make("MW402", ERROR, label, t.line, 1, f"Memory-Maintenance {t.value!r}: "
                            f"expected one of {', '.join(MAINTENANCE_KINDS)}", t.value))
    elif kind == "human":
        t = _first(trailers, "Human-Edit")
        if t is None:
            out.append(make("MW404", ERROR, label, 1, 1, "this commit changes governed memory "
                            "files but has no 'Human-Edit: true' trailer", subject,
                            "Add a last paragraph 'Human-Edit: true' (the "
                            "memwarden-prepare-commit-msg hook does it for you)."))
        elif t.value.lower() != "true":
            out.append(make("MW402", ERROR, label, t.line, 1, f"Human-Edit {t.value!r}: the only "
                            "accepted value is 'true'", t.value))
    if kind not in ("proposal", "applied", "eviction", "maintenance") and any(
            subject.startswith(p) for p in PREFIXES):
        out.append(make("MW403", ERROR, label, 1, 1, "malformed memwarden subject", subject))
    return out


def _require(out: list[Finding], trailers: list[Trailer], label: str, keys: Iterable[str],
             kind: str) -> None:
    present = {t.key.lower() for t in trailers}
    for key in keys:
        if key.lower() not in present:
            out.append(make("MW401", ERROR, label, 1, 1, f"{kind} commit is missing the "
                            f"'{key}:' trailer", f"{kind}:{key}",
                            f"Add '{key}: <value>' to the last paragraph of the message."))


def _check_proposal(info: CommitInfo, subject: str, trailers: list[Trailer]) -> list[Finding]:
    label = info.label
    out: list[Finding] = []
    m = PROPOSAL_RE.match(subject)
    if not m:
        out.append(make("MW403", ERROR, label, 1, 1, "proposal subject must be "
                        "'memory-update: <agentId> / <runId> / <proposalId>'", subject))
    keys = PROPOSAL_KEYS + (APPLIED_KEYS if info.kind == "applied" else ())
    _require(out, trailers, label, keys, info.kind)
    checks = {
        "Run-Id": (lambda v: bool(ID_RE.match(v)), "an id like run_42 ([A-Za-z0-9._-], no '/')"),
        "Proposal-Id": (lambda v: bool(ID_RE.match(v)), "an id like p-17 ([A-Za-z0-9._-])"),
        "Priority": (lambda v: v in ("normal", "high"), "'normal' or 'high'"),
        "Expected-Version": (lambda v: v.isascii() and v.isdigit() and len(v) < 12,
                             "a non-negative integer"),
        "Duration-Seconds": (lambda v: bool(re.fullmatch(r"[0-9]{1,9}(\.[0-9]{1,6})?", v)),
                             "a number of seconds like 45 or 12.5"),
        "Auto-Approved": (lambda v: v in ("true", "false"), "'true' or 'false'"),
        "Proposal-Head": (lambda v: bool(re.fullmatch(r"[0-9a-f]{40}|[0-9a-f]{64}", v)),
                          "a full commit id"),
    }
    for key, (ok, expected) in checks.items():
        t = _first(trailers, key)
        if t is not None and not ok(t.value):
            out.append(make("MW402", ERROR, label, t.line, 1, f"{key} {t.value!r}: expected "
                            f"{expected}", f"{key}:{t.value}"))
    if m:
        for key, group in (("Run-Id", "run"), ("Proposal-Id", "proposal")):
            t = _first(trailers, key)
            if t is not None and t.value != m.group(group):
                out.append(make("MW402", ERROR, label, t.line, 1, f"{key} {t.value!r} differs "
                                f"from the subject's {m.group(group)!r}", f"{key}:{t.value}"))
    out += _check_agent(info, trailers, m.group("agent") if m else None)
    return out


def branch_agent_findings(agent: str, infos: Iterable[CommitInfo]) -> list[Finding]:
    """MW402 for each proposal commit whose Agent-Id is not `agent`, whose branch it is on:
    apply keys the stale check, the status refusal and the bookkeeping on that trailer."""
    return [make("MW402", ERROR, ci.label, 1, 1, f"Agent-Id {ci.agent!r} on a branch of "
                 f"{agent!r}", f"{ci.label}:{ci.agent}")
            for ci in infos if ci.kind == "proposal" and ci.agent not in (None, agent)]


def _check_agent(info: CommitInfo, trailers: list[Trailer], subject_agent: str | None
                 ) -> list[Finding]:
    label = info.label
    out: list[Finding] = []
    t = _first(trailers, "Agent-Id")
    if t is None:
        return out
    agent = t.value
    info.agent = agent
    if not AGENT_ID_RE.match(agent):
        out.append(make("MW402", ERROR, label, t.line, 1, f"Agent-Id {agent!r}: expected an "
                        "agent id (lowercase letters, digits, hyphens)", f"Agent-Id:{agent}"))
        return out
    if subject_agent is not None and subject_agent != agent:
        out.append(make("MW402", ERROR, label, t.line, 1, f"Agent-Id {agent!r} differs from the "
                        f"subject's agent {subject_agent!r}", f"Agent-Id:{agent}"))
    others = sorted({i.agent for p in info.touched if (i := classify(p)) is not None
                     and i.area == "memory" and i.agent and i.agent != agent})
    if others:
        out.append(make("MW402", ERROR, label, t.line, 1, f"Agent-Id is {agent!r} but the commit "
                        f"changes memory of {', '.join(others)}", f"Agent-Id:{agent}:{others}"))
    return out


def _fold_key(key: str) -> str:
    return unicodedata.normalize("NFKC", key.translate(_DASHES)).casefold()


_KNOWN_FOLDED = {k.casefold(): k for k in KNOWN_KEYS}


def _lookalikes(message: str, label: str) -> list[Finding]:
    """Lines that read as a memwarden trailer to a human but not to git (U+2010 etc.)."""
    out = []
    for n, line in enumerate(message.split("\n"), 1):
        m = _KEYLIKE.match(line)
        if not m:
            continue
        key = m.group(1)
        if key.isascii() and ":" in line[: m.end()] and "\uff1a" not in line[: m.end()]:
            continue
        target = _KNOWN_FOLDED.get(_fold_key(key))
        if target:
            bad = sorted({f"U+{ord(c):04X}" for c in m.group(0) if not c.isascii()})
            out.append(make("MW402", ERROR, label, n, 1, f"{key!r} looks like the {target} "
                            f"trailer but uses {', '.join(bad)}; git does not read it as one",
                            line, f"Type the key in ASCII: '{target}:'"))
    return out


def _outside_block(message: str, label: str) -> list[Finding]:
    """Known trailer keys written where git will not see them as trailers."""
    start, end = trailer_block(message)
    out = []
    offset = 0
    for n, line in enumerate(message.split("\n"), 1):
        line_start = offset
        offset += len(line) + 1
        if n == 1 or (start <= line_start < end):
            continue
        m = re.match(r"^([A-Za-z][A-Za-z0-9-]*)\s*:", line)
        if m and m.group(1).casefold() in _KNOWN_FOLDED and line_start < start:
            out.append(make("MW402", ERROR, label, n, 1, f"'{m.group(1)}:' is not in the trailer "
                            "block (the last paragraph), so git does not read it as a trailer",
                            line, "Move all trailers into one last paragraph after a blank "
                            "line."))
    return out


def _duplicates(trailers: list[Trailer], label: str) -> list[Finding]:
    seen: dict[str, Trailer] = {}
    out = []
    for t in trailers:
        k = t.key.lower()
        if k in SINGLE_VALUED and k in seen and seen[k].value != t.value:
            out.append(make("MW402", ERROR, label, t.line, 1, f"{t.key} given twice with "
                            f"different values ({seen[k].value!r} on line {seen[k].line}, "
                            f"{t.value!r} here)", f"{t.key}:{seen[k].value}|{t.value}"))
        seen.setdefault(k, t)
    return out


def _doc(rule_id: str, name: str, summary: str, why: str, bad: str, good: str,
         fix: str) -> None:
    register(Rule(rule_id, name, ERROR, summary, why, bad, good, COMMIT, None, None, fix))


_doc("MW401", "missing-trailer",
     "A proposal, applied, eviction or maintenance commit lacks a required trailer.",
     "Apply, audit and `memwarden status` trace Run -> Proposal -> commit through trailers; a "
     "missing one breaks the chain and the stale check (Expected-Version).",
     "memory-update: a / run_1 / p-1\n\nAgent-Id: a\nRun-Id: run_1",
     "memory-update: a / run_1 / p-1\n\nAgent-Id: a\nRun-Id: run_1\nProposal-Id: p-1\n"
     "Priority: normal\nExpected-Version: 3",
     "Add the missing trailers to the last paragraph (git interpret-trailers semantics).")
_doc("MW402", "malformed-trailer",
     "A trailer value is invalid, conflicts with the subject or a duplicate, sits outside the "
     "trailer block, or uses a look-alike key (e.g. U+2010 in Agent‐Id).",
     "Trailers are machine-read: an id with '/' or '..', an Agent-Id that is not the agent "
     "whose files change, or a key git does not parse would let a commit pass as something "
     "it is not.",
     "Agent\u2010Id: a   (U+2010 hyphen)\nPriority: urgent\nExpected-Version: seven",
     "Agent-Id: a\nPriority: high\nExpected-Version: 7",
     "Use ASCII keys, one value per key, values of the documented form, in the last "
     "paragraph.")
_doc("MW403", "subject-format",
     "A memwarden subject (memory-update:, memory-evict:, memory-maintain:) is malformed.",
     "The subject is how humans and tools recognise proposal and apply commits in "
     "`git log --oneline`; a near-miss subject hides what the commit is.",
     "memory-update: a/run_1/p-1",
     "memory-update: a / run_1 / p-1",
     "Write 'memory-update: <agentId> / <runId> / <proposalId>'.")
_doc("MW404", "human-edit-unmarked",
     "A commit changes governed memory files without 'Human-Edit: true'.",
     "Agents write memory only through proposals; an unmarked direct edit is indistinguishable "
     "from an agent bypassing the gate.",
     "Fix typo in facts\n\n(no trailers)",
     "Fix typo in facts\n\nHuman-Edit: true",
     "Install the prepare-commit-msg hook (it adds the trailer) or add it by hand.")
