"""Report formats: exact text and GitHub lines, JSON contract, SARIF 2.1.0 validity.

SARIF is validated against the official OASIS SARIF 2.1.0 schema (errata 01), vendored in
tests/data (see tests/data/README.md for its source and licence), and checked for what
GitHub code scanning needs on top of the schema. Paths and messages are the tricky part:
commas, colons, percent signs, newlines, unicode, bidi controls and undecodable bytes.
"""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path
from urllib.parse import unquote_to_bytes

import jsonschema
import pytest
from conftest import make_repo, rules_in
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memwarden.model.findings import ERROR, WARNING, Finding, fingerprint, summarize
from memwarden.policies.registry import all_rules
from memwarden.report.findings import (
    EXTENSIONS,
    FORMATS,
    GITHUB_ANNOTATION_CAP,
    SARIF_FINGERPRINT_KEY,
    escape_data,
    escape_property,
    path_bytes,
    printable,
    render,
)

DATA = Path(__file__).parent / "data"
GOOD_FACTS = "# Facts: a\n\n## Domain\n- memory is Markdown in git\n"


@cache
def sarif_validator() -> jsonschema.Draft4Validator:
    schema = json.loads((DATA / "sarif-schema-2.1.0.json").read_text("utf-8"))
    jsonschema.Draft4Validator.check_schema(schema)
    return jsonschema.Draft4Validator(schema)


def rule_docs() -> list[dict]:
    return [r.to_doc() for r in all_rules()]


def finding(path: str = "memory/a/notes.txt", rule: str = "MW506", severity: str = ERROR,
            message: str = "not a memory file", line: int = 1, col: int = 1, hint: str = "",
            waived: bool = False) -> Finding:
    return Finding(path=path, line=line, col=col, rule=rule, severity=severity, message=message,
                   fingerprint=fingerprint(path), hint=hint, waived=waived)


def report(fmt: str, findings: list[Finding], files: int = 1) -> str:
    return render(fmt, findings, summarize(findings, files), rule_docs())


# RFC 3986 relative reference as sarif_uri builds it: unreserved characters, '/', and
# percent-encoded octets; no scheme, query or fragment.
_URI_REF = re.compile(r"^(?:[A-Za-z0-9._~/-]|%[0-9A-F]{2})*$")


def check_sarif(text: str, findings: list[Finding]) -> dict:
    """Validate against the official schema and GitHub code scanning's expectations."""
    doc = json.loads(text)
    errors = sorted(sarif_validator().iter_errors(doc), key=lambda e: list(e.path))
    assert not errors, [f"{list(e.path)}: {e.message}" for e in errors[:5]]
    assert doc["version"] == "2.1.0" and len(doc["runs"]) == 1
    run = doc["runs"][0]
    driver = run["tool"]["driver"]
    assert driver["name"] == "memwarden" and driver["version"]
    ids = [r["id"] for r in driver["rules"]]
    assert ids == sorted(set(ids)), "rules must be unique and in a stable order"
    assert {r.id for r in all_rules()} <= set(ids), "every registered rule is described"
    for r in driver["rules"]:
        assert r["shortDescription"]["text"] and r["fullDescription"]["text"]
        assert r["help"]["text"] and r["help"]["markdown"]
        assert r["defaultConfiguration"]["level"] in ("error", "warning")
        assert "memwarden" in r["properties"]["tags"]
    assert len(run["results"]) == len(findings)
    for res, f in zip(run["results"], findings, strict=True):
        assert res["ruleId"] == f.rule
        assert driver["rules"][res["ruleIndex"]]["id"] == f.rule
        assert res["level"] == ("error" if f.severity == ERROR else "warning")
        assert res["message"]["text"].startswith(f.message)
        (loc,) = res["locations"]
        art = loc["physicalLocation"]["artifactLocation"]
        if f.path.startswith("/"):  # outside the repository, as typed: an absolute file URI
            assert "uriBaseId" not in art and art["uri"].startswith("file:///")
            uri = art["uri"][len("file://"):]
        else:
            assert art["uriBaseId"] == "%SRCROOT%"
            uri = art["uri"]
            assert not uri.startswith("/") and "://" not in uri
        assert _URI_REF.match(uri), uri
        assert unquote_to_bytes(uri) == path_bytes(f.path)
        region = loc["physicalLocation"]["region"]
        assert region["startLine"] == f.line >= 1 and region["startColumn"] == f.col >= 1
        assert res["partialFingerprints"] == {SARIF_FINGERPRINT_KEY: f.fingerprint}
        if f.waived:
            (sup,) = res["suppressions"]
            assert sup["kind"] == "external" and sup["status"] == "accepted"
            assert sup["justification"]
        else:
            assert "suppressions" not in res
    return doc


# -- the vendored schema itself ------------------------------------------------------------

def test_vendored_schema_is_the_official_oasis_schema():
    schema = json.loads((DATA / "sarif-schema-2.1.0.json").read_text("utf-8"))
    assert schema["id"] == ("https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/"
                            "schemas/sarif-schema-2.1.0.json")
    assert schema["$schema"] == "http://json-schema.org/draft-04/schema#"
    assert len(schema["definitions"]) == 52
    readme = (DATA / "README.md").read_text("utf-8")
    assert "sarif-schema-2.1.0.json" in readme and "OASIS" in readme


def test_schema_rejects_what_github_would_reject():
    """The validator is not vacuous: a region with startLine 0 or a bad level fails."""
    doc = json.loads(report("sarif", [finding()]))
    doc["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"]["startLine"] = 0
    assert list(sarif_validator().iter_errors(doc))
    doc = json.loads(report("sarif", [finding()]))
    doc["runs"][0]["results"][0]["level"] = "fatal"
    assert list(sarif_validator().iter_errors(doc))


# -- text ----------------------------------------------------------------------------------

SUMMARY_1 = "memwarden: 1 file(s) checked, 1 error(s), 0 warning(s), 0 waived\n"


@pytest.mark.parametrize(("path", "message", "shown_path", "shown_message"), [
    ("memory/a/notes.txt", "not a memory file", "memory/a/notes.txt", "not a memory file"),
    ("memory/a/x, y: z%.md", "bad: a, b 100%", "memory/a/x, y: z%.md", "bad: a, b 100%"),
    ("memory/a/факти ü.md", "файл «не той»", "memory/a/факти ü.md", "файл «не той»"),
    ("memory/a/new\nline.txt", "two\nlines\r\n", "memory/a/new\\nline.txt", "two\\nlines\\r\\n"),
    ("memory/a/tab\there.txt", "esc \x1b[31mred", "memory/a/tab\\there.txt", "esc \\x1b[31mred"),
    ("memory/a/\u202etxt.md", "zero\u200bwidth", "memory/a/\\u202etxt.md", "zero\\u200bwidth"),
    ("memory/a/bad\udcff.txt", "byte \udcfe", "memory/a/bad\\xff.txt", "byte \\xfe"),
    ("memory/a/back\\slash.md", "c:\\x", "memory/a/back\\slash.md", "c:\\x"),
])
def test_text_exact_lines(path, message, shown_path, shown_message):
    out = report("text", [finding(path=path, message=message, line=3, col=5)])
    assert out == f"{shown_path}:3:5: MW506 {shown_message}\n{SUMMARY_1}"
    assert len(out.splitlines()) == 2
    out.encode("utf-8")  # always writable


def test_text_tags_warnings_and_waived():
    fs = [finding(path="memory/a/a.md", severity=WARNING, rule="MW105", message="soft"),
          finding(path="memory/a/b.txt", waived=True)]
    assert report("text", fs, files=2) == (
        "memory/a/a.md:1:1: MW105 soft [warning]\n"
        "memory/a/b.txt:1:1: MW506 not a memory file (waived)\n"
        "memwarden: 2 file(s) checked, 0 error(s), 1 warning(s), 1 waived\n"
    )


def test_text_clean():
    assert report("text", [], files=3) == (
        "memwarden: 3 file(s) checked, 0 error(s), 0 warning(s), 0 waived\n")


@settings(max_examples=150, deadline=None)
@given(st.text(st.characters(codec=None, exclude_categories=()), max_size=30),
       st.text(max_size=40))
def test_text_one_line_per_finding_for_any_path(path, message):
    out = report("text", [finding(path=path, message=message), finding(path=path + "x")])
    assert len(out.splitlines()) == 3 and out.endswith("\n")
    out.encode("utf-8")
    assert rules_in(out) == ["MW506", "MW506"] or ": " in path


# -- json ----------------------------------------------------------------------------------

def test_json_contract():
    fs = [finding(path="memory/a/x, y: z%.md", hint="Move it."),
          finding(path="memory/a/w.md", rule="MW105", severity=WARNING, message="soft"),
          finding(path="memory/a/v.txt", waived=True)]
    doc = json.loads(report("json", fs, files=4))
    assert doc["summary"] == {"files": 4, "errors": 1, "warnings": 1, "waived": 1}
    first = doc["findings"][0]
    assert set(first) >= {"rule", "severity", "path", "line", "col", "message", "fingerprint",
                          "waived"}
    assert first["path"] == "memory/a/x, y: z%.md" and first["hint"] == "Move it."
    assert first["fingerprint"] == fingerprint("memory/a/x, y: z%.md")
    assert re.match(r"^sha256:[0-9a-f]{64}$", first["fingerprint"])
    assert [f["waived"] for f in doc["findings"]] == [False, False, True]
    assert [f["severity"] for f in doc["findings"]] == ["error", "warning", "error"]


def test_json_extra_keys_and_exact_unicode():
    fs = [finding(path="memory/a/факти\n.md")]
    out = render("json", fs, summarize(fs, 1), rule_docs(), {"verdict": "fail"})
    assert "факти" in out  # not \u-escaped: readable
    doc = json.loads(out)
    assert doc["verdict"] == "fail" and doc["findings"][0]["path"] == "memory/a/факти\n.md"


def test_json_undecodable_path_round_trips():
    path = "memory/a/bad\udcff.txt"
    out = report("json", [finding(path=path)])
    out.encode("utf-8")
    assert "\\udcff" in out
    back = json.loads(out)["findings"][0]["path"]
    assert back == path and back.encode("utf-8", "surrogateescape") == b"memory/a/bad\xff.txt"


# -- sarif ---------------------------------------------------------------------------------

TRICKY_PATHS = [
    "memory/a/notes.txt",
    "memory/a/x, y: z%.md",
    "memory/a/100%25 #1?.md",
    "memory/a/факти ü.md",
    "memory/a/new\nline.txt",
    "memory/a/bad\udcff.txt",
    "memory/a/back\\slash.md",
    "memwarden.toml",
    "../outside.md",
    "/etc/passwd",
]


def test_sarif_valid_for_tricky_paths_and_mixed_findings():
    fs = [finding(path=p, line=i + 1, col=i + 2, hint="Fix it." if i % 2 else "")
          for i, p in enumerate(TRICKY_PATHS)]
    fs.append(finding(path="memory/a/s.md", rule="MW105", severity=WARNING, message="soft"))
    fs.append(finding(path="memory/a/w.txt", waived=True))
    doc = check_sarif(report("sarif", fs, files=len(fs)), fs)
    run = doc["runs"][0]
    assert run["columnKind"] == "unicodeCodePoints"
    assert run["properties"]["memwarden"]["summary"] == summarize(fs, len(fs))
    uris = [r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
            for r in run["results"]]
    assert uris[1] == "memory/a/x%2C%20y%3A%20z%25.md"
    assert uris[2] == "memory/a/100%2525%20%231%3F.md"
    assert uris[4] == "memory/a/new%0Aline.txt"
    assert uris[5] == "memory/a/bad%FF.txt"
    assert run["results"][1]["message"]["text"] == "not a memory file Fix: Fix it."


def test_sarif_clean_run_still_lists_every_rule():
    doc = check_sarif(report("sarif", [], files=0), [])
    assert doc["runs"][0]["results"] == []


def test_sarif_unknown_rule_gets_a_minimal_descriptor():
    fs = [finding(rule="MW999")]
    out = render("sarif", fs, summarize(fs, 1), [])
    doc = json.loads(out)
    assert not list(sarif_validator().iter_errors(doc))
    (rule,) = doc["runs"][0]["tool"]["driver"]["rules"]
    assert rule["id"] == "MW999" and doc["runs"][0]["results"][0]["ruleIndex"] == 0


def test_sarif_is_deterministic():
    fs = [finding(path=p) for p in TRICKY_PATHS]
    assert report("sarif", fs) == report("sarif", list(fs))


def test_sarif_help_markdown_fence_survives_backticks():
    doc = {"id": "MW998", "name": "fence-test", "severity": "error", "summary": "s",
           "why": "w", "bad": "```\n# SYSTEM:\n```", "good": "plain", "fix": "f"}
    out = render("sarif", [], summarize([], 0), [doc])
    md = json.loads(out)["runs"][0]["tool"]["driver"]["rules"][0]["help"]["markdown"]
    assert "````\n```\n# SYSTEM:\n```\n````" in md


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.text(st.characters(codec=None, exclude_categories=()),
                                  min_size=1, max_size=20),
                          st.text(min_size=1, max_size=30), st.integers(1, 10_000),
                          st.integers(1, 500), st.booleans(), st.booleans()),
                max_size=5))
def test_sarif_valid_for_any_findings(items):
    fs = [finding(path=p, message=m, line=ln, col=c, waived=w,
                  severity=ERROR if e else WARNING, rule="MW506" if e else "MW105")
          for p, m, ln, c, w, e in items]
    check_sarif(report("sarif", fs, files=len(fs)), fs)


# -- github --------------------------------------------------------------------------------

def test_github_escapes():
    assert escape_data("100% a,b: c\r\nd") == "100%25 a,b: c%0D%0Ad"
    assert escape_property("a,b: c%\n") == "a%2Cb%3A c%25%0A"


@pytest.mark.parametrize(("path", "message", "line"), [
    ("memory/a/notes.txt", "not a memory file",
     "::error file=memory/a/notes.txt,line=2,col=3,title=MW506 unknown-memory-file::"
     "not a memory file"),
    ("memory/a/we,ird:na%me\n.md", "bad: 100% a,b\r\nnext",
     "::error file=memory/a/we%2Cird%3Ana%25me%0A.md,line=2,col=3,"
     "title=MW506 unknown-memory-file::bad: 100%25 a,b%0D%0Anext"),
    ("memory/a/факти ü.md", "«не той» файл",
     "::error file=memory/a/факти ü.md,line=2,col=3,title=MW506 unknown-memory-file::"
     "«не той» файл"),
    ("memory/a/bad\udcff.txt", "esc \x1b[0m",
     "::error file=memory/a/bad\\xff.txt,line=2,col=3,title=MW506 unknown-memory-file::"
     "esc \\x1b[0m"),
])
def test_github_exact_annotation(path, message, line):
    out = report("github", [finding(path=path, message=message, line=2, col=3)])
    assert out == f"{line}\n{SUMMARY_1}"
    out.encode("utf-8")


def test_github_hint_warning_and_waived():
    fs = [finding(path="memory/a/x.md", rule="MW105", severity=WARNING, message="soft: 90%",
                  hint="Trim it, please."),
          finding(path="memory/a/w.txt", waived=True)]
    assert report("github", fs, files=2) == (
        "::warning file=memory/a/x.md,line=1,col=1,title=MW105 layer2-soft-limit::"
        "soft: 90%25%0AFix: Trim it, please.\n"
        "memwarden: 2 file(s) checked, 0 error(s), 1 warning(s), 1 waived\n"
    )


def test_github_caps_annotations_per_type():
    errors = [finding(path=f"memory/a/e{i:02}.txt") for i in range(GITHUB_ANNOTATION_CAP + 2)]
    warnings = [finding(path=f"memory/a/w{i:02}.md", rule="MW105", severity=WARNING,
                        message="soft") for i in range(GITHUB_ANNOTATION_CAP + 1)]
    lines = report("github", errors + warnings, files=23).splitlines()
    assert sum(ln.startswith("::error ") for ln in lines) == GITHUB_ANNOTATION_CAP
    assert sum(ln.startswith("::warning ") for ln in lines) == GITHUB_ANNOTATION_CAP
    notices = [ln for ln in lines if ln.startswith("::notice ")]
    assert len(notices) == 2
    assert "::2 more error(s) not annotated" in notices[0]
    assert "::1 more warning(s) not annotated" in notices[1]
    assert lines[-1] == "memwarden: 23 file(s) checked, 12 error(s), 11 warning(s), 0 waived"


def test_unknown_format_is_a_clear_error():
    with pytest.raises(ValueError, match="unknown report format 'xml'"):
        render("xml", [], summarize([], 0))


def test_printable_keeps_ordinary_text():
    assert printable("memory/a/факти, ü: 100%.md") == "memory/a/факти, ü: 100%.md"
    assert printable("a\nb", keep_newlines=True) == "a\nb"


# -- through the CLI, on real repositories -------------------------------------------------

TRICKY_NAME = "memory/a/new\nline, a:b 100%25 ü.txt"


@pytest.fixture
def tricky_repo(tmp_path):
    return make_repo(tmp_path, {"memory/a/facts.md": GOOD_FACTS, TRICKY_NAME: "x\n"})


@pytest.mark.parametrize(("name", "fmt"), [
    ("report.sarif", "sarif"), ("report.json", "json"), ("report.txt", "text"),
    ("report.log", "text"), ("REPORT.SARIF", "sarif"), ("report.out", "text"),
])
def test_output_extension_picks_format(tmp_path, mw, name, fmt):
    root = make_repo(tmp_path, {"memory/a/notes.txt": "x\n"})
    out_file = tmp_path / name
    code, out, err = mw(root, "check", "--output", str(out_file))
    assert code == 1 and out == "" and err == ""
    text = out_file.read_text("utf-8")
    if fmt == "sarif":
        doc = json.loads(text)
        assert doc["version"] == "2.1.0"
        assert not list(sarif_validator().iter_errors(doc))
        assert doc["runs"][0]["results"][0]["ruleId"] == "MW506"
    elif fmt == "json":
        assert json.loads(text)["findings"][0]["rule"] == "MW506"
    else:
        assert rules_in(text) == ["MW506"]
    assert EXTENSIONS.get(Path(name).suffix.lower(), "text") == fmt


def test_explicit_format_wins_over_extension(tmp_path, mw):
    root = make_repo(tmp_path, {"memory/a/notes.txt": "x\n"})
    out_file = tmp_path / "report.sarif"
    code, _, _ = mw(root, "check", "--format", "json", "--output", str(out_file))
    assert code == 1 and "findings" in json.loads(out_file.read_text("utf-8"))


def test_unwritable_output_is_exit_2(tmp_path, mw):
    root = make_repo(tmp_path, {"memory/a/facts.md": GOOD_FACTS})
    code, _, err = mw(root, "check", "--output", str(tmp_path / "missing" / "r.sarif"))
    assert code == 2 and "cannot write" in err


@pytest.mark.parametrize("fmt", FORMATS)
def test_cli_tricky_file_name_every_format(tricky_repo, mw, fmt):
    """A name with a newline, a comma, a colon, a percent sign and non-ASCII survives every
    format; the control character in it is itself a finding (MW502) beside MW506."""
    code, out, err = mw(tricky_repo, "check", "--format", fmt)
    assert code == 1 and err == ""
    if fmt == "text":
        assert "memory/a/new\\nline, a:b 100%25 ü.txt:1:1: MW506 not a memory file" in out
        assert rules_in(out) == ["MW502", "MW506"] and len(out.splitlines()) == 3
    elif fmt == "github":
        assert ("::error file=memory/a/new%0Aline%2C a%3Ab 100%2525 ü.txt,"
                "line=1,col=1,title=MW506 unknown-memory-file::not a memory file") in out
        assert len(out.splitlines()) == 3
    elif fmt == "json":
        (f,) = [f for f in json.loads(out)["findings"] if f["rule"] == "MW506"]
        assert f["path"] == TRICKY_NAME and f["fingerprint"] == fingerprint(TRICKY_NAME)
    else:
        doc = json.loads(out)
        assert not list(sarif_validator().iter_errors(doc))
        (res,) = [r for r in doc["runs"][0]["results"] if r["ruleId"] == "MW506"]
        uri = res["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
        assert uri == "memory/a/new%0Aline%2C%20a%3Ab%20100%2525%20%C3%BC.txt"
        assert unquote_to_bytes(uri).decode("utf-8") == TRICKY_NAME


def test_cli_clean_repo_every_format(tmp_path, mw):
    root = make_repo(tmp_path, {"memory/a/facts.md": GOOD_FACTS})
    for fmt in FORMATS:
        code, out, _ = mw(root, "check", "--format", fmt)
        assert code == 0, fmt
        assert "memwarden: 1 file(s) checked, 0 error(s)" in out or fmt in ("json", "sarif")
    code, out, _ = mw(root, "check", "--format", "sarif")
    check_sarif(out, [])


def test_cli_non_utf8_file_name_is_a_finding_not_a_traceback(tmp_path, mw):
    root = make_repo(tmp_path, {"memory/a/facts.md": GOOD_FACTS})
    (root / "memory" / "a").joinpath(b"bad\xff.txt".decode("utf-8", "surrogateescape")) \
        .write_bytes(b"x\n")
    for fmt in FORMATS:
        code, out, err = mw(root, "check", "--format", fmt)
        assert code == 1 and err == "", fmt
        if fmt == "json":
            found = json.loads(out)["findings"]
            assert "MW506" in {f["rule"] for f in found}
            assert all(f["path"].endswith("bad\udcff.txt") for f in found)
        elif fmt == "sarif":
            check_sarif(out, [Finding.from_json(f) for f in json.loads(
                mw(root, "check", "--format", "json")[1])["findings"]])
        else:
            assert "memory/a/bad\\xff.txt" in out


def test_cli_path_outside_repo_in_sarif(tmp_path, mw):
    root = make_repo(tmp_path, {"memory/a/facts.md": GOOD_FACTS})
    outside = tmp_path / "outside, 100%.md"
    outside.write_text("x\n", encoding="utf-8")
    code, out, _ = mw(root, "check", "--format", "sarif", str(outside))
    assert code == 1
    doc = json.loads(out)
    assert not list(sarif_validator().iter_errors(doc))
    (res,) = doc["runs"][0]["results"]
    art = res["locations"][0]["physicalLocation"]["artifactLocation"]
    assert res["ruleId"] == "MW502" and art["uri"].startswith("file:///")
    assert unquote_to_bytes(art["uri"][len("file://"):]).decode() == str(outside)
