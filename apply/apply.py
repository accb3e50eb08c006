"""`memwarden apply`: land approved proposals on main, one commit each, by fast-forward.

For each proposal (FIFO by head commit time): already applied? -> no-op; the gate's verdict
(policy from main); the stale check (Expected-Version vs meta.json, or any change to
memory/<agent>/ on main since the merge base); then the proposal's net diff is replayed onto
main as ONE commit with the bookkeeping (meta.json, changelog, timeline), authored by the
agent and committed by the apply identity, and main moves by compare-and-swap. When the
result would overflow Layer 1, eviction commits (apply/evict.py) come first, on top of
main; still over after eviction -> rejected (overflow).
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import json
import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from memwarden.apply import bookkeeping, evict, lifecycle
from memwarden.apply.gate import EVICTABLE, gate
from memwarden.apply.planpool import Planned, PlanPool, still_holds
from memwarden.git.repo import MODE_BLOBS, Entry, Repo, Writer
from memwarden.model.config import Config
from memwarden.model.errors import MemwardenError
from memwarden.model.findings import ERROR
from memwarden.model.layout import classify
from memwarden.model.trailers import parse_trailers


@dataclass
class ProposalResult:
    proposal_id: str | None
    status: str  # applied | already_applied | rejected | failed | pending
    reason: str = ""
    resolution: str = ""
    commits: list[str] = field(default_factory=list)
    evicted: list[dict[str, Any]] = field(default_factory=list)
    tokens: dict[str, Any] = field(default_factory=dict)
    ref: str = ""
    details: dict[str, Any] = field(default_factory=dict)
    head: str = ""  # the proposal's head commit (lifecycle notes hang on it)
    auto: bool = False  # the gate found it eligible for auto-approval

    def to_json(self) -> dict[str, Any]:
        doc = {"proposalId": self.proposal_id, "ref": self.ref, "status": self.status,
               "reason": self.reason, "resolution": self.resolution, "commits": self.commits,
               "evicted": self.evicted, "tokens": self.tokens}
        doc.update(self.details)
        return doc


def apply_identity(config: Config) -> tuple[str, str]:
    """(name, email) of `apply_identity`: who commits what apply, maintain and the
    lifecycle notes write."""
    text = config.data["apply_identity"]
    m = re.fullmatch(r"(.+?) <([^<>]*)>", text.strip())
    if not m:
        raise MemwardenError(f"apply_identity {text!r}: expected 'Name <email>'")
    return m.group(1), m.group(2)


class AppliedIndex:
    """(Agent-Id, Proposal-Id) -> applying commit along main's first parents, read once per
    batch and extended by only the new commits when main moves forward (a batch of N
    proposals would otherwise walk the whole history N times). An id is only the same
    proposal for the same agent: another agent's proposal that reuses it is not applied."""

    def __init__(self, repo: Repo) -> None:
        self.repo = repo
        self.tip: str | None = None
        self.ids: dict[tuple[str, str], str] = {}
        self.any_agent: dict[str, str] = {}

    def lookup(self, main: str, proposal_id: str, agent: str | None = None) -> str | None:
        """The commit that applied `proposal_id` of `agent` (None: of any agent)."""
        if main != self.tip:
            self._extend(main)
        if agent is None:
            return self.any_agent.get(proposal_id)
        return self.ids.get((agent, proposal_id))

    def landed(self, old_tip: str, new_tip: str, message: str, pid: str, sha: str) -> None:
        """`sha` (on `new_tip`, built on `old_tip`) applied `pid`: known without reading the
        new commits back, when the index was current and the message names only `pid`
        (apply's own trailer; a message that names more is read the usual way)."""
        if self.tip == old_tip and message.count("Applied-Proposal") == 1:
            self._add(found_of(message), sha, self.ids, self.any_agent)
            self.tip = new_tip

    @staticmethod
    def _add(keys: list[tuple[str, str]], sha: str, ids: dict[tuple[str, str], str],
             any_agent: dict[str, str]) -> None:
        for agent, pid in keys:
            ids.setdefault((agent, pid), sha)
            any_agent.setdefault(pid, sha)

    def _extend(self, main: str) -> None:
        found: dict[tuple[str, str], str] = {}
        found_any: dict[str, str] = {}
        met = False
        for sha, raw in self.repo.first_parent_log(main):
            if sha == self.tip:
                met = True
                break
            if b"Applied-Proposal" in raw:
                self._add(found_of(raw.decode("utf-8", "replace")), sha, found, found_any)
        if met:  # the new commits are newer than what we knew
            self.ids.update(found)
            self.any_agent.update(found_any)
        else:  # main does not descend from our tip: the walk read it all
            self.ids, self.any_agent = found, found_any
        self.tip = main


def found_of(message: str) -> list[tuple[str, str]]:
    """(Agent-Id, Applied-Proposal) pairs an applied commit's message names."""
    trailers = parse_trailers(message)
    agent = next((t.value for t in trailers if t.key.lower() == "agent-id"), "")
    return [(agent, t.value) for t in trailers if t.key.lower() == "applied-proposal"]


def _meta(repo: Repo, rev: str, agent: str) -> dict[str, Any] | None:
    data = repo.read_path(rev, f"memory/{agent}/meta.json")
    if data is None:
        return None
    try:
        value = json.loads(data)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


@dataclass
class Plan:
    """Everything a proposal's landing writes, computed from the state of main it was
    planned against: eviction commits first, then the replay with its bookkeeping."""

    result: ProposalResult  # status "applied" once landed; commits filled in by land()
    agent: str
    evictions: list[tuple[str, dict[str, bytes | None]]]
    changes: dict[str, bytes | None]
    message: str
    author: tuple[str, str]
    modes: dict[str, int] = field(default_factory=dict)  # the proposal's file modes


def apply_one(repo: Repo, ref: str, config: Config, approved_by: str | None,
              now: _dt.datetime, dry_run: bool = False, force: bool = False,
              remote: str | None = None, main_tip: str | None = None,
              applied: AppliedIndex | None = None, batch_start: str | None = None,
              files: Checkout | None = None) -> ProposalResult:
    """Land one proposal. `main_tip` builds on that commit instead of main's ref and moves
    nothing (the batch path moves main once at the end); `batch_start` is where that batch
    began: proposals never contain the batch's own commits, so their merge base with the
    tip is their merge base with the start, a much shorter walk. `files`: a checked-out
    main's files stay where they are for the caller to bring along (see move_local_main)."""
    main_ref = f"refs/heads/{config.data['main_branch']}"
    main = main_tip or repo.ref_target(main_ref)
    if main is None:
        raise MemwardenError(f"{main_ref} does not exist")
    done = _already_applied(repo, ref, main, applied)
    if done is not None:
        return done
    plan = prepare(repo, ref, config, approved_by, now, force, main, batch_start,
                   disk_cache=main_tip is None)
    if isinstance(plan, ProposalResult):
        return plan
    if main_tip is not None:
        return land(repo, plan, config, main, now)
    return _land_and_move(repo, plan, config, main, now, dry_run, remote, ref, main_ref,
                          files)


def _proposal_trailers(repo: Repo, head: str) -> tuple[str, dict[str, str]]:
    msg = repo.commit_message(head).decode("utf-8", "replace")
    return msg, {t.key.lower(): t.value for t in parse_trailers(msg)}


def _already_applied(repo: Repo, ref: str, main: str, applied: AppliedIndex | None,
                     known: tuple[str, str | None, str | None] | None = None
                     ) -> ProposalResult | None:
    """`known`: (head, Agent-Id, Proposal-Id) a plan worker already read."""
    head = repo.resolve_commit(ref)
    if known is not None and known[0] == head:
        agent, pid = known[1], known[2]
    else:
        trailers = _proposal_trailers(repo, head)[1]
        agent, pid = trailers.get("agent-id"), trailers.get("proposal-id")
    done = (applied or AppliedIndex(repo)).lookup(main, pid, agent or "") if pid else None
    return ProposalResult(pid, "already_applied", commits=[done], ref=ref, head=head) \
        if done else None


def _worker_planner(repo: Repo, config: Config, approved_by: str | None, now: _dt.datetime,
                    force: bool, start: str) -> Callable[[str], Planned]:
    """What a PlanPool worker runs for each ref: its own Repo (a forked child must not share
    libgit2 handles) and no disk cache (the applier writes that)."""
    own = Repo(repo.git_dir, repo.root)

    def plan(ref: str) -> Planned:
        head = own.resolve_commit(ref)
        trailers = _proposal_trailers(own, head)[1]
        made = prepare(own, ref, config, approved_by, now, force, start, start,
                       disk_cache=False)
        return head, trailers.get("agent-id"), trailers.get("proposal-id"), made

    return plan


def prepare(repo: Repo, ref: str, config: Config, approved_by: str | None,
            now: _dt.datetime, force: bool, main: str, batch_start: str | None = None,
            disk_cache: bool = True) -> Plan | ProposalResult:
    """Judge a proposal against `main` and plan its landing without writing anything: a
    final result (rejected, pending) or the Plan. Reads only the policy, the agent's own
    folders and the proposal, so a plan made against the start of a batch holds for any
    later tip where those are unchanged (apply/gatepool.py plans ahead in a worker)."""
    head = repo.resolve_commit(ref)
    msg, tr = _proposal_trailers(repo, head)
    pid, agent, run = tr.get("proposal-id"), tr.get("agent-id"), tr.get("run-id")
    result = ProposalResult(pid, "rejected", ref=ref, head=head)
    if not (pid and agent and run):
        result.reason = "policy"
        result.details["message"] = "the head commit is not a proposal (no Proposal-Id, " \
                                    "Agent-Id, Run-Id trailers)"
        return result
    base = repo.merge_base(batch_start or main, head)
    if base is None:
        raise MemwardenError(f"{ref} shares no history with main (fetch-depth: 0 needed)")
    verdict = gate(repo, ref, main, today=now.date(), preview=False, merge_base=base,
                   disk_cache=disk_cache, head_commit=head)
    result.tokens = verdict.tokens
    result.auto = verdict.auto_eligible
    refusal = _agent_refusal(repo, config, main, agent)
    if refusal:
        result.reason = refusal
        result.details["message"] = (f"agent {agent} is not active on main" if refusal ==
                                     "agent_inactive" else f"agent {agent} is readonly "
                                     "([agents.<id>] readonly = true)")
        return result
    errors = [f for f in verdict.findings if f.severity == "error" and not f.waived]
    if errors:
        result.reason = "policy"
        result.details["findings"] = [f.to_json() for f in errors[:20]]
        return result
    if not verdict.auto_eligible and not approved_by:
        return ProposalResult(pid, "pending", reason="needs_human_review", ref=ref,
                              tokens=verdict.tokens, head=head,
                              details={"reasons": verdict.auto_reasons})
    meta_main = _meta(repo, main, agent)
    current = (meta_main or {}).get("version", 0)
    expected = tr.get("expected-version")
    changed = repo.changed_paths(base, head)
    agent_changed = _changed_on_main(repo, base, main, agent, set(changed))
    stale = (expected is not None and expected != str(current)) or bool(agent_changed)
    if stale and not force:
        result.reason = "version_conflict"
        result.resolution = "retry_with_latest"
        result.details.update({"expectedVersion": int(expected) if expected and
                               expected.isdigit() else expected, "currentVersion": current})
        return result
    changes, modes, conflicts, merged = _replay(repo, base, main, head, changed)
    if conflicts:
        result.reason = "merge_conflict"
        result.resolution = "retry_with_latest"
        result.details.update({"files": conflicts, "message": (
            f"main changed {', '.join(conflicts)} since the proposal's base and the "
            "proposal's changes there overlap them; propose again from the current main")})
        return result
    if merged:  # text no gate has seen: main's changes and the proposal's, joined
        judged = _judge_merged(repo, config, main, changes, modes, merged, now)
        if judged["errors"]:
            result.reason = "policy"
            result.details.update({"files": merged, "findings": judged["errors"][:20],
                                   "message": "the three-way merge of the proposal into "
                                   "main's current files draws errors"})
            return result
        if judged["review"] and not approved_by:
            return ProposalResult(pid, "pending", reason="needs_human_review", ref=ref,
                                  tokens=verdict.tokens, head=head, details={
                                      "reasons": ["the three-way merge into main's current "
                                                  "files draws findings a human reviews"],
                                      "findings": judged["review"][:20]})
    evictions: list[tuple[str, dict[str, bytes | None]]] = []
    evicted: list[dict[str, Any]] = []
    files = evict.agent_files(repo, main, agent, changes)
    if evict.overflow(config, agent, files):
        plan = evict.plan_eviction(repo, config, main, base, head, agent, run, files, now)
        if plan is not None:
            evictions = plan.commits
            changes.update(plan.proposal_changes)
            evicted = [e.to_json() for e in plan.evicted]
            files = evict.agent_files(repo, main, agent, changes)
    overflow = evict.overflow(config, agent, files)
    if overflow:
        result.reason = "overflow"
        result.resolution = "shrink_and_retry"
        result.details["message"] = overflow + " even after evicting every entry apply may " \
                                               "move (snapshot.md is never evicted)"
        return result
    changes.update(_bookkeeping(repo, config, main, agent, run, pid, tr, changed, files, now))
    landed = ProposalResult(pid, "applied", ref=ref, head=head, evicted=evicted,
                            tokens=verdict.tokens, auto=verdict.auto_eligible)
    return Plan(landed, agent, evictions, changes,
                _applied_message(msg, pid, head, verdict.auto_eligible, approved_by),
                repo.author_of(head), modes)


def _judge_merged(repo: Repo, config: Config, main: str, changes: dict[str, bytes | None],
                  modes: dict[str, int], merged: list[str], now: _dt.datetime
                  ) -> dict[str, list[dict[str, Any]]]:
    """The file rules on the merged files, in main's tree with the merge written into it (a
    commit no ref points to): errors, and the findings that need a human (MW3xx, MW509)
    as the gate would rank them. Over-limit facts and loops are left to the eviction."""
    from memwarden.git.source import TreeSource
    from memwarden.policies.engine import check

    ident = apply_identity(config)
    trial = Writer(repo).commit_changes(main, {p: changes[p] for p in merged},
                                        "memwarden apply: a three-way merge, judged", ident,
                                        ident, int(now.timestamp()),
                                        {p: m for p, m in modes.items() if p in merged})
    found = check(TreeSource(repo, trial), config, merged, today=now.date()).findings
    live = [f for f in found if not f.waived and f.rule not in EVICTABLE]
    return {"errors": [f.to_json() for f in live if f.severity == ERROR],
            "review": [f.to_json() for f in live
                       if f.rule.startswith("MW3") or f.rule == "MW509"]}


def _replay(repo: Repo, base: str, main: str, head: str, changed: list[str]
            ) -> tuple[dict[str, bytes | None], dict[str, int], list[str], list[str]]:
    """The proposal's change to each path replayed onto main: (contents, modes, paths that
    conflict, paths merged three-way: text no gate has seen). Where main still has the
    base's version that is the proposal's copy; where main changed it too (only `--force`
    gets here) a three-way merge, so nothing main gained since the base is dropped."""
    changes: dict[str, bytes | None] = {}
    merged: dict[str, int] = {}
    conflicts = []
    for path in changed:
        old, ours, theirs = (repo.entry_at(rev, path) for rev in (base, main, head))
        if _same(old, ours):
            changes[path] = repo.read_path(head, path)
        elif _same(ours, theirs):
            changes[path] = repo.read_path(main, path)  # main already has it
        elif ours is None or theirs is None:
            conflicts.append(path)  # deleted on one side, changed on the other
        else:
            data = repo.merge_file(path, old, ours, theirs)
            if data is None:
                conflicts.append(path)
            else:
                changes[path] = data
                merged[path] = theirs.mode if old is None or theirs.mode != old.mode \
                    else ours.mode
    modes = _file_modes(repo, head, {p: d for p, d in changes.items() if p not in merged})
    return changes, {**modes, **merged}, conflicts, list(merged)


def _same(a: Entry | None, b: Entry | None) -> bool:
    return (a is None and b is None) or (a is not None and b is not None and
                                         (a.mode, a.oid) == (b.mode, b.oid))


def _file_modes(repo: Repo, head: str, changes: dict[str, bytes | None]) -> dict[str, int]:
    """The mode of every file the proposal writes, so a `chmod +x` (or -x) lands with
    the content; without it apply would write each one as 100644."""
    out = {}
    for path, data in changes.items():
        entry = repo.entry_at(head, path) if data is not None else None
        if entry is not None and entry.mode in MODE_BLOBS:
            out[path] = entry.mode
    return out


def land(repo: Repo, plan: Plan, config: Config, main: str, now: _dt.datetime
         ) -> ProposalResult:
    """Write the plan's commits on top of `main` (no ref moves): the result, applied."""
    committer = apply_identity(config)
    when = int(now.timestamp())
    parent, commits = main, []
    for message, file_changes in plan.evictions:
        parent = Writer(repo).commit_changes(parent, file_changes, message, committer,
                                             committer, when)
        commits.append(parent)
    commits.append(Writer(repo).commit_changes(parent, plan.changes, plan.message,
                                               plan.author, committer, when, plan.modes))
    res = plan.result
    return ProposalResult(res.proposal_id, "applied", commits=commits, ref=res.ref,
                          head=res.head, evicted=res.evicted, tokens=res.tokens,
                          details=dict(res.details), auto=res.auto)


def _land_and_move(repo: Repo, plan: Plan, config: Config, main: str, now: _dt.datetime,
                   dry_run: bool, remote: str | None, ref: str, main_ref: str,
                   files: Checkout | None = None) -> ProposalResult:
    res = land(repo, plan, config, main, now)
    pid, head, new = res.proposal_id, res.head, res.commits[-1]
    if dry_run:
        res.details["dryRun"] = True
        return res
    if remote is not None:
        try:  # before the push: a landing this clone's files cannot follow is not pushed
            check_local_main(repo, main_ref, main, new, files)
        except LocalEdits as exc:
            return _edits_failure(res, exc)
        # The proposal branch first becomes exactly what lands, so a pull request shows as
        # merged; then main fast-forwards to it. Both pushes carry a lease.
        branch_ref = ref if ref.startswith("refs/heads/") else (
            f"refs/heads/{ref}" if repo.ref_target(f"refs/heads/{ref}") else None)
        try:
            lease = head
            if branch_ref:
                there = repo.fetch_ref(remote, branch_ref)
                if there is not None and there != head and _attempt_of(repo, there) == head:
                    lease = there  # our own earlier attempt for this head: replace it
            if branch_ref and not repo.push_with_lease(remote, new, branch_ref, lease):
                return ProposalResult(pid, "failed", reason="proposal branch moved on the "
                                      "remote", resolution="retry", ref=ref, head=head,
                                      details={"retry": True})
            if not repo.push_with_lease(remote, new, main_ref, main):
                return ProposalResult(pid, "failed", reason="main moved on the remote",
                                      resolution="retry", ref=ref, head=head,
                                      details={"retry": True})
        except MemwardenError as exc:
            return ProposalResult(pid, "failed", reason=f"push refused: {exc}",
                                  resolution="fix_and_retry", ref=ref, head=head)
    try:
        moved = move_local_main(repo, main_ref, new, main, files)
    except LocalEdits as exc:
        if remote is None:
            return _edits_failure(res, exc)
        res.details["warning"] = f"landed on {remote}, but {exc}"  # edited after the check
        return res
    except MemwardenError as exc:  # e.g. a stale main.lock: say so, keep going
        return ProposalResult(pid, "failed", reason=str(exc), resolution="fix_and_retry",
                              ref=ref, head=head)
    if moved is None:
        return ProposalResult(pid, "failed", reason="main moved during apply",
                              resolution="retry", ref=ref, head=head)
    if moved:
        res.details["warning"] = moved
    return res


class LocalEdits(MemwardenError):
    """A checked-out main's files cannot follow a move: local edits in paths it changes."""

    def __init__(self, main_ref: str, new: str, paths: list[str],
                 message: str | None = None) -> None:
        self.paths = paths
        shown = ", ".join(paths[:10]) + (f" and {len(paths) - 10} more" if len(paths) > 10
                                         else "")
        super().__init__(message or (
            f"{main_ref} was not moved to {new[:12]}: the checked-out files have local edits "
            f"(or untracked files) in {shown}, which that move changes; commit them, or "
            "stash them (`git stash -u`, run memwarden again, then `git stash pop`), and run "
            "memwarden again"))


@dataclass(frozen=True)
class Checkout:
    """A checked-out main's index and files, left at commit `at` while main moves on (the
    caller brings them along once, for many moves), and the paths with local edits there,
    read once: each move is checked against them without asking git again."""

    at: str
    edits: Edits | None  # None: unknown (git decides each move)

    @classmethod
    def read(cls, repo: Repo, at: str) -> Checkout:
        edits = repo.local_edits(at)
        return cls(at, Edits(edits) if edits is not None else None)


class Edits:
    """Paths with local edits, and the folders that hold them."""

    def __init__(self, paths: set[str]) -> None:
        self.paths = frozenset(paths)
        self.folders = frozenset(p[:i] for p in paths for i, c in enumerate(p) if c == "/")

    def touched_by(self, changed: list[str]) -> bool:
        """True when a changed path is edited, lies under an edited file (a file where
        the move needs a folder) or holds edited files (a folder where it needs a file)."""
        if not self.paths:
            return False
        return any(path in self.paths or path in self.folders or
                   any(path[:i] in self.paths for i, c in enumerate(path) if c == "/")
                   for path in changed)


def check_local_main(repo: Repo, main_ref: str, old: str, new: str,
                     files: Checkout | None = None) -> None:
    """Raise LocalEdits when `main_ref` is checked out here and its index and files (at
    `files.at`, else at `old`) cannot follow the move `old` -> `new` without overwriting
    local edits. Only a move that changes an edited path asks git (a dry run)."""
    if repo.head_branch() != main_ref:
        other = repo.checked_out_elsewhere(main_ref)
        if other is not None:
            raise LocalEdits(main_ref, new, [], f"{main_ref} is checked out in another work "
                             f"tree ({other}), whose files would not follow; run memwarden "
                             "there, or check out another branch there")
        return
    at = files.at if files is not None else old
    changed = repo.changed_paths(old, new)
    if files is not None:
        edits = files.edits
    else:
        found = repo.local_edits(at, changed)
        edits = Edits(found) if found is not None else None
    if edits is not None and not edits.touched_by(changed):
        return
    blockers = repo.worktree_blockers(at, new)
    if blockers:
        raise LocalEdits(main_ref, new, blockers)


def _edits_failure(res: ProposalResult, exc: LocalEdits) -> ProposalResult:
    return ProposalResult(res.proposal_id, "failed", reason="local_edits",
                          resolution="commit_or_stash_and_retry", ref=res.ref, head=res.head,
                          details={"message": str(exc), "files": exc.paths}, auto=res.auto)


def move_local_main(repo: Repo, main_ref: str, new: str, old: str,
                    files: Checkout | None = None) -> str | None:
    """Compare-and-swap main from `old` to `new` and bring a checked-out main's index and
    files along; with `files` they stay where they are and the caller brings them along
    later, once for many moves.

    A checked-out main whose files cannot follow is never moved: HEAD ahead of its index
    would make the next commit silently revert the landing. Raises LocalEdits (nothing
    moved); returns None when main moved under us, "" on success.
    """
    check_local_main(repo, main_ref, old, new, files)
    if not repo.compare_and_swap(main_ref, new, old):
        return None
    if files is None and repo.head_branch() == main_ref and not repo.sync_worktree(old, new):
        # edited since the check: main goes back rather than stay ahead of its index
        repo.compare_and_swap(main_ref, old, new)
        raise LocalEdits(main_ref, new,
                         repo.worktree_blockers(old, new) or ["(see git status)"])
    return ""


def _changed_on_main(repo: Repo, base: str, main: str, agent: str, proposed: set[str]
                     ) -> list[str]:
    """The agent's paths main changed since the proposal's base that make it stale.

    A `memory-maintain:` commit (retention, rotation) does not, unless it touched a file the
    proposal also changes: replaying the proposal's copy would undo the maintenance.
    """
    prefix = f"memory/{agent}/"
    if repo.subtree_id(base, prefix[:-1]) == repo.subtree_id(main, prefix[:-1]):
        return []  # the agent's folder is identical: no diff, no walk
    stale = set()
    for sha in repo.rev_list(f"{base}..{main}"):
        info = repo.commit_info(sha)
        touched = [p for p in info["touched"] if p.startswith(prefix)]
        if not touched:
            continue
        if info["raw_message"].startswith(b"memory-maintain:"):
            stale.update(p for p in touched if p in proposed)
        else:
            stale.update(touched)
    return sorted(stale)


def _agent_refusal(repo: Repo, config: Config, main: str, agent: str) -> str:
    """agent_readonly / agent_inactive, or "" when the agent may write."""
    if config.agent_setting(agent, "readonly", False):
        return "agent_readonly"
    data = repo.read_path(main, f"agents/{agent}/_agent.md")
    if data is None:
        return ""  # no contract: memory-only agents are not gated on a status
    from memwarden.model.memfile import parse_frontmatter, split_lines

    fm = parse_frontmatter(split_lines(data.decode("utf-8", "replace")))
    front = fm.data if fm is not None and not fm.error else None
    status = front.get("status") if isinstance(front, dict) else None
    return "agent_inactive" if status not in (None, "active") else ""


def _attempt_of(repo: Repo, commit: str) -> str | None:
    """The Proposal-Head an apply-made commit names (None for other commits)."""
    raw = repo.commit_message(commit).decode("utf-8", "replace")
    for t in parse_trailers(raw):
        if t.key.lower() == "proposal-head":
            return t.value
    return None


def _bookkeeping(repo: Repo, config: Config, main: str, agent: str, run: str, pid: str,
                 tr: dict[str, str], changed: list[str], files: dict[str, str],
                 now: _dt.datetime) -> dict[str, bytes]:
    root = f"memory/{agent}"
    what = {}
    for path in changed:
        info = classify(path)
        if info is None or info.agent != agent:
            continue
        name = path[len(root) + 1:] if path.startswith(root + "/") else path
        what[name] = "updated" if repo.read_path(main, path) is not None else "added"
    meta = bookkeeping.meta_json(_meta(repo, main, agent), agent, run, pid, files,
                                 config.encoding, now)
    old_log = (repo.read_path(main, f"{root}/changelog.md") or b"").decode("utf-8", "replace")
    log = bookkeeping.changelog(old_log, agent, run, pid, what, now,
                                config.data["retention"]["changelog_entries"])
    day = f"{root}/timeline/{now.date().isoformat()}.md"
    old_day = (repo.read_path(main, day) or b"").decode("utf-8", "replace")
    extra = {k: tr[k.lower()] for k in ("Task", "Result", "Duration-Seconds")
             if k.lower() in tr}
    day_text = bookkeeping.timeline(old_day, agent, run, pid, extra, "applied", now)
    return {f"{root}/meta.json": meta.encode(), f"{root}/changelog.md": log.encode(),
            day: day_text.encode()}


def _applied_message(original: str, pid: str, head: str, auto: bool,
                     approved_by: str | None) -> str:
    extra = [f"Applied-Proposal: {pid}", f"Proposal-Head: {head}",
             f"Auto-Approved: {'true' if auto and not approved_by else 'false'}"]
    if approved_by:
        extra.append(f"Approved-By: {' '.join(approved_by.split())}")
    return original.rstrip("\n") + "\n" + "\n".join(extra) + "\n"


# Where `fetch_proposals` keeps the remote's proposal branches as it last saw them.
REMOTE_PROPOSALS = "refs/memwarden/remote-proposals/"


def proposal_refs(repo: Repo, config: Config, remote: str | None = None) -> list[str]:
    """Every proposal branch, oldest head commit first (FIFO); with `remote`, the remote's
    proposal branches too (fetch_proposals)."""
    if remote is not None:
        fetch_proposals(repo, config, remote)
    prefix = "refs/heads/" + config.data["proposal_prefix"]
    refs = [r for r in repo.refs(prefix)]
    return sorted(refs, key=lambda r: (repo.commit_time(r), r))


def fetch_proposals(repo: Repo, config: Config, remote: str) -> None:
    """Fetch `remote`'s proposal branches; each one this repository lacks becomes a local
    branch at the remote's commit (as `git checkout <branch>` does from `origin/<branch>`),
    so apply can push what lands back to it. Local branches are never moved."""
    from memwarden.git.repo import git_cli

    prefix = config.data["proposal_prefix"]
    git_cli(["fetch", "--quiet", "--prune", "--no-tags", remote,
             f"+refs/heads/{prefix}*:{REMOTE_PROPOSALS}*"], repo.root or repo.git_dir,
            {"GIT_DIR": str(repo.git_dir)})
    for ref in repo.refs(REMOTE_PROPOSALS):
        branch = f"refs/heads/{prefix}{ref.removeprefix(REMOTE_PROPOSALS)}"
        target = repo.ref_target(ref)
        if target is not None and repo.ref_target(branch) is None:
            repo.compare_and_swap(branch, target, "0" * 40)


def looked_in(repo: Repo, config: Config, remote: str | None) -> str:
    """Where proposal_refs looked, for "no proposal branches" (and where else to look)."""
    prefix = config.data["proposal_prefix"]
    where = f"refs/heads/{prefix}" + (f" here and on {remote}" if remote else "")
    tracking = [r for r in repo.refs("refs/remotes/") if r.split("/", 3)[-1].startswith(prefix)]
    if tracking and remote is None:
        name = tracking[0].split("/")[2]
        where += f"; {len(tracking)} remote-tracking under refs/remotes/{name}/{prefix}: " \
                 f"use --push {name} to apply them"
    return where


def exit_code(results: list[ProposalResult]) -> int:
    """1 when this run failed or newly rejected a proposal; a rejection recorded by an
    earlier run and a proposal waiting for review are reported, not failures."""
    return 1 if any(r.status == "failed" or (r.status == "rejected" and
                                              not r.details.get("recordedEarlier"))
                    for r in results) else 0


def apply_all(repo: Repo, refs: list[str], config: Config, approved_by: str | None,
              now: _dt.datetime, dry_run: bool = False, force: bool = False,
              remote: str | None = None, attempts: int = 8,
              delete_branches: bool = False) -> list[ProposalResult]:
    """Apply each ref in order. With `remote`, a batch is first tried optimistically (every
    proposal built on the previous one, then ONE atomic push); if the remote moved
    meanwhile, each proposal goes on its own: a push rejected because someone else moved
    main refetches main and retries from the stale check (bounded, with jitter). Every
    outcome is recorded in the proposal's lifecycle notes (one notes commit per batch).
    Appliers of one repository take turns (see applier_lock): two interleaved runs would
    each bring the checked-out files along from a main the other had already moved."""
    if dry_run:  # writes objects only, never a ref or a file
        return _apply_all(repo, refs, config, approved_by, now, dry_run, force, remote,
                          attempts, delete_branches)
    with applier_lock(repo):
        return _apply_all(repo, refs, config, approved_by, now, dry_run, force, remote,
                          attempts, delete_branches)


# How long an applier waits for another one of the same repository to finish.
LOCK_WAIT_SECONDS = 900


@contextlib.contextmanager
def applier_lock(repo: Repo, wait: float = LOCK_WAIT_SECONDS) -> Iterator[None]:
    """An exclusive flock on `<git common dir>/memwarden/apply.lock` for this process.
    The kernel releases it when the process ends, however it ends (no stale lock after a
    crash); linked worktrees share it, as they share main."""
    import fcntl
    import time

    folder = repo.objects_dir().parent / "memwarden"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "apply.lock"
    fd = os.open(path, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o644)
    try:
        deadline = time.monotonic() + wait
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise MemwardenError(f"{path}: another memwarden apply of this repository "
                                         f"has held the lock for over {int(wait)} s; let it "
                                         "finish (the lock goes with its process)") from None
                time.sleep(0.05)
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        yield
    finally:
        os.close(fd)  # releases the flock


def _apply_all(repo: Repo, refs: list[str], config: Config, approved_by: str | None,
               now: _dt.datetime, dry_run: bool, force: bool, remote: str | None,
               attempts: int, delete_branches: bool) -> list[ProposalResult]:
    committer = apply_identity(config)
    rec = lifecycle.Recorder(repo, committer)
    applied = AppliedIndex(repo)
    if not dry_run:  # files left behind main by a killed run catch up first
        _catch_up(repo, f"refs/heads/{config.data['main_branch']}")
    if remote is not None and not dry_run:
        lifecycle.fetch_notes(repo, remote, committer)
    results = None
    if remote is not None and not dry_run and len(refs) > 1:
        results = _apply_batch(repo, refs, config, approved_by, now, force, remote, rec,
                               applied)
    if results is None:
        # Landing one by one in this clone only (no remote), a checked-out main's files
        # follow once after the last landing, not after each: updating the index and files
        # of the whole tree per landing cost most of a run. Each move is still checked
        # against them (move_local_main), the applier lock keeps other appliers out
        # meanwhile, and a run killed before the end is caught up by the next (_catch_up).
        main_ref = f"refs/heads/{config.data['main_branch']}"
        later = remote is None and not dry_run and repo.head_branch() == main_ref
        start = repo.ref_target(main_ref) if later else None
        files = Checkout.read(repo, start) if start is not None else None
        results = []
        try:
            for ref in refs:
                results.append(_apply_careful(repo, ref, config, approved_by, now, dry_run,
                                              force, remote, attempts, rec, applied, files))
        finally:
            if start is not None:
                _follow_once(repo, main_ref, start, results)
    for res in results:
        events = rec.events(res.head) if res.status == "rejected" and res.head else []
        # the same rejection again; another (a --force that does not merge) is news
        if lifecycle.current_state(events) == "rejected" and \
                events[-1].get("reason") == res.reason:
            res.details["recordedEarlier"] = True
    if not dry_run:
        for res in results:
            _record(rec, res, approved_by, now)
            if delete_branches and res.status in ("applied", "already_applied"):
                _delete_branch(repo, res, remote)
        warning = rec.flush(remote)
        if warning and results:
            results[-1].details["warning"] = warning
    return results


def _catch_up(repo: Repo, main_ref: str) -> None:
    """Bring files a killed run left behind main along; refuse to go on when local edits
    stop them (a commit made then would revert what main gained)."""
    stuck = repo.catch_up_worktree(main_ref)
    if stuck:
        raise MemwardenError(
            f"the checked-out files are at {stuck[:12]}, behind {main_ref} (an earlier run "
            "stopped before they followed), and local edits stop them from following; run "
            f"`git reset --soft {stuck[:12]}`, `git stash`, `git merge --ff-only "
            f"{repo.ref_target(main_ref)}` and `git stash pop`, then run apply again")


def _follow_once(repo: Repo, main_ref: str, start: str, results: list[ProposalResult]
                 ) -> None:
    """After a run of moves, bring a checked-out main's files from `start` to main. Each
    move was checked against them; should edits made during the run stop them anyway,
    main goes back to `start` and the run's landings count as failed."""
    end = repo.ref_target(main_ref)
    if end is None or end == start or repo.head_branch() != main_ref or \
            repo.sync_worktree(start, end):
        return
    if not repo.compare_and_swap(main_ref, start, end):
        return  # someone moved main meanwhile: theirs to sort out, not ours to undo
    exc = LocalEdits(main_ref, end,
                     repo.worktree_blockers(start, end) or ["(see git status)"])
    for i, res in enumerate(results):
        if res.status == "applied":
            results[i] = _edits_failure(res, exc)


def _apply_careful(repo: Repo, ref: str, config: Config, approved_by: str | None,
                   now: _dt.datetime, dry_run: bool, force: bool, remote: str | None,
                   attempts: int, rec: lifecycle.Recorder, applied: AppliedIndex,
                   files: Checkout | None = None) -> ProposalResult:
    """One proposal, pushed on its own, retried with jitter when the remote moved."""
    import random
    import time

    refused = _refused_by_owner(repo, rec, ref)
    if refused is not None:
        return refused
    for attempt in range(attempts):
        if remote is not None:
            try:
                sync_main(repo, config, remote)
            except LocalEdits as exc:
                return ProposalResult(None, "failed", reason="local_edits",
                                      resolution="commit_or_stash_and_retry", ref=ref,
                                      details={"message": str(exc), "files": exc.paths})
        res = apply_one(repo, ref, config, approved_by, now, dry_run, force, remote,
                        applied=applied, files=files)
        if not res.details.get("retry") or attempt == attempts - 1:
            break
        time.sleep(random.uniform(0.05, 0.2) * (attempt + 1))
    res.details.pop("retry", None)
    return res


def _branch_ref(repo: Repo, ref: str) -> str | None:
    if ref.startswith("refs/heads/"):
        return ref
    return f"refs/heads/{ref}" if repo.ref_target(f"refs/heads/{ref}") else None


def _apply_batch(repo: Repo, refs: list[str], config: Config, approved_by: str | None,
                 now: _dt.datetime, force: bool, remote: str, rec: lifecycle.Recorder,
                 applied: AppliedIndex) -> list[ProposalResult] | None:
    """Build every proposal on top of the previous one without moving a ref, then push
    main and each landed proposal branch in ONE atomic push, every ref with a lease (the
    branch becomes what lands, so pull requests show as merged). None when that is not
    safe (a branch moved on the remote) or the push lost a race: nothing was moved, and
    the caller goes one proposal at a time."""
    main_ref = f"refs/heads/{config.data['main_branch']}"
    sync_main(repo, config, remote)
    start = repo.ref_target(main_ref)
    if start is None:
        raise MemwardenError(f"{main_ref} does not exist")
    there = repo.remote_refs(remote, "refs/heads/" + config.data["proposal_prefix"] + "*")
    tip, results, updates = start, [], {}
    plans = PlanPool(refs, lambda: _worker_planner(repo, config, approved_by, now, force, start))
    if len(refs) >= lifecycle.HOLD_MIN:  # one pack of deltas, not ~8 loose files a proposal
        repo.hold_objects()
    try:
        for ref in refs:
            planned = plans.next()
            refused = _refused_by_owner(repo, rec, ref)
            if refused is not None:
                results.append(refused)
                continue
            head = repo.resolve_commit(ref)
            branch = _branch_ref(repo, ref)
            if branch is not None and there.get(branch, head) != head:
                return None  # an earlier attempt or new commits there: the careful path
            res = _already_applied(repo, ref, tip, applied,
                                   (planned[0], planned[1], planned[2]) if planned else None)
            if res is None:
                plan = planned[3] if still_holds(repo, planned, head, start, tip) else \
                    prepare(repo, ref, config, approved_by, now, force, tip, start,
                            disk_cache=False)
                res = plan if isinstance(plan, ProposalResult) else \
                    land(repo, plan, config, tip, now)
                if isinstance(plan, Plan) and res.status == "applied" and res.proposal_id:
                    applied.landed(tip, res.commits[-1], plan.message, res.proposal_id,
                                   res.commits[-1])
            if res.status == "applied":
                tip = res.commits[-1]
                if branch is not None and branch in there:
                    updates[branch] = (tip, head)
            results.append(res)
        if tip != start:
            repo.store_held_objects()  # before any ref can point at them (or git reads them)
            try:  # the files of a checked-out main must be able to follow before the push
                check_local_main(repo, main_ref, start, tip)
            except LocalEdits:
                return None  # one at a time, refusing only the landings they block
    finally:
        plans.close()
        repo.drop_held_objects()  # (not stored: the careful path follows, nothing refers)
    if tip != start:
        updates[main_ref] = (tip, start)
        try:
            if not repo.push_refs(remote, updates):
                return None
        except MemwardenError as exc:
            for res in results:
                if res.status == "applied":
                    res.status, res.reason, res.resolution = "failed", f"push refused: {exc}", \
                        "fix_and_retry"
            return results
        try:
            moved = move_local_main(repo, main_ref, tip, start)
        except LocalEdits as exc:  # edited after the check: the remote has the batch
            moved = f"landed on {remote}, but {exc}"
        if moved and results:
            results[-1].details["warning"] = moved
        elif moved is None and results:
            results[-1].details["warning"] = (f"local {main_ref} moved during apply; the "
                                              f"remote has the result: fetch {remote}")
    return results


def _refused_by_owner(repo: Repo, rec: lifecycle.Recorder, ref: str) -> ProposalResult | None:
    """An owner's `memwarden reject` is final: such a proposal is never applied."""
    try:
        head = repo.resolve_commit(ref)
    except MemwardenError:
        return None  # apply_one reports the bad ref
    events = rec.events(head)
    if lifecycle.current_state(events) != "rejected" or \
            events[-1].get("reason") != "rejected_by_owner":
        return None  # other rejections are re-evaluated (a fixed policy, --force)
    last = events[-1]
    return ProposalResult(events[0].get("proposalId"), "rejected",
                          reason=last.get("reason", "rejected_by_owner"), ref=ref, head=head,
                          details={"message": last.get("message", "rejected earlier")})


def _record(rec: lifecycle.Recorder, res: ProposalResult, approved_by: str | None,
            now: _dt.datetime) -> None:
    """Write the states this apply run moved the proposal through."""
    if not res.head or not res.proposal_id:
        return
    tr = _proposal_trailers(rec.repo, res.head)[1]
    created = _dt.datetime.fromtimestamp(rec.repo.commit_time(res.head), _dt.UTC)
    first = {"proposalId": res.proposal_id, "agentId": tr.get("agent-id"),
             "runId": tr.get("run-id"), "created": lifecycle._iso(created)}
    verdict = "auto_approved" if res.auto and not approved_by else "needs_human_review"
    avoid = {"auto_approved", "needs_human_review"} - {verdict}
    by = approved_by or "auto-approve"
    state = lifecycle.current_state(rec.events(res.head))
    try:
        if state == "rejected" and res.status in ("applied", "already_applied"):
            # an owner override (apply --force after version_conflict, or a policy fixed
            # on main): the only way out of "rejected", recorded as such
            rec.reopen(res.head, now, by=by)
            state = "approved"
        if res.status in ("applied", "already_applied"):
            if state != "applied":
                if state not in ("approved", "applying", "failed"):  # failed -> applying
                    rec.advance(res.head, "approved", now, avoid=avoid, first=first, by=by)
                rec.advance(res.head, "applied", now, commit=res.commits[-1])
        elif res.status == "rejected" and state != "rejected":
            if res.reason != "policy" and state in (None, "pending"):  # the gate passed it
                rec.advance(res.head, verdict, now, first=first)
            rec.advance(res.head, "rejected", now, avoid=avoid, first=first,
                        reason=res.reason, resolution=res.resolution)
        elif res.status == "pending" and state != "needs_human_review":
            rec.advance(res.head, "needs_human_review", now, first=first)
        elif res.status == "failed":
            if state not in ("approved", "applying", "failed"):
                rec.advance(res.head, "approved", now, avoid=avoid, first=first, by=by)
            rec.advance(res.head, "failed", now, reason=res.reason)
    except lifecycle.IllegalTransition as exc:
        res.details["lifecycle"] = str(exc)


def _delete_branch(repo: Repo, res: ProposalResult, remote: str | None) -> None:
    """Delete an applied proposal branch (here and on the remote) unless it moved on."""
    ref = res.ref if res.ref.startswith("refs/heads/") else f"refs/heads/{res.ref}"
    landed = {res.head, *(res.commits[-1:])}
    local = repo.ref_target(ref)
    if local in landed:
        repo.delete_ref(ref, local)
    if remote is not None:
        there = repo.fetch_ref(remote, ref)
        if there in landed:
            try:
                repo.push_with_lease(remote, "", ref, there)
            except MemwardenError as exc:
                res.details["warning"] = f"branch not deleted on {remote}: {exc}"
        elif there is not None:
            res.details["warning"] = f"{ref} moved on {remote}; not deleted"


def sync_main(repo: Repo, config: Config, remote: str) -> None:
    """Make local main what the remote has (fast-forward only; the remote is the truth)."""
    main_ref = f"refs/heads/{config.data['main_branch']}"
    theirs = repo.fetch_ref(remote, main_ref)
    ours = repo.ref_target(main_ref)
    if theirs is None or theirs == ours:
        return
    if ours is not None and not repo.is_ancestor(ours, theirs):
        raise MemwardenError(f"local {main_ref} has commits the remote does not; refusing to "
                             "apply on a diverged main")
    if ours is None:
        repo.compare_and_swap(main_ref, theirs, "0" * 40)
    else:
        move_local_main(repo, main_ref, theirs, ours)
