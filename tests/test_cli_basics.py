"""CLI basics: version, help, exit codes for usage errors, rule docs."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
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
    code, _, err = mw(root, "check", "--rev", "nope")
    assert code == 2 and "not a commit" in err


# -- the lean `check` entry (memwarden/cli_check.py) ---------------------------------------

LEAN_FILES = {
    "memory/a/facts.md": "# Facts: a\n\n## Domain\n- memory is Markdown in git\n",
    "memory/a/notes.txt": "stray\n",
    "memory/b/facts.md": "# Факти: b\n\n## Домен\n- Агент зберігає факти\n",
    "memory/b/нотатки.txt": "зайвий файл\n",
}
LEAN_CASES = [
    ["memory/a/facts.md"],
    ["memory/a/notes.txt"],
    ["memory/b/нотатки.txt", "memory/b/facts.md"],
    ["--all", "--format", "json"],
    ["--format=sarif", "memory/a/facts.md"],
    ["--all", "--select", "MW5", "--ignore=mw506"],
    ["--select", "MW5,MW1", "--select", "MW3", "memory/a/notes.txt"],
    ["--now", "2026-01-01", "--no-cache", "memory/a/facts.md"],
    ["memory/a/nope.md"],
    ["--now", "yesterday", "memory/a/facts.md"],
    ["--", "memory/a/facts.md"],
    ["--rev", "HEAD", "--format", "github"],
    ["--rev", "nope"],
    ["--config", "missing.toml", "--all"],
    [],
]
CLICK_CASES = [
    ["--help"], ["--bogus"], ["--rev", "HEAD", "--all"], ["--rev", "HEAD", "x.md"],
    ["--format", "TEXT"], ["-o", "out.json", "--all"], ["--output=o.txt"],
    ["--rev", "a", "--rev", "b"], ["--all=1"], ["--now"], ["-"], ["--select", "-x"],
]


def _click_only(args: list[str]) -> tuple[int, str, str]:
    import io
    from contextlib import redirect_stderr, redirect_stdout

    from memwarden.cli import main as cli
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = cli._main(["check", *args])
    return code, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("args", LEAN_CASES + CLICK_CASES)
def test_lean_check_is_the_click_command(tmp_path, monkeypatch, capsys, args):
    """Same exit code, stdout and stderr as the click command, for every argument shape;
    shapes the lean parser does not mirror are handed to click."""
    from memwarden.cli.check import lean_main, parse_check_args

    root = make_repo(tmp_path, LEAN_FILES)
    monkeypatch.chdir(root)
    want = _click_only(args)
    capsys.readouterr()
    code = lean_main(args)
    if args in CLICK_CASES:
        assert code is None and parse_check_args(args) is None
        return
    out, err = capsys.readouterr()
    assert (code, out, err) == want
    assert code in (0, 1, 2) and "Traceback" not in err


def test_python_m_check_runs_without_click_and_prints_what_click_prints(tmp_path):
    """The hook's command line, as a program (it ends with os._exit after flushing), gives
    the bytes the click command gives; and its common case never imports click."""
    root = make_repo(tmp_path, LEAN_FILES)
    probe = ("import sys\nfrom memwarden.__main__ import main\n"
             "code = main(['check', *sys.argv[1:]])\n"
             "sys.stderr.write('CLICK=%s' % ('click' in sys.modules))\nsys.exit(code)\n")
    via_click = ("import sys\nfrom memwarden.cli.main import _main\n"
                 "sys.exit(_main(['check', *sys.argv[1:]]))\n")
    for args in (["memory/a/facts.md"], ["memory/a/notes.txt"], ["memory/b/нотатки.txt"],
                 ["--all", "--format", "json"], ["memory/a/nope.md"], ["--bogus"]):
        lean = subprocess.run([sys.executable, "-m", "memwarden", "check", *args], cwd=root,
                              capture_output=True)
        ref = subprocess.run([sys.executable, "-c", via_click, *args], cwd=root,
                             capture_output=True)
        assert (lean.returncode, lean.stdout, lean.stderr) == \
            (ref.returncode, ref.stdout, ref.stderr), args
        if args[0] in ("memory/a/facts.md", "memory/a/nope.md"):  # plain ASCII output
            flag = subprocess.run([sys.executable, "-c", probe, *args], cwd=root,
                                  capture_output=True).stderr.rpartition(b"CLICK=")[2]
            assert flag == b"False", args
