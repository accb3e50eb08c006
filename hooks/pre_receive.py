"""Server-side pre-receive hook for self-hosted bare repositories.

Protected refs (main) move only by fast-forward, only to commits made by the apply step
(committer = apply identity, apply trailers) or pushed by a named pusher; every new commit
must pass its trailers and the file policies. Proposal branches may only touch their own
agent's memory. Policy comes from the protected branch as it is before the push, so a
push cannot loosen its own checks. Messages reach the client as `remote:` lines (with
`GL-HOOK-ERR:` on GitLab); `testing` mode logs what it would reject and accepts.
"""

from __future__ import annotations

import datetime as _dt
import os
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from memwarden.git.repo import Repo, open_repo
from memwarden.git.source import TreeSource
from memwarden.model.config import Config, load_config, load_config_at
from memwarden.model.errors import MemwardenError
from memwarden.model.findings import ERROR, Finding, make
from memwarden.model.layout import AGENT_ID_RE, ID_RE
from memwarden.policies.engine import check
from memwarden.policies.rules.commits import CommitInfo, check_commit, decode_message
from memwarden.policies.rules.ownership import proposal_path_findings

PUSHER_VARS = ("GL_USERNAME", "GITEA_PUSHER_NAME", "REMOTE_USER")
APPLY_KINDS = ("applied", "eviction", "maintenance")
_ZERO = re.compile(r"^0+$")


@dataclass(frozen=True)
class Update:
    old: str | None
    new: str | None
    ref: str


def parse_updates(stream: TextIO) -> list[Update]:
    out = []
    for n, line in enumerate(stream, 1):
        parts = line.split()
        if not parts:
            continue
        if len(parts) != 3:
            raise MemwardenError(f"pre-receive: line {n}: expected '<old> <new> <ref>'")
        old, new, ref = parts
        out.append(Update(None if _ZERO.match(old) else old, None if _ZERO.match(new) else new,
                          ref))
    return out


def pusher() -> str | None:
    for var in PUSHER_VARS:
        if os.environ.get(var):
            return os.environ[var]
    return None


def server_config(repo: Repo) -> Config:
    """memwarden.toml from the main branch as it is before this push (defaults if none)."""
    main = load_config(None, None).data["main_branch"]
    return load_config_at(repo, repo.ref_target(f"refs/heads/{main}"))


def _ident(name: str, email: str) -> str:
    return f"{name} <{email}>"


def _commit_findings(repo: Repo, sha: str, config: Config, today: _dt.date
                     ) -> tuple[list[Finding], CommitInfo | None, dict]:
    info = repo.commit_info(sha)
    label = sha[:12]
    text, problems = decode_message(info["raw_message"], label)
    if text is None:
        return problems, None, info
    ci = CommitInfo(text, info["touched"], label)
    findings = problems + check_commit(ci)
    source = TreeSource(repo, sha)
    present = [p for p in info["touched"] if source.entry(p) is not None]
    if present:
        result = check(source, config, present, cache_dir=None, today=today)
        findings += [f for f in result.findings if not f.waived]
    return findings, ci, info


def check_update(repo: Repo, u: Update, config: Config, who: str | None,
                 today: _dt.date) -> list[Finding]:
    server = config.data["server"]
    protected = {f"refs/heads/{b}" for b in server.get("protected", [])}
    protected.add(f"refs/heads/{config.data['main_branch']}")
    allowed = who is not None and who in server.get("allowed_pushers", [])
    prefix = "refs/heads/" + config.data["proposal_prefix"]
    ref = u.ref

    def deny(msg: str, rule: str = "MW502") -> list[Finding]:
        return [make(rule, ERROR, ref, 1, 1, msg, f"{ref}:{msg}")]

    if ref in protected:
        if u.new is None:
            return deny(f"{ref} is protected: it cannot be deleted")
        if u.old is not None and not repo.is_ancestor(u.old, u.new):
            return deny(f"{ref} is protected: only fast-forward updates are accepted "
                        "(history on main is never rewritten; use git revert)")
        return _check_protected(repo, u, config, who, allowed, today)
    if ref.startswith(prefix):
        if u.new is None:
            return []
        return _check_proposal_ref(repo, u, config, who, ref[len(prefix):], today)
    if ref.startswith("refs/tags/"):
        return _by_policy(server.get("tags", "allow"), ref, allowed)
    return _by_policy(server.get("other_refs", "allow"), ref, allowed)


def _by_policy(policy: str, ref: str, allowed: bool) -> list[Finding]:
    if policy == "allow" or (policy == "pushers" and allowed):
        return []
    return [make("MW502", ERROR, ref, 1, 1, f"pushes to {ref} are not accepted here "
                 f"(server policy {policy!r})", ref)]


def _check_protected(repo: Repo, u: Update, config: Config, who: str | None, allowed: bool,
                     today: _dt.date) -> list[Finding]:
    assert u.new is not None
    apply_ident = config.data["apply_identity"]
    out: list[Finding] = []
    for sha in repo.new_commits(u.new, u.old):
        findings, ci, info = _commit_findings(repo, sha, config, today)
        out += findings
        committer = _ident(*info["committer"][:2])
        if ci is not None and ci.kind in APPLY_KINDS and committer == apply_ident:
            continue
        if not allowed:
            why = (f"committed by {committer}, not the apply identity {apply_ident}"
                   if ci is not None and ci.kind in APPLY_KINDS else
                   "not made by the apply step")
            out.append(make("MW502", ERROR, u.ref, 1, 1,
                            f"commit {sha[:12]} is {why}; {u.ref} moves only through apply "
                            f"or a push by an allowed pusher (pusher: {who or 'unknown'})",
                            f"{u.ref}:{sha}"))
    return out


def _check_proposal_ref(repo: Repo, u: Update, config: Config, who: str | None, rest: str,
                        today: _dt.date) -> list[Finding]:
    assert u.new is not None
    parts = rest.split("/")
    if len(parts) != 2 or not AGENT_ID_RE.match(parts[0]) or not ID_RE.match(parts[1]):
        return [make("MW507", ERROR, u.ref, 1, 1, "proposal branches are named "
                     f"{config.data['proposal_prefix']}<agentId>/<proposalId>", u.ref)]
    agent, proposal = parts
    pushers = config.agent_setting(agent, "pushers")
    if pushers and who not in pushers:
        return [make("MW501", ERROR, u.ref, 1, 1, f"only {', '.join(pushers)} may push "
                     f"proposals of {agent!r} (pusher: {who or 'unknown'})", u.ref)]
    out: list[Finding] = []
    apply_ident = config.data["apply_identity"]
    by_apply = True
    for sha in repo.new_commits(u.new, u.old):
        findings, ci, info = _commit_findings(repo, sha, config, today)
        out += findings
        if ci is not None and ci.kind == "proposal" and ci.agent not in (None, agent):
            out.append(make("MW402", ERROR, sha[:12], 1, 1, f"Agent-Id {ci.agent!r} on a "
                            f"branch of {agent!r}", f"{sha}:{ci.agent}"))
        if ci is None or ci.kind not in APPLY_KINDS or \
                _ident(*info["committer"][:2]) != apply_ident:
            by_apply = False
    if not by_apply:
        # Apply updates a proposal branch to exactly what lands on main (bookkeeping
        # included) so the pull request shows as merged; only then are apply-owned files
        # on the branch legitimate.
        main = repo.ref_target(f"refs/heads/{config.data['main_branch']}")
        base = repo.merge_base(main, u.new) if main else None
        touched = repo.changed_paths(base, u.new)
        out += proposal_path_findings(agent, touched, proposal)
    return out


def render_for_client(findings: Sequence[Finding], ref_of: dict[int, str], gitlab: bool) -> str:
    prefix = "GL-HOOK-ERR: " if gitlab else ""
    lines = []
    for i, f in enumerate(findings):
        where = ref_of.get(i, "")
        lines.append(f"{prefix}memwarden: {where}: {f.path}:{f.line}:{f.col}: {f.rule} "
                     f"{f.message}")
    return "\n".join(lines) + ("\n" if lines else "")


def main(argv: Sequence[str] | None = None, stdin: TextIO | None = None) -> int:
    repo = open_repo(Path.cwd())
    if repo is None:
        raise MemwardenError("pre-receive: not inside a git repository")
    config = server_config(repo)
    updates = parse_updates(stdin or sys.stdin)
    who = pusher()
    today = _dt.date.today()
    findings: list[Finding] = []
    ref_of: dict[int, str] = {}
    for u in updates:
        for f in check_update(repo, u, config, who, today):
            ref_of[len(findings)] = u.ref
            findings.append(f)
    errors = [i for i, f in enumerate(findings) if f.severity == ERROR]
    gitlab = bool(os.environ.get("GL_ID") or os.environ.get("GL_USERNAME"))
    sys.stderr.write(render_for_client(findings, ref_of, gitlab))
    if not errors:
        return 0
    if config.data["server"].get("mode") == "testing":
        sys.stderr.write(f"memwarden: testing mode: would reject this push ({len(errors)} "
                         "error(s)); accepted\n")
        return 0
    sys.stderr.write(f"memwarden: push rejected ({len(errors)} error(s)); see "
                     "`memwarden rule MWxxx`\n")
    return 1


HOOK_SCRIPT = """#!/bin/sh
# memwarden pre-receive hook (installed by `memwarden install-server-hooks`)
exec "{python}" -m memwarden hook pre-receive "$@"
"""


def install(bare: Path, force: bool = False) -> Path:
    """Write hooks/pre-receive into a bare repository; keep a foreign hook as .bak."""
    if not (bare / "HEAD").is_file() or not (bare / "objects").is_dir():
        raise MemwardenError(f"{bare}: not a bare git repository")
    hook = bare / "hooks" / "pre-receive"
    hook.parent.mkdir(exist_ok=True)
    if hook.exists() and "memwarden" not in hook.read_text("utf-8", "replace"):
        if not force:
            raise MemwardenError(f"{hook} exists and is not memwarden's; use --force to "
                                 "replace it (the old one is kept as pre-receive.bak)")
        hook.replace(hook.with_name("pre-receive.bak"))
    hook.write_text(HOOK_SCRIPT.format(python=sys.executable), "utf-8")
    hook.chmod(0o755)
    return hook
