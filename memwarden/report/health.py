"""The data behind `memwarden report`: how the memory on main is doing over a range.

Everything comes from git and is deterministic for a commit and a range: the first-parent
history of main (applied proposals by their `Applied-Proposal` trailer, eviction and
maintenance commits with their listings, the token counts of the meta.json apply wrote, the
tree's size), the Layer 1 state at the commit, the policy's waivers, and the proposal
branches with their lifecycle notes (pending ones, and the rejected ones with reasons). The
clock is the commit's own time, never the wall clock. Summaries of commits, of the notes
and of gate decisions are cached by object id under `.git/memwarden/report-cache/`, so a
report over history already seen reads git only for what is new.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from memwarden.apply import lifecycle
from memwarden.git.repo import Repo
from memwarden.model.config import Config, load_config_at
from memwarden.model.errors import MemwardenError
from memwarden.model.layout import AGENT_ID_RE, LAYER1
from memwarden.model.times import iso_utc
from memwarden.report.history import HistoryCache, history, tokens_of, trailers_of

SCHEMA_ID = "https://memwarden.invalid/schemas/report.schema.json"
DEFAULT_DAYS = 30
WARN_RATIO = 0.9  # the line drawn on every budget bar
WAIVER_SOON_DAYS = 30
LOOP_WINDOW = 10  # an agent's most recent applies looked at for an eviction loop
LOOP_MIN_APPLIES = 3
GATE_MAX = 50  # pending proposals without a recorded decision gated per report (oldest)
EVICTED_LIST_MAX = 500  # entries listed in full; the rest are counted and named by command
DAY = 86400


def iso(ts: int | float) -> str:
    return iso_utc(ts)


def parse_iso(text: str) -> int | None:
    try:
        when = _dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except (ValueError, AttributeError):
        return None
    return int((when if when.tzinfo else when.replace(tzinfo=_dt.UTC)).timestamp())


def _cache(repo: Repo, use_cache: bool) -> HistoryCache:
    return HistoryCache(repo.cache_dir / "report-cache" if use_cache else None)


# ------------------------------------------------------------------------ Layer 1 state


def _agent_files(repo: Repo, at: str) -> dict[str, dict[str, str]]:
    """agent -> {file name: blob id} for meta.json and the Layer 1 files at `at`."""
    wanted = {*LAYER1, "meta.json"}
    out: dict[str, dict[str, str]] = defaultdict(dict)
    for e in repo.tree_entries(at):
        parts = e.path.split("/")
        if len(parts) >= 3 and parts[0] == "memory" and AGENT_ID_RE.match(parts[1]):
            out[parts[1]]  # an agent is any memory/<id>/ folder, whatever it holds
            if len(parts) == 3 and parts[2] in wanted and e.mode != 0o160000:
                out[parts[1]][parts[2]] = e.oid
    return dict(out)


def agent_state(repo: Repo, config: Config, at: str) -> list[dict[str, Any]]:
    """Each agent's Layer 1 tokens at `at` against its HARD limits. Counts come from the
    meta.json apply wrote when its layer1Hash matches the files; otherwise (a human edit
    since, or no meta.json) they are counted from the files with the tokenizer."""
    from memwarden.tokens.counter import TokenCounter

    counter: TokenCounter | None = None
    out = []
    for agent, files in sorted(_agent_files(repo, at).items()):
        meta_doc: dict[str, Any] = {}
        if "meta.json" in files:
            try:
                loaded = json.loads(repo.read_blob(files["meta.json"]))
                meta_doc = loaded if isinstance(loaded, dict) else {}
            except ValueError:
                meta_doc = {}
        tokens = tokens_of(meta_doc)
        texts = {name: repo.read_blob(files[name]).decode("utf-8", "replace")
                 if name in files else "" for name in LAYER1}
        digest = "sha256:" + hashlib.sha256("".join(texts[n] for n in LAYER1)
                                            .encode("utf-8")).hexdigest()
        recorded = meta_doc.get("layer1Hash")
        if tokens is not None and recorded == digest:
            source = "meta.json"
        elif tokens is not None and recorded is None:
            source = "meta.json (no layer1Hash to verify)"
        else:
            if counter is None:
                counter = TokenCounter(config.encoding, repo.cache_dir)
            tokens = {key: counter.count(files[name], texts[name]) if name in files else 0
                      for name, key in LAYER1.items()}
            tokens["version"] = meta_doc.get("version") if isinstance(
                meta_doc.get("version"), int) else None
            source = "counted" + (" (meta.json is stale)" if recorded else "")
        layer = {key: {"tokens": tokens[key], "limit": config.limit(key, agent)}
                 for key in LAYER1.values()}
        total = sum(v["tokens"] for v in layer.values())
        layer["layer1_total"] = {"tokens": total, "limit": config.limit("layer1_total", agent)}
        for v in layer.values():
            v["ratio"] = round(v["tokens"] / v["limit"], 4) if v["limit"] else None
        out.append({"agentId": agent, "version": tokens.get("version"), "source": source,
                    "files": sorted(n for n in LAYER1 if n in files), "layer1": layer})
    if counter is not None:
        counter.save()
    return out


# ------------------------------------------------------------------------ proposals


def _note_summary(events: list[dict[str, Any]]) -> dict[str, Any]:
    first, last = events[0], events[-1]
    decision = next((e["state"] for e in reversed(events)
                     if e["state"] in ("auto_approved", "needs_human_review")), None)
    doc = {"proposalId": first.get("proposalId"), "agentId": first.get("agentId"),
           "runId": first.get("runId"), "created": events[0].get("at"),
           "state": last["state"], "decision": decision, "at": last.get("at")}
    for key in ("reason", "resolution", "message", "by"):
        if last.get(key):
            doc[key] = last[key]
    return doc


def notes_summary(repo: Repo, cache: HistoryCache) -> dict[str, dict[str, Any]]:
    """head commit -> its lifecycle summary, for every note; only notes that changed since
    the cached notes commit are read again."""
    tip = repo.ref_target(lifecycle.NOTES_REF)
    if tip is None:
        return {}
    known = cache.extra.get("notes")
    if isinstance(known, dict) and known.get("tip") == tip:
        return known["heads"]
    if isinstance(known, dict) and known.get("tip") and repo.is_ancestor(known["tip"], tip):
        heads = dict(known["heads"])
        paths = repo.changed_paths(known["tip"], tip)
    else:
        heads = {}
        paths = [e.path for e in repo.tree_entries(tip, everything=True)]
    for path in paths:
        head = path.replace("/", "")
        data = repo.read_path(tip, path)
        events = lifecycle.parse_note(data or b"")
        if events:
            heads[head] = _note_summary(events)
        else:
            heads.pop(head, None)
    cache.extra["notes"] = {"tip": tip, "heads": heads}
    cache.dirty = True
    return heads


def _proposal_head(repo: Repo, tip: str, notes: dict[str, Any]) -> str:
    if tip in notes:
        return tip
    return trailers_of(repo.commit_message(tip).decode("utf-8", "replace")).get(
        "proposal-head", tip)


def _gate_decision(repo: Repo, branch: str, head: str, at: str, today: _dt.date,
                   cache: HistoryCache) -> str:
    """What `memwarden gate` decides for a proposal that has no recorded decision (cached
    by head and base: the gate is a function of both)."""
    from memwarden.apply.gate import gate

    gates = cache.extra.setdefault("gates", {})
    key = f"{head}:{at}"
    if key not in gates:
        try:
            gates[key] = gate(repo, branch, at, today=today, preview=False,
                              disk_cache=False).extra()["decision"]
        except MemwardenError as exc:
            gates[key] = f"error: {exc}"
        cache.dirty = True
    return gates[key]


def proposals(repo: Repo, config: Config, at: str, at_time: int, since: int,
              applied_ids: set[str], cache: HistoryCache, gate_pending: bool
              ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(pending proposal branches with age and gate decision, proposals rejected since
    `since` with their reasons), as the branches and lifecycle notes are now."""
    notes = notes_summary(repo, cache)
    prefix = "refs/heads/" + config.data["proposal_prefix"]
    today = _dt.datetime.fromtimestamp(at_time, _dt.UTC).date()
    waiting = []
    for ref in repo.refs(prefix):
        tip = repo.ref_target(ref)
        if tip is None:
            continue
        head = _proposal_head(repo, tip, notes)
        note = notes.get(head, {})
        pid = ref.rsplit("/", 1)[-1]
        state = note.get("state", "pending")
        if state in lifecycle.TERMINAL or pid in applied_ids or head != tip:
            continue  # landed (apply moves a pushed branch to the commit that landed)
        waiting.append((ref, head, pid, state, note, repo.commit_time(head)))
    # Branches and notes are not part of the commit: ages are taken at the latest of the
    # commit's time, the newest proposal and the newest lifecycle event (their own clocks,
    # never the notes commit's wall-clock time), so a proposal made after main last moved
    # does not look 0 days old forever.
    clock = max([at_time, *(w[5] for w in waiting),
                 *(parse_iso(n.get("at") or "") or 0 for n in notes.values())])
    waiting.sort(key=lambda w: (w[5], w[2]))
    pending = []
    gated = 0
    for ref, head, pid, state, note, created in waiting:
        decision = note.get("decision")
        decided_by = "lifecycle notes" if decision else None
        if decision is None and gate_pending and gated < GATE_MAX:
            decision, decided_by = _gate_decision(repo, ref, head, at, today, cache), "gate"
            gated += 1
        pending.append({
            "proposalId": pid, "agentId": ref[len(prefix):].split("/", 1)[0],
            "branch": ref[len("refs/heads/"):], "head": head, "state": state,
            "created": iso(created), "ageDays": round(max(0, clock - created) / DAY, 1),
            "decision": decision, "decisionSource": decided_by,
            "command": f"memwarden status {pid}"})
    pending.sort(key=lambda p: (p["created"], p["proposalId"]))
    rejected = []
    for head, note in notes.items():
        when = parse_iso(note.get("at") or "")
        if note["state"] != "rejected" or when is None or when < since:
            continue
        rejected.append({"proposalId": note.get("proposalId"), "agentId": note.get("agentId"),
                         "head": head, "at": note.get("at"),
                         "reason": note.get("reason", "unknown"),
                         "resolution": note.get("resolution"), "message": note.get("message"),
                         "by": note.get("by"),
                         "command": f"memwarden status {note.get('proposalId')}"})
    rejected.sort(key=lambda r: (r["at"], r["proposalId"] or ""), reverse=True)
    return pending, rejected


# ------------------------------------------------------------------------ history facts


def _week_start(ts: int) -> _dt.date:
    day = _dt.datetime.fromtimestamp(ts, _dt.UTC).date()
    return day - _dt.timedelta(days=day.weekday())


def evictions(commits: list[dict[str, Any]], since: int, at_time: int
              ) -> dict[str, Any]:
    """Evicted entries per ISO week (Monday first) and the newest entries themselves."""
    weeks: dict[_dt.date, dict[str, Any]] = {}
    day = _week_start(since)
    while day <= _week_start(at_time):
        weeks[day] = {"week": day.isocalendar().week, "start": day.isoformat(),
                      "entries": 0, "commits": 0, "agents": Counter()}
        day += _dt.timedelta(days=7)
    entries: list[dict[str, Any]] = []
    for c in commits:
        if c["kind"] not in ("evict", "maintain") or not c.get("evicted"):
            continue
        w = weeks[_week_start(c["time"])]
        w["entries"] += len(c["evicted"])
        w["commits"] += 1
        w["agents"][c["agent"]] += len(c["evicted"])
        for e in c["evicted"]:
            entries.append({"agentId": c["agent"], "commit": c["id"], "date": iso(c["time"]),
                            "kind": c["kind"], **e})
    out_weeks = []
    for w in weeks.values():
        top = sorted(w["agents"].items(), key=lambda kv: (-kv[1], kv[0]))
        out_weeks.append({**w, "year": _dt.date.fromisoformat(w["start"]).isocalendar().year,
                          "agents": [{"agentId": a, "entries": n} for a, n in top]})
    entries.reverse()  # newest first
    return {"total": len(entries), "commits": sum(w["commits"] for w in out_weeks),
            "weeks": out_weeks, "entries": entries[:EVICTED_LIST_MAX],
            "omitted": max(0, len(entries) - EVICTED_LIST_MAX)}


def applies(commits: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """agent -> its applied proposals in the range, oldest first, each marked with whether
    eviction commits of that agent came right before it (apply evicts first)."""
    out: dict[str, list[dict[str, Any]]] = defaultdict(list)
    evicted_for: dict[str, int] = {}
    for c in commits:
        agent = c.get("agent")
        if c["kind"] == "evict" and agent:
            evicted_for[agent] = evicted_for.get(agent, 0) + len(c.get("evicted", []))
        elif c["kind"] == "apply" and agent:
            out[agent].append({"commit": c["id"], "time": c["time"],
                               "proposalId": c.get("proposalId"),
                               "evicted": evicted_for.pop(agent, 0)})
    return out


def eviction_loops(by_agent: dict[str, list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """Agents that evicted in most of their recent applies: memory that only fits by
    throwing something out every run, which an operator should look at."""
    loops = []
    for agent, runs in by_agent.items():
        recent = runs[-LOOP_WINDOW:]
        evicting = sum(1 for r in recent if r["evicted"])
        if len(recent) >= LOOP_MIN_APPLIES and evicting * 2 > len(recent):
            loops.append({"agentId": agent, "applies": len(recent), "evictingApplies": evicting,
                          "evictedEntries": sum(r["evicted"] for r in recent),
                          "share": round(evicting / len(recent), 3),
                          "command": f"memwarden evicted {agent}"})
    loops.sort(key=lambda x: (-x["share"], -x["evictedEntries"], x["agentId"]))
    return loops


def size_series(chain: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The tree's size after the last commit of each day (the range's baseline first)."""
    by_day: dict[str, dict[str, Any]] = {}
    for c in chain:
        by_day[iso(c["time"])[:10]] = {"date": iso(c["time"])[:10], "commit": c["id"],
                                       "bytes": c["size"], "files": c["files"]}
    return list(by_day.values())


def waivers(config: Config, at_time: int) -> list[dict[str, Any]]:
    today = _dt.datetime.fromtimestamp(at_time, _dt.UTC).date()
    out = []
    for w in config.data.get("waivers", []):
        try:
            left = (_dt.date.fromisoformat(str(w["expires"])) - today).days
        except ValueError:
            continue
        state = "expired" if left < 0 else "expiring" if left <= WAIVER_SOON_DAYS else "active"
        out.append({"rule": w["rule"], "path": w["path"], "expires": str(w["expires"]),
                    "daysLeft": left, "state": state, "reason": w["reason"],
                    "fingerprint": w["fingerprint"]})
    out.sort(key=lambda w: (w["expires"], w["path"], w["rule"]))
    return out


def findings_summary(repo: Repo, config: Config, at: str, at_time: int) -> dict[str, Any]:
    """`memwarden check --rev <at>`'s counts (every rule; its own per-blob caches)."""
    from memwarden.git.source import TreeSource
    from memwarden.policies.engine import check

    today = _dt.datetime.fromtimestamp(at_time, _dt.UTC).date()
    result = check(TreeSource(repo, at), config, cache_dir=repo.cache_dir, today=today)
    errors = warnings = waived = 0
    rules: Counter[str] = Counter()
    for f in result.findings:
        if f.waived:
            waived += 1
            continue
        rules[f.rule] += 1
        if f.severity == "error":
            errors += 1
        else:
            warnings += 1
    return {"errors": errors, "warnings": warnings, "waived": waived, "files": result.files,
            "byRule": [{"rule": r, "count": n} for r, n in sorted(rules.items())],
            "command": f"memwarden check --rev {at[:12]}"}


# ------------------------------------------------------------------------ the document


def build(repo: Repo, at_rev: str | None = None, since: int | None = None,
          config_path: str | None = None, use_cache: bool = True,
          with_findings: bool = True, gate_pending: bool = True) -> dict[str, Any]:
    """The report document (validates against schemas/report.schema.json)."""
    main_name = load_config_at(repo, None, config_path).data["main_branch"]
    rev = at_rev or f"refs/heads/{main_name}"
    try:
        at = repo.resolve_commit(rev)
    except MemwardenError:
        raise MemwardenError(f"report: --at {rev}: not a commit in {repo.git_dir}") from None
    config = load_config_at(repo, at, config_path)
    at_time = repo.commit_time(at)
    if since is None:
        since = at_time - DEFAULT_DAYS * DAY
    if since > at_time:
        raise MemwardenError(f"--since {iso(since)} is after the --at commit's time "
                             f"{iso(at_time)}: the range is empty")
    cache = _cache(repo, use_cache)
    chain = history(repo, at, since, cache)
    commits = [c for c in chain if c["time"] >= since]
    by_agent = applies(commits)
    applied_ids = {c["proposalId"] for c in commits if c["kind"] == "apply"}
    key = f"{at}:{config.fingerprint}"  # limits come from the config
    state = cache.extra.get("state", {}).get(key)
    if state is None:
        state = agent_state(repo, config, at)
        cache.extra["state"] = {key: state}  # one commit's only: the next report is newer
        cache.dirty = True
    pending, rejected = proposals(repo, config, at, at_time, since, applied_ids, cache,
                                  gate_pending)
    ev = evictions(commits, since, at_time)
    since_day = iso(since)[:10]
    trends: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for c in commits:
        if c["kind"] == "apply":
            for agent, m in c.get("meta", {}).items():
                trends[agent].append({"date": iso(c["time"]), "commit": c["id"],
                                      "tokens": m["snapshot"] + m["facts"] + m["open_loops"]})
    agents = []
    for a in state:
        runs = by_agent.get(a["agentId"], [])
        trend = trends.get(a["agentId"], [])
        agents.append({**a, "applies": len(runs),
                       "evictingApplies": sum(1 for r in runs if r["evicted"]),
                       "evicted": sum(r["evicted"] for r in runs), "trend": trend,
                       "commands": {
                           "tokens": f"git show {at[:12]}:memory/{a['agentId']}/meta.json",
                           "read": f"memwarden read {a['agentId']} --mode wide --at "
                                   f"{at[:12]}",
                           "evicted": f"memwarden evicted {a['agentId']} --since "
                                      f"{since_day}"}})
    agents.sort(key=lambda a: (-max(v["ratio"] or 0 for v in a["layer1"].values()),
                               a["agentId"]))  # nearest to any of its limits first
    findings = None
    if with_findings:  # a function of the commit and the policy: cached like the state
        findings = cache.extra.get("findings", {}).get(key)
        if findings is None:
            findings = findings_summary(repo, config, at, at_time)
            cache.extra["findings"] = {key: findings}
            cache.dirty = True
    loops = eviction_loops(by_agent)
    ws = waivers(config, at_time)
    cache.save()
    applied_count = sum(1 for c in commits if c["kind"] == "apply")
    return {
        "$schema": SCHEMA_ID,
        "reportVersion": 1,
        "at": {"rev": rev, "commit": at, "time": iso(at_time), "mainBranch": main_name},
        "range": {"since": iso(since), "until": iso(at_time), "commits": len(commits),
                  "command": f"git log --first-parent --since={iso(since)} {at[:12]}"},
        "encoding": config.encoding,
        "warnRatio": WARN_RATIO,
        "summary": {
            "agents": len(agents),
            "applied": applied_count,
            "pending": len(pending),
            "rejected": len(rejected),
            "evictedEntries": ev["total"],
            "evictionCommits": ev["commits"],
            "evictionLoops": len(loops),
            "agentsOverWarn": sum(1 for a in agents if any(
                (v["ratio"] or 0) >= WARN_RATIO for v in a["layer1"].values())),
            "agentsOverLimit": sum(1 for a in agents if any(
                (v["ratio"] or 0) > 1 for v in a["layer1"].values())),
            "waiversExpiring": sum(1 for w in ws if w["state"] != "active"),
            "findings": None if findings is None else {
                k: findings[k] for k in ("errors", "warnings", "waived")},
        },
        "agents": agents,
        "evictions": ev,
        "evictionLoops": loops,
        "pending": pending,
        "rejected": rejected,
        "waivers": ws,
        "repoSize": size_series(chain),
        "findings": findings,
        "commands": {
            "applied": f"git log --first-parent --grep=Applied-Proposal --since={since_day} "
                       f"{at[:12]}",
            "pending": "memwarden status --format json",
            "rejected": "memwarden status <proposal-id>",
            "evictions": "memwarden evicted <agent> --since " + since_day,
            "waivers": "memwarden config",
            "findings": f"memwarden check --rev {at[:12]}",
            "repoSize": f"git ls-tree -r -l {at[:12]}",
        },
    }


def write_json(doc: dict[str, Any]) -> str:
    return json.dumps(doc, ensure_ascii=False, indent=1, sort_keys=False) + "\n"


def schema_path() -> Path:
    from importlib import resources

    return Path(str(resources.files("memwarden") / "schemas" / "report.schema.json"))
