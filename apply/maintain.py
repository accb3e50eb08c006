"""`memwarden maintain`: keep main within its retention and size policy, by fast-forward.

Four scopes, in this order, each at most one commit (overflow: one per agent and file, as
apply's evictions are), subject `memory-maintain: <scope>`, trailer
`Memory-Maintenance: <scope>`, authored and committed by the apply identity:

- retention: `runs/run_<id>.md` (and `runs/run_<id>/` folders) that landed on main more
  than `[retention].runs` days ago, `timeline/YYYY-MM-DD.md` days older than
  `[retention].timeline` days, and closed loops closed more than `[retention].closed_loops`
  days ago leave the tree (they stay in history). A run's age comes from git, never from
  its content: it is old when it was already on main's first-parent history at the cutoff
  (the newest commit at least N days old), so an agent cannot keep a run alive by writing a
  date. With `--archive-branch`, removed files are first committed onto that branch (its
  own root history, never merged into main) under the same paths.
- rotation: `changelog.md` keeps its newest `[retention].changelog_entries` entries.
- overflow: an agent whose Layer 1 is over a HARD limit (a human edit, a lowered limit) is
  evicted exactly as apply would (apply/evict.py, nothing protected); what cannot be
  evicted (snapshot.md) is reported and the run exits 1.
- registry: `registry.json` rebuilt from every `agents/<slug>/_agent.md` (sorted by slug;
  runtime fields such as `last_run` kept from the old file), committed only when the
  agents differ.

Every commit is checked (MW4xx on its message, every policy on the files it leaves) before
main moves; a file that would fail is left alone and reported. Then main moves the way
apply moves it: with a remote, sync, push with a lease, retry from scratch when main moved;
then compare-and-swap locally. Running twice does nothing the second time.
"""

from __future__ import annotations

import datetime as _dt
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from memwarden.apply.apply import apply_identity
from memwarden.git.repo import Repo, Writer
from memwarden.model.config import Config, load_config, load_config_at
from memwarden.model.errors import MemwardenError
from memwarden.model.layout import AGENT_ID_RE, classify, timeline_date

SCOPES = ("retention", "rotation", "overflow", "registry")
RUN_LOOP_ID = "maintain"  # names the "run" in decisions written for frozen loops
RUNTIME_KEYS = ("last_run", "last_run_status", "pending_proposals")
STATUSES = ("draft", "active", "paused", "error", "archived")
SEMVER_RE = re.compile(r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(-[0-9A-Za-z.-]+)?"
                       r"(\+[0-9A-Za-z.-]+)?\Z")
BRANCH_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._/-]{0,200}\Z")


@dataclass
class Item:
    """One file a maintenance commit writes (None: removes), what its message says about
    it, and what it contributes to the JSON result."""

    path: str
    data: bytes | None
    listing: list[str]
    records: list[tuple[str, Any]] = field(default_factory=list)


@dataclass
class Step:
    scope: str
    subject: str
    intro: str
    items: list[Item]
    agent: str | None = None
    commit: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    def changes(self) -> dict[str, bytes | None]:
        return {i.path: i.data for i in self.items}

    def message(self) -> str:
        listing = [line for i in self.items for line in i.listing]
        trailers = ([f"Agent-Id: {self.agent}"] if self.agent else []) + [
            f"Memory-Maintenance: {self.scope}"]
        import textwrap

        intro = "\n\n".join(textwrap.fill(p, 72) for p in self.intro.split("\n\n"))
        body = intro + ("\n\n" + "\n".join(listing) if listing else "")
        return f"{self.subject}\n\n{body}\n\n" + "\n".join(trailers) + "\n"

    def to_json(self) -> dict[str, Any]:
        return {"scope": self.scope, "subject": self.subject, "commit": self.commit,
                "paths": sorted(i.path for i in self.items), **self.extra}


@dataclass
class MaintainResult:
    steps: list[Step] = field(default_factory=list)
    overflow: list[dict[str, Any]] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    archive: dict[str, Any] | None = None
    dry_run: bool = False
    pushed: bool = False

    @property
    def commits(self) -> list[str]:
        return [s.commit for s in self.steps]

    @property
    def exit_code(self) -> int:
        return 1 if self.problems else 0

    def to_json(self) -> dict[str, Any]:
        removed: dict[str, list[Any]] = {"runs": [], "timeline": [], "closed_loops": [],
                                         "changelog": []}
        for step in self.steps:
            for item in step.items:
                for key, value in item.records:
                    removed.setdefault(key, []).append(value)
        doc: dict[str, Any] = {
            "commits": self.commits, "steps": [s.to_json() for s in self.steps],
            "removed": removed, "registry": any(s.scope == "registry" for s in self.steps),
            "overflow": self.overflow, "archive": self.archive, "problems": self.problems,
            "warnings": self.warnings, "dryRun": self.dry_run, "pushed": self.pushed,
        }
        if not self.steps and not self.problems:
            doc["message"] = "nothing to do"
        return doc


# --- what is in the tree ----------------------------------------------------------------

@dataclass
class TreeIndex:
    """One walk over main's governed files: what maintain may act on."""

    agents: set[str] = field(default_factory=set)
    runs: dict[str, dict[str, list[str]]] = field(default_factory=dict)  # agent -> unit -> files
    timeline: dict[str, list[str]] = field(default_factory=dict)
    contracts: dict[str, str] = field(default_factory=dict)


def index_tree(repo: Repo, rev: str) -> TreeIndex:
    idx = TreeIndex()
    for entry in repo.tree_entries(rev):
        info = classify(entry.path)
        if info is None:
            continue
        if info.kind == "agent_contract" and info.agent:
            idx.contracts[info.agent] = info.path
        if info.area != "memory" or not info.agent or not AGENT_ID_RE.match(info.agent):
            continue
        idx.agents.add(info.agent)
        if info.kind == "run":
            parts = info.path.split("/")
            unit = "/".join(parts[:4])  # memory/<agent>/runs/run_<id>[.md]
            idx.runs.setdefault(info.agent, {}).setdefault(unit, []).append(info.path)
        elif info.kind == "timeline":
            idx.timeline.setdefault(info.agent, []).append(info.path)
    return idx


def cutoff_commit(repo: Repo, main: str, before: float) -> str | None:
    """The newest commit on main's first-parent history committed before `before`: what
    was on main then is older than the retention period (None: history is younger)."""
    for sha, _ in repo.first_parent_log(main):
        if repo.commit_time(sha) < before:
            return sha
    return None


# --- retention ----------------------------------------------------------------------------

def old_runs(repo: Repo, main: str, idx: TreeIndex, agents: Iterable[str],
             now: _dt.datetime, days: int) -> list[str]:
    """Files of runs that were on main more than `days` days ago (a run folder goes as a
    whole: it is one run)."""
    cut = cutoff_commit(repo, main, (now - _dt.timedelta(days=days)).timestamp())
    if cut is None:
        return []
    then = {e.path for e in repo.tree_entries(cut)}  # one walk, not a lookup per run
    out: list[str] = []
    for agent in sorted(agents):
        for _unit, files in sorted(idx.runs.get(agent, {}).items()):
            if any(p in then for p in files):
                out += sorted(files)
    return out


def old_timeline(idx: TreeIndex, agents: Iterable[str], today: _dt.date,
                 days: int) -> list[str]:
    out = []
    for agent in sorted(agents):
        for path in sorted(idx.timeline.get(agent, [])):
            try:
                day = _dt.date.fromisoformat(timeline_date(path) or "")
            except ValueError:
                continue  # not a real date: MW5xx/MW2xx say so; never guess an age
            if (today - day).days > days:
                out.append(path)
    return out


def expired_loops(text: str, today: _dt.date, days: int) -> list[Any]:
    """Closed loops closed more than `days` days ago, as apply/evict.py Evicted records.
    A closed loop without a readable date is kept (its age is unknown)."""
    from memwarden.apply.evict import Evicted
    from memwarden.model.entries import parse_loops
    from memwarden.model.memfile import split_lines

    out = []
    for lp in parse_loops(split_lines(text))[0]:
        if not lp.closed or not lp.closed_on:
            continue
        try:
            age = (today - _dt.date.fromisoformat(lp.closed_on)).days
        except ValueError:
            continue
        if age > days:
            out.append(Evicted("open_loops.md", lp.id, lp.text, "expired-loop",
                               (lp.line, lp.line)))
    return out


def _one_line(text: str, limit: int = 160) -> str:
    """An entry as one listing line: no line break can forge a trailer in the message."""
    return " ".join(text.split())[:limit]


def plan_retention(repo: Repo, config: Config, main: str, idx: TreeIndex, agents: list[str],
                   now: _dt.datetime) -> Step | None:
    from memwarden.apply.evict import remove_entries

    ret = config.data["retention"]
    items: list[Item] = []
    for path in old_runs(repo, main, idx, agents, now, ret["runs"]):
        items.append(Item(path, None, [f"- {path} (run on main for more than {ret['runs']} "
                                       "days)"], [("runs", path)]))
    for path in old_timeline(idx, agents, now.date(), ret["timeline"]):
        items.append(Item(path, None, [f"- {path} (timeline day older than "
                                       f"{ret['timeline']} days)"], [("timeline", path)]))
    for agent in sorted(agents):
        path = f"memory/{agent}/open_loops.md"
        data = repo.read_path(main, path)
        if data is None:
            continue
        text = data.decode("utf-8", "replace")
        gone = expired_loops(text, now.date(), ret["closed_loops"])
        if not gone:
            continue
        items.append(Item(path, remove_entries(text, "loops", gone).encode(),
                          [f"- {path} {e.id} ({e.reason}): {_one_line(e.entry)}"
                           for e in gone],
                          [("closed_loops", {"agent": agent, "id": e.id, "entry": e.entry})
                           for e in gone]))
    if not items:
        return None
    intro = (f"Removed from main by retention (runs {ret['runs']} days, timeline "
             f"{ret['timeline']} days, closed loops {ret['closed_loops']} days); they stay "
             "in git history.")
    return Step("retention", "memory-maintain: retention", intro, items)


# --- rotation -----------------------------------------------------------------------------

def rotate_changelog(text: str, keep: int) -> tuple[str, list[str]]:
    """The changelog with only its newest `keep` entries, and the dropped entries as
    `[day] heading` (apply/bookkeeping.py's rotation, without adding an entry)."""
    from memwarden.apply.bookkeeping import CHANGELOG_DAY, CHANGELOG_ENTRY, _keep_entries
    from memwarden.model.memfile import split_lines

    lines = split_lines(text)
    start = next((i for i, line in enumerate(lines) if CHANGELOG_DAY.match(line)), len(lines))
    head, body = lines[:start], lines[start:]
    dropped: list[str] = []
    day, seen = "", 0
    for line in body:
        m = CHANGELOG_DAY.match(line)
        if m:
            day = m.group(1)
        elif CHANGELOG_ENTRY.match(line):
            seen += 1
            if seen > keep:
                dropped.append(f"[{day}] {line[4:].strip()}")
    if not dropped:
        return text, []
    while head and not head[-1].strip():
        head.pop()
    kept = _keep_entries(body, keep)
    return "\n".join([*head, "", *kept]).rstrip("\n") + "\n", dropped


def plan_rotation(repo: Repo, config: Config, main: str, agents: list[str]) -> Step | None:
    keep = config.data["retention"]["changelog_entries"]
    items = []
    for agent in sorted(agents):
        path = f"memory/{agent}/changelog.md"
        data = repo.read_path(main, path)
        if data is None:
            continue
        new, dropped = rotate_changelog(data.decode("utf-8", "replace"), keep)
        if dropped:
            items.append(Item(path, new.encode(), [f"- {path} {_one_line(d)}" for d in dropped],
                              [("changelog", {"agent": agent, "entry": d}) for d in dropped]))
    if not items:
        return None
    return Step("rotation", "memory-maintain: rotation", f"Changelog entries beyond the newest "
                f"{keep} removed; they stay in git history.", items)


# --- registry -----------------------------------------------------------------------------

def _contract_entry(slug: str, data: bytes | None) -> tuple[dict[str, Any] | None, str]:
    """The registry entry an `_agent.md` declares, or why it cannot give one."""
    from memwarden.model.memfile import parse_frontmatter, split_lines

    path = f"agents/{slug}/_agent.md"
    if not AGENT_ID_RE.match(slug):
        return None, f"{path}: {slug!r} is not a valid agent slug"
    try:
        text = (data or b"").decode("utf-8-sig")
    except UnicodeDecodeError:
        return None, f"{path}: not valid UTF-8"
    fm = parse_frontmatter(split_lines(text))
    front = fm.data if fm is not None and fm.error is None else None
    if not isinstance(front, dict):
        return None, f"{path}: no readable YAML frontmatter (see `memwarden check {path}`)"
    entry: dict[str, Any] = {"slug": slug}
    for key in ("name", "status", "version"):
        value = front.get(key)
        ok = isinstance(value, str) and value.strip() and (
            key != "status" or value in STATUSES) and (
            key != "version" or SEMVER_RE.match(value))
        if not ok:
            return None, f"{path}: {key} is missing or invalid ({value!r})"
        entry[key] = value
    for key in ("description", "model"):
        value = front.get(key)
        if isinstance(value, str) and value.strip():
            entry[key] = value
    return entry, ""


def build_registry(repo: Repo, main: str, idx: TreeIndex, now: _dt.datetime
                   ) -> tuple[bytes | None, dict[str, list[str]], list[str]]:
    """The rebuilt registry.json (None: unchanged or cannot be built), what changed, and
    problems. Runtime fields of kept agents (last_run, ...) survive the rebuild."""
    old_raw = repo.read_path(main, "registry.json")
    old: dict[str, Any] = {}
    if old_raw is not None:
        try:
            value = json.loads(old_raw.decode("utf-8-sig"))
            old = value if isinstance(value, dict) else {}
        except ValueError:
            old = {}
    old_agents = {a["slug"]: a for a in old.get("agents", []) if isinstance(a, dict) and
                  isinstance(a.get("slug"), str)} if isinstance(old.get("agents"), list) else {}
    if old_raw is None and not idx.contracts:
        return None, {}, []
    agents, problems = [], []
    for slug, path in sorted(idx.contracts.items()):
        entry, problem = _contract_entry(slug, repo.read_path(main, path))
        if entry is None:
            problems.append(f"registry not rebuilt: {problem}")
            continue
        for key in RUNTIME_KEYS:
            if key in old_agents.get(slug, {}):
                entry[key] = old_agents[slug][key]
        agents.append(entry)
    if problems:
        return None, {}, problems
    version = old.get("version") if isinstance(old.get("version"), (str, int)) and \
        not isinstance(old.get("version"), bool) else "1"
    doc = {"version": version, "agents": agents}
    if {k: v for k, v in old.items() if k != "updated_at"} == doc:
        return None, {}, []
    new_slugs = {a["slug"] for a in agents}
    changed = {
        "added": sorted(new_slugs - set(old_agents)),
        "removed": sorted(set(old_agents) - new_slugs),
        "updated": sorted(a["slug"] for a in agents if a["slug"] in old_agents and
                          old_agents[a["slug"]] != a),
    }
    doc = {"version": version, "updated_at": now.strftime("%Y-%m-%dT%H:%M:%SZ"),
           "agents": agents}
    return (json.dumps(doc, ensure_ascii=False, indent=2) + "\n").encode(), changed, []


def plan_registry(repo: Repo, main: str, idx: TreeIndex, now: _dt.datetime
                  ) -> tuple[Step | None, list[str]]:
    data, changed, problems = build_registry(repo, main, idx, now)
    if data is None:
        return None, problems
    listing = [f"- {what} {slug}" for what in ("added", "removed", "updated")
               for slug in changed[what]] or ["- rewritten (invalid or differently shaped)"]
    step = Step("registry", "memory-maintain: registry", "registry.json rebuilt from "
                "agents/*/_agent.md (the source of truth; registry.json is a cache).",
                [Item("registry.json", data, listing)], extra={"agents": changed})
    return step, []


# --- overflow -----------------------------------------------------------------------------

def plan_overflow(repo: Repo, config: Config, parent: str, agent: str, now: _dt.datetime
                  ) -> tuple[str, list[Step]]:
    """Why the agent is over a HARD limit ("" when within) and the eviction steps apply
    would take with no proposal in flight (nothing protected)."""
    from memwarden.apply import evict

    files = evict.agent_files(repo, parent, agent, {})
    reason = evict.overflow(config, agent, files)
    if not reason:
        return "", []
    plan = evict.plan_eviction(repo, config, parent, parent, parent, agent, RUN_LOOP_ID,
                               files, now)
    if plan is None:
        return reason, []
    steps = []
    for _, changes in plan.commits:
        kind = "open_loops" if f"memory/{agent}/open_loops.md" in changes else "facts"
        name = f"{kind}.md"
        out = [e for e in plan.evicted if e.file == name]
        items = []
        for path, data in sorted(changes.items()):
            listing = [f"- {path} {e.id} ({e.reason}): {_one_line(e.entry)}" for e in out] \
                if path.endswith("/" + name) else []
            items.append(Item(path, data, listing))
        steps.append(Step("overflow", f"memory-maintain: overflow / {agent} / {kind}",
                          f"Moved out of Layer 1 to bring {agent} back within its HARD limits "
                          f"({reason}); they stay in git history.", items, agent=agent,
                          extra={"evicted": [e.to_json() for e in out]}))
    return reason, steps


# --- building and checking commits ----------------------------------------------------------

def commit_errors(repo: Repo, config: Config, sha: str, present: list[str],
                  today: _dt.date) -> list[Any]:
    """What `check-commits` / `verify-history` would report as errors on this commit
    (`present`: the files it writes; the ones it removes have nothing to check)."""
    from memwarden.git.source import TreeSource
    from memwarden.policies.engine import check
    from memwarden.policies.rules.commits import CommitInfo, check_commit, decode_message

    info = repo.commit_info(sha)
    text, findings = decode_message(info["raw_message"], sha[:12])
    if text is not None:
        findings += check_commit(CommitInfo(text, info["touched"], sha[:12]))
    if present:
        findings += check(TreeSource(repo, sha), config, present, cache_dir=repo.cache_dir,
                          today=today).findings
    return [f for f in findings if f.severity == "error" and not f.waived]


def commit_step(repo: Repo, config: Config, step: Step, parent: str, now: _dt.datetime,
                problems: list[str]) -> str | None:
    """Build the step's commit on `parent`; a file that would fail a policy is left out
    (and reported) rather than landing a commit that breaks verify-history."""
    who = apply_identity(config)
    for _ in range(len(step.items) + 1):
        if not step.items:
            return None
        sha = Writer(repo).commit_changes(parent, step.changes(), step.message(), who, who,
                                          int(now.timestamp()))
        written = sorted(i.path for i in step.items if i.data is not None)
        errors = commit_errors(repo, config, sha, written, now.date())
        if not errors:
            step.commit = sha
            return sha
        bad = {f.path for f in errors}
        keep = [i for i in step.items if i.path not in bad]
        if len(keep) == len(step.items):
            break
        for f in errors:
            if f.path in bad and any(i.path == f.path for i in step.items):
                problems.append(f"{step.scope}: {f.path} left unchanged: it would fail "
                                f"{f.rule} ({f.message}); fix it and run maintain again")
        step.items = keep
    first = errors[0]
    problems.append(f"{step.scope}: skipped: the commit would fail {first.rule} "
                    f"({first.path}: {first.message})")
    return None


def build(repo: Repo, config: Config, main: str, now: _dt.datetime,
          agents: list[str] | None, archive_tip: tuple[str, str | None] | None,
          result: MaintainResult) -> str:
    """Every maintenance commit on top of `main` (no ref moves); returns the new tip."""
    idx = index_tree(repo, main)
    if agents is not None:
        missing = sorted(set(agents) - idx.agents)
        if missing:
            raise MemwardenError(f"--agent {', '.join(missing)}: no memory/<agent>/ on main")
    chosen = sorted(idx.agents if agents is None else set(agents))
    parent = main
    retention = plan_retention(repo, config, main, idx, chosen, now)
    if retention is not None and archive_tip is not None:
        result.archive = archive_removed(repo, config, main, retention, archive_tip, now)
        if result.archive and result.archive.get("commit"):
            retention.intro += (f"\n\nArchived files are on branch {result.archive['branch']} "
                                f"({result.archive['commit']}).")
    for step in (retention, plan_rotation(repo, config, main, chosen)):
        if step is not None and commit_step(repo, config, step, parent, now, result.problems):
            parent = step.commit
            result.steps.append(step)
    if retention is None or not retention.commit:
        result.archive = None  # nothing left main: nothing to archive
    for agent in chosen:
        parent = _overflow_agent(repo, config, parent, agent, now, result)
    if agents is None:
        step, problems = plan_registry(repo, parent, idx, now)
        result.problems += problems
        if step is not None and commit_step(repo, config, step, parent, now, result.problems):
            parent = step.commit
            result.steps.append(step)
    return parent


def _overflow_agent(repo: Repo, config: Config, parent: str, agent: str, now: _dt.datetime,
                    result: MaintainResult) -> str:
    from memwarden.apply import evict

    reason, steps = plan_overflow(repo, config, parent, agent, now)
    if not reason:
        return parent
    done: list[Step] = []
    tip = parent
    for step in steps:
        wanted = list(step.items)
        if not commit_step(repo, config, step, tip, now, result.problems) or \
                step.items != wanted:
            done = []  # all of an agent's eviction or none of it
            tip = parent
            break
        tip = step.commit
        done.append(step)
    remaining = evict.overflow(config, agent, evict.agent_files(repo, tip, agent, {}))
    if remaining:
        result.problems.append(f"overflow: {agent}: still over after eviction: {remaining} "
                               "(snapshot.md is never evicted; shrink it by a proposal or a "
                               "human edit)")
    result.steps += done
    result.overflow.append({"agent": agent, "reason": reason, "commits": [s.commit for s in
                            done], "evicted": [e for s in done for e in s.extra["evicted"]],
                            "remaining": remaining})
    return tip


# --- the archive branch ---------------------------------------------------------------------

def archive_removed(repo: Repo, config: Config, main: str, retention: Step,
                    tip: tuple[str, str | None], now: _dt.datetime) -> dict[str, Any]:
    """Commit the files retention removes onto the archive branch (same paths; a root
    commit when the branch is new). Files already there with the same content add
    nothing, so a retry does not stack empty commits."""
    branch, parent = tip
    files = {}
    for item in retention.items:
        if item.data is None:
            data = repo.read_path(main, item.path)
            if data is not None and (parent is None or repo.read_path(parent, item.path)
                                     != data):
                files[item.path] = data
    doc: dict[str, Any] = {"branch": branch, "commit": parent, "old": parent, "files":
                           sorted(files)}
    if not files:
        return doc
    who = apply_identity(config)
    message = (f"memory-maintain: retention\n\nArchived from {config.data['main_branch']} "
               f"{main} before retention removes them there:\n\n"
               + "\n".join(f"- {p}" for p in sorted(files))
               + "\n\nMemory-Maintenance: retention\n")
    doc["commit"] = Writer(repo).commit_changes(parent, files, message, who, who,
                                                int(now.timestamp()))
    return doc


def check_branch_name(name: str, config: Config) -> str:
    bad = (not BRANCH_RE.match(name) or ".." in name or "//" in name or name.endswith(("/",
           ".lock", ".")) or "/." in name or "@{" in name)
    if bad:
        raise MemwardenError(f"--archive-branch {name!r}: not a usable branch name")
    if name == config.data["main_branch"] or name.startswith(config.data["proposal_prefix"]):
        raise MemwardenError(f"--archive-branch {name!r}: must not be the main branch or a "
                             "proposal branch")
    return f"refs/heads/{name}"


def _sync_archive(repo: Repo, ref: str, remote: str | None) -> tuple[str | None, str | None]:
    """(local tip to build on, what the remote has: the push lease)."""
    local = repo.ref_target(ref)
    if remote is None:
        return local, local
    there = repo.fetch_ref(remote, ref)
    if there is None or there == local:
        return local, there
    if local is None or repo.is_ancestor(local, there):
        if not repo.compare_and_swap(ref, there, local or "0" * 40):
            raise MemwardenError(f"{ref} moved locally while maintain was syncing it")
        return there, there
    if repo.is_ancestor(there, local):
        return local, there
    raise MemwardenError(f"{ref}: local and {remote} have diverged; reconcile the archive "
                         "branch first")


# --- the run ---------------------------------------------------------------------------------

def resolve_main(repo: Repo, explicit: str | None) -> tuple[str, str, Config]:
    """(main ref, its commit, the policy main declares — or the explicit config)."""
    if (repo.git_dir / "shallow").is_file():
        raise MemwardenError("maintain needs the full history of main to age files; this "
                             "clone is shallow (fetch-depth: 0 needed, or git fetch "
                             "--unshallow)")
    name = load_config(explicit, None).data["main_branch"]
    ref = f"refs/heads/{name}"
    sha = repo.ref_target(ref)
    if sha is None:
        raise MemwardenError(f"{ref} does not exist")
    config = load_config_at(repo, sha, explicit)
    if config.data["main_branch"] != name:
        ref = f"refs/heads/{config.data['main_branch']}"
        sha = repo.ref_target(ref)
        if sha is None:
            raise MemwardenError(f"{ref} (main_branch in {name}:memwarden.toml) does not exist")
    return ref, sha, config


def maintain(repo: Repo, now: _dt.datetime, explicit: str | None = None,
             dry_run: bool = False, remote: str | None = None, archive: str | None = None,
             agents: list[str] | None = None, attempts: int = 5) -> MaintainResult:
    """Plan, build and land the maintenance commits; bounded retries when main moves."""
    import random
    import time

    from memwarden.apply.apply import sync_main

    for agent in agents or []:
        if not AGENT_ID_RE.match(agent):
            raise MemwardenError(f"--agent {agent!r}: not an agent id")
    result = MaintainResult(dry_run=dry_run)
    for attempt in range(attempts):
        main_ref, main, config = resolve_main(repo, explicit)
        if remote is not None and not dry_run:
            sync_main(repo, config, remote)
            main_ref, main, config = resolve_main(repo, explicit)
        arch_ref = check_branch_name(archive, config) if archive else None
        lease: str | None = None
        tip = None
        if arch_ref:
            local, lease = _sync_archive(repo, arch_ref, None if dry_run else remote)
            tip = (arch_ref[len("refs/heads/"):], local)
        result = MaintainResult(dry_run=dry_run)
        new = build(repo, config, main, now, agents, tip, result)
        if dry_run or new == main:
            return result
        outcome = _land(repo, result, main_ref, main, new, arch_ref, lease, remote)
        if outcome != "retry":
            return result
        if attempt < attempts - 1:
            time.sleep(random.uniform(0.05, 0.2) * (attempt + 1))
    result.problems.append(f"main kept moving{' on ' + remote if remote else ''}; gave up "
                           f"after {attempts} attempts (nothing landed on main)")
    for step in result.steps:
        step.commit = ""
    result.steps = []
    return result


def _land(repo: Repo, result: MaintainResult, main_ref: str, main: str, new: str,
          arch_ref: str | None, lease: str | None, remote: str | None) -> str:
    """Archive first, then main (with a remote: push with leases, then the local refs).
    Returns "ok", "retry" (main moved) or "failed" (recorded in result.problems)."""
    from memwarden.apply.apply import LocalEdits, check_local_main, move_local_main

    arch = result.archive
    arch_new = arch["commit"] if arch and arch["commit"] != arch["old"] else None
    try:  # before anything moves or is pushed: the checked-out files must be able to follow
        check_local_main(repo, main_ref, main, new)
    except LocalEdits as exc:
        result.problems.append(str(exc))
        return "failed"
    try:
        if remote is not None:
            if arch_ref and arch_new and not repo.push_with_lease(remote, arch_new, arch_ref,
                                                                  lease):
                return "retry"
            if not repo.push_with_lease(remote, new, main_ref, main):
                return "retry"
            result.pushed = True
    except MemwardenError as exc:
        result.problems.append(f"push refused: {exc}")
        return "failed"
    if arch_ref and arch_new and not repo.compare_and_swap(arch_ref, arch_new,
                                                           arch["old"] or "0" * 40):
        result.problems.append(f"{arch_ref} moved during maintain; archive commit {arch_new} "
                               "not recorded locally")
    try:
        moved = move_local_main(repo, main_ref, new, main)
    except LocalEdits as exc:  # edited after the check above
        result.problems.append(str(exc))
        return "failed"
    if moved is None:
        if remote is None:
            return "retry"
        result.problems.append(f"{main_ref} moved locally after the push; run "
                               "`git fetch` to catch up")
        return "failed"
    if moved:
        result.warnings.append(moved)
    return "ok"
