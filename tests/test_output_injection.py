"""Memory text in output that something else interprets: GitHub workflow commands and job
summaries, terminals, Markdown and the HTML report. Each test plants hostile text in a real
repository (a fact, a file name, an owner's rejection reason), runs the command, and reads
the raw output the way the consumer would."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from conftest import make_repo, pending_proposal
from markdown_it import MarkdownIt
from test_gate import branch

from memwarden.cli.apply import github_report

# A terminal hyperlink (OSC 8) that shows "click", a colour, an HTML image that would call
# out, Markdown that would make a link and bold text, a table cell break, and a
# right-to-left override that reverses what follows.
HOSTILE = ("\x1b]8;;https://evil.invalid\x07click\x1b]8;;\x07 \x1b[32mall clean\x1b[0m "
           "<img src=https://evil.invalid/t.png> [docs](javascript:alert(1)) **PASS** | x "
           "`tick` \u202eevil\u202c")
FACT = "- [2025-01-01] old fact " + HOSTILE + "\n"
FILLER = "".join(f"- [2025-01-{i % 28 + 1:02d}] old fact number {i} about archives and "
                 "catalogues\n" for i in range(30))
FACTS = "# Facts: a\n\n## Domain\n" + FACT + FILLER
BAD_NAME = "memory/a/x\n::add-mask::y | `z` <img src=https:&#47;&#47;evil.invalid> \x1b[31mR.md"
RAW = ("\x1b", "\x07", "\u202e", "\u202c")


def gfm(text: str) -> str:
    """`text` rendered as GitHub renders a job summary (CommonMark, raw HTML on, tables)."""
    return MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"]) \
        .render(text)


def table_cells(html: str) -> list[int]:
    """The number of cells of every body row of every table in rendered HTML."""
    return [len(re.findall(r"<td[ >]", row)) for body in re.findall(r"<tbody>(.*?)</tbody>",
                                                                     html, re.S)
            for row in re.findall(r"<tr>(.*?)</tr>", body, re.S)]


@pytest.fixture
def hostile_gate(tmp_path):
    """main holds a hostile fact that the proposal's growth will evict; the proposal adds
    a file whose name breaks lines, tables and HTML."""
    repo = make_repo(tmp_path, {"memory/a/facts.md": FACTS, "memwarden.toml":
                                "max_auto_diff_bytes = 1000000\n[limits]\nfacts = 400\n"})
    new = "".join(f"- new fact number {i} about the catalogue importer\n" for i in range(12))
    ref = branch(repo, "p-1", {"memory/a/facts.md": FACTS + new, BAD_NAME: "hi\n"})
    return repo, ref


def test_gate_job_summary_shows_memory_text_as_text(hostile_gate, mw, monkeypatch, tmp_path):
    repo, ref = hostile_gate
    summary, outputs = tmp_path / "summary.md", tmp_path / "outputs"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    monkeypatch.setenv("GITHUB_OUTPUT", str(outputs))
    code, out, _ = mw(repo, "gate", ref, "--format", "github")
    assert code == 1
    md = summary.read_text("utf-8")
    assert not any(c in md for c in RAW), md
    html = gfm(md)
    # The image, the link and the bold text stay text; no row gains or loses a cell.
    assert "<img" not in html and "<a " not in html and "<strong>PASS" not in html, html
    assert "&lt;img src=https://evil.invalid/t.png&gt;" in html
    cells = table_cells(html)
    assert cells and set(cells) <= {4}, cells
    assert r"\x1b]8;;https://evil.invalid\x07click" in html  # shown, not acted on
    rows = [ln for ln in md.splitlines() if ln.startswith("| MW5")]
    assert rows and all("x\\n::add-mask::y" in ln for ln in rows), rows
    # Annotations keep their workflow-command escapes: no line of the log starts a command
    # other than memwarden's own annotations.
    assert all(ln.startswith(("::error ", "::warning ", "::notice ", "memwarden: "))
               for ln in out.splitlines()), out
    assert not re.search(r"^\s*::add-mask::", out, re.M)
    assert step_outputs(outputs)["result"] == "rejected"


def test_gate_text_shows_escapes_not_terminal_controls(hostile_gate, mw):
    repo, ref = hostile_gate
    code, out, _ = mw(repo, "gate", ref)
    assert code == 1
    assert not any(c in out for c in RAW), out
    evict = [ln for ln in out.splitlines() if "old fact \\x1b]8;;" in ln]
    assert evict and evict[0].startswith("would evict from facts.md: "), out


def test_gate_job_summary_is_bounded(tmp_path, mw, monkeypatch):
    """Thousands of findings must not push the job summary past GitHub's 1 MiB."""
    from memwarden.cli.gate import SUMMARY_ROWS

    repo = make_repo(tmp_path, {"memory/a/facts.md": "# Facts: a\n\n## Domain\n- one\n"})
    names = {f"memory/a/junk-{i:04d}-{'x' * 150}.txt": "x\n" for i in range(SUMMARY_ROWS + 50)}
    ref = branch(repo, "p-1", names)
    summary = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    code, _, _ = mw(repo, "gate", ref, "--format", "github")
    md = summary.read_text("utf-8")
    assert code == 1 and md.count("\n| MW506 ") == SUMMARY_ROWS
    assert "… and 50 more findings" in md and len(md.encode()) < 200_000


@pytest.fixture
def rejected_hostile(tmp_path, mw):
    """An owner rejects a proposal with a reason that quotes hostile memory text."""
    repo = pending_proposal(tmp_path, mw)
    code, out, err = mw(repo, "reject", "p-1", "--by", "owner", "--reason",
                        "::add-mask::secretword " + HOSTILE)
    assert code == 0, err
    return repo


def test_apply_text_escapes_a_quoted_reason(rejected_hostile, mw):
    code, out, _ = mw(rejected_hostile, "apply", "--all", "--format", "text")
    assert code == 0 and out.startswith("rejected        p-1 (rejected_by_owner")
    assert not any(c in out for c in RAW), out
    # The GitHub runner takes any line that starts with '::' after blanks as a command.
    assert not [ln for ln in out.splitlines() if ln.lstrip().startswith("::")], out
    assert "\\x3a:add-mask::secretword \\x1b]8;;https://evil.invalid\\x07click" in out


def test_apply_github_escapes_a_failure_reason(tmp_path, monkeypatch):
    """A failure reason is an exception's text (a path, a remote's words): it must stay
    inside its annotation and its table cell. (Pure function: a remote that puts text in
    the reason cannot be staged without a network.)"""
    summary, outputs = tmp_path / "summary.md", tmp_path / "outputs"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    monkeypatch.setenv("GITHUB_OUTPUT", str(outputs))
    reason = "push refused: bad\n::stop-commands::tok\r\n::error::fake 100% | <img src=x>"
    doc = {"results": [{"proposalId": "p-1", "ref": "refs/heads/proposals/a/p-1",
                        "status": "failed", "reason": reason, "commits": [],
                        "message": "\udcff undecodable"}]}
    out = github_report(1, doc)
    commands = [ln for ln in out.splitlines() if ln.lstrip().startswith("::")]
    assert commands == ["::warning title=memwarden apply::p-1: failed (push refused: bad%0A"
                        "::stop-commands::tok%0D%0A::error::fake 100%25 | <img src=x>)"]
    out.encode("utf-8")  # an undecodable byte is escaped, not a crash
    cells = table_cells(gfm(summary.read_text("utf-8")))
    assert cells == [4] and "<img" not in gfm(summary.read_text("utf-8"))
    values = step_outputs(outputs)
    assert set(values) == {"result", "applied", "already-applied", "rejected", "failed",
                           "pending", "results"}
    assert json.loads(values["results"])[0]["reason"] == reason


def step_outputs(path: Path) -> dict[str, str]:
    """$GITHUB_OUTPUT read the way the runner reads it (`key<<DELIM` ... `DELIM`)."""
    lines, out = path.read_text("utf-8").split("\n"), {}
    while lines and lines[0]:
        key, delim = lines.pop(0).split("<<", 1)
        end = lines.index(delim)
        out[key], lines = "\n".join(lines[:end]), lines[end + 1:]
    return out


def test_report_markdown_escapes_a_quoted_reason(rejected_hostile, mw):
    code, md, _ = mw(rejected_hostile, "report", "--format", "md")
    assert code == 0 and not any(c in md for c in RAW), md
    html = gfm(md)
    assert "<img" not in html and "<a " not in html and "<strong>PASS" not in html, html
    rejected = html.split("Rejected proposals")[1].split("</table>")[0]
    assert table_cells(rejected) == [6], rejected
    assert "::add-mask::secretword \\x1b]8;;https://evil.invalid\\x07click" in rejected


def test_report_html_shows_controls_and_forbids_scripts(rejected_hostile, mw, tmp_path):
    from test_report_health import browse, console_errors

    page = tmp_path / "report.html"
    code, _, _ = mw(rejected_hostile, "report", "-o", str(page))
    html = page.read_text("utf-8")
    assert code == 0 and not any(c in html for c in RAW)
    assert ('<meta http-equiv="Content-Security-Policy" content="default-src &#x27;none&#x27;;'
            in html)
    proc = browse(page, tmp_path, "--dump-dom")
    assert proc.returncode == 0 and console_errors(proc.stderr) == [], proc.stderr[-2000:]
    assert "&lt;img src=https://evil.invalid/t.png&gt;" in proc.stdout
    assert "\\u202eevil\\u202c" in proc.stdout and "<img" not in proc.stdout


def test_text_report_line_never_starts_a_workflow_command():
    """Every text line starts with a path today; should a path ever start with `::` (MW502
    quotes a path as typed), the line still must not become a command. (Pure function.)"""
    from memwarden.model.findings import ERROR, Finding
    from memwarden.report.findings import render_text

    f = Finding(rule="MW502", severity=ERROR, path=" ::add-mask::secret", line=1, col=1,
                message="outside the repository")
    out = render_text([f], {"files": 1, "errors": 1, "warnings": 0, "waived": 0})
    assert out.startswith(" \\x3a:add-mask::secret:1:1: MW502 ")
