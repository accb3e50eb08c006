"""`memwarden demo`: check the bundled example memory repository and explain the result.

The example (memwarden/example/) has three agents: one clean, one near its limits and one
with planted violations. The demo copies it to a temporary directory, makes it a git
repository with one commit, runs the same check CI would run and tells the story: what
the repository is, what was found, what each rule means and which exit code CI would see.
"""

from __future__ import annotations

import datetime as _dt
import json
import shutil
import tempfile
import textwrap
from collections.abc import Callable
from importlib import resources
from pathlib import Path

import click

from memwarden.git.repo import init_and_commit
from memwarden.model.errors import MemwardenError
from memwarden.model.findings import ERROR, Finding
from memwarden.report.findings import render_text

AGENTS = (
    ("garden-curator", "English; clean: every file within its limits and formats"),
    ("archivist-violin", "Ukrainian; healthy but full: facts.md at about 90% of its limit"),
    ("news-scout", "English; planted violations"),
)
# (rule, path, severity) the example is built to trigger. A rule that is not registered in
# this version of memwarden is simply not expected.
PLANTED = (
    ("MW101", "memory/news-scout/snapshot.md", "error"),
    ("MW506", "memory/news-scout/notes.txt", "error"),
    ("MW302", "memory/news-scout/facts.md", "error"),
    ("MW303", "memory/news-scout/facts.md", "error"),
    ("MW202", "memory/news-scout/open_loops.md", "error"),
    ("MW102", "memory/archivist-violin/facts.md", "warning"),
)
CLEAN_PREFIXES = ("memory/garden-curator/", "agents/garden-curator/")
GIT_IDENTITY = {
    "GIT_AUTHOR_NAME": "memwarden demo",
    "GIT_AUTHOR_EMAIL": "demo@memwarden.invalid",
    "GIT_COMMITTER_NAME": "memwarden demo",
    "GIT_COMMITTER_EMAIL": "demo@memwarden.invalid",
}


def copy_example(dest: Path) -> None:
    """Copy the bundled example (package data) into `dest`."""
    with resources.as_file(resources.files("memwarden") / "example") as src:
        if not (src / "memory").is_dir():
            raise MemwardenError(f"demo: the bundled example is missing at {src}; "
                                 "reinstall memwarden")
        shutil.copytree(src, dest, ignore=shutil.ignore_patterns("__pycache__"))


def make_repo(root: Path) -> None:
    copy_example(root)
    init_and_commit(root, "Example memory repository\n\nHuman-Edit: true", GIT_IDENTITY)


def check(root: Path, today: _dt.date) -> tuple[int, list[Finding], dict[str, int]]:
    """Run the check as CI would (`memwarden check --all` at the repo root)."""
    from memwarden.cli.check import run_check

    code, out = run_check(files=[], rev=None, config_path=str(root / "memwarden.toml"),
                          select=None, ignore=None, fmt="json", today=today, cwd=root)
    doc = json.loads(out)
    findings = [Finding.from_json(d) for d in doc["findings"]]
    return code, findings, doc["summary"]


def explain(findings: list[Finding]) -> list[str]:
    """One paragraph per rule found: what it is, why it matters, how to fix it."""
    from memwarden.policies.registry import get_rule

    lines = []
    for rule_id in sorted({f.rule for f in findings}):
        mine = [f for f in findings if f.rule == rule_id]
        paths = ", ".join(sorted({f.path for f in mine}))
        severities = "/".join(sorted({f.severity for f in mine}))
        r = get_rule(rule_id)
        lines.append(f"  {rule_id} {r.name if r else ''} [{severities}] {paths}")
        if r is None:
            continue
        text = [r.summary, f"Why: {r.why}"]
        if r.severity == ERROR and all(f.severity != ERROR for f in mine):
            text.insert(0, "A warning, not an error: the file is near its limit, not over it; "
                           "nothing is blocked yet.")
        if r.fix:
            text.append(f"Fix: {r.fix}")
        for para in text:
            lines += textwrap.wrap(para, 92, initial_indent="      ",
                                   subsequent_indent="      ")
    return lines


def verify(findings: list[Finding]) -> list[str]:
    """Problems with the outcome: a planted finding missing, or an unexpected error."""
    from memwarden.policies.registry import get_rule

    problems = []
    for rule_id, path, severity in PLANTED:
        if get_rule(rule_id) is None:
            continue
        if not any(f.rule == rule_id and f.path == path and f.severity == severity
                   for f in findings):
            problems.append(f"expected {rule_id} ({severity}) on {path}, not found")
    planted = {(r, p) for r, p, _ in PLANTED}
    for f in findings:
        if f.path.startswith(CLEAN_PREFIXES):
            problems.append(f"the clean agent has a finding: {f.path}:{f.line} {f.rule}")
        elif f.severity == ERROR and (f.rule, f.path) not in planted:
            problems.append(f"unexpected error: {f.path}:{f.line} {f.rule} {f.message}")
    return problems


def narrate(root: Path, code: int, findings: list[Finding], summary: dict[str, int],
            echo: Callable[[str], None]) -> None:
    echo("memwarden demo: a memory repository with three agents "
         "(the layout of docs/memory-format.md):")
    for agent, what in AGENTS:
        echo(f"  {agent:<18} {what}")
    echo(f"It was copied to {root} and committed (git init + one commit).")
    echo("")
    echo("$ memwarden check --all")
    echo(render_text(findings, summary).rstrip("\n"))
    echo("")
    if findings:
        echo("What the findings mean:")
        for line in explain(findings):
            echo(line)
        echo("")
    verdict = ("errors block the merge" if code == 1 else "warnings alone do not block")
    echo(f"In CI this check exits {code} ({verdict}). `memwarden rule MWxxx` explains any rule;")
    echo("`memwarden check --format sarif|github|json` gives the same findings for CI tools.")


LOOP_FACTS = [
    "Каталог джерел оновлюється щопонеділка о 06:00 за київським часом; нові нотатки "
    "потрапляють у чергу переглядача, а дублікати відкидаються за хешем заголовка та "
    f"першого абзацу (спостереження {i}, перевірено у запуску run_demo_{i})."
    for i in range(1, 13)
]


def run_loop(root: Path, echo: Callable[[str], None]) -> list[str]:
    """Part two: an agent's run proposes, CI gates, apply lands it with an eviction."""
    from memwarden.apply.apply import apply_one
    from memwarden.apply.gate import gate
    from memwarden.apply.propose import propose
    from memwarden.git.repo import git_cli, open_repo
    from memwarden.model.config import load_config_at

    repo = open_repo(root)
    assert repo is not None
    now = _dt.datetime.now(_dt.UTC).replace(microsecond=0)
    config = load_config_at(repo, repo.resolve_commit("main"))
    request = {"agentId": "archivist-violin", "runId": "run_demo", "proposalId": "p-demo",
               "task": "weekly catalogue", "result": "12 new observations",
               "updates": [{"file": "facts.md", "operation": "append", "section": "Домен",
                            "content": "\n".join(f"- {f}" for f in LOOP_FACTS)}],
               "reasoning": "Observations from this week's catalogue run"}
    echo("")
    echo("Part two: the whole loop on archivist-violin (facts.md is at 91% of its limit).")
    prop = propose(repo, config, request, "main", now)
    echo(f"1. The agent's run proposes: branch {prop.branch}, {prop.diff_bytes} bytes of "
         "diff (memwarden propose).")
    verdict = gate(repo, prop.branch, "main", today=now.date())
    decision = verdict.extra()["decision"]
    t = verdict.tokens.get("facts.md", {})
    echo(f"2. CI gates it: {verdict.verdict}, {decision} "
         f"({'; '.join(verdict.auto_reasons)}); facts.md {t.get('before')} -> "
         f"{t.get('after')} / {t.get('limit')} tokens, so apply will evict "
         f"{len([e for e in verdict.eviction_preview if e.get('id')])} entries "
         "(memwarden gate).")
    res = apply_one(repo, prop.branch, config, "demo-owner", now)
    if res.status != "applied":
        return [f"apply ended {res.status}: {res.reason} {res.details}"]
    echo(f"3. An owner approves and apply lands it: {len(res.commits)} commits on main, "
         f"{len(res.evicted)} facts moved out of Layer 1 (memwarden apply "
         "--approved-by demo-owner).")
    echo("")
    echo(git_cli(["log", "--stat", "--format=%h %an: %s", f"-{len(res.commits)}", "main"],
                 root).rstrip())
    echo("")
    echo("Evicted (still in git history, listed in the eviction commit):")
    for e in res.evicted[:5]:
        echo(f"  - {e['id']} ({e['reason']}): {e['entry'][:70]}")
    if len(res.evicted) > 5:
        echo(f"  ... and {len(res.evicted) - 5} more")
    if not any(git_cli(["log", "-1", "--format=%s", c], root).startswith("memory-evict:")
               for c in res.commits):
        return ["no eviction commit was made"]
    return show_next_read(repo, echo)


def show_next_read(repo: object, echo: Callable[[str], None]) -> list[str]:
    """Part three: what the agent's next run loads (read --mode basic) against its budget."""
    from memwarden.read.reader import MODE_BUDGETS, read_memory, render_markdown

    doc = read_memory(repo, "archivist-violin", "basic")
    budget = MODE_BUDGETS["basic"]
    wide = read_memory(repo, "archivist-violin", "wide")
    echo("")
    echo(f"4. The agent's next run loads (memwarden read archivist-violin --mode basic): "
         f"{doc['tokenCount']} of {budget} tokens, version {doc['version']}, "
         f"files {', '.join(doc['content'])}; --mode wide adds facts.md and the last "
         f"decisions: {wide['tokenCount']} of {MODE_BUDGETS['wide']} tokens, "
         f"{len(wide['meta'].get('factIds', '').split())} fact ids to cite in Facts-Used.")
    lines = render_markdown(doc).splitlines()
    for line in lines[:8]:
        echo(f"   | {line}")
    if len(lines) > 8:
        echo(f"   | ... ({len(lines) - 8} more lines)")
    if doc["tokenCount"] > budget or wide["tokenCount"] > MODE_BUDGETS["wide"]:
        return ["read went over its budget"]
    return []


def write_report(root: Path, echo: Callable[[str], None]) -> list[str]:
    """Part four: the health report over the demo's history, in a folder of its own (kept
    when the demo repository is removed)."""
    from memwarden.cli.report import build_report, render

    try:
        doc = build_report(None, None, None, cwd=root)
    except MemwardenError as exc:
        return [f"the report failed: {exc}"]
    out = Path(tempfile.mkdtemp(prefix="memwarden-report-")) / "report.html"
    out.write_text(render(doc, "html"), "utf-8")
    s = doc["summary"]
    echo("")
    echo(f"5. The memory's health (memwarden report -o report.html): agents {s['agents']}, "
         f"proposals applied {s['applied']}, entries evicted {s['evictedEntries']}, agents "
         f"over a HARD limit {s['agentsOverLimit']}.")
    echo(f"Report: {out}")
    return []


def run_demo(keep: bool, echo: Callable[[str], None]) -> int:
    """Run the demo; 0 when the example produced exactly its planted findings, else 2."""
    tmp = Path(tempfile.mkdtemp(prefix="memwarden-demo-"))
    root = tmp / "memory-repo"
    try:
        try:
            make_repo(root)
            code, findings, summary = check(root, _dt.date.today())
        except MemwardenError as exc:
            echo(f"memwarden demo failed: {exc}")
            return 2
        narrate(root, code, findings, summary, echo)
        problems = verify(findings)
        if not problems and code == 1:
            try:
                problems = run_loop(root, echo)
            except MemwardenError as exc:
                problems = [f"the proposal loop failed: {exc}"]
        if not problems and code == 1:
            problems = write_report(root, echo)
        if problems or code != 1:
            echo("")
            echo("The demo did not go as expected:")
            for p in problems or [f"exit code {code}, expected 1"]:
                echo(f"  - {p}")
            return 2
        return 0
    finally:
        echo("")
        if keep:
            echo(f"Kept the demo repository: {root}")
        else:
            echo(f"Deleted the demo repository {root}; run `memwarden demo --keep` to keep "
                 "it and look around.")
            shutil.rmtree(tmp, ignore_errors=True)


@click.command("demo")
@click.option("--keep", is_flag=True, help="Keep the temporary repository and print its path.")
def demo_cmd(keep: bool) -> None:
    """Copy the bundled example memory repo to a temp git repo, check it, and run the
    whole proposal loop on it (propose, gate, apply with an eviction, read)."""
    raise SystemExit(run_demo(keep=keep, echo=click.echo))
