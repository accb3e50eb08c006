"""Proposal lifecycle, stored in git as notes on the proposal's head commit.

States: pending -> auto_approved | needs_human_review -> approved -> applying ->
applied | failed; pending/approved (and the gate states, and failed) -> rejected. A failed
apply may be retried (failed -> applying). The one way out of "rejected" is a recorded owner
override (`apply --force` after a version_conflict, or a policy fixed on main), never after
`memwarden reject`. Anything else is an illegal transition and a hard error.
Each note is JSON lines, one event per line, oldest first, under
`refs/notes/memwarden`, so `git notes --ref memwarden show <head>` shows the history and
a plain `git push origin refs/notes/memwarden` carries it. Notes written by concurrent
appliers are merged line by line (union), never overwritten: events are facts that
happened, so losing one would lose history.
"""

from __future__ import annotations

import datetime as _dt
import json
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from memwarden.git.repo import Repo, Writer
from memwarden.model.errors import MemwardenError

NOTES_REF = "refs/notes/memwarden"
TRANSITIONS: dict[str | None, tuple[str, ...]] = {
    None: ("pending",),
    "pending": ("auto_approved", "needs_human_review", "rejected"),
    "auto_approved": ("approved", "rejected"),
    "needs_human_review": ("approved", "rejected"),
    "approved": ("applying", "rejected"),
    "applying": ("applied", "failed"),
    "failed": ("applying", "rejected"),
    "applied": (),
    "rejected": (),
}
TERMINAL = ("applied", "rejected")
# Compare-and-swap attempts of one flush against other appliers writing notes.
CAS_ATTEMPTS = 50


class IllegalTransition(MemwardenError):
    """A state change the lifecycle does not allow (a hard error, exit 2)."""


def _note_path(head: str) -> str:
    return head  # flat layout; _read also understands git's 2/38 fan-out


def _read(repo: Repo, notes_commit: str | None, head: str) -> list[dict[str, Any]]:
    if notes_commit is None:
        return []
    data = repo.read_path(notes_commit, head) or repo.read_path(
        notes_commit, f"{head[:2]}/{head[2:]}")
    return parse_note(data or b"")


def parse_note(data: bytes) -> list[dict[str, Any]]:
    """Events of one note; lines that are not memwarden events (a human's `git notes
    append`) are kept out of the state machine but never deleted."""
    out = []
    for line in data.decode("utf-8", "replace").splitlines():
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if isinstance(event, dict) and event.get("state") in TRANSITIONS:
            out.append(event)
    return out


def history(repo: Repo, head: str) -> list[dict[str, Any]]:
    """The recorded events of the proposal whose head commit is `head`, oldest first."""
    return _read(repo, repo.ref_target(NOTES_REF), head)


def current_state(events: list[dict[str, Any]]) -> str | None:
    return events[-1]["state"] if events else None


def route(start: str | None, target: str, avoid: Iterable[str] = ()) -> list[str]:
    """The shortest chain of states leading from `start` to `target` (excluding `start`),
    avoiding `avoid`; IllegalTransition when there is none."""
    banned = set(avoid)
    prev: dict[str | None, str | None] = {start: None}
    queue: deque[str | None] = deque([start])
    while queue:
        state = queue.popleft()
        for nxt in TRANSITIONS.get(state, ()):
            if nxt in prev or (nxt in banned and nxt != target):
                continue
            prev[nxt] = state
            if nxt == target:
                chain = [nxt]
                while prev[chain[-1]] != start:
                    chain.append(prev[chain[-1]])  # type: ignore[arg-type]
                return chain[::-1]
            queue.append(nxt)
    raise IllegalTransition(f"illegal lifecycle transition {start or '(new)'} -> {target}")


def _iso(when: _dt.datetime) -> str:
    return when.astimezone(_dt.UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")


@dataclass
class Recorder:
    """Collects lifecycle events for a batch and writes them as ONE notes commit."""

    repo: Repo
    identity: tuple[str, str]
    pending: dict[str, list[dict[str, Any]]] = field(default_factory=dict)

    def events(self, head: str) -> list[dict[str, Any]]:
        return history(self.repo, head) + self.pending.get(head, [])

    def advance(self, head: str, target: str, now: _dt.datetime, *, avoid: Iterable[str] = (),
                first: dict[str, Any] | None = None, **extra: Any) -> list[str]:
        """Record the states leading to `target`; raises IllegalTransition. `first` holds
        the identifying fields stored with the proposal's first event; `extra` goes on the
        final one (reason, commit, by...)."""
        events = self.events(head)
        chain = route(current_state(events), target, avoid)
        for i, state in enumerate(chain):
            event: dict[str, Any] = {"state": state, "at": _iso(now)}
            if not events and i == 0:
                event.update(first or {})
                if "created" in event:
                    event["at"] = event.pop("created")
            if i == len(chain) - 1:
                event.update({k: v for k, v in extra.items() if v not in (None, "")})
            self.pending.setdefault(head, []).append(event)
        return chain

    def reopen(self, head: str, now: _dt.datetime, by: str) -> None:
        """rejected -> approved, allowed only as a recorded owner override and never after
        an owner's own rejection."""
        events = self.events(head)
        if current_state(events) != "rejected" or events[-1].get("reason") == \
                "rejected_by_owner":
            raise IllegalTransition(f"illegal lifecycle transition "
                                    f"{current_state(events) or '(new)'} -> approved")
        self.pending.setdefault(head, []).append(
            {"state": "approved", "at": _iso(now), "by": by, "override": True})

    def flush(self, remote: str | None = None, attempts: int = 5,
              cas_attempts: int = CAS_ATTEMPTS) -> str | None:
        """Write the collected events (and push them, merged with what the remote has).
        Another applier moving the notes ref in between is normal: the events are merged
        onto its notes again and the compare-and-swap retried (bounded, with jitter).
        Returns a warning when the notes could not be written or pushed; never raises for
        that, so a caller's results are always reported."""
        import random
        import time

        if not self.pending:
            return None
        for attempt in range(cas_attempts):
            local = self.repo.ref_target(NOTES_REF)
            if len(self.pending) >= HOLD_MIN:  # a batch's notes: one pack, not a file per note
                self.repo.hold_objects()
            try:
                new = Writer(self.repo).commit_changes(
                    local, {h: self._merged(local, h) for h in self.pending},
                    "memwarden: proposal lifecycle\n", self.identity, self.identity)
                self.repo.store_held_objects()  # before the ref can point at them
            finally:
                self.repo.drop_held_objects()
            try:
                if self.repo.compare_and_swap(NOTES_REF, new, local or "0" * 40):
                    break
            except MemwardenError:
                pass  # a concurrent writer's ref lock: retry like a lost race
            time.sleep(random.uniform(0.005, 0.03) * min(attempt + 1, 10))
        else:
            return (f"{NOTES_REF} kept moving while recording ({cas_attempts} attempts); "
                    "these lifecycle events were not recorded: "
                    + ", ".join(sorted(h[:12] for h in self.pending)))
        self.pending.clear()
        return push_notes(self.repo, remote, self.identity, attempts) if remote else None

    def _merged(self, notes: str | None, head: str) -> bytes:
        old = self.repo.read_path(notes, head) if notes else None
        lines = (old or b"").decode("utf-8", "replace").splitlines()
        lines += [json.dumps(e, sort_keys=True, ensure_ascii=False) for e in self.pending[head]]
        return ("\n".join(lines) + "\n").encode()


# Fewer notes than this are written as loose objects: a pack per small apply would pile up
# packs that only `git gc` merges.
HOLD_MIN = 16


def _union(a: bytes | None, b: bytes | None) -> bytes:
    lines = (a or b"").decode("utf-8", "replace").splitlines() + \
        (b or b"").decode("utf-8", "replace").splitlines()
    return ("\n".join(dict.fromkeys(lines)) + "\n").encode()  # first seen order


def _merge_onto(repo: Repo, base: str, other: str, identity: tuple[str, str]) -> str:
    """A notes commit on `base` holding, for every note `other` has differently, the union
    of both notes' lines: events are never dropped, whoever wrote them."""
    known = {e.path: e.oid for e in repo.tree_entries(base, everything=True)}
    changes = {e.path: _union(repo.read_path(base, e.path),
                              repo.read_blob(e.oid) if e.oid else None)
               for e in repo.tree_entries(other, everything=True) if known.get(e.path) != e.oid}
    return Writer(repo).commit_changes(base, changes, "memwarden: merge proposal lifecycle "
                                       "notes\n", identity, identity)


def push_notes(repo: Repo, remote: str, identity: tuple[str, str], attempts: int = 5
               ) -> str | None:
    """Merge local notes into the remote's and push with a lease; retried when another
    applier pushed in between. Returns a warning on failure (local notes stay)."""
    import random
    import time

    for attempt in range(attempts):
        local = repo.ref_target(NOTES_REF)
        if local is None:
            return None
        theirs = repo.fetch_ref(remote, NOTES_REF)
        if theirs == local:
            return None
        if theirs is None or repo.is_ancestor(theirs, local):
            new = local
        else:
            new = _merge_onto(repo, theirs, local, identity)
        try:
            if repo.push_with_lease(remote, new, NOTES_REF, theirs):
                repo.compare_and_swap(NOTES_REF, new, local)
                return None
        except MemwardenError as exc:
            return f"lifecycle notes not pushed: {exc}"
        time.sleep(random.uniform(0.02, 0.1) * (attempt + 1))
    return (f"lifecycle notes not pushed to {remote}: it kept moving; they stay in "
            f"{NOTES_REF} here and the next `apply --push` or `reject --push` merges them in")


def fetch_notes(repo: Repo, remote: str, identity: tuple[str, str]) -> None:
    """Bring the remote's lifecycle notes into the local notes ref (union merge)."""
    theirs = repo.fetch_ref(remote, NOTES_REF)
    local = repo.ref_target(NOTES_REF)
    if theirs is None or theirs == local:
        return
    if local is None or repo.is_ancestor(local, theirs):
        repo.compare_and_swap(NOTES_REF, theirs, local or "0" * 40)
        return
    if repo.is_ancestor(theirs, local):
        return
    repo.compare_and_swap(NOTES_REF, _merge_onto(repo, local, theirs, identity), local)
