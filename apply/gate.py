"""`memwarden gate`: judge a proposal branch before anything lands (CI on proposals/**).

Runs every file rule on the proposal's tree (changed files, in context), the trailer rules
on every commit, path isolation and apply-owned files, append-only runs, immutable logic
versions and status transitions; then decides auto-approval, previews what apply would
evict, and tabulates Layer 1 tokens. Policy is read from the BASE branch: a proposal cannot
loosen its own gate.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from memwarden.apply import evict
from memwarden.git.repo import Repo, diff_bytes, patch_bytes
from memwarden.git.source import TreeSource
from memwarden.model.config import Config, load_config_at
from memwarden.model.errors import MemwardenError
from memwarden.model.findings import ERROR, WARNING, Finding
from memwarden.model.layout import AGENT_ID_RE, LAYER1
from memwarden.policies.engine import check
from memwarden.policies.rules.commits import (
    CommitInfo,
    branch_agent_findings,
    check_commit,
    decode_message,
)
from memwarden.policies.rules.ownership import proposal_path_findings
from memwarden.policies.rules.paths import malformed_path_findings
from memwarden.policies.rules.transitions import diff_findings
from memwarden.tokens.counter import count_edited, count_text

# Over-limit facts, open loops and a Layer 1 total overflow are evicted by apply.
EVICTABLE = {"MW102": "facts", "MW103": "open_loops", "MW104": "facts"}


@dataclass
class GateResult:
    findings: list[Finding]
    files: int
    agent: str | None
    auto_eligible: bool
    auto_reasons: list[str]
    eviction_preview: list[dict[str, Any]] = field(default_factory=list)
    tokens: dict[str, dict[str, int | None]] = field(default_factory=dict)
    diff_bytes: int = 0  # bytes of added plus removed lines (what max_auto_diff_bytes bounds)
    patch_bytes: int = 0  # the whole `git diff` patch, headers and context included

    @property
    def verdict(self) -> str:
        return "fail" if any(f.severity == ERROR and not f.waived for f in self.findings) \
            else "pass"

    def extra(self) -> dict[str, Any]:
        return {"verdict": self.verdict, "agent": self.agent,
                "auto_approve": {"eligible": self.auto_eligible, "reasons": self.auto_reasons},
                "decision": ("auto_approved" if self.verdict == "pass" and self.auto_eligible
                             else "needs_human_review" if self.verdict == "pass" else "rejected"),
                "eviction_preview": self.eviction_preview, "tokens": self.tokens,
                "diffBytes": self.diff_bytes, "patchBytes": self.patch_bytes}


def agent_of(ref: str, config: Config, infos: list[CommitInfo]) -> str | None:
    name = ref.removeprefix("refs/heads/").removeprefix("origin/")
    prefix = config.data["proposal_prefix"]
    if name.startswith(prefix):
        parts = name[len(prefix):].split("/")
        if len(parts) == 2 and AGENT_ID_RE.match(parts[0]):
            return parts[0]
    agents = {i.agent for i in infos if i.agent}
    return agents.pop() if len(agents) == 1 else None


def gate(repo: Repo, ref: str, base: str, config_path: str | None = None,
         today: _dt.date | None = None, preview: bool = True,
         merge_base: str | None = None, disk_cache: bool = True,
         head_commit: str | None = None) -> GateResult:
    """`preview=False` skips the eviction preview and the patch size (apply plans the real
    eviction itself and reports neither); `merge_base` spares a caller that knows it a
    second history walk; `disk_cache=False` skips reading and rewriting the
    .git/memwarden caches (apply gates a batch of proposals whose blobs are new anyway:
    cache I/O for nothing). `head_commit` is the commit to judge when the caller resolved
    `ref` already: apply lands exactly the commit the gate judged, even if the branch moves
    meanwhile."""
    head = head_commit or repo.resolve_commit(ref)
    base_tip = repo.resolve_commit(base)
    config = load_config_at(repo, base_tip, config_path)
    mb = merge_base or repo.merge_base(base_tip, head)
    if mb is None:
        raise MemwardenError(f"{ref} and {base} share no history (fetch-depth: 0 needed in "
                             "a shallow clone)")
    commits = repo.rev_list(f"{mb}..{head}")
    findings: list[Finding] = []
    infos: list[CommitInfo] = []
    priority = "normal"
    for sha in commits:
        info = repo.commit_info(sha)
        text, problems = decode_message(info["raw_message"], sha[:12])
        findings += problems
        if text is None:
            continue
        ci = CommitInfo(text, info["touched"], sha[:12])
        findings += check_commit(ci)
        infos.append(ci)
        for t in ci.trailers:
            if t.key.lower() == "priority":
                priority = t.value
    agent = agent_of(ref, config, infos)
    changed = repo.changed_paths(mb, head)
    if head != mb and agent is not None:
        findings += branch_agent_findings(agent, infos)
        findings += bookkeeping_findings(repo, head, agent, changed)
    # A branch under the proposal prefix is an agent's, whatever its messages claim: a
    # Human-Edit or applied-style message there must not lift the own-path rules.
    on_proposal_branch = ref.removeprefix("refs/heads/").removeprefix("origin/").startswith(
        config.data["proposal_prefix"])
    actor = ("proposal" if on_proposal_branch or any(i.kind == "proposal" for i in infos)
             else "human")
    if agent is not None and actor == "proposal":
        known = (repo.entry_at(mb, f"agents/{agent}/_agent.md") is not None
                 or repo.has_folder(mb, f"memory/{agent}"))
        findings += proposal_path_findings(agent, changed, ref, known)
    findings += diff_findings(changed, lambda p: repo.read_path(mb, p),
                              lambda p: repo.read_path(head, p), actor)
    findings += malformed_path_findings(repo, mb, head, changed, head[:12])
    source = TreeSource(repo, head)
    present = [p for p in changed if source.entry(p) is not None]
    files = 0
    if present:
        result = check(source, config, present, today=today,
                       cache_dir=repo.cache_dir if disk_cache else None)
        findings += result.findings
        files = result.files
    # Facts and open loops over their HARD limit are evicted by apply: a warning here.
    findings = [f.replace(severity=WARNING, message=f.message + " (apply will evict; see "
                          "the eviction preview)") if f.rule in EVICTABLE and f.severity == ERROR
                else f for f in findings]
    tokens = token_table(repo, config, agent, mb, head) if agent else {}
    evictions = eviction_preview(repo, config, agent, base_tip, mb, head, changed,
                                 today) if agent and preview else []
    nbytes = diff_bytes(repo, mb, head)
    eligible, reasons = auto_approve(config, agent, changed, findings, nbytes, priority,
                                     [p for p in changed if p not in present])
    return GateResult(sorted(findings, key=lambda f: (f.path, f.line, f.col, f.rule)), files,
                      agent, eligible, reasons, evictions, tokens, nbytes,
                      patch_bytes(repo, mb, head) if preview else 0)


def bookkeeping_findings(repo: Repo, head: str, agent: str, changed: list[str]
                         ) -> list[Finding]:
    """The injection rules on the text apply writes for this proposal besides its files:
    the head commit's run trailers (Task, Result, Duration-Seconds) become lines of the
    agent's timeline, the names of the files it changes lines of its changelog, and the
    agent reads both back. Each line is judged as that file's text is, and reported where
    it comes from (the trailer's line, the file)."""
    from memwarden.apply.bookkeeping import TIMELINE_KEYS, changelog_line, timeline_line
    from memwarden.model.trailers import parse_trailers
    from memwarden.policies.rules.injection import findings_for

    root = f"memory/{agent}/"
    out: list[Finding] = []
    message = repo.commit_message(head).decode("utf-8", "replace")
    keys = {k.lower(): k for k in TIMELINE_KEYS}
    for t in parse_trailers(message):
        key = keys.get(t.key.lower())
        if key is None:
            continue
        for f in findings_for(timeline_line(key, t.value), f"{root}timeline/", "timeline"):
            out.append(f.replace(path=head[:12], line=t.line, message=f"{f.message} (in the "
                                 f"{t.key} trailer, which apply writes into the agent's "
                                 "timeline)"))
    for path in changed:
        if not path.startswith(root):
            continue
        for f in findings_for(changelog_line(path[len(root):], "added"),
                              f"{root}changelog.md", "changelog"):
            out.append(f.replace(path=path, line=1, col=1, message=f"{f.message} (in the "
                                 "file's name, which apply writes into the agent's "
                                 "changelog)"))
    return out


def auto_approve(config: Config, agent: str | None, changed: list[str],
                 findings: list[Finding], nbytes: int, priority: str,
                 deleted: Sequence[str] = ()) -> tuple[bool, list[str]]:
    reasons: list[str] = []
    gone = [p for p in deleted if p.rsplit("/", 1)[-1] in LAYER1]
    if gone:  # an agent emptying its own memory is for a human to allow
        reasons.append(f"deletes {gone[0]}, a Layer 1 file")
    if agent is None:
        reasons.append("no single agent: the branch is not proposals/<agent>/<id>")
    elif any(not p.startswith(f"memory/{agent}/") for p in changed):
        reasons.append(f"touches paths outside memory/{agent}/")
    if "memwarden.toml" in changed:
        reasons.append("changes memwarden.toml (policy changes always need a human)")
    limit = config.data["max_auto_diff_bytes"]
    if nbytes > limit:
        reasons.append(f"changes {nbytes} bytes (added plus removed lines), over "
                       f"max_auto_diff_bytes {limit}")
    injection = [f for f in findings if f.rule.startswith("MW3") and not f.waived]
    if injection:  # errors and warnings alike: a human reviews anything aimed at the model
        first = injection[0]
        reasons.append(f"has prompt-injection findings (MW3xx), first {first.rule} "
                       f"({first.severity}) at {first.path}:{first.line}: {first.message}")
    rewritten = [f for f in findings if f.rule == "MW509" and not f.waived]
    if rewritten:
        reasons.append(f"changes an existing decision ({rewritten[0].path}:"
                       f"{rewritten[0].line})")
    if priority != "normal":
        reasons.append(f"priority {priority} (only normal is auto-approved)")
    if agent is not None and config.agent_setting(agent, "auto_approve", True) is False:
        reasons.append(f"auto_approve = false for {agent}")
    if any(f.severity == ERROR and not f.waived for f in findings):
        reasons.append("has errors")
    return not reasons, reasons or ["own path only, small diff, no injection marker, "
                                    "priority normal, agent allows it"]


def _text_at(repo: Repo, rev: str, path: str) -> str | None:
    data = repo.read_path(rev, path)
    return None if data is None else data.decode("utf-8", "replace")


def token_table(repo: Repo, config: Config, agent: str, before: str, after: str
                ) -> dict[str, dict[str, int | None]]:
    out: dict[str, dict[str, int | None]] = {}
    enc = config.encoding
    total_b = total_a = 0
    for name, key in LAYER1.items():
        path = f"memory/{agent}/{name}"
        text_b, text_a = _text_at(repo, before, path), _text_at(repo, after, path)
        a = None if text_a is None else count_text(text_a, enc)  # (the check counted it)
        b = None if text_b is None else count_text(text_b, enc) if a is None else \
            count_edited(text_b, text_a, a, enc)  # a few lines apart: count only those
        total_b += b or 0
        total_a += a or 0
        out[name] = {"before": b, "after": a, "limit": config.limit(key, agent)}
    out["layer1_total"] = {"before": total_b, "after": total_a,
                           "limit": config.limit("layer1_total", agent)}
    return out


def eviction_preview(repo: Repo, config: Config, agent: str, main: str, base: str,
                     head: str, changed: list[str], today: _dt.date | None
                     ) -> list[dict[str, Any]]:
    """Exactly what apply would evict (the same planner, against the same main)."""
    changes = {p: repo.read_path(head, p) for p in changed}
    files = evict.agent_files(repo, main, agent, changes)
    if not evict.overflow(config, agent, files):
        return []
    now = _dt.datetime.combine(today or _dt.date.today(), _dt.time(12), _dt.UTC)
    plan = evict.plan_eviction(repo, config, main, base, head, agent, "preview", files, now)
    out = [{**e.to_json(), "tokens": count_text(e.entry, config.encoding)} for e in
           (plan.evicted if plan else [])]
    if plan is not None:
        files = evict.agent_files(repo, main, agent, {**changes, **plan.proposal_changes})
    if evict.overflow(config, agent, files):
        out.append({"file": None, "id": None, "entry": None, "reason": None, "tokens": 0,
                    "note": "still over a HARD limit after eviction: apply would reject"})
    return out
