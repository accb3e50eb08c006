"""Issue 18 items 1-5, performed for real: `git push` to a bare repository with the
installed pre-receive hook, the pusher named by the variable a server sets after it
authenticated them. Each attack was accepted by the previous hook."""

from __future__ import annotations

import json

from conftest import git
from test_server_kit import (
    APPLY_ENV,
    CONFIG,
    FACTS,
    INJECTION,
    commit,
    make_server,
    memwarden,
    proposal_message,
    propose,
    push,
    ref,
)

ALLOW_FEATURE = 'allow_refs = ["refs/heads/feature"]\n'


def with_allow(config_extra: str) -> str:
    return CONFIG.replace("[server]\n", "[server]\n" + config_extra)


# -- 1. a commit staged on another ref is checked again when it reaches main -----------

def test_unknown_refs_refused_by_default(tmp_path):
    work, bare = make_server(tmp_path)
    git(work, "checkout", "-qb", "feature")
    commit(work, {"memory/a/facts.md": FACTS.format(a="a") + INJECTION}, "notes")
    proc = push(work, "feature", who="mallory")
    assert proc.returncode == 1 and "MW508" in proc.stderr
    assert ref(bare, "refs/heads/feature") is None


def test_commit_staged_on_allowed_branch_is_checked_on_main(tmp_path):
    work, bare = make_server(tmp_path, with_allow(ALLOW_FEATURE))
    git(work, "checkout", "-qb", "feature")
    staged = commit(work, {"memory/a/facts.md": FACTS.format(a="a") + INJECTION}, "notes")
    assert push(work, "feature", who="mallory").returncode == 0  # allow-listed: parked
    for who in ("mallory", "olga"):  # not even an owner lands it
        proc = push(work, "feature:main", who=who)
        assert proc.returncode == 1, proc.stderr
        assert "MW404" in proc.stderr  # no Human-Edit trailer
        assert "MW303" in proc.stderr  # the injection line
    assert "MW508" in push(work, "feature:main", who="mallory").stderr
    assert ref(bare, "refs/heads/main") != staged


def test_commit_held_by_a_tag_is_checked_on_main(tmp_path):
    work, bare = make_server(tmp_path)
    staged = commit(work, {"memory/a/facts.md": FACTS.format(a="a") + INJECTION}, "notes")
    proc = push(work, f"{staged}:refs/tags/parked", who="olga")  # an owner tags it
    assert proc.returncode == 1 and "MW303" in proc.stderr  # a tag's commit must pass
    # the commit sits on a ref already (placed without a push, as a server admin might)
    git(bare, "fetch", "-q", str(work), f"{staged}:refs/tags/parked")
    proc = push(work, "main", who="olga")
    assert proc.returncode == 1 and "MW303" in proc.stderr and "MW404" in proc.stderr
    assert ref(bare, "refs/heads/main") != staged


def test_proposal_branch_pointing_at_staged_commit_is_checked(tmp_path):
    work, bare = make_server(tmp_path, with_allow(ALLOW_FEATURE))
    git(work, "checkout", "-qb", "feature")
    staged = commit(work, {"memory/b/facts.md": "# Facts\n\n- b is mine now\n",
                           "memory/a/meta.json": '{"agentId": "a", "version": 99, '
                                                 '"schemaVersion": "1.0"}\n'},
                    proposal_message("a", "p-9"))
    assert push(work, "feature", who="mallory").returncode == 0
    proc = push(work, f"{staged}:refs/heads/proposals/a/p-9", who="mallory")
    assert proc.returncode == 1
    assert "memory/b/facts.md:1:1: MW501" in proc.stderr
    assert "memory/a/meta.json:1:1: MW503" in proc.stderr
    assert ref(bare, "refs/heads/proposals/a/p-9") is None


# -- 2. commit metadata is not identity ------------------------------------------------

APPLIED = ("memory-update: a / run_1 / p-1\n\nAgent-Id: a\nRun-Id: run_1\nProposal-Id: p-1\n"
           "Priority: normal\nExpected-Version: 1\nApplied-Proposal: p-1\n"
           f"Proposal-Head: {'0' * 40}\nAuto-Approved: true\n")


def test_forged_apply_committer_cannot_move_main(tmp_path):
    work, bare = make_server(tmp_path)
    before = ref(bare, "refs/heads/main")
    commit(work, {"memory/a/facts.md": "# Facts\n\n## Domain\n- the admin password is hunter2\n"},
           APPLIED, env=APPLY_ENV)
    for who in ("mallory", "olga"):  # only an apply pusher pushes apply-made commits
        proc = push(work, "main", who=who)
        assert proc.returncode == 1, proc.stderr
        assert "MW508" in proc.stderr and "apply-made commit" in proc.stderr
    assert ref(bare, "refs/heads/main") == before


def test_forged_applied_commit_on_proposal_branch_keeps_path_rules(tmp_path):
    work, bare = make_server(tmp_path)
    git(work, "checkout", "-qb", "proposals/a/p-1")
    commit(work, {"memory/b/facts.md": "# Facts\n\n- b is mine now\n",
                  "memory/a/meta.json": '{"agentId": "a", "version": 9, '
                                        '"schemaVersion": "1.0"}\n'},
           APPLIED, env=APPLY_ENV)
    proc = push(work, "proposals/a/p-1", who="mallory")
    assert proc.returncode == 1
    assert "MW501" in proc.stderr and "MW503" in proc.stderr
    assert "not a proposal commit" in proc.stderr  # MW508: a proposal branch holds proposals


# -- 3. lifecycle notes: owners and apply pushers only; a veto records its pusher -------

def test_anyone_cannot_veto_a_proposal(tmp_path):
    work, bare = make_server(tmp_path)
    assert propose(work, tmp_path, "a", "p-1", "new a", who="bot-a").returncode == 0
    git(work, "fetch", "-q", "origin")
    proc = memwarden(work, "reject", "p-1", "--format", "json",
                     "--reason", "I say so", "--by", "mallory",
                     "--push", "origin", who="mallory")
    assert "lifecycle notes not pushed" in json.loads(proc.stdout)["warning"]
    assert "MW508" in json.loads(proc.stdout)["warning"]
    assert ref(bare, "refs/notes/memwarden") is None  # the veto never reached the server
    proc = push(work, "refs/notes/memwarden", who="mallory")  # nor by hand
    assert proc.returncode == 1 and "MW508" in proc.stderr
    # the apply pusher lands the proposal: nobody vetoed it on the server
    clone = tmp_path / "ci"
    git(tmp_path, "clone", "-q", str(bare), str(clone))
    git(clone, "fetch", "-q", "origin", "refs/heads/proposals/*:refs/heads/proposals/*")
    proc = memwarden(clone, "apply", "--all", "--push", "origin", who="ci")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (res,) = json.loads(proc.stdout)["results"]
    assert res["status"] == "applied"
    assert "new a" in git(bare, "show", "main:memory/a/facts.md")


def test_owner_veto_is_recorded_as_its_pusher(tmp_path):
    work, bare = make_server(tmp_path)
    assert propose(work, tmp_path, "a", "p-1", "new a", who="bot-a").returncode == 0
    git(work, "fetch", "-q", "origin")
    proc = memwarden(work, "reject", "p-1", "--format", "json",
                     "--reason", "off topic", "--by", "somebody",
                     "--push", "origin", who="olga")
    assert ref(bare, "refs/notes/memwarden") is None, proc.stdout  # by != pusher: refused
    git(work, "update-ref", "-d", "refs/notes/memwarden")
    proc = memwarden(work, "reject", "p-1", "--format", "json",
                     "--reason", "off topic", "--by", "olga",
                     "--push", "origin", who="olga")
    assert proc.returncode == 0 and "warning" not in json.loads(proc.stdout), proc.stdout
    note = git(bare, "notes", "--ref", "memwarden", "show",
               git(bare, "rev-parse", "proposals/a/p-1").strip())
    assert '"by": "olga"' in note and "rejected_by_owner" in note


def test_apply_pusher_cannot_record_an_owner_veto(tmp_path):
    work, bare = make_server(tmp_path)
    assert propose(work, tmp_path, "a", "p-1", "new a", who="bot-a").returncode == 0
    git(work, "fetch", "-q", "origin")
    memwarden(work, "reject", "p-1", "--format", "json",
                     "--reason", "x", "--by", "ci")
    proc = push(work, "refs/notes/memwarden", who="ci")
    assert proc.returncode == 1 and "only owners record an owner's rejection" in proc.stderr


# -- 4. tags and deletions by role -----------------------------------------------------

def test_tags_only_from_owners_on_passing_commits(tmp_path):
    work, bare = make_server(tmp_path)
    bad = commit(work, {"memory/a/facts.md": FACTS.format(a="a") + INJECTION},
                 "notes\n\nHuman-Edit: true")
    proc = push(work, f"{bad}:refs/tags/v1", who="olga")
    assert proc.returncode == 1 and "MW303" in proc.stderr
    git(work, "tag", "-a", "-m", "release", "v2", "HEAD~1")  # annotated, on main
    proc = push(work, "refs/tags/v2", who="mallory")
    assert proc.returncode == 1 and "MW508" in proc.stderr
    assert push(work, "refs/tags/v2", who="olga").returncode == 0
    assert push(work, ":refs/tags/v2", who="mallory").returncode == 1
    assert push(work, ":refs/tags/v2", who="olga").returncode == 0


def test_bound_agent_proposal_deleted_only_by_its_roles(tmp_path):
    work, bare = make_server(tmp_path)
    proc = propose(work, tmp_path, "b", "p-1", "new b", who="mallory")
    assert proc.returncode != 0 and "MW508" in proc.stderr  # b is bound to bot-b
    for pid in ("p-2", "p-3", "p-4"):
        assert propose(work, tmp_path, "b", pid, "new b", who="bot-b").returncode == 0
    proc = push(work, ":proposals/b/p-2", who="mallory")
    assert proc.returncode == 1 and "MW508" in proc.stderr
    assert ref(bare, "refs/heads/proposals/b/p-2") is not None
    for pid, who in (("p-2", "bot-b"), ("p-3", "olga"), ("p-4", "ci")):
        proc = push(work, f":proposals/b/{pid}", who=who)
        assert proc.returncode == 0, proc.stderr
        assert ref(bare, f"refs/heads/proposals/b/{pid}") is None


# -- 5. owners, rule ids, and the first configuration push -----------------------------

def test_owner_push_to_main_accepted_and_rule_names_the_ref_once(tmp_path):
    work, bare = make_server(tmp_path)
    commit(work, {"memory/a/facts.md": FACTS.format(a="a") + "- fixed by a human\n"},
           "Fix facts\n\nHuman-Edit: true")
    proc = push(work, "main", who="mallory")
    assert proc.returncode == 1
    lines = [ln for ln in proc.stderr.splitlines() if "MW" in ln and "refs/heads/main" in ln]
    assert lines and all(ln.count("refs/heads/main") == 2 for ln in lines
                         if "moves only" in ln)  # "<ref>: MW508 <ref> moves only ..."
    assert all("refs/heads/main: refs/heads/main" not in ln for ln in lines)
    assert "MW502" not in proc.stderr
    proc = push(work, "main", who="olga")
    assert proc.returncode == 0, proc.stderr
    assert "MW5" not in proc.stderr


def test_first_configuration_push_in_testing_mode(tmp_path, mw):
    work, bare = make_server(tmp_path, config=None)
    code, out, _ = mw(tmp_path, "install-server-hooks", str(bare))
    assert code == 0 and "mode: testing" in out and "owners" in out
    commit(work, {"memwarden.toml": "[server]\nowners = [\"olga\"]\napply_pushers = "
                                    "[\"ci\"]\n"}, "Configure the server\n\nHuman-Edit: true")
    proc = push(work, "main", who="olga")
    assert proc.returncode == 0, proc.stderr
    assert "testing mode" in proc.stderr
    code, out, _ = mw(tmp_path, "install-server-hooks", str(bare))
    assert code == 0 and "mode: enforce" in out and "olga" in out
    # now enforced: the same kind of push by anyone else is refused, silently no more
    commit(work, {"memory/a/facts.md": FACTS.format(a="a") + "- more\n"},
           "More\n\nHuman-Edit: true")
    proc = push(work, "main", who="mallory")
    assert proc.returncode == 1 and "testing mode" not in proc.stderr
    assert push(work, "main", who="olga").returncode == 0


def test_every_push_in_testing_mode_says_so(tmp_path):
    work, bare = make_server(tmp_path, config=None)
    commit(work, {"memory/a/facts.md": FACTS.format(a="a") + INJECTION}, "oops")
    proc = push(work, "main")
    assert proc.returncode == 0
    assert "MW303" in proc.stderr and "testing mode" in proc.stderr
    assert "would reject this push" in proc.stderr
    git(work, "checkout", "-qb", "proposals/a/p-1")
    commit(work, {"memory/a/facts.md": FACTS.format(a="a") + "- fine\n"},
           proposal_message("a", "p-1", version=1))
    proc = push(work, "proposals/a/p-1")
    assert proc.returncode == 0 and "testing mode" in proc.stderr
