"""CLI basics: version, help, exit codes for usage errors, rule docs."""

from __future__ import annotations

import json
import subprocess
import sys

from conftest import make_repo


def test_version_and_module_entry(tmp_path):
    out = subprocess.run([sys.executable, "-m", "memwarden", "--version"], capture_output=True,
                         text=True, check=True).stdout
    assert "0.1.0" in out


def test_unknown_option_is_usage_error(tmp_path, mw):
    code, _, err = mw(tmp_path, "check", "--bogus")
    assert code == 2
    assert "No such option" in err


def test_rule_docs_for_every_registered_rule(tmp_path, mw):
    code, out, _ = mw(tmp_path, "rule", "--format", "json")
    assert code == 0
    rules = json.loads(out)
    assert rules, "no rules registered"
    for r in rules:
        assert r["summary"] and r["why"] and r["bad"] and r["good"], r["id"]
        code, text, _ = mw(tmp_path, "rule", r["id"])
        assert code == 0 and "Bad:" in text and "Good:" in text


def test_unknown_rule_exit_2(tmp_path, mw):
    code, _, err = mw(tmp_path, "rule", "MW999")
    assert code == 2 and "unknown rule" in err


def test_check_missing_file_exit_2(tmp_path, mw):
    root = make_repo(tmp_path, {"README.md": "x"})
    code, _, err = mw(root, "check", "memory/a/nope.md")
    assert code == 2 and "no such file" in err


def test_rev_with_files_is_usage_error(tmp_path, mw):
    root = make_repo(tmp_path, {"README.md": "x"})
    code, _, err = mw(root, "check", "--rev", "HEAD", "--all")
    assert code == 2


def test_unknown_rev_exit_2(tmp_path, mw):
    root = make_repo(tmp_path, {"README.md": "x"})
    code, _, err = mw(root, "check", "--at", "nope")
    assert code == 2 and "memwarden: error: nope: no such branch or commit" in err


def test_check_outside_a_memory_repository_exit_2(tmp_path, mw):
    """A CI step in the wrong folder must fail, not check nothing and pass."""
    empty = tmp_path / "empty"
    empty.mkdir()
    code, out, err = mw(empty, "check")
    assert code == 2 and "not a memory repository" in err and "not inside a git" in err
    code_repo = make_repo(tmp_path / "code", {"src/app.py": "print(1)\n"})
    code, _, err = mw(code_repo, "check", "--all")
    assert code == 2 and "not a memory repository" in err
    # a file named from a sub-folder of a plain folder: its agent cannot be told
    plain = tmp_path / "plain"
    (plain / "memory" / "bad").mkdir(parents=True)
    (plain / "memory" / "bad" / "facts.md").write_text("# Facts\n- a fact\n", "utf-8")
    code, _, err = mw(plain / "memory", "check", "bad/facts.md")
    assert code == 2 and "not a memory repository" in err
    # the same file from the folder's top is checked
    code, out, _ = mw(plain, "check", "memory/bad/facts.md")
    assert code in (0, 1) and "1 file(s) checked" in out
    # a hook's non-memory file in a memory repository is skipped as before
    assert mw(code_repo, "check", "src/app.py")[0] == 0


def test_report_never_replaces_a_memory_file(tmp_path, mw):
    root = make_repo(tmp_path, {"memory/a/facts.md": "# Facts\n\n## Domain\n\n- one fact\n"})
    before = (root / "memory/a/facts.md").read_bytes()
    for cwd, target in ((root, "memory/a/facts.md"), (root / "memory", "a/facts.md"),
                        (root, "registry.json")):
        code, _, err = mw(cwd, "check", "--all", "-o", target)
        assert code == 2 and "is a governed memory file" in err, target
    assert (root / "memory/a/facts.md").read_bytes() == before
    assert not (root / "registry.json").exists()
    code, _, _ = mw(root, "check", "--all", "-o", "report.json")
    assert code == 0 and (root / "report.json").read_text().startswith("{")


def test_an_error_outside_a_repository_names_the_command(tmp_path, mw):
    for args in (["reject", "p-1", "--reason", "x"], ["status", "p-1"]):
        code, _, err = mw(tmp_path, *args)
        assert code == 2 and f"error: {args[0]}: not inside a git repository" in err


def test_recorded_text_that_is_not_utf8_is_a_usage_error(tmp_path):
    """A reason or a name is written into git notes and commit messages: bytes no encoding
    decodes are refused up front, not a traceback half-way through recording them."""
    for args in ([b"reject", b"p-1", b"--reason", b"bad \xff byte"],
                 [b"apply", b"--all", b"--approved-by", b"x\xff"]):
        proc = subprocess.run([sys.executable.encode(), b"-m", b"memwarden", *args],
                              cwd=tmp_path, capture_output=True, text=True)
        assert proc.returncode == 2, proc.stderr
        assert "not valid UTF-8 text" in proc.stderr and "Traceback" not in proc.stderr


def test_status_and_reject_refuse_an_id_two_agents_use(tmp_path, mw):
    """reject on an ambiguous id could reject the other agent's proposal: both refuse."""
    import json as _json

    root = make_repo(tmp_path, {"memory/a/facts.md": "# Facts: a\n\n## Domain\n- one\n",
                                "memory/b/facts.md": "# Facts: b\n\n## Domain\n- one\n"})
    for agent in ("a", "b"):
        req = tmp_path / f"{agent}.json"
        req.write_text(_json.dumps({"agentId": agent, "runId": "run_1", "proposalId": "p-1",
                                    "updates": [{"file": "facts.md", "operation": "append",
                                                 "section": "Domain", "content": "two"}]}))
        assert mw(root, "propose", str(req))[0] == 0
    for args in (["status", "p-1"], ["reject", "p-1", "--reason", "dup"]):
        code, _, err = mw(root, *args)
        assert code == 2 and "used by more than one agent" in err, (args, err)
        assert "proposals/a/p-1" in err and "proposals/b/p-1" in err
