"""`memwarden report`: the data from real propose/apply cycles, the cache, and the three
renderings (JSON against its schema, Markdown with the same numbers, HTML that parses
strictly and renders in headless Chromium)."""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import GIT_ENV, git

from memwarden.cli.main import main
from memwarden.report import health, history

T0 = "2026-02-01T09:00:00Z"
ROUNDS = ["2026-02-03", "2026-02-05", "2026-02-07", "2026-02-09", "2026-02-11"]
FP = "sha256:" + "ab" * 32
CONFIG = f"""
[agents.b]
limits = {{ facts = 200 }}

[[waivers]]
rule = "MW305"
path = "memory/a/facts.md"
fingerprint = "{FP}"
expires = 2026-02-20
reason = "migrated note, owner reviewed"

[[waivers]]
rule = "MW303"
path = "memory/a/facts.md"
fingerprint = "{FP.replace('ab', 'cd')}"
expires = 2027-01-01
reason = "quoted example of an attack"
"""
META = '{{"agentId": "{a}", "version": 1, "schemaVersion": "1.0"}}\n'
WORDS = ("catalogue digest archive index review sonata partita folder summary owner "
         "queue glossary timeline").split()


def facts_text(tag: str, n: int) -> str:
    """n bullets of about 30 tokens each, unique per tag."""
    return "\n".join(f"- {tag} note {i}: the " + " ".join(WORDS[(i + j) % len(WORDS)]
                                                          for j in range(18))
                     for i in range(n))


def run(root: Path, *args: str) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    cwd = os.getcwd()
    os.chdir(root)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(list(args))
    finally:
        os.chdir(cwd)
    return code, out.getvalue() + err.getvalue()


def propose(root: Path, tmp: Path, agent: str, content: str, when: str, **extra) -> dict:
    req = tmp / f"req-{agent}-{abs(hash((content, when)))}.json"
    req.write_text(json.dumps({"agentId": agent, "runId": f"run_{when[:10]}",
                               "updates": [{"file": "facts.md", "operation": "append",
                                            "section": "Domain", "content": content}],
                               **extra}))
    code, out = run(root, "propose", str(req), "--now", when)
    assert code == 0, out
    return json.loads(out)


def apply(root: Path, when: str, *refs: str) -> list[dict]:
    args = list(refs) or ["--all"]
    code, out = run(root, "apply", *args, "--approved-by", "owner", "--delete-branches",
                    "--now", when)
    assert code in (0, 1), out
    return json.loads(out)["results"]


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """A repository with five rounds: agent b evicts on every apply (its facts limit is
    low), a never evicts; a stale proposal is rejected (version_conflict), one is rejected
    by its owner, one waits."""
    tmp = tmp_path_factory.mktemp("report")
    home = tmp / "home"
    home.mkdir()
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HOME", str(home))
        mp.setenv("GIT_CONFIG_GLOBAL", str(home / ".gitconfig"))
        for k, v in GIT_ENV.items():
            mp.setenv(k, v)
        mp.delenv("MEMWARDEN_CONFIG", raising=False)
        root = tmp / "repo"
        root.mkdir()
        git(root, "init", "-q", "-b", "main")
        for agent in ("a", "b", "c"):
            (root / f"memory/{agent}").mkdir(parents=True)
            (root / f"memory/{agent}/facts.md").write_text(
                f"# Facts: {agent}\n\n## Domain\n- first fact of {agent}\n")
            (root / f"memory/{agent}/meta.json").write_text(META.format(a=agent))
        (root / "memwarden.toml").write_text(CONFIG)
        git(root, "add", "-A")
        mp.setenv("GIT_AUTHOR_DATE", T0)
        mp.setenv("GIT_COMMITTER_DATE", T0)
        git(root, "commit", "-qm", "initial\n\nHuman-Edit: true")
        mp.delenv("GIT_AUTHOR_DATE")
        mp.delenv("GIT_COMMITTER_DATE")
        info: dict = {"rejected": {}}
        for i, day in enumerate(ROUNDS):
            propose(root, tmp, "a", f"- a learned thing {i}", f"{day}T08:00:00Z")
            propose(root, tmp, "b", facts_text(f"r{i}", 4), f"{day}T08:00:01Z")
            if i == 3:
                stale = propose(root, tmp, "a", f"- stale thing {i}", f"{day}T08:00:02Z",
                                expectedVersion=0)
                info["rejected"][stale["proposalId"]] = "version_conflict"
            results = apply(root, f"{day}T10:00:00Z")
            assert {r["status"] for r in results} <= {"applied", "rejected"}, results
        waiting = propose(root, tmp, "a", "- waiting thing", "2026-02-12T08:00:00Z")
        owner = propose(root, tmp, "c", "- unwanted thing", "2026-02-12T08:00:01Z")
        code, out = run(root, "reject", owner["proposalId"], "--reason", "duplicates a loop",
                        "--by", "owner", "--now", "2026-02-12T09:00:00Z")
        assert code == 0, out
        info["rejected"][owner["proposalId"]] = "rejected_by_owner"
        info["pending"] = waiting["proposalId"]
        info["root"] = root
        yield info


def report(root: Path, *args: str) -> tuple[int, str]:
    return run(root, "report", *args)


def doc_of(root: Path, *args: str) -> dict:
    code, out = report(root, "--format", "json", *args)
    assert code == 0, out
    return json.loads(out)


def test_the_json_holds_the_history_facts(built):
    root = built["root"]
    doc = doc_of(root)
    main_time = git(root, "log", "-1", "--format=%cI", "main").strip()
    assert doc["at"]["time"] == main_time.replace("+00:00", "Z") == "2026-02-11T10:00:00Z"
    assert doc["range"]["since"] == "2026-01-12T10:00:00Z"  # 30 days before, not today
    s = doc["summary"]
    applied = git(root, "log", "--first-parent", "--format=%s%n%b", "main").count(
        "Applied-Proposal:")
    assert s["applied"] == applied == 10
    evict_subjects = [x for x in git(root, "log", "--first-parent", "--format=%s",
                                     "main").splitlines() if x.startswith("memory-evict:")]
    assert s["evictionCommits"] == len(evict_subjects) >= 3
    assert s["evictedEntries"] == doc["evictions"]["total"] == sum(
        w["entries"] for w in doc["evictions"]["weeks"])
    assert [x["agentId"] for x in doc["evictionLoops"]] == ["b"]
    loop = doc["evictionLoops"][0]
    assert loop["evictingApplies"] * 2 > loop["applies"] >= 3
    agents = {a["agentId"]: a for a in doc["agents"]}
    assert set(agents) == {"a", "b", "c"}
    assert agents["a"]["applies"] == 5 and agents["a"]["evictingApplies"] == 0
    assert len(agents["a"]["trend"]) == 5 and agents["c"]["trend"] == []
    b = agents["b"]["layer1"]["facts"]
    assert b["limit"] == 200 and 0 < b["tokens"] <= 200
    assert agents["a"]["source"] == "meta.json"  # apply's meta.json, hash verified
    assert agents["c"]["source"].startswith("counted")  # never applied: no counts
    # pending, rejected (with reasons), waivers
    assert [p["proposalId"] for p in doc["pending"]] == [built["pending"]]
    p = doc["pending"][0]
    assert p["decision"] == "auto_approved" and p["decisionSource"] == "gate"
    assert {r["proposalId"]: r["reason"] for r in doc["rejected"]} == built["rejected"]
    assert [(w["rule"], w["state"], w["daysLeft"]) for w in doc["waivers"]] == [
        ("MW305", "expiring", 9), ("MW303", "active", 324)]
    assert s["waiversExpiring"] == 1
    # size grows, day by day, from the baseline
    sizes = doc["repoSize"]
    assert sizes[0]["date"] == "2026-02-01" and sizes[-1]["commit"] == doc["at"]["commit"]
    total = sum(int(x.split()[3]) for x in git(root, "ls-tree", "-r", "-l", "main")
                .splitlines())
    assert sizes[-1]["bytes"] == total and sizes[-1]["bytes"] > sizes[0]["bytes"]
    assert s["findings"] == {k: doc["findings"][k] for k in ("errors", "warnings", "waived")}


def test_the_json_validates_against_its_schema(built):
    import jsonschema

    schema = json.loads(health.schema_path().read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    for args in ((), ("--no-findings",), ("--since", "2026-02-06"), ("--at", "main~3")):
        jsonschema.Draft202012Validator(schema).validate(doc_of(built["root"], *args))


def test_since_and_at_narrow_the_range(built):
    root = built["root"]
    narrow = doc_of(root, "--since", "2026-02-06")
    assert narrow["range"]["since"] == "2026-02-06T00:00:00Z"
    assert narrow["summary"]["applied"] == 6  # rounds 4-6 of a and b
    assert all(r["at"] >= "2026-02-06" for r in narrow["rejected"])
    older = doc_of(root, "--at", "main~4")
    assert older["at"]["commit"] == git(root, "rev-parse", "main~4").strip()
    assert older["summary"]["applied"] < narrow["summary"]["applied"] + 4


def test_the_same_commit_and_range_give_the_same_bytes(built, tmp_path):
    root = built["root"]
    shutil.rmtree(root / ".git/memwarden/report-cache", ignore_errors=True)
    outs = {}
    for fmt in ("html", "md", "json"):
        first = tmp_path / f"1.{fmt}"
        assert report(root, "-o", str(first))[0] == 0  # cold, then from the cache
        assert report(root, "-o", str(tmp_path / f"2.{fmt}"))[0] == 0
        assert report(root, "--no-cache", "-o", str(tmp_path / f"3.{fmt}"))[0] == 0
        outs[fmt] = [(tmp_path / f"{i}.{fmt}").read_bytes() for i in (1, 2, 3)]
        assert outs[fmt][0] == outs[fmt][1] == outs[fmt][2], fmt
    assert (root / ".git/memwarden/report-cache/history.json").is_file()
    assert outs["html"][0].startswith(b"<!DOCTYPE html>")


def test_a_warm_report_summarises_only_new_commits(built, tmp_path, monkeypatch):
    root = built["root"]
    doc_of(root)  # warm the cache
    calls: list[str] = []
    real = history.summarise_commits

    def counting(repo, docs):
        calls.extend(d["id"] for d in docs)
        return real(repo, docs)

    monkeypatch.setattr(history, "summarise_commits", counting)
    doc_of(root)
    assert calls == []
    # a new commit on main in a copy: only it is summarised
    copy = tmp_path / "copy"
    shutil.copytree(root, copy)
    (copy / "notes.md").write_text("x\n")
    git(copy, "add", "-A")
    git(copy, "commit", "-qm", "a note\n\nHuman-Edit: true")
    doc = doc_of(copy)
    assert calls == [git(copy, "rev-parse", "HEAD").strip()]
    assert doc["repoSize"][-1]["files"] == doc_of(root)["repoSize"][-1]["files"] + 1


def test_a_damaged_cache_is_rebuilt(built):
    root = built["root"]
    good = doc_of(root)
    path = root / ".git/memwarden/report-cache/history.json"
    path.write_text("{not json")
    assert doc_of(root) == good
    assert json.loads(path.read_text())["format"] == history.CACHE_FORMAT


def _md_number(md: str, label: str) -> int | None:
    m = re.search(rf"^\| {re.escape(label)} \| ([^|]+) \|", md, re.M)
    assert m, label
    value = m.group(1).strip()
    return None if value == "—" else int(value.replace(",", ""))


def test_the_markdown_says_what_the_json_says(built):
    root = built["root"]
    doc = doc_of(root)
    code, md = report(root, "--format", "md")
    assert code == 0
    s = doc["summary"]
    for label, value in (("agents", s["agents"]), ("proposals applied", s["applied"]),
                         ("proposals pending", s["pending"]),
                         ("proposals rejected", s["rejected"]),
                         ("entries evicted", s["evictedEntries"]),
                         ("eviction commits", s["evictionCommits"]),
                         ("eviction loops", s["evictionLoops"]),
                         ("agents at ≥90% of a limit", s["agentsOverWarn"]),
                         ("agents over a HARD limit", s["agentsOverLimit"]),
                         ("waivers expired or expiring", s["waiversExpiring"]),
                         ("findings: errors", s["findings"]["errors"]),
                         ("findings: warnings", s["findings"]["warnings"])):
        assert _md_number(md, label) == value, label
    for w in doc["evictions"]["weeks"]:
        row = re.search(rf"^\| {w['start']} \| ([\d,]+) \| ([\d,]+) \|", md, re.M)
        assert row and (int(row.group(1)), int(row.group(2))) == (w["entries"], w["commits"])
    for a in doc["agents"]:
        total = a["layer1"]["layer1_total"]
        assert f"| {a['agentId']} | {total['tokens']:,} / {total['limit']:,}" in md
    for p in doc["pending"]:
        assert f"| {p['proposalId']} | {p['agentId']} | {p['ageDays']:,.1f} |" in md
    for r in doc["rejected"]:
        assert f"| {r['proposalId']} | {r['agentId']} | {r['at']} | {r['reason']} |" in md
    assert "| b | 10 | " not in md  # loops table: recent applies are at most the window
    assert f"| b | {doc['evictionLoops'][0]['applies']} |" in md
    code, md2 = report(root, "--format", "md", "--no-findings")
    assert _md_number(md2, "findings: errors") is None and "Not computed" in md2


def test_the_html_parses_strictly_and_names_its_commands(built):
    import html5lib

    code, page = report(built["root"], "--format", "html")
    assert code == 0
    html5lib.HTMLParser(strict=True, namespaceHTMLElements=False).parse(page)
    assert "http://" not in page.replace("http://www.w3.org/2000/svg", "") and \
        "https://" not in page  # no external asset
    assert "<script" not in page and "<link" not in page
    for cmd in ("memwarden evicted b", "memwarden status", "memwarden check --rev",
                "memwarden gate &lt;branch&gt;", "memwarden config", "git ls-tree -r -l"):
        assert cmd in page, cmd


def test_missing_data_is_said_not_drawn(tmp_path, mw):
    from conftest import make_repo

    root = make_repo(tmp_path, {"README.md": "nothing yet\n"})
    code, out, err = mw(root, "report", "--format", "html")
    assert code == 0, err
    assert "No agents" in out and "no data" in out.lower()
    assert "<polyline" not in out
    code, out, err = mw(root, "report", "--format", "json")
    assert json.loads(out)["summary"]["agents"] == 0


@pytest.mark.parametrize(("args", "needle"), [
    (("--since", "yesterday"), "--since yesterday: expected an ISO date"),
    (("--at", "no-such-rev"), "no-such-rev"),
    (("--since", "2030-01-01"), "is after the --at commit's time"),
])
def test_bad_arguments_exit_2_with_a_sentence(built, args, needle):
    code, out = report(built["root"], *args)
    assert code == 2 and "memwarden: error:" in out and needle in out
    assert "Traceback" not in out


# ------------------------------------------------------------------------ headless Chromium

CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                  "--no-first-run", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync", "--hide-scrollbars",
                  "--enable-logging=stderr", "--v=0"]


def chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found:
        return found
    if os.environ.get("CI") == "true":
        pytest.fail("chromium is not installed; CI must install it (apt-get install -y "
                    "chromium)")
    pytest.skip("chromium is not installed (Debian: apt-get install -y chromium); CI runs "
                "this test")


def browse(page: Path, tmp: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    profile = tmp / f"profile-{len(list(tmp.iterdir()))}"
    return subprocess.run([chromium(), *CHROMIUM_FLAGS, f"--user-data-dir={profile}", *extra,
                           page.as_uri()], capture_output=True, text=True, timeout=120)


def console_errors(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if "CONSOLE" in line or
            "Uncaught" in line]


def artefact_dir() -> Path:
    folder = Path(os.environ.get("MEMWARDEN_ARTEFACTS", Path(__file__).parent.parent /
                                 "build" / "test-artefacts"))
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def test_the_console_check_sees_an_error(tmp_path):
    bad = tmp_path / "bad.html"
    bad.write_text("<!DOCTYPE html><title>x</title><script>console.error('planted');"
                   "undefinedCall();</script>")
    proc = browse(bad, tmp_path, "--dump-dom")
    assert any("planted" in line for line in console_errors(proc.stderr)), proc.stderr[-2000:]


def test_the_html_renders_in_chromium(built, tmp_path):
    import html5lib

    page = tmp_path / "report.html"
    assert report(built["root"], "-o", str(page))[0] == 0
    proc = browse(page, tmp_path, "--dump-dom")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert console_errors(proc.stderr) == []
    dom = html5lib.parse(proc.stdout, namespaceHTMLElements=False)
    ids = {e.get("id") for e in dom.iter() if e.get("id")}
    assert {"summary", "agents", "evictions", "loops", "pending", "rejected", "waivers",
            "size", "findings"} <= ids
    strip = [e for e in dom.iter("li") if (e.get("id") or "").startswith("s-")]
    assert [li.get("id") for li in strip][:3] == ["s-agents", "s-applied", "s-pending"]
    assert all(li.find("a").text for li in strip)  # every number is a link
    rows = [e for e in dom.iter("tr") if (e.get("id") or "").startswith("a-")]
    assert [r.get("id") for r in rows][0] in ("a-b", "a-a", "a-c") and len(rows) == 3
    charts = [e for e in dom.iter() if e.tag.endswith("svg") and
              e.get("aria-hidden") != "true"]  # (the hidden one holds shared shapes)
    assert charts and all(e.get("aria-label") or e.get("aria-labelledby") for e in charts)
    titled = [e for e in charts if e.get("aria-labelledby")]
    assert len(titled) == 2  # evictions per week, repository size
    weeks = [e for e in dom.iter() if e.tag.endswith("a") and
             (e.get("href") or "").startswith("#week-")]
    assert weeks and all(w.get("href")[1:] in ids for w in weeks)
    shot = artefact_dir() / "report.png"
    proc = browse(page, tmp_path, f"--screenshot={shot}", "--window-size=1280,2200")
    assert proc.returncode == 0 and shot.stat().st_size > 10_000, proc.stderr[-2000:]
    assert console_errors(proc.stderr) == []


def test_the_demo_ends_with_the_report(tmp_path):
    from memwarden.cli.demo import run_demo

    lines: list[str] = []
    assert run_demo(keep=False, echo=lines.append) == 0
    last = [x for x in lines if "memwarden report" in x]
    assert last, lines[-5:]
    path = Path(re.search(r"(/\S+\.html)", "\n".join(lines)).group(1))
    assert path.is_file() and path.read_text().startswith("<!DOCTYPE html>")
    shutil.rmtree(path.parent)


def test_the_action_writes_the_summary_and_the_html(built, tmp_path):
    import sys

    root = Path(__file__).resolve().parents[1]
    files = {"GITHUB_OUTPUT": tmp_path / "output", "GITHUB_STEP_SUMMARY": tmp_path / "sum"}
    env = {k: v for k, v in os.environ.items() if not k.startswith("GITHUB_")}
    env.update(GIT_ENV)
    env.update({k: str(v) for k, v in files.items()})
    env.update({"MW_MODE": "report", "MW_REPORT_FILE": str(tmp_path / "r.html")})
    proc = subprocess.run([sys.executable, str(root / "action" / "entry.py")],
                          cwd=built["root"], env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    summary = files["GITHUB_STEP_SUMMARY"].read_text()
    assert summary.startswith("## memwarden report: main at ")
    assert (tmp_path / "r.html").read_text().startswith("<!DOCTYPE html>")
    out = files["GITHUB_OUTPUT"].read_text()
    assert "report<<" in out and str(tmp_path / "r.html") in out


def test_a_repository_without_main_is_a_clear_error(tmp_path, mw):
    from conftest import make_repo

    root = make_repo(tmp_path, {}, commit=False)
    code, out, err = mw(root, "report")
    assert code == 2 and "memwarden: error: report: --at refs/heads/main: not a commit" in err


def test_first_parent_changes_match_git_diff(tmp_path):
    """The batch tree diff against each commit's first parent, merges and the root
    included, as `git diff --raw` reports it."""
    from conftest import make_repo

    from memwarden.git.repo import open_repo

    root = make_repo(tmp_path, {"memory/a/facts.md": "one\n", "x.md": "x\n"})
    git(root, "checkout", "-qb", "side")
    (root / "memory/a/facts.md").write_text("two\n")
    git(root, "commit", "-qam", "side\n\nHuman-Edit: true")
    git(root, "checkout", "-q", "main")
    (root / "x.md").unlink()
    (root / "y.md").write_text("y\n")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "main\n\nHuman-Edit: true")
    git(root, "merge", "-q", "--no-ff", "-m", "merge side\n\nHuman-Edit: true", "side")
    repo = open_repo(root)
    commits = git(root, "rev-list", "--first-parent", "main").split()
    got = repo.first_parent_changes(commits)
    assert set(got) == set(commits)
    for sha in commits:
        parent = git(root, "rev-list", "--max-count=1", "--skip=1", "--first-parent", sha)
        base = parent.strip() or "4b825dc642cb6eb9a060e54bf8d69288fbee4904"  # empty tree
        want = []
        for line in git(root, "diff", "--raw", "--no-abbrev", "--no-renames", base,
                        sha).splitlines():
            meta, path = line.split("\t")
            _, _, old, new, _ = meta.split()
            want.append((path, None if set(old) == {"0"} else old,
                         None if set(new) == {"0"} else new))
        assert sorted(got[sha]) == sorted(want), sha
