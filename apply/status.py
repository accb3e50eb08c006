"""`memwarden status` and `memwarden reject`: the lifecycle of one proposal, traced both ways.

status joins what git knows: the proposal branch and its head, the lifecycle notes on that
head, the commit on main that names it (`Applied-Proposal`), and the changelog / timeline
lines and run file that the applied commit wrote. Main is the truth for "applied": when the
notes lag (a crash between moving main and writing notes), status still says applied.
"""

from __future__ import annotations

import datetime as _dt
from typing import Any

from memwarden.apply import lifecycle
from memwarden.apply.apply import AppliedIndex, apply_identity
from memwarden.git.repo import Repo
from memwarden.model.config import Config
from memwarden.model.errors import MemwardenError
from memwarden.model.trailers import parse_trailers


def _trailers(repo: Repo, commit: str) -> dict[str, str]:
    raw = repo.commit_info(commit)["raw_message"].decode("utf-8", "replace")
    return {t.key.lower(): t.value for t in parse_trailers(raw)}


def _notes_heads(repo: Repo, pid: str) -> list[str]:
    notes = repo.ref_target(lifecycle.NOTES_REF)
    if notes is None:
        return []
    out = []
    for e in repo.tree_entries(notes, everything=True):
        head = e.path.replace("/", "")
        events = lifecycle.parse_note(repo.read_blob(e.oid) if e.oid else b"")
        if events and events[0].get("proposalId") == pid:
            out.append(head)
    return out


def find_proposal(repo: Repo, config: Config, pid: str) -> dict[str, Any]:
    """Where the proposal `pid` is: branch, head, applied commit (any may be None)."""
    prefix = "refs/heads/" + config.data["proposal_prefix"]
    branches = [r for r in repo.refs(prefix) if r.rsplit("/", 1)[-1] == pid]
    if len({r[len(prefix):].split("/", 1)[0] for r in branches}) > 1:
        # status and reject must not pick one agent's proposal for another's
        raise MemwardenError(f"proposal id {pid!r} is used by more than one agent ("
                             f"{', '.join(r[len('refs/heads/'):] for r in branches)}); "
                             "rename one branch (git branch -m) and retry")
    main = repo.ref_target(f"refs/heads/{config.data['main_branch']}")
    applied = AppliedIndex(repo).lookup(main, pid) if main else None
    head = None
    if applied:
        head = _trailers(repo, applied).get("proposal-head")
    if head is None and branches:
        tip = repo.ref_target(branches[0])  # apply may have moved it to the landed commit
        head = _trailers(repo, tip).get("proposal-head", tip) if tip else None
    if head is None:
        heads = _notes_heads(repo, pid)
        head = heads[0] if heads else None
    if head is None and not branches and not applied:
        raise MemwardenError(f"no proposal {pid!r} found (no branch "
                             f"{config.data['proposal_prefix']}<agent>/{pid}, no lifecycle "
                             "note, nothing on main names it)")
    return {"branch": branches[0] if branches else None, "head": head, "applied": applied,
            "main": main}


def _line_of(repo: Repo, rev: str, path: str, needle: str) -> int | None:
    data = repo.read_path(rev, path)
    if data is None:
        return None
    for i, line in enumerate(data.decode("utf-8", "replace").splitlines(), 1):
        if needle in line:
            return i
    return None


def status(repo: Repo, config: Config, pid: str) -> dict[str, Any]:
    """The status document: state, history, and the run -> proposal -> commit -> changelog
    -> timeline links."""
    where = find_proposal(repo, config, pid)
    head, applied = where["head"], where["applied"]
    events = lifecycle.history(repo, head) if head else []
    tr = _trailers(repo, head) if head else {}
    agent = tr.get("agent-id") or (events[0].get("agentId") if events else None)
    run = tr.get("run-id") or (events[0].get("runId") if events else None)
    state = lifecycle.current_state(events) or ("pending" if where["branch"] else None)
    note = None
    if applied and state != "applied":
        note = "main has the applied commit; the lifecycle notes lag behind it"
        state = "applied"
    links: dict[str, Any] = {"proposal": {"branch": where["branch"], "head": head}}
    if applied and agent:
        root = f"memory/{agent}"
        day = _dt.datetime.fromtimestamp(repo.commit_time(applied), _dt.UTC).date()
        links["commit"] = applied
        for name, path in (("changelog", f"{root}/changelog.md"),
                           ("timeline", f"{root}/timeline/{day.isoformat()}.md")):
            line = _line_of(repo, applied, path, pid)
            links[name] = {"path": path, "line": line} if line else None
        if run:
            run_path = f"{root}/runs/run_{run.removeprefix('run_')}.md"
            links["run"] = {"id": run, "path": run_path if repo.read_path(
                applied, run_path) is not None else None}
    elif run:
        links["run"] = {"id": run, "path": None}
    doc = {"proposalId": pid, "agentId": agent, "runId": run, "state": state,
           "history": events, "links": links}
    if note:
        doc["note"] = note
    return doc


def overview(repo: Repo, config: Config) -> list[dict[str, Any]]:
    """One line per proposal branch: id, agent, state (from the notes; pending without)."""
    prefix = "refs/heads/" + config.data["proposal_prefix"]
    main = repo.ref_target(f"refs/heads/{config.data['main_branch']}")
    index = AppliedIndex(repo) if main else None
    out = []
    for ref in repo.refs(prefix):
        tip = repo.ref_target(ref)
        if tip is None:
            continue
        head = _trailers(repo, tip).get("proposal-head", tip)
        events = lifecycle.history(repo, head)
        pid = ref.rsplit("/", 1)[-1]
        state = lifecycle.current_state(events) or "pending"
        if state != "applied" and index is not None and index.lookup(main, pid):  # type: ignore[arg-type]
            state = "applied"  # main is the truth; the notes lag behind it
        out.append({"proposalId": pid, "branch": ref[len("refs/heads/"):],
                    "agentId": ref[len(prefix):].split("/", 1)[0], "head": head,
                    "state": state})
    return out


def reject(repo: Repo, config: Config, pid: str, reason: str, by: str,
           now: _dt.datetime, remote: str | None = None) -> dict[str, Any]:
    """Record an owner's rejection (rejected_by_owner); apply never lands it afterwards."""
    if not reason.strip():
        raise MemwardenError("reject: --reason must say why (it is recorded in the history)")
    where = find_proposal(repo, config, pid)
    if where["applied"]:
        raise lifecycle.IllegalTransition(f"illegal lifecycle transition applied -> rejected: "
                                          f"{pid} is already on main as {where['applied'][:12]}"
                                          "; undo it with `git revert`")
    head = where["head"]
    ident = apply_identity(config)
    if remote:
        lifecycle.fetch_notes(repo, remote, ident)
    rec = lifecycle.Recorder(repo, ident)
    tr = _trailers(repo, head)
    created = _dt.datetime.fromtimestamp(repo.commit_time(head), _dt.UTC)
    first = {"proposalId": pid, "agentId": tr.get("agent-id"), "runId": tr.get("run-id"),
             "created": lifecycle._iso(created)}
    direct = set(lifecycle.TRANSITIONS) - {None, "pending", "rejected"}  # never invent steps
    rec.advance(head, "rejected", now, avoid=direct, first=first, reason="rejected_by_owner",
                message=" ".join(reason.split()), by=by)
    warning = rec.flush(remote)
    doc = status(repo, config, pid)
    if warning:
        doc["warning"] = warning
    return doc

