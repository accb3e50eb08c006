"""Server-side pre-receive hook for self-hosted bare repositories (docs/server-hooks.md).

Trust model: who pushes comes only from the variable the server sets after it
authenticated the pusher (`[server] pusher_vars`); commit author and committer fields are
never evidence. Roles are named by pusher in `[server]`: `apply_pushers` (the CI identity
that runs apply), `owners` (`allowed_pushers` is an alias) and `[agents.<id>] pushers`.
Every commit a push adds to a protected ref (old..new), and every commit of a proposal
branch from its merge base with main, is checked in full whatever other ref already
holds it. Roles and policy come from main as it is before the push, so a push cannot
loosen its own checks. Without any owner or apply pusher the hook runs in `testing` mode
(logs, accepts) and says so on every push. Refusals about who may move which ref are
MW508 (policies/rules/refs.py).
"""

from __future__ import annotations

import datetime as _dt
import fnmatch
import json
import os
import re
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from memwarden.git.repo import Repo, open_repo
from memwarden.git.source import TreeSource
from memwarden.model.config import CONFIG_NAME, Config, load_config, load_config_at
from memwarden.model.errors import ConfigError, MemwardenError
from memwarden.model.findings import ERROR, Finding, make
from memwarden.model.layout import AGENT_ID_RE, ID_RE
from memwarden.policies.engine import check
from memwarden.policies.rules.commits import (
    CommitInfo,
    branch_agent_findings,
    check_commit,
    decode_message,
)
from memwarden.policies.rules.ownership import (
    human_bookkeeping_findings,
    proposal_path_findings,
)
from memwarden.policies.rules.paths import malformed_path_findings
from memwarden.policies.rules.transitions import diff_findings

APPLY_KINDS = ("applied", "eviction", "maintenance")
NOTES_REF = "refs/notes/memwarden"  # apply/lifecycle.py's ref (most pushes import no apply)
_ZERO = re.compile(r"^0+$")


@dataclass(frozen=True)
class Update:
    old: str | None
    new: str | None
    ref: str


@dataclass(frozen=True)
class Roles:
    """The authenticated pusher and what `[server]` (before the push) lets them do."""

    who: str | None
    owners: frozenset[str]
    apply: frozenset[str]
    note: str = ""  # why `who` is unknown, when it is

    @property
    def owner(self) -> bool:
        return self.who is not None and self.who in self.owners

    @property
    def applier(self) -> bool:
        return self.who is not None and self.who in self.apply

    def name(self) -> str:
        return repr(self.who) if self.who is not None else f"unknown ({self.note})"


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


def roles(config: Config, environ: Mapping[str, str]) -> Roles:
    """The pusher from the first configured variable that is set. Two set variables that
    disagree leave the pusher unknown: one of them was not set by the server."""
    server = config.data["server"]
    seen = {var: environ[var] for var in server["pusher_vars"] if environ.get(var)}
    names = set(seen.values())
    owners = frozenset(server.get("owners", [])) | frozenset(server.get("allowed_pushers", []))
    apply = frozenset(server.get("apply_pushers", []))
    if len(names) == 1:
        return Roles(names.pop(), owners, apply)
    note = ("none of " + ", ".join(server["pusher_vars"]) + " is set" if not names else
            "conflicting " + ", ".join(f"{k}={v!r}" for k, v in seen.items()))
    return Roles(None, owners, apply, note)


def mode_of(config: Config) -> tuple[str, str]:
    """("enforce" | "testing", why)."""
    server = config.data["server"]
    if server.get("mode") == "testing":
        return "testing", "[server] mode = \"testing\""
    if not (server.get("owners") or server.get("allowed_pushers") or
            server.get("apply_pushers")):
        return "testing", "no [server] owners or apply_pushers are configured on main"
    return "enforce", ""


def server_config(repo: Repo) -> Config:
    """memwarden.toml from the main branch as it is before this push (defaults if none)."""
    main = load_config(None, None).data["main_branch"]
    return load_config_at(repo, repo.ref_target(f"refs/heads/{main}"))


class Push:
    """One push: the updates, the pusher's roles and the policy from main before it."""

    def __init__(self, repo: Repo, config: Config, who: Roles, updates: list[Update],
                 today: _dt.date) -> None:
        self.repo, self.config, self.who, self.today = repo, config, who, today
        server = config.data["server"]
        self.main_ref = f"refs/heads/{config.data['main_branch']}"
        self.protected = {f"refs/heads/{b}" for b in server.get("protected", [])}
        self.protected.add(self.main_ref)
        self.prefix = "refs/heads/" + config.data["proposal_prefix"]
        self.updates = updates
        self.main_tip = repo.ref_target(self.main_ref)  # main after the push, once judged

    def findings(self) -> list[tuple[str, Finding]]:
        out: list[tuple[str, Finding]] = []
        # protected refs first: a proposal branch that apply moves onto main in the same
        # push is judged against main's new tip
        for u in sorted(self.updates, key=lambda u: u.ref not in self.protected):
            got = self.check_update(u)
            out += [(u.ref, f) for f in got]
            if u.ref == self.main_ref and u.new and not any(f.severity == ERROR for f in got):
                self.main_tip = u.new
        return out

    def deny(self, ref: str, msg: str, key: str = "") -> Finding:
        return make("MW508", ERROR, ref, 1, 1, msg, f"{ref}:{key or msg}",
                    "See docs/server-hooks.md: who may move which ref.")

    def check_update(self, u: Update) -> list[Finding]:
        ref = u.ref
        if ref in self.protected:
            return self.check_protected(u)
        if ref.startswith(self.prefix):
            return self.check_proposal(u, ref[len(self.prefix):])
        if ref == NOTES_REF:
            return self.check_notes(u)
        if ref.startswith("refs/tags/"):
            return self.check_tag(u)
        if any(fnmatch.fnmatchcase(ref, p) for p in self.config.data["server"]["allow_refs"]):
            return []
        return [self.deny(ref, f"{ref} is not a ref this repository accepts: only "
                          f"{self.main_ref}, {self.prefix}<agentId>/<proposalId>, tags of "
                          f"owners and {NOTES_REF} (add a pattern to [server] allow_refs to "
                          "accept more)", "ref")]

    # -- commits ---------------------------------------------------------------------

    def commit_findings(self, sha: str) -> tuple[list[Finding], CommitInfo | None, dict]:
        """MW4xx on the message and every file rule on the files the commit changed, in
        its own tree, with the policy from main before the push."""
        repo = self.repo
        info = repo.commit_info(sha)
        label = sha[:12]
        text, problems = decode_message(info["raw_message"], label)
        if text is None:
            return problems, None, info
        ci = CommitInfo(text, info["touched"], label)
        findings = problems + check_commit(ci)
        findings += malformed_path_findings(repo, info["parents"][0] if info["parents"] else None,
                                            sha, info["touched"], label)
        source = TreeSource(repo, sha)
        present = [p for p in info["touched"] if source.entry(p) is not None]
        if present:
            result = check(source, self.config, present, cache_dir=None, today=self.today)
            findings += [f.replace(message=f"{f.message} (in {label})")
                         for f in result.findings if not f.waived]
        return findings, ci, info

    def transitions(self, sha: str, parent: str | None, touched: list[str], actor: str
                    ) -> list[Finding]:
        repo = self.repo
        return diff_findings(touched, lambda p: repo.read_path(parent, p) if parent else None,
                             lambda p: repo.read_path(sha, p), actor)

    # -- protected refs (main) --------------------------------------------------------

    def check_protected(self, u: Update) -> list[Finding]:
        ref, who = u.ref, self.who
        if u.new is None:
            return [self.deny(ref, f"{ref} is protected: it is never deleted", "delete")]
        out: list[Finding] = []
        if not (who.owner or who.applier):
            out.append(self.deny(ref, f"{ref} moves only by a push of an apply pusher or an "
                                 f"owner ([server] apply_pushers, owners); pusher: "
                                 f"{who.name()}", "pusher"))
        if u.old is not None and not self.repo.is_ancestor(u.old, u.new):
            out.append(self.deny(ref, f"{ref} is protected: only fast-forward updates are "
                                 "accepted (history is never rewritten; use git revert)",
                                 "non-ff"))
            return out
        base = u.old
        if base is None and ref != self.main_ref and self.main_tip is not None:
            base = self.repo.merge_base(self.main_tip, u.new)
        commits = self.repo.rev_list(f"{base}..{u.new}" if base else u.new)
        config_changed = False
        for sha in commits:
            findings, ci, info = self.commit_findings(sha)
            out += findings
            if len(info["parents"]) > 1:
                out.append(self.deny(ref, f"commit {sha[:12]} is a merge: {ref}'s history is "
                                     "linear (rebase onto it instead)", f"merge:{sha}"))
            if ci is not None:
                out += self.main_commit_rules(ref, sha, ci, info)
            config_changed = config_changed or CONFIG_NAME in info["touched"]
        if config_changed:
            out += self.config_rules(ref, u.new)
        return out

    def main_commit_rules(self, ref: str, sha: str, ci: CommitInfo, info: dict
                          ) -> list[Finding]:
        """Who may add this kind of commit, and which paths it may change."""
        who, label = self.who, sha[:12]
        parent = info["parents"][0] if info["parents"] else None
        touched = list(info["touched"])
        out: list[Finding] = []
        if ci.kind in APPLY_KINDS:
            if not who.applier:
                out.append(self.deny(ref, f"commit {label} is an apply-made commit "
                                     f"({ci.kind}); those reach {ref} only in a push of an apply "
                                     f"pusher ([server] apply_pushers); pusher: {who.name()}",
                                     f"apply:{sha}"))
            return out + self.apply_commit_paths(sha, ci, info)
        if ci.kind == "proposal":
            out.append(self.deny(ref, f"commit {label} is a proposal: proposals reach {ref} "
                                 "only through apply, which lands them with their bookkeeping",
                                 f"proposal:{sha}"))
            return out
        if not who.owner:  # a human edit or a commit outside the governed files
            out.append(self.deny(ref, f"commit {label} is not apply-made; such commits reach "
                                 f"{ref} only in a push of an owner ([server] owners); "
                                 f"pusher: {who.name()}", f"human:{sha}"))
        if parent is None:
            return out  # a root commit is the repository's starting state (an import)
        repo = self.repo
        out += human_bookkeeping_findings(label, touched, lambda p: repo.read_path(parent, p),
                                          lambda p: repo.read_path(sha, p))
        out += self.transitions(sha, parent, touched, "human")
        return out

    def apply_commit_paths(self, sha: str, ci: CommitInfo, info: dict) -> list[Finding]:
        """An apply-made commit for agent X changes only X's folder (bookkeeping included)
        and X's contract status; maintenance changes memory/ and registry.json."""
        touched = list(info["touched"])
        out: list[Finding] = []
        if ci.kind == "maintenance":
            allowed = [p for p in touched if p.startswith("memory/") or p == "registry.json"]
        else:
            agent = ci.agent or "?"
            mine = (f"memory/{agent}/",) if ci.kind == "eviction" else \
                (f"memory/{agent}/", f"agents/{agent}/_agent.md")
            allowed = [p for p in touched if p.startswith(mine)]
            parent = info["parents"][0] if info["parents"] else None
            out += self.transitions(sha, parent, touched, "proposal")
        for path in sorted(set(touched) - set(allowed)):
            out.append(make("MW501", ERROR, path, 1, 1, f"commit {sha[:12]} ({ci.kind} of "
                            f"agent {ci.agent!r}) changes {path}: an apply-made commit may "
                            "only change its agent's memory folder", f"{sha}:{path}"))
        return out

    def config_rules(self, ref: str, new: str) -> list[Finding]:
        """The policy that the next push is judged by must load, and must leave an owner."""
        try:
            after = load_config_at(self.repo, new)
        except ConfigError as exc:
            return [self.deny(ref, f"{exc}: the hook reads its policy from {ref}, so an "
                              "invalid memwarden.toml would refuse every later push",
                              "config")]
        server = after.data["server"]
        if mode_of(after)[0] == "enforce" and not (server.get("owners") or
                                                    server.get("allowed_pushers")):
            return [self.deny(ref, "this memwarden.toml enforces the server rules with no "
                              "[server] owners: nobody could change the policy again",
                              "no-owner")]
        return []

    # -- proposal branches ------------------------------------------------------------

    def check_proposal(self, u: Update, rest: str) -> list[Finding]:
        ref, who = u.ref, self.who
        parts = rest.split("/")
        if len(parts) != 2 or not AGENT_ID_RE.match(parts[0]) or not ID_RE.match(parts[1]):
            return [make("MW507", ERROR, ref, 1, 1, "proposal branches are named "
                         f"{self.config.data['proposal_prefix']}<agentId>/<proposalId>", ref)]
        agent = parts[0]
        bound = self.config.agent_setting(agent, "pushers") or []
        if bound and not (who.who in bound or who.owner or who.applier):
            what = "delete" if u.new is None else "push"
            return [self.deny(ref, f"only {', '.join(bound)} ([agents.{agent}] pushers), "
                              f"owners and apply pushers may {what} proposals of {agent!r}; "
                              f"pusher: {who.name()}", what)]
        if u.new is None:
            return []
        base = self.repo.merge_base(self.main_tip, u.new) if self.main_tip else None
        if self.main_tip is not None and base is None:
            return [self.deny(ref, f"{ref} shares no history with {self.main_ref}",
                              "unrelated")]
        out: list[Finding] = []
        seen: list[tuple[str, CommitInfo | None, dict]] = []
        for sha in self.repo.rev_list(f"{base}..{u.new}" if base else u.new):
            findings, ci, info = self.commit_findings(sha)
            out += findings
            seen.append((sha, ci, info))
        if who.applier and seen and all(ci is not None and ci.kind in ("applied", "eviction")
                                        and ci.agent == agent for _, ci, _ in seen):
            # apply first moves the branch to exactly what lands on main (so a pull request
            # shows as merged): its own commits, judged as on main
            for sha, ci, info in seen:
                out += self.apply_commit_paths(sha, ci, info)  # type: ignore[arg-type]
            return out
        for sha, ci, _ in seen:
            if ci is None:
                continue
            if ci.kind != "proposal":
                out.append(self.deny(ref, f"commit {sha[:12]} is not a proposal commit "
                                     f"({ci.kind}): a proposal branch holds only "
                                     f"'memory-update: {agent} / <runId> / <proposalId>' "
                                     "commits", f"kind:{sha}"))
        out += branch_agent_findings(agent, [ci for _, ci, _ in seen if ci is not None])
        touched = self.repo.changed_paths(base, u.new)
        known = None  # an empty repository has no agents to know yet
        if base is not None:
            known = (self.repo.entry_at(base, f"agents/{agent}/_agent.md") is not None
                     or self.repo.has_folder(base, f"memory/{agent}"))
        out += proposal_path_findings(agent, touched, rest, known)
        out += self.transitions(u.new, base, touched, "proposal")
        if u.new != base:  # what apply would write besides the files, judged as the gate does
            from memwarden.apply.gate import bookkeeping_findings

            out += bookkeeping_findings(self.repo, u.new, agent, touched)
        return out

    # -- tags and notes ---------------------------------------------------------------

    def check_tag(self, u: Update) -> list[Finding]:
        ref, who = u.ref, self.who
        if not who.owner:
            return [self.deny(ref, f"tags are pushed and deleted only by owners ([server] "
                              f"owners); pusher: {who.name()}", "tag-pusher")]
        if u.new is None:
            return []
        try:
            sha = self.repo.resolve_commit(u.new)
        except MemwardenError:
            return [self.deny(ref, f"{ref} does not point at a commit", "tag-object")]
        if self.main_tip is not None and self.repo.is_ancestor(sha, self.main_tip):
            return []  # on main: checked when it got there
        findings, _, _ = self.commit_findings(sha)
        result = check(TreeSource(self.repo, sha), self.config, None, cache_dir=None,
                       today=self.today)
        return findings + [f.replace(message=f"{f.message} (in {sha[:12]})")
                           for f in result.findings if not f.waived]

    def check_notes(self, u: Update) -> list[Finding]:
        ref, who, repo = u.ref, self.who, self.repo
        if not (who.owner or who.applier):
            return [self.deny(ref, f"lifecycle notes are pushed only by apply pushers and "
                              f"owners; pusher: {who.name()}", "notes-pusher")]
        if u.new is None:
            return [self.deny(ref, f"{ref} holds the proposals' history: it is never "
                              "deleted", "delete")]
        if u.old is not None and not repo.is_ancestor(u.old, u.new):
            return [self.deny(ref, f"{ref} only moves forward (merge the remote's notes, as "
                              "`memwarden apply --push` and `reject --push` do)", "non-ff")]
        out: list[Finding] = []
        for path in repo.changed_paths(u.old, u.new):
            before = (repo.read_path(u.old, path) or b"") if u.old else b""
            after = repo.read_path(u.new, path) or b""
            old_lines = before.decode("utf-8", "replace").splitlines()
            new_lines = after.decode("utf-8", "replace").splitlines()
            if not set(old_lines) <= set(new_lines):
                out.append(self.deny(ref, f"note {path} loses recorded events: lifecycle "
                                     "notes are append-only", f"shrink:{path}"))
            known = set(old_lines)
            for line in new_lines:
                if line in known:
                    continue
                try:
                    event = json.loads(line)
                except ValueError:
                    continue
                if not isinstance(event, dict) or event.get("reason") != "rejected_by_owner":
                    continue
                if not who.owner:
                    out.append(self.deny(ref, f"note {path}: only owners record an owner's "
                                         f"rejection; pusher: {who.name()}", f"veto:{path}"))
                elif event.get("by") != who.who:
                    out.append(self.deny(ref, f"note {path}: the rejection is recorded by "
                                         f"{event.get('by')!r} but pushed by {who.who!r}; "
                                         f"record it as the pusher (`memwarden reject ... "
                                         f"--by {who.who}`)", f"by:{path}"))
        return out


def render_for_client(findings: Sequence[tuple[str, Finding]], gitlab: bool) -> str:
    """One line a finding; a finding about the ref itself names the ref once."""
    prefix = "GL-HOOK-ERR: " if gitlab else ""
    lines = []
    for ref, f in findings:
        where = "" if f.path == ref else f"{f.path}:{f.line}:{f.col}: "
        lines.append(f"{prefix}memwarden: {ref}: {where}{f.rule} {f.message}")
    return "\n".join(lines) + ("\n" if lines else "")


def main(argv: Sequence[str] | None = None, stdin: TextIO | None = None) -> int:
    repo = open_repo(Path.cwd())
    if repo is None:
        raise MemwardenError("pre-receive: not inside a git repository")
    config = server_config(repo)
    updates = parse_updates(stdin or sys.stdin)
    who = roles(config, os.environ)
    push = Push(repo, config, who, updates, _dt.date.today())
    findings = push.findings()
    errors = sum(1 for _, f in findings if f.severity == ERROR)
    gitlab = bool(os.environ.get("GL_ID") or os.environ.get("GL_USERNAME"))
    sys.stderr.write(render_for_client(findings, gitlab))
    mode, why = mode_of(config)
    if mode == "testing":
        verdict = f"would reject this push ({errors} error(s)); " if errors else ""
        sys.stderr.write(f"memwarden: testing mode ({why}): {verdict}accepted; findings are "
                         "only logged until owners/apply_pushers are configured "
                         "(docs/server-hooks.md)\n")
        return 0
    if not errors:
        return 0
    sys.stderr.write(f"memwarden: push rejected ({errors} error(s)); `memwarden rule MWxxx` "
                     "explains each rule\n")
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


def next_steps(bare: Path) -> str:
    """What the installer prints: the mode the hook runs in now and what to configure."""
    repo = open_repo(bare)
    try:
        config = server_config(repo) if repo is not None else load_config(None, None)
    except ConfigError as exc:
        return f"warning: memwarden.toml on main is invalid ({exc}): every push is refused " \
               "until it is fixed on the server"
    mode, why = mode_of(config)
    server = config.data["server"]
    owners = sorted(set(server.get("owners", [])) | set(server.get("allowed_pushers", [])))
    lines = [f"mode: {mode}" + (f" ({why}): pushes are checked and logged, never refused"
                                if mode == "testing" else "")]
    lines.append(f"pusher identity from: {', '.join(server['pusher_vars'])} (set "
                 "[server] pusher_vars to the one variable your server sets)")
    lines.append(f"owners: {', '.join(owners) or '(none)'}; apply pushers: "
                 f"{', '.join(server.get('apply_pushers', [])) or '(none)'}")
    if mode == "testing":
        lines.append("next: commit to main a memwarden.toml with\n  [server]\n"
                     "  owners = [\"<your login on this server>\"]\n"
                     "  apply_pushers = [\"<the CI account that runs memwarden apply>\"]\n"
                     "and push it as that owner; the hook enforces from then on "
                     "(docs/server-hooks.md)")
    return "\n".join(lines)
