"""Attacks on `propose` and the gate that used to be accepted or crash (issue 18 items
9-12): ids with a trailing newline, invalid ref names, `.git` paths by git's rules,
bidi/invisible characters in paths, unknown agents, deep JSON, oversized fields.

Each attack runs for real: a real repository, the real `memwarden` CLI, real git objects
(hand-built with `git mktree` where propose itself refuses), the real server hook.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from conftest import GIT_ENV, git, make_repo

from memwarden.hooks.pre_receive import install
from memwarden.model.layout import is_dotgit, unsafe_path_reason

FACTS = "# Facts: a\n\n## Domain\n- one fact\n"
LOOPS = ("# Open Loops: a\n\n## Critical\n"
         "- [ ] loop_001: confirm the bucket (opened 2026-02-01, priority high)\n")
NOW = "2026-02-17T14:30:00Z"


@pytest.fixture
def repo(tmp_path):
    return make_repo(tmp_path, {"memory/a/facts.md": FACTS, "memory/a/open_loops.md": LOOPS,
                                "memory/a/runs/run_x.md": "# Run x\n",
                                "memory/a/meta.json": '{"agentId": "a", "version": 1, '
                                                      '"schemaVersion": "1.0"}'})


def request(*updates, **extra):
    return {"agentId": "a", "runId": "run_7", "updates": list(updates or [APPEND]),
            "reasoning": "new facts", **extra}


APPEND = {"file": "facts.md", "operation": "append", "section": "Domain", "content": "x"}


def propose(mw, root, tmp_path, doc):
    req = tmp_path / "req.json"
    req.write_text(doc if isinstance(doc, str) else json.dumps(doc), "utf-8")
    code, out, err = mw(root, "propose", str(req), "--now", NOW)
    assert "internal error" not in err and "Traceback" not in err, err
    return code, out, err


def refused(mw, root, tmp_path, doc, field):
    """The request is refused with exit 2, a sentence naming `field`, and nothing left."""
    before = git(root, "for-each-ref", "--format=%(refname)")
    code, out, err = propose(mw, root, tmp_path, doc)
    assert code == 2, (out, err)
    assert err.startswith("memwarden: error: ") and field in err, err
    assert git(root, "for-each-ref", "--format=%(refname)") == before
    git(root, "fsck", "--strict", "--no-progress")  # no leftover broken objects
    return err


# ------------------------------------------------------------------ item 9: $ vs \Z

@pytest.mark.parametrize(("doc", "field"), [
    (request(runId="run_1\n"), "runId"),
    (request(factsUsed=["f1\n"]), "factsUsed"),
    (request(entityRefs=["e1\n"]), "entityRefs"),
    (request(agentId="a\n"), "agentId"),
    (request(proposalId="p-1\n"), "proposalId"),
    (request({"file": "open_loops.md", "operation": "add_loop", "content": "renew",
              "loopId": "loop_x\n"}), "loopId"),
    (request({"file": "facts.md", "operation": "append", "content": "x",
              "section": "Domain\n- [ ] loop_evil: smuggled"}), "section"),
])
def test_trailing_newline_ids_are_refused(repo, tmp_path, mw, doc, field):
    refused(mw, repo, tmp_path, doc, field)


# ------------------------------------------------------ item 10: no tracebacks, exit 2

@pytest.mark.parametrize("pid", ["p.", "x..", "p.lock", "a..b", "p-1.lock"])
def test_invalid_ref_name_proposal_ids_are_refused(repo, tmp_path, mw, pid):
    refused(mw, repo, tmp_path, request(proposalId=pid), "proposalId")
    ok = subprocess.run(["git", "check-ref-format", "--branch", f"proposals/a/{pid}"],
                        capture_output=True)
    assert ok.returncode != 0  # git agrees it is not a branch name


def test_dotgit_file_path_is_refused(repo, tmp_path, mw):
    doc = request({"file": "runs/run_x/.git/config", "operation": "replace",
                   "content": "[core]\n\tfsmonitor = touch /tmp/pwned\n"})
    refused(mw, repo, tmp_path, doc, "file")


@pytest.mark.parametrize("where", ["top", "updates", "reasoning"])
def test_json_nested_100000_deep_is_exit_2_naming_the_field(repo, tmp_path, mw, where):
    deep = "[" * 100_000 + "]" * 100_000
    if where == "top":
        text = deep
        field = "the request"
    elif where == "updates":
        text = '{"agentId": "a", "runId": "r", "updates": ' + deep + "}"
        field = "'updates'"
    else:
        text = '{"agentId": "a", "runId": "r", "reasoning": ' + deep + ', "updates": []}'
        field = "'reasoning'"
    err = refused(mw, repo, tmp_path, text, field)
    assert "nested" in err


def test_deep_document_given_in_process_is_refused(repo):
    from memwarden.apply.propose import parse_request
    from memwarden.model.errors import MemwardenError

    doc: list = []
    for _ in range(100_000):
        doc = [doc]
    with pytest.raises(MemwardenError, match="nested more than"):
        parse_request(request(reasoning="x", factsUsed=doc))


# ------------------------------------------------------------- item 11: unsafe paths

UNSAFE = ["runs/run_x/\u202egnp.md", "runs/run_x/.git\u200c/config", "runs/run_x/.GIT/config",
          "runs/run_x/.git. /config", "runs/run_x/git~1/config",
          "runs/run_x/.git::$INDEX_ALLOCATION/config", "runs/run_x/\ufeff.git/config",
          "runs/run_x/a\u200bb.md", "runs/run_x/a\nb.md", "runs/run_x/\u2066x\u2069.md"]


@pytest.mark.parametrize("path", UNSAFE)
def test_unsafe_paths_are_refused_at_propose(repo, tmp_path, mw, path):
    doc = request({"file": path, "operation": "replace", "content": "hello\n"})
    refused(mw, repo, tmp_path, doc, "file")


def _add_path(root, tree, parts, blob):
    """A new tree: `tree` with a blob at `parts` (git mktree writes any name, as an
    attacker's own git would)."""
    lines = []
    sub = None
    if tree is not None:
        for line in git(root, "ls-tree", "-z", tree).split("\0"):
            if not line:
                continue
            meta, name = line.split("\t", 1)
            if name == parts[0]:
                sub = meta.split()[2]
                continue
            lines.append(line)
    if len(parts) == 1:
        lines.append(f"100644 blob {blob}\t{parts[0]}")
    else:
        lines.append(f"040000 tree {_add_path(root, sub, parts[1:], blob)}\t{parts[0]}")
    return git(root, "mktree", "-z", input="".join(f"{x}\0" for x in lines)).strip()


def forged_proposal(root, pid, path, content="[core]\n\tfsmonitor = touch pwned\n"):
    """A proposal branch adding `path`, with proper trailers, built with plumbing."""
    blob = git(root, "hash-object", "-w", "--stdin", input=content).strip()
    tree = _add_path(root, git(root, "rev-parse", "main^{tree}").strip(), path.split("/"), blob)
    msg = (f"memory-update: a / run_7 / {pid}\n\nAgent-Id: a\nRun-Id: run_7\n"
           f"Proposal-Id: {pid}\nPriority: normal\nExpected-Version: 1\n")
    commit = git(root, "commit-tree", tree, "-p", "main", "-m", msg).strip()
    git(root, "update-ref", f"refs/heads/proposals/a/{pid}", commit)
    return f"proposals/a/{pid}"


@pytest.mark.parametrize("path", ["memory/a/runs/run_x/\u202egnp.md",
                                  "memory/a/runs/run_x/.git\u200c/config",
                                  "memory/a/runs/run_x/.Git/config",
                                  "memory/a/runs/run_x/GIT~1/config"])
def test_gate_fails_unsafe_paths_under_mw502(repo, mw, path):
    ref = forged_proposal(repo, "p-evil", path)
    code, out, err = mw(repo, "gate", ref, "--format", "json")
    doc = json.loads(out)
    assert code == 1 and doc["verdict"] == "fail", (out, err)
    assert any(f["rule"] == "MW502" and f["path"] == path for f in doc["findings"]), out
    assert doc["auto_approve"]["eligible"] is False


def test_server_hook_refuses_unsafe_paths(repo, tmp_path):
    # Owners configured: the hook enforces (without any role it only logs, in testing mode).
    (repo / "memwarden.toml").write_text('[server]\nowners = ["olga"]\n')
    git(repo, "add", "memwarden.toml")
    git(repo, "commit", "-qm", "Configure the server\n\nHuman-Edit: true")
    bare = tmp_path / "remote.git"
    git(tmp_path, "clone", "-q", "--bare", str(repo), str(bare))
    install(bare)
    ref = forged_proposal(repo, "p-evil", "memory/a/runs/run_x/.git\u200c/config")
    proc = subprocess.run(["git", "push", str(bare), f"{ref}:{ref}"], cwd=repo,
                          capture_output=True, text=True, env={**os.environ, **GIT_ENV})
    assert proc.returncode != 0 and "MW502" in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr


def test_unknown_agent_is_refused_at_propose_and_fails_the_gate(repo, tmp_path, mw):
    doc = {"agentId": "ghost", "runId": "run_1", "reasoning": "x",
           "updates": [{"file": "facts.md", "operation": "append", "section": "D",
                        "content": "boo"}]}
    refused(mw, repo, tmp_path, doc, "agentId")
    blob = git(repo, "hash-object", "-w", "--stdin", input="# Facts\n\n## D\n- boo\n").strip()
    tree = _add_path(repo, git(repo, "rev-parse", "main^{tree}").strip(),
                     ["memory", "ghost", "facts.md"], blob)
    msg = ("memory-update: ghost / run_1 / p-1\n\nAgent-Id: ghost\nRun-Id: run_1\n"
           "Proposal-Id: p-1\nPriority: normal\nExpected-Version: 0\n")
    commit = git(repo, "commit-tree", tree, "-p", "main", "-m", msg).strip()
    git(repo, "update-ref", "refs/heads/proposals/ghost/p-1", commit)
    code, out, err = mw(repo, "gate", "proposals/ghost/p-1", "--format", "json")
    doc = json.loads(out)
    assert code == 1 and doc["verdict"] == "fail", (out, err)
    assert any(f["rule"] == "MW507" for f in doc["findings"])


def test_agent_with_a_contract_but_no_memory_yet_may_propose(repo, tmp_path, mw):
    agent = ("---\nname: B\nslug: b\nversion: 1.0.0\nstatus: active\ncreated_at: 2026-01-01\n"
             "created_by: owner\n---\n# B\n")
    (repo / "agents/b").mkdir(parents=True)
    (repo / "agents/b/_agent.md").write_text(agent)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "agent b\n\nHuman-Edit: true")
    doc = {"agentId": "b", "runId": "run_1", "updates": [
        {"file": "facts.md", "operation": "append", "section": "D", "content": "first"}]}
    code, out, err = propose(mw, repo, tmp_path, doc)
    assert code == 0, err


@pytest.mark.parametrize("name", [".git", ".GIT", ".git\u200c", "\u200d.g\u200ei\u200ft\ufeff",
                                  ".git.", ".git ", ".git . .", ".git::$INDEX_ALLOCATION",
                                  "git~1", "GIT~1", ".gIt\u206a"])
def test_is_dotgit_matches_gits_rules(name):
    assert is_dotgit(name) and unsafe_path_reason(f"memory/a/{name}/x") is not None


@pytest.mark.parametrize("name", [".gitignore", ".github", "git", ".gi", "git~2", "x.git",
                                  ".git\u00e9"])
def test_is_dotgit_leaves_other_names(name):
    assert not is_dotgit(name)


def test_core_protecthfs_clone_agrees(tmp_path):
    """git itself refuses to check out what is_dotgit names (the oracle)."""
    src = make_repo(tmp_path, {"x.md": "x\n"})
    blob = git(src, "hash-object", "-w", "--stdin", input="[core]\n").strip()
    for i, name in enumerate([".git\u200c", ".GIT", "git~1"]):
        assert is_dotgit(name)
        tree = _add_path(src, git(src, "rev-parse", "HEAD^{tree}").strip(),
                         ["d", name, "config"], blob)
        commit = git(src, "commit-tree", tree, "-p", "HEAD", "-m", "evil").strip()
        git(src, "update-ref", f"refs/heads/evil{i}", commit)
        dst = tmp_path / f"clone{i}"
        proc = subprocess.run(["git", "-c", "core.protectHFS=true", "-c", "core.protectNTFS=true",
                               "clone", "-q", "-b", f"evil{i}", str(src), str(dst)],
                              capture_output=True, text=True)
        assert proc.returncode != 0 or not (dst / "d" / name).exists(), proc.stderr


# -------------------------------------------------------------- item 12: size caps

BIG = "x" * (1024 * 1024)


@pytest.mark.parametrize(("update", "extra", "field"), [
    ({"file": "facts.md", "operation": "append", "section": "D", "content": BIG}, {},
     "updates[0].content"),
    ({"file": "facts.md", "operation": "append", "section": BIG, "content": "x"}, {},
     "updates[0].section"),
    ({"file": "decisions.md", "operation": "add_decision", "title": BIG, "content": "x"}, {},
     "updates[0].title"),
    ({"file": "open_loops.md", "operation": "close", "loopId": "loop_001",
      "resolution": BIG}, {}, "updates[0].resolution"),
    (APPEND, {"reasoning": BIG}, "reasoning"),
    (APPEND, {"reasoning": {"nested": ["text"]}}, "reasoning"),
    (APPEND, {"reasoning": 42}, "reasoning"),
    (APPEND, {"reasoning": []}, "reasoning"),
])
def test_oversized_or_mistyped_fields_are_refused(repo, tmp_path, mw, update, extra, field):
    refused(mw, repo, tmp_path, request(update, **extra), field)


def test_request_cap_counts_all_updates(repo, tmp_path, mw):
    updates = [{"file": "facts.md", "operation": "append", "section": "D",
                "content": "y" * 60_000} for _ in range(5)]
    err = refused(mw, repo, tmp_path, request(*updates), "request")
    assert "max_request_bytes" in err


def test_caps_are_configurable(repo, tmp_path, mw):
    (repo / "memwarden.toml").write_text("max_update_bytes = 100\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "caps\n\nHuman-Edit: true")
    doc = request({"file": "facts.md", "operation": "append", "section": "D",
                   "content": "z" * 200})
    err = refused(mw, repo, tmp_path, doc, "updates[0].content")
    assert "100-byte cap" in err and "max_update_bytes" in err


def test_propose_as_a_process_never_prints_a_traceback(repo, tmp_path):
    req = tmp_path / "deep.json"
    req.write_text('{"agentId": "a", "updates": ' + "[" * 100_000 + "]" * 100_000 + "}")
    proc = subprocess.run([sys.executable, "-m", "memwarden", "propose", str(req)], cwd=repo,
                          capture_output=True, text=True, env={**os.environ, **GIT_ENV},
                          timeout=120)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "'updates'" in proc.stderr
