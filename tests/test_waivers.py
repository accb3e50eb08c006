"""Waivers: `[[waivers]]` in memwarden.toml (rule, path, fingerprint, expires, reason).

A waiver matches a finding by rule, path and the sha256 of the offending text, never by
position; it lapses after `expires` and then reports itself as MW001; a malformed one is a
configuration error (exit 2) that names the key. Real repositories, the CLI in-process.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import os
import re

import pytest
from conftest import git, make_repo, rules_in
from hypothesis import given
from hypothesis import strategies as st
from test_report import sarif_validator

from memwarden.model.config import parse_config
from memwarden.model.findings import ERROR, Finding, fingerprint
from memwarden.policies.engine import apply_waivers

GOOD_FACTS = "# Facts: a\n\n## Domain\n- memory is Markdown in git\n"
NOTES = "memory/a/notes.txt"
NOTES_FP = "sha256:" + hashlib.sha256(NOTES.encode()).hexdigest()
OTHER_FP = "sha256:" + hashlib.sha256(b"something else").hexdigest()


def waiver(rule: str = "MW506", path: str = NOTES, fp: str = NOTES_FP,
           expires: str = "2099-12-31", reason: str = "migrated note; owner reviewed") -> str:
    return (f'[[waivers]]\nrule = "{rule}"\npath = "{path}"\nfingerprint = "{fp}"\n'
            f'expires = {expires}\nreason = "{reason}"\n')


def repo(tmp_path, config: str | None, notes: str = "x\n", **more: str):
    files = {"memory/a/facts.md": GOOD_FACTS, NOTES: notes, **more}
    if config is not None:
        files["memwarden.toml"] = config
    return make_repo(tmp_path, files)


def json_report(mw, root, *args: str) -> tuple[int, dict]:
    code, out, err = mw(root, "check", "--format", "json", *args)
    assert err == ""
    return code, json.loads(out)


# -- a waiver that matches -----------------------------------------------------------------

def test_without_waiver_the_finding_fails(tmp_path, mw):
    root = repo(tmp_path, None)
    code, out, _ = mw(root, "check")
    assert code == 1 and rules_in(out) == ["MW506"]


def test_waived_finding_passes_and_is_reported_as_waived(tmp_path, mw):
    root = repo(tmp_path, waiver())
    code, out, _ = mw(root, "check")
    assert code == 0
    assert f"{NOTES}:1:1: MW506 not a memory file" in out and "(waived)" in out
    assert out.rstrip().endswith("0 error(s), 0 warning(s), 1 waived")

    code, doc = json_report(mw, root)
    assert code == 0
    (f,) = doc["findings"]
    assert f["rule"] == "MW506" and f["waived"] is True and f["fingerprint"] == NOTES_FP
    assert doc["summary"]["waived"] == 1 and doc["summary"]["errors"] == 0

    code, out, _ = mw(root, "check", "--format", "sarif")
    assert code == 0
    sarif = json.loads(out)
    assert not list(sarif_validator().iter_errors(sarif))
    (res,) = sarif["runs"][0]["results"]
    assert res["ruleId"] == "MW506"
    assert res["suppressions"][0]["kind"] == "external"
    assert res["suppressions"][0]["status"] == "accepted"

    code, out, _ = mw(root, "check", "--format", "github")
    assert code == 0 and "::error" not in out and out.splitlines()[-1].endswith("1 waived")


def test_waiver_applies_when_checking_just_that_file(tmp_path, mw):
    """pre-commit passes file names: the waiver still applies in a partial check."""
    root = repo(tmp_path, waiver())
    code, doc = json_report(mw, root, NOTES)
    assert code == 0 and doc["summary"] == {"files": 1, "errors": 0, "warnings": 0, "waived": 1}


def test_waiver_from_the_committed_config_with_rev(tmp_path, mw):
    root = repo(tmp_path, waiver())
    code, doc = json_report(mw, root, "--rev", "HEAD")
    assert code == 0 and doc["findings"][0]["waived"] is True


def test_one_waiver_does_not_cover_another_finding(tmp_path, mw):
    root = repo(tmp_path, waiver(), **{"memory/a/other.txt": "y\n"})
    code, doc = json_report(mw, root)
    assert code == 1
    assert [(f["path"], f["waived"]) for f in doc["findings"]] == [
        (NOTES, True), ("memory/a/other.txt", False)]
    assert doc["summary"]["errors"] == 1 and doc["summary"]["waived"] == 1


# -- a waiver that does not match ----------------------------------------------------------

@pytest.mark.parametrize("config", [
    waiver(fp=OTHER_FP),
    waiver(fp=NOTES_FP[:-1] + ("1" if NOTES_FP.endswith("0") else "0")),
    waiver(rule="MW507"),
    waiver(path="memory/a/other.txt"),
    waiver(path="memory/A/notes.txt"),
], ids=["other-text", "one-hex-digit-off", "other-rule", "other-path", "path-case"])
def test_non_matching_waiver_does_not_apply(tmp_path, mw, config):
    root = repo(tmp_path, config)
    code, doc = json_report(mw, root)
    assert code == 1
    (f,) = doc["findings"]
    assert f["waived"] is False and doc["summary"]["waived"] == 0


def test_inline_waiver_in_a_memory_file_is_ignored(tmp_path, mw):
    """Waivers live only in human-owned config (SPEC §2): memory content cannot waive."""
    root = repo(tmp_path, None, notes="<!-- memwarden: waive MW506 -->\nmemwarden-waive MW506\n")
    code, doc = json_report(mw, root)
    assert code == 1 and doc["summary"]["waived"] == 0
    assert "MW506" in [f["rule"] for f in doc["findings"]]
    assert not any(f["waived"] for f in doc["findings"])


# -- the fingerprint is the hash of the offending text, not its position -------------------

def test_fingerprint_is_sha256_of_the_offending_text(tmp_path, mw):
    root = repo(tmp_path, None)
    os.symlink("facts.md", root / "memory/a/snapshot.md")
    code, doc = json_report(mw, root)
    by_rule = {f["rule"]: f for f in doc["findings"]}
    assert by_rule["MW506"]["fingerprint"] == NOTES_FP
    link = "memory/a/snapshot.md->facts.md"
    assert by_rule["MW502"]["fingerprint"] == "sha256:" + hashlib.sha256(link.encode()).hexdigest()


def test_waiver_survives_lines_inserted_above(tmp_path, mw):
    """MW506's offending text is the path: editing the file (lines above) keeps the waiver."""
    root = repo(tmp_path, waiver(), notes="x\n")
    assert mw(root, "check")[0] == 0
    (root / NOTES).write_text("new line 1\nnew line 2\n\nx\n", encoding="utf-8")
    git(root, "commit", "-qam", "lines above")
    code, doc = json_report(mw, root)
    assert code == 0 and doc["findings"][0]["fingerprint"] == NOTES_FP
    assert doc["findings"][0]["waived"] is True


def test_symlink_waiver_is_tied_to_its_target(tmp_path, mw):
    link = "memory/a/snapshot.md->facts.md"
    fp = "sha256:" + hashlib.sha256(link.encode()).hexdigest()
    root = repo(tmp_path, waiver(rule="MW502", path="memory/a/snapshot.md", fp=fp))
    (root / NOTES).unlink()
    os.symlink("facts.md", root / "memory/a/snapshot.md")
    assert mw(root, "check")[0] == 0
    (root / "memory/a/snapshot.md").unlink()
    os.symlink("../b/facts.md", root / "memory/a/snapshot.md")
    code, doc = json_report(mw, root)
    assert code == 1 and doc["findings"][0]["waived"] is False


def _finding(line: int, text: str = "<!-- note -->") -> Finding:
    return Finding(path="memory/a/facts.md", line=line, col=1, rule="MW305", severity=ERROR,
                   message="hidden HTML comment", fingerprint=fingerprint(text))


def test_apply_waivers_matches_by_text_wherever_the_line_is():
    config = parse_config(waiver(rule="MW305", path="memory/a/facts.md",
                                 fp=fingerprint("<!-- note -->")))
    today = _dt.date(2026, 1, 1)
    for line in (3, 9, 120):
        (f,) = apply_waivers([_finding(line)], config, today, None)
        assert f.waived and f.line == line
    (f,) = apply_waivers([_finding(3, "<!-- other -->")], config, today, None)
    assert not f.waived


@given(st.text())
def test_fingerprint_format_matches_the_config_schema(text):
    fp = fingerprint(text)
    assert re.fullmatch(r"sha256:[0-9a-f]{64}", fp)
    assert fp == "sha256:" + hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


# -- expiry --------------------------------------------------------------------------------

def test_waiver_is_live_through_its_expiry_day(tmp_path, mw):
    root = repo(tmp_path, waiver(expires="2030-06-30"))
    assert mw(root, "check", "--now", "2030-06-30")[0] == 0
    assert mw(root, "check", "--now", "2030-06-30T23:59:59+00:00")[0] == 0


def test_expired_waiver_does_not_apply_and_reports_mw001(tmp_path, mw):
    config = "# waivers\n\n" + waiver(expires="2030-06-30")
    root = repo(tmp_path, config)
    code, doc = json_report(mw, root, "--now", "2030-07-01")
    assert code == 1
    by_rule = {f["rule"]: f for f in doc["findings"]}
    assert set(by_rule) == {"MW506", "MW001"}
    assert by_rule["MW506"]["waived"] is False
    mw001 = by_rule["MW001"]
    assert mw001["path"] == "memwarden.toml" and mw001["severity"] == "error"
    assert mw001["line"] == config.splitlines().index(f'fingerprint = "{NOTES_FP}"') + 1
    assert "waivers[0]" in mw001["message"] and "2030-06-30" in mw001["message"]
    assert doc["summary"]["errors"] == 2 and doc["summary"]["waived"] == 0
    code, out, _ = mw(root, "check", "--now", "2030-07-01")
    assert sorted(rules_in(out)) == ["MW001", "MW506"]


def test_expired_waiver_reported_when_its_file_or_the_config_is_checked(tmp_path, mw):
    root = repo(tmp_path, waiver(expires="2030-06-30"))
    code, out, _ = mw(root, "check", "--now", "2031-01-01", NOTES)
    assert code == 1 and sorted(rules_in(out)) == ["MW001", "MW506"]
    code, out, _ = mw(root, "check", "--now", "2031-01-01", "memwarden.toml")
    assert code == 1 and rules_in(out) == ["MW001"]
    # A commit touching neither the waived file nor the config stays about its own files.
    code, out, _ = mw(root, "check", "--now", "2031-01-01", "memory/a/facts.md")
    assert code == 0 and rules_in(out) == []


def test_bad_now_is_a_usage_error(tmp_path, mw):
    root = repo(tmp_path, waiver())
    code, out, err = mw(root, "check", "--now", "someday")
    assert code == 2 and out == "" and "--now someday" in err


# -- malformed waivers: exit 2, naming the key ---------------------------------------------

@pytest.mark.parametrize(("config", "key"), [
    (waiver().replace('reason = "migrated note; owner reviewed"\n', ""), "waivers[0]: missing "
                                                                        "required key 'reason'"),
    (waiver(fp="sha256:XYZ"), "waivers[0].fingerprint"),
    (waiver(fp=NOTES_FP.upper().replace("SHA256", "sha256")), "waivers[0].fingerprint"),
    (waiver(fp=NOTES_FP[7:]), "waivers[0].fingerprint"),
    (waiver(expires='"2099-13-01"'), "waivers[0].expires"),
    (waiver(expires='"soon"'), "waivers[0].expires"),
    (waiver(expires="2099-12-31T00:00:00"), "waivers[0].expires"),
    (waiver(rule="MW5"), "waivers[0].rule"),
    (waiver(reason=""), "waivers[0].reason"),
    (waiver() + 'note = "x"\n', "waivers[0].note"),
    (waiver() + waiver(fp="sha256:0"), "waivers[1].fingerprint"),
    ('[waivers]\nrule = "MW506"\n', "waivers: expected an array"),
])
def test_malformed_waiver_is_a_config_error(tmp_path, mw, config, key):
    root = repo(tmp_path, config)
    code, out, err = mw(root, "check")
    assert code == 2 and out == ""
    assert err.startswith("memwarden: error: ") and key in err, err
    assert "Traceback" not in err


def test_invalid_toml_date_is_a_config_error_with_its_line(tmp_path, mw):
    root = repo(tmp_path, waiver(expires="2099-02-30"))
    code, out, err = mw(root, "check")
    assert code == 2 and out == "" and "invalid TOML" in err and "line 5" in err
