"""verify-history: linear main, every commit clean, no silent loss of Layer 1 entries."""

from __future__ import annotations

import json
import os
import subprocess

from conftest import GIT_ENV, git, make_repo, rules_in

FACTS = "# Facts: a\n\n## Domain\n- fact one\n- fact two\n"


def commit(root, message):
    subprocess.run(["git", "commit", "-qam", message], cwd=root, check=True,
                   env={**os.environ, **GIT_ENV})


def test_clean_history_passes(tmp_path, mw):
    root = make_repo(tmp_path, {"memory/a/facts.md": FACTS})
    (root / "memory/a/facts.md").write_text(FACTS + "- fact three\n")
    commit(root, "Add\n\nHuman-Edit: true")
    code, out, _ = mw(root, "verify-history")
    assert code == 0, out


def test_silent_eviction_and_merges_are_reported(tmp_path, mw):
    root = make_repo(tmp_path, {"memory/a/facts.md": FACTS})
    (root / "memory/a/facts.md").write_text("# Facts: a\n\n## Domain\n- fact two\n")
    commit(root, "memory-evict: a / facts\n\nMade room.\n\nAgent-Id: a\n"
                 "Memory-Eviction: overflow\n")
    code, out, _ = mw(root, "verify-history")
    assert code == 1 and rules_in(out) == ["MW002"] and "without listing it" in out
    git(root, "checkout", "-qb", "side", "HEAD~1")
    (root / "README.md").write_text("x\n")
    git(root, "add", "README.md")
    commit(root, "Docs")
    git(root, "checkout", "-q", "main")
    subprocess.run(["git", "merge", "-q", "--no-ff", "--no-edit", "side"], cwd=root,
                   check=True, env={**os.environ, **GIT_ENV})
    code, out, _ = mw(root, "verify-history")
    assert "merge commit on main" in out


def test_the_summary_counts_files_and_commits_apart(tmp_path, mw):
    """Three commits touching 2, 1 and 1 governed files: 4 files, 3 commits (the summary
    used to report the commits as files)."""
    root = make_repo(tmp_path, {"memory/a/facts.md": FACTS, "memory/b/facts.md": FACTS})
    for i in (1, 2):
        (root / "memory/a/facts.md").write_text(FACTS + f"- fact {i + 2}\n")
        commit(root, f"Add {i}\n\nHuman-Edit: true")
    code, out, _ = mw(root, "verify-history", "--format", "json")
    assert code == 0, out
    summary = json.loads(out)["summary"]
    assert (summary["files"], summary["commits"]) == (4, 3), summary


def test_contracts_are_listed_once_per_check_not_once_per_contract(tmp_path):
    """A commit adding many contracts (a repository's first) globbed the whole tree once
    per contract: quadratic, 4 s at 1,000 agents. Context paths stay the same."""
    from memwarden.git.repo import open_repo
    from memwarden.git.source import TreeSource
    from memwarden.policies.engine import _context_paths

    contract = "---\nname: A\nslug: {0}\n---\nBody\n"
    files = {f"agents/a{i}/_agent.md": contract.format(f"a{i}") for i in range(30)}
    root = make_repo(tmp_path, {**files, "registry.json": "{}\n", "memory/a0/facts.md": FACTS})
    source = TreeSource(open_repo(root), "HEAD")
    calls = []
    glob = source.glob
    source.glob = lambda pattern: calls.append(pattern) or glob(pattern)  # type: ignore
    focus = set(files) | {"memory/a0/facts.md"}
    extra = _context_paths(focus, source)
    assert calls == ["agents/*/_agent.md"]
    assert extra == ["memory/a0/open_loops.md", "memory/a0/snapshot.md", "registry.json"]


def test_history_holds_what_the_server_hook_refuses(tmp_path, mw):
    """verify-history judges a human edit as the server hook does: no bookkeeping written
    by hand, status along the graph; `agent add --commit` itself is clean."""
    root = make_repo(tmp_path, {"memory/a/facts.md": FACTS})
    code, _, err = mw(root, "agent", "add", "beta", "--status", "active", "--commit")
    assert code == 0, err
    code, out, _ = mw(root, "verify-history")
    assert code == 0, out
    meta = root / "memory/beta/meta.json"
    meta.write_text(json.dumps({"agentId": "beta", "version": 7, "schemaVersion": "1.0"}))
    commit(root, "Bump\n\nHuman-Edit: true")
    contract = root / "agents/beta/_agent.md"
    contract.write_text(contract.read_text().replace('status: "active"', 'status: "draft"'))
    commit(root, "Back to draft\n\nHuman-Edit: true")
    code, out, _ = mw(root, "verify-history")
    assert code == 1 and {"MW205", "MW503"} <= set(rules_in(out)), out
    assert "memory/beta/meta.json" in out and "'active' -> 'draft'" in out


def test_an_eviction_must_name_the_entry_itself_not_a_longer_id(tmp_path, mw):
    loops = ("# Open Loops: a\n\n## Open\n- [ ] loop_old1: one (opened 2025-01-01)\n"
             "- [ ] loop_old10: ten (opened 2025-01-01)\n")
    root = make_repo(tmp_path, {"memory/a/open_loops.md": loops})
    (root / "memory/a/open_loops.md").write_text(loops.replace(
        "- [ ] loop_old1: one (opened 2025-01-01)\n", ""))
    commit(root, "memory-evict: a / open_loops\n\nMoved out: loop_old10 (frozen-loop)\n\n"
                 "Agent-Id: a\nMemory-Eviction: frozen-loop\n")
    code, out, _ = mw(root, "verify-history")
    assert code == 1 and "removes loop_old1 " in out, out
