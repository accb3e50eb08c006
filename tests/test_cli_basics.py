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
