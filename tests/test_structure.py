"""MW2xx structure rules: frontmatter, schemas, agent contracts, meta.json, entries, registry.

A realistic good repository (seed examples) must be clean; each bad case changes one file
of it and must produce its rule at the right line. Hostile input must give a finding or
nothing, never a traceback, in bounded time.
"""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
from conftest import make_repo, rules_in, write_files

from memwarden.git.source import WorktreeSource
from memwarden.model.config import parse_config
from memwarden.model.findings import Finding
from memwarden.model.layout import classify
from memwarden.model.memfile import MemFile
from memwarden.policies.engine import check
from memwarden.policies.rules.structure import (
    contract_findings,
    is_iso8601,
    is_iso_datetime,
    json_positions,
    load_json,
    load_schema,
    safe_output_tools,
    schema_issues,
)

A = "archivist-violin"
SNAPSHOT = f"memory/{A}/snapshot.md"
FACTS = f"memory/{A}/facts.md"
LOOPS = f"memory/{A}/open_loops.md"
DECISIONS = f"memory/{A}/decisions.md"
META = f"memory/{A}/meta.json"
CHANGELOG = f"memory/{A}/changelog.md"
TIMELINE = f"memory/{A}/timeline/2026-02-17.md"
RUN = f"memory/{A}/runs/run_2026-02-17_143000_abc123.md"
AGENT = f"agents/{A}/_agent.md"
JSONL = f"agents/{A}/memory/observations.jsonl"
REGISTRY = "registry.json"

GOOD_SNAPSHOT = f"""---
agent: {A}
updated_at: 2026-02-17T14:30:00Z
version: 47
run_id: run_2026-02-17_143000_abc123
---

# Поточний стан: Archivist Violin

## Активні цілі
- Каталогізація нових джерел з категорії "Архітектура ПЗ"
- Підготовка щотижневого дайджесту

## Ключовий контекст
- Останній дайджест: 2026-02-14
- Очікується review від Owner на 3 proposals
"""

GOOD_FACTS = f"""# Facts: {A}

## Домен
- Папка violin.pp.ua містить нотатки про скрипкову музику
- [2026-02-10] Загальна кількість каталогізованих джерел: 847

## Технічні знання
- Резюме створюються через NotebookLM (tool: notebooklm-query)

## Проєктний контекст
- Owner переглядає proposals щопонеділка

## Застаріло (архівовано git)
<!-- Ці рядки видаляються після коміту -->
"""

GOOD_LOOPS = f"""# Open Loops: {A}

## Критичні
- [ ] Оновити таксономію джерел — відкрита з 2026-02-15

## Очікування
- [ ] loop_owner1: Підтвердження від Owner щодо категорій (opened 2026-02-16, priority normal)

## Закриті (останні 7 днів)
- [x] Перевірити бекап — закрита 2026-02-16 | run_abc123
"""

GOOD_DECISIONS = f"""# Decisions: {A}

## 2026-02-17 — Зберігати пам'ять у git
**Статус:** Прийнято
**Контекст:** MinIO не зберігає історію змін
**Рішення:** монорепо memory/<agentId>/
**Обґрунтування:** аудит і відкат через git
**Наслідки:** усі зміни проходять через proposals
**Run:** run_abc123
"""

GOOD_META = json.dumps({
    "agentId": A, "version": 42, "lastUpdate": "2026-02-17T14:30:00Z",
    "lastRunId": "run_abc123", "snapshotTokenCount": 1200, "factsTokenCount": 6800,
    "openLoopsCount": 3, "decisionsCount": 12, "schemaVersion": "1.0"}, indent=2) + "\n"

GOOD_AGENT = f"""---
name: "Архіваріус Violin"
slug: "{A}"
version: "1.2.0"
description: "Аналізує нові нотатки у папці violin.pp.ua та створює структуровані резюме"

model: "claude-sonnet-4-5-20250929"
temperature: 0.2
max_steps: 8

tools:
  - notebooklm-query
  - read-context
  - read-notes
  - read-memory
  - write-memory
  - create-proposal

safe_outputs:
  - propose-summary
  - propose-tag

triggers:
  manual: true
  cron: "0 8 * * 1-5"
  events:
    - "note/created"

context:
  folder: "violin.pp.ua"
  max_sources: 5
  notebook_id: "nb_violin_main"

created_at: "2026-02-01T10:00:00Z"
updated_at: "2026-02-14T12:00:00Z"
created_by: "owner"
generated_from: "main-flow.drakon.json"
status: "active"
---

# Архіваріус: інструкції

Ти — агент-архіваріус папки "violin.pp.ua" у Digital Garden.

## Обмеження

- Не змінюй оригінальний текст нотаток — лише створюй proposals
"""

REGISTRY_ENTRY = {"slug": A, "name": "Архіваріус Violin", "status": "active", "version": "1.2.0",
                  "last_run": "2026-02-14T08:00:00Z", "last_run_status": "completed",
                  "pending_proposals": 2}


def registry(*entries: dict, **top) -> str:
    doc = {"version": "1", "updated_at": "2026-02-14T12:00:00Z", "agents": list(entries)}
    doc.update(top)
    return json.dumps(doc, ensure_ascii=False, indent=2) + "\n"


GOOD_JSONL = (
    '{"ts":"2026-02-13T08:00:00Z","run":"run_2026-02-13_080000_def456",'
    '"observation":"Нових нотаток у папці не знайдено"}\n'
    '{"ts":"2026-02-14T08:02:34Z","run":"run_2026-02-14_080000_abc123",'
    '"observation":"Оброблено 2 нові нотатки"}\n')

GOOD = {
    SNAPSHOT: GOOD_SNAPSHOT,
    FACTS: GOOD_FACTS,
    LOOPS: GOOD_LOOPS,
    DECISIONS: GOOD_DECISIONS,
    META: GOOD_META,
    CHANGELOG: f"---\nagent: {A}\nupdated_at: 2026-02-17T14:30:00Z\nversion: 42\n---\n"
               f"# Changelog: {A}\n\n## 2026-02-17\n\n### 14:30 — run_abc123 / p1\n"
               "- **facts.md:** Додано факт\n",
    TIMELINE: f"---\nagent: {A}\nupdated_at: 2026-02-17T14:31:00Z\ndate: 2026-02-17\n---\n"
              f"# Timeline: {A} / 2026-02-17\n\n### 09:15 — run_abc123\n**Тривалість:** 45с\n",
    RUN: f"---\nagent: {A}\nrun_id: run_2026-02-17_143000_abc123\n"
         "started_at: 2026-02-17T14:30:00Z\nfinished_at: 2026-02-17T14:30:45Z\n---\n"
         "# Run: run_2026-02-17_143000_abc123\n",
    AGENT: GOOD_AGENT,
    JSONL: GOOD_JSONL,
    f"agents/{A}/sources/violin-taxonomy.md": "# Таксономія\n",
    REGISTRY: registry(REGISTRY_ENTRY),
}

MW2 = parse_config(None).with_selection(["MW2"], None)


def run(tmp_path: Path, files: dict, select: tuple[str, ...] = ("MW2",),
        paths: list[str] | None = None) -> list[Finding]:
    """Check a plain directory tree (no git needed) with only the selected rules."""
    root = tmp_path / "tree"
    write_files(root, files)
    config = parse_config(None).with_selection(list(select), None)
    return check(WorktreeSource(root, None), config, paths).findings


def show(findings: list[Finding]) -> str:
    return "\n".join(f"{f.path}:{f.line}:{f.col}: {f.rule} {f.message}" for f in findings)


def test_good_repository_is_clean(tmp_path):
    findings = run(tmp_path, GOOD)
    assert findings == [], show(findings)


# --------------------------------------------------------------------------- bad cases

def agent_with(old: str, new: str) -> str:
    assert old in GOOD_AGENT
    return GOOD_AGENT.replace(old, new, 1)


def snapshot_with(old: str, new: str) -> str:
    assert old in GOOD_SNAPSHOT
    return GOOD_SNAPSHOT.replace(old, new, 1)


BILLION_LAUGHS = "---\n" + "".join(
    f"l{i}: &l{i} [" + ", ".join([f"*l{i - 1}" if i else '"lol"'] * 9) + "]\n"
    for i in range(9)) + "---\nbody\n"

# (id, path, content, rule, line, fragment of the message)
BAD = [
    # MW201: frontmatter that cannot be read
    ("unclosed", SNAPSHOT, "---\nagent: a\n\n# Snapshot\n", "MW201", 1, "never closed"),
    ("invalid-yaml", FACTS, "---\nagent: [x\n---\n- fact\n", "MW201", 3, "invalid YAML"),
    ("not-mapping", LOOPS, "---\n- a\n- b\n---\n", "MW201", 2, "must be a mapping"),
    ("billion-laughs", DECISIONS, BILLION_LAUGHS, "MW201", 2, "anchors and aliases"),
    ("deep-yaml", SNAPSHOT, "---\nx: " + "[" * 10000 + "\n---\n", "MW201", 2, "nested deeper"),
    ("duplicate-key", SNAPSHOT, snapshot_with("version: 47\n", "version: 47\nversion: 48\n"),
     "MW201", 5, "duplicate key 'version' (first on line 4)"),
    ("huge-frontmatter", FACTS, "---\nnote: '" + "я" * 40000 + "'\n---\n", "MW201", 1,
     "byte cap"),
    ("bool-key", CHANGELOG, "---\nagent: archivist-violin\nno: 1\n---\n", "MW201", 3,
     "read by YAML as a boolean"),
    ("agent-contract-yaml", AGENT, "---\nname: [\n---\nbody\n", "MW201", 3, "invalid YAML"),
    # MW202: memory frontmatter schema and jsonl lines
    ("agent-mismatch", SNAPSHOT, snapshot_with(f"agent: {A}", "agent: other-agent"), "MW202", 2,
     "frontmatter key 'agent': expected 'archivist-violin' (the folder name "
     "memory/archivist-violin/), got 'other-agent'"),
    ("version-text", SNAPSHOT, snapshot_with("version: 47", "version: two"), "MW202", 4,
     "frontmatter key 'version': expected a whole number >= 0"),
    ("updated-at", SNAPSHOT, snapshot_with("2026-02-17T14:30:00Z", "yesterday"), "MW202", 3,
     "frontmatter key 'updated_at': expected an ISO 8601 date or date-time"),
    ("impossible-date", FACTS, f"---\nagent: {A}\nupdated_at: 2026-02-30\n---\n", "MW202", 3,
     "got '2026-02-30'"),
    ("missing-run-id", SNAPSHOT, snapshot_with("run_id: run_2026-02-17_143000_abc123\n", ""),
     "MW202", 1, "frontmatter is missing required key 'run_id'"),
    ("empty-frontmatter", FACTS, "---\n---\n## A\n- fact\n", "MW202", 1,
     "frontmatter is missing required key 'agent'"),
    ("unknown-key", FACTS, f"---\nagent: {A}\nupdated_at: 2026-02-17\nupdatedat: x\n---\n",
     "MW202", 4, "unknown frontmatter key 'updatedat' (did you mean 'updated_at'?)"),
    ("nested-type", LOOPS, f"---\nagent: {A}\nupdated_at: 2026-02-17\ntags:\n  - ok\n  - 5\n"
     "---\n", "MW202", 6, "frontmatter key 'tags[1]': expected text, got 5"),
    ("timeline-date", TIMELINE, f"---\nagent: {A}\nupdated_at: 2026-02-18\ndate: 2026-02-18\n"
     "---\n", "MW202", 4, "frontmatter key 'date': expected '2026-02-17'"),
    ("run-id-mismatch", RUN, f"---\nagent: {A}\nrun_id: run_other\n---\n", "MW202", 3,
     "frontmatter key 'run_id': expected 'run_2026-02-17_143000_abc123'"),
    ("jsonl-ts", JSONL, GOOD_JSONL + '{"ts": "yesterday", "run": "run_1"}\n', "MW202", 3,
     "line 3: key 'ts': expected an ISO 8601 date-time"),
    ("jsonl-run", JSONL, '{"ts": "2026-02-14T08:02:34Z"}\n', "MW202", 1,
     "line 1: missing required key 'run'"),
    ("jsonl-invalid", JSONL, GOOD_JSONL + "{oops}\n", "MW202", 3, "line 3: invalid JSON"),
    ("jsonl-array", JSONL, "[1, 2]\n", "MW202", 1, "expected a JSON object, got an array"),
    ("jsonl-dup", JSONL, '{"ts": "2026-02-14T08:02:34Z", "run": "a", "run": "b"}\n', "MW202",
     1, "duplicate key 'run'"),
    # MW203: the agent contract
    ("no-frontmatter", AGENT, "# Instructions only\n", "MW203", 1, "has no YAML frontmatter"),
    ("slug-folder", AGENT, agent_with(f'slug: "{A}"', 'slug: "archivist"'), "MW203", 3,
     "frontmatter key 'slug': expected 'archivist-violin' (the folder name"),
    ("slug-pattern", AGENT, agent_with(f'slug: "{A}"', 'slug: "Archivist_Violin"'), "MW203", 3,
     "expected an agent id of lowercase letters"),
    ("semver", AGENT, agent_with('version: "1.2.0"', 'version: "1.2"'), "MW203", 4,
     "frontmatter key 'version': expected a semantic version"),
    ("semver-float", AGENT, agent_with('version: "1.2.0"', "version: 1.2"), "MW203", 4,
     "got 1.2"),
    ("semver-newline", AGENT, agent_with('version: "1.2.0"', 'version: "1.2.0\\n"'), "MW203", 4,
     "semantic version"),
    ("status-enum", AGENT, agent_with('status: "active"', 'status: "enabled"'), "MW203", 38,
     "frontmatter key 'status': expected one of 'draft', 'active', 'paused', 'error', "
     "'archived', got 'enabled'"),
    ("temperature", AGENT, agent_with("temperature: 0.2", "temperature: 1.5"), "MW203", 8,
     "frontmatter key 'temperature': expected a number from 0.0 to 1.0, got 1.5"),
    ("max-steps-low", AGENT, agent_with("max_steps: 8", "max_steps: 0"), "MW203", 9,
     "expected a whole number from 1 to 20, got 0"),
    ("max-steps-high", AGENT, agent_with("max_steps: 8", "max_steps: 21"), "MW203", 9,
     "got 21"),
    ("max-steps-type", AGENT, agent_with("max_steps: 8", "max_steps: many"), "MW203", 9,
     "got 'many'"),
    ("tools-empty", AGENT, agent_with("tools:\n  - notebooklm-query\n  - read-context\n"
                                      "  - read-notes\n  - read-memory\n  - write-memory\n"
                                      "  - create-proposal\n", "tools: []\n"),
     "MW203", 11, "expected at least one tool"),
    ("safe-outputs-empty", AGENT, agent_with("safe_outputs:\n  - propose-summary\n"
                                             "  - propose-tag\n", "safe_outputs: []\n"),
     "MW203", 19, "expected at least one safe output"),
    ("no-safe-tool", AGENT, agent_with("  - create-proposal\n", ""), "MW203", 11,
     "an active agent needs a safe-output tool"),
    ("tools-type", AGENT, agent_with("max_steps: 8", "max_steps: 8\ntools2: x"), "MW203", 10,
     "unknown frontmatter key 'tools2' (did you mean 'tools'?)"),
    ("created-at", AGENT, agent_with('created_at: "2026-02-01T10:00:00Z"',
                                     'created_at: "01.02.2026"'), "MW203", 34,
     "frontmatter key 'created_at': expected an ISO 8601 date or date-time"),
    ("cron-type", AGENT, agent_with('cron: "0 8 * * 1-5"', "cron: 8"), "MW203", 25,
     "frontmatter key 'triggers.cron'"),
    ("missing-model-active", AGENT, agent_with('model: "claude-sonnet-4-5-20250929"\n', ""),
     "MW203", 1, "frontmatter is missing required key 'model' (an active agent needs it)"),
    ("missing-name", AGENT, agent_with('name: "Архіваріус Violin"\n', ""), "MW203", 1,
     "frontmatter is missing required key 'name'"),
    ("empty-body", AGENT, GOOD_AGENT.split("# Архіваріус: інструкції")[0], "MW203", 39,
     "has no instructions after the frontmatter"),
    ("folder-without-contract", "agents/ghost/sources/notes.md", "# notes\n", "MW203", 1,
     "agents/ghost/ has no _agent.md"),
    # MW204: meta.json
    ("meta-invalid", META, '{"agentId": "archivist-violin",\n  "version": 4,,\n}', "MW204", 2,
     "meta.json: invalid JSON"),
    ("meta-dup", META, '{"agentId": "archivist-violin", "version": 4,\n "schemaVersion": "1.0",'
     '\n "version": 5}', "MW204", 3, "duplicate key 'version'"),
    ("meta-array", META, "[]", "MW204", 1, "meta.json: expected a JSON object, got an empty list"),
    ("meta-version", META, GOOD_META.replace('"version": 42', '"version": "42"'), "MW204", 3,
     "meta.json key 'version': expected a whole number >= 0"),
    ("meta-required", META, '{"agentId": "archivist-violin", "version": 1}', "MW204", 1,
     "meta.json is missing required key 'schemaVersion'"),
    ("meta-agent", META, GOOD_META.replace(f'"agentId": "{A}"', '"agentId": "other"'), "MW204",
     2, "meta.json key 'agentId': expected 'archivist-violin'"),
    ("meta-count", META, GOOD_META.replace('"openLoopsCount": 3', '"openLoopsCount": -3'),
     "MW204", 8, "meta.json key 'openLoopsCount': expected a whole number >= 0, got -3"),
    ("meta-unknown", META, GOOD_META.replace('"version": 42', '"verison": 42'), "MW204", 3,
     "unknown meta.json key 'verison' (did you mean 'version'?)"),
    ("meta-nan", META, '{"agentId": "archivist-violin", "version": NaN, "schemaVersion": "1"}',
     "MW204", 1, "NaN is not valid JSON"),
    ("meta-deep", META, "[" * 10000 + "]" * 10000, "MW204", 1, "nested too deeply"),
    # MW206: malformed entries and undecodable files
    ("fact-date", FACTS, GOOD_FACTS.replace("[2026-02-10]", "[2026-02-31]"), "MW206", 5,
     "fact date [2026-02-31] is not a valid YYYY-MM-DD date"),
    ("loop-mark", LOOPS, GOOD_LOOPS.replace("- [ ] Оновити", "- [~] Оновити"), "MW206", 4,
     "unknown checkbox mark [~]"),
    ("loop-no-checkbox", LOOPS, GOOD_LOOPS + "- забута петля\n", "MW206", 11,
     "loop without a checkbox"),
    ("decision-heading", DECISIONS, GOOD_DECISIONS + "\n## Архів\n", "MW206", 11,
     "decision heading must be '## YYYY-MM-DD — title'"),
    ("binary-facts", FACTS, b"# Facts\n\x00\x00binary", "MW206", 2, "binary file"),
    ("bad-utf8-loops", LOOPS, "# Петлі\n- [ ] ок\n".encode() + b"\xff\n", "MW206", 3,
     "invalid UTF-8"),
    ("utf16-agent", AGENT, GOOD_AGENT.encode("utf-16"), "MW206", 1, "UTF-16"),
    ("binary-meta", META, b"\x00\x01\x02", "MW206", 1, "binary file"),
    ("binary-jsonl", JSONL, b'{"ts": 1}\n\x00', "MW206", 2, "binary file"),
    ("binary-registry", REGISTRY, b"\xff\xfe\x00{", "MW206", 1, "UTF-16"),
    # MW207: registry drift
    ("registry-missing-entry", REGISTRY, registry(), "MW207", 4,
     "registry.json has no entry for agent 'archivist-violin'"),
    ("registry-extra", REGISTRY, registry(REGISTRY_ENTRY, {**REGISTRY_ENTRY, "slug": "ghost"}),
     "MW207", 14, "registry.json lists agent 'ghost' (agents[1]) but agents/ghost/_agent.md "
     "does not exist"),
    ("registry-status", REGISTRY, registry({**REGISTRY_ENTRY, "status": "paused"}), "MW207", 8,
     "registry.json agents[0].status is 'paused' but agents/archivist-violin/_agent.md says "
     "'active'"),
    ("registry-version", REGISTRY, registry({**REGISTRY_ENTRY, "version": "1.1.0"}), "MW207", 9,
     "agents[0].version is '1.1.0'"),
    ("registry-invalid", REGISTRY, '{"agents": [\n  {"slug": "x",}\n]}', "MW207", 2,
     "registry.json: invalid JSON"),
    ("registry-dup-slug", REGISTRY, registry(REGISTRY_ENTRY, REGISTRY_ENTRY), "MW207", 15,
     "lists agent 'archivist-violin' twice"),
    ("registry-schema", REGISTRY, registry(REGISTRY_ENTRY, extra=True), "MW207", 15,
     "unknown registry.json key 'extra'"),
    ("registry-not-list", REGISTRY, '{"agents": {}}', "MW207", 1,
     "registry.json key 'agents': expected a list of agents, got an empty mapping"),
]


@pytest.mark.parametrize("case", BAD, ids=[c[0] for c in BAD])
def test_bad_case_is_reported(tmp_path, case):
    _, path, content, rule_id, line, fragment = case
    findings = run(tmp_path, {**GOOD, path: content})
    hits = [f for f in findings if f.rule == rule_id and fragment in f.message]
    assert hits, f"expected {rule_id} '{fragment}' in:\n{show(findings)}"
    assert hits[0].path == path or rule_id in ("MW207",)
    assert hits[0].line == line, show(hits)
    assert hits[0].fingerprint.startswith("sha256:")


@pytest.mark.parametrize("case", BAD, ids=[c[0] for c in BAD])
def test_bad_case_vanishes_without_its_rule(tmp_path, case):
    _, path, content, rule_id, _, fragment = case
    others = [r for r in ("MW201", "MW202", "MW203", "MW204", "MW206", "MW207") if r != rule_id]
    findings = run(tmp_path, {**GOOD, path: content}, select=tuple(others))
    assert not any(f.rule == rule_id for f in findings)
    assert not any(fragment in f.message for f in findings)


# --------------------------------------------------------------------------- good variants

DRAFT = """---
name: Draft agent
slug: {slug}
version: 0.1.0
status: draft
created_at: 2026-02-01
created_by: owner
---
"""

GOOD_VARIANTS = [
    ("no-frontmatter", SNAPSHOT, "# Snapshot\n\n## Роль\nАрхіваріус\n"),
    ("frontmatter-only", FACTS, f"---\nagent: {A}\nupdated_at: 2026-02-17\n---\n"),
    ("empty-file", LOOPS, ""),
    ("bom-crlf", FACTS, ("\ufeff" + GOOD_FACTS).replace("\n", "\r\n")),
    ("bom-crlf-frontmatter", SNAPSHOT, ("\ufeff" + GOOD_SNAPSHOT).replace("\n", "\r\n")),
    ("unquoted-timestamps", FACTS, f"---\nagent: {A}\nupdated_at: 2026-02-17 14:30:00\n---\n"),
    ("offset-timestamp", FACTS, f"---\nagent: {A}\nupdated_at: 2026-02-17T16:30:00+02:00\n"
                                "---\n"),
    ("meta-minimal", META, f'{{"agentId": "{A}", "version": 0, "schemaVersion": "1.0"}}'),
    ("meta-bom", META, "\ufeff" + GOOD_META.replace("\n", "\r\n")),
    ("meta-apply-fields", META, json.dumps({
        "agentId": A, "version": 43, "schemaVersion": "1.0", "lastRunId": None,
        "openLoopsTokenCount": 300, "layer1TokenCount": 8300, "layer1Hash": "sha256:" + "a" * 64,
        "lastProposalId": "p1", "encoding": "cl100k_base"})),
    ("jsonl-blank-lines", JSONL, GOOD_JSONL + "\n\n"),
    ("jsonl-empty", JSONL, ""),
    ("decisions-with-code", DECISIONS, GOOD_DECISIONS + "\n```\n## not a heading\n```\n"),
    ("binary-source-png", f"agents/{A}/sources/diagram.png", b"\x89PNG\x00\x00"),
    ("registry-runtime-fields", REGISTRY, registry({**REGISTRY_ENTRY, "last_run": None,
                                                    "pending_proposals": 0})),
]


@pytest.mark.parametrize("case", GOOD_VARIANTS, ids=[c[0] for c in GOOD_VARIANTS])
def test_good_variant_is_clean(tmp_path, case):
    _, path, content = case
    findings = run(tmp_path, {**GOOD, path: content})
    assert findings == [], show(findings)


def contract(text: str, slug: str = A) -> MemFile:
    path = f"agents/{slug}/_agent.md"
    return MemFile(classify(path), text.encode(), 0o100644, "blob")


@pytest.mark.parametrize("text", [
    DRAFT.format(slug=A),
    DRAFT.format(slug=A).replace("status: draft", "status: paused"),
    DRAFT.format(slug=A).replace("status: draft", "status: archived") + "\nold prompt\n",
    # an active agent whose only safe-output tool is a propose-* tool ...
    agent_with("  - create-proposal\n", "  - propose-summary\n"),
    # ... or a tool listed in safe_outputs
    agent_with("  - create-proposal\n", "  - publish-note\n").replace(
        "  - propose-tag\n", "  - propose-tag\n  - publish-note\n"),
    agent_with('cron: "0 8 * * 1-5"', 'cron: "@daily"'),
    agent_with('cron: "0 8 * * 1-5"', "cron: null"),
    agent_with('generated_from: "main-flow.drakon.json"',
               'generated_from: "main-flow.drakon.json # modified manually"'),
    agent_with('created_at: "2026-02-01T10:00:00Z"', "created_at: 2026-02-01T10:00:00Z"),
])
def test_good_contracts(text):
    assert contract_findings(contract(text)) == []


def test_draft_gets_type_checks_but_not_activation_checks():
    draft = DRAFT.format(slug=A) + "temperature: hot\n"
    draft = draft.replace("---\ntemperature: hot\n", "temperature: hot\n---\n")
    findings = contract_findings(contract(draft))
    assert [f.message for f in findings] == [
        "frontmatter key 'temperature': expected a number from 0.0 to 1.0, got 'hot'"]


def test_safe_output_tools():
    assert safe_output_tools(["read", "create-proposal"], []) == ["create-proposal"]
    assert safe_output_tools(["propose-tag", "x"], []) == ["propose-tag"]
    assert safe_output_tools(["publish"], ["publish"]) == ["publish"]
    assert safe_output_tools(["read", 5], ["propose-x"]) == []


def test_missing_registry_is_a_warning_only_for_whole_tree_checks(tmp_path):
    files = {k: v for k, v in GOOD.items() if k != REGISTRY}
    findings = run(tmp_path, files)
    assert [(f.path, f.rule, f.severity) for f in findings] == [(REGISTRY, "MW207", "warning")]
    assert "registry.json is missing" in findings[0].message
    assert run(tmp_path, files, paths=[AGENT]) == []


def test_no_registry_and_no_agents_is_fine(tmp_path):
    files = {k: v for k, v in GOOD.items() if not k.startswith("agents/") and k != REGISTRY}
    assert run(tmp_path, files) == []


def test_registry_drift_is_reported_on_the_edited_contract(tmp_path):
    files = {**GOOD, AGENT: agent_with('status: "active"', 'status: "paused"')}
    on_contract = run(tmp_path, files, paths=[AGENT])
    assert [(f.path, f.line, f.rule) for f in on_contract] == [(AGENT, 38, "MW207")]
    assert "registry.json is now stale" in on_contract[0].message
    on_registry = run(tmp_path, files, paths=[REGISTRY])
    assert [(f.path, f.line, f.rule) for f in on_registry] == [(REGISTRY, 8, "MW207")]
    whole = run(tmp_path, files)
    assert [(f.path, f.rule) for f in whole] == [(REGISTRY, "MW207")]


def test_folder_warning_lands_on_a_checked_file(tmp_path):
    files = {**GOOD, "agents/ghost/sources/a.md": "a", "agents/ghost/sources/b.md": "b"}
    whole = run(tmp_path, files)
    assert [(f.path, f.severity) for f in whole] == [("agents/ghost/sources/a.md", "warning")]
    focused = run(tmp_path, files, paths=["agents/ghost/sources/b.md"])
    assert [f.path for f in focused] == ["agents/ghost/sources/b.md"]


def test_findings_per_file_are_capped(tmp_path):
    lines = "".join('{"ts": "bad", "run": "run_1"}\n' for _ in range(500))
    findings = run(tmp_path, {**GOOD, JSONL: lines})
    assert len(findings) == 51
    assert "450 more MW202 finding(s)" in findings[-1].message or \
        any("more MW202" in f.message for f in findings)


# --------------------------------------------------------------------------- hostile input

DEEP_JSON = "[" * 10000 + "]" * 10000
DEEP_YAML_FM = "---\nx: " + "{a: " * 10000 + "1" + "}" * 10000 + "\n---\n"
HOSTILE = {
    "binary": b"\x00\x01\x02\x03" * 100,
    "invalid-utf8": b"ok\n\xc3\x28\n",
    "bom": b"\xef\xbb\xbf",
    "crlf-only": b"\r\n\r\n",
    "yaml-bomb": BILLION_LAUGHS.encode(),
    "deep-yaml": DEEP_YAML_FM.encode(),
    "deep-json": DEEP_JSON.encode(),
    "dup-yaml": b"---\na: 1\na: 1\n---\n",
    "dup-json": b'{"a": 1, "a": 1}',
    "huge-frontmatter": b"---\n" + b"k: v\n" * 30000 + b"---\n",
    "empty": b"",
    "frontmatter-only": b"---\n---",
    "dashes": b"---",
    "lone-cr": b"---\ra: 1\r---\r",
}
TARGETS = [SNAPSHOT, FACTS, LOOPS, DECISIONS, CHANGELOG, TIMELINE, RUN, META, AGENT, JSONL,
           REGISTRY]


@pytest.mark.parametrize("payload", sorted(HOSTILE))
def test_hostile_input_gives_findings_not_tracebacks(tmp_path, payload):
    files = {**GOOD, **{t: HOSTILE[payload] for t in TARGETS}}
    findings = run(tmp_path, files)
    assert all(f.rule.startswith("MW2") and f.line >= 1 and f.col >= 1 for f in findings)
    by_path = {t: {f.rule for f in findings if f.path == t} for t in TARGETS}
    if payload in ("binary", "invalid-utf8"):
        assert all("MW206" in by_path[t] for t in TARGETS), by_path
    if payload in ("yaml-bomb", "deep-yaml", "dup-yaml", "huge-frontmatter"):
        for t in (SNAPSHOT, FACTS, AGENT):
            assert "MW201" in by_path[t], (t, by_path)
    if payload in ("deep-json", "dup-json"):
        assert "MW204" in by_path[META] and "MW202" in by_path[JSONL]
        assert "MW207" in by_path[REGISTRY]


def test_oversized_files_fail_closed_under_mw206(tmp_path):
    big = b"- fact\n" * (4 * 1024 * 1024 // 7 + 10)
    findings = run(tmp_path, {**GOOD, FACTS: big, META: b" " * (4 * 1024 * 1024 + 1)})
    found = sorted((f.path, f.rule, f.severity) for f in findings if f.path in (FACTS, META))
    assert found == sorted([(META, "MW206", "error"), (FACTS, "MW206", "error")])
    assert all("max_file_bytes" in f.message for f in findings if f.path in (FACTS, META))


def test_long_jsonl_is_checked(tmp_path):
    line = '{"ts":"2026-02-14T08:02:34Z","run":"run_2026-02-14_080000_abc123","n":1}\n'
    data = line * (3 * 1024 * 1024 // len(line))
    findings = run(tmp_path, {**GOOD, JSONL: data})
    assert findings == []


# --------------------------------------------------------------------------- schemas

KINDS = ["snapshot", "facts", "open_loops", "decisions", "relationships", "changelog",
         "timeline", "run", "agent_contract", "meta", "registry", "agent_jsonl"]


@pytest.mark.parametrize("kind", KINDS)
def test_schemas_are_valid_draft_2020_12(kind):
    schema = load_schema(kind)
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema["$schema"].endswith("2020-12/schema") and schema["title"]


@pytest.mark.parametrize("kind, doc", [
    ("meta", json.loads(GOOD_META)),
    ("registry", json.loads(registry(REGISTRY_ENTRY))),
    ("agent_jsonl", json.loads(GOOD_JSONL.splitlines()[0])),
])
def test_seed_examples_validate(kind, doc):
    assert schema_issues(doc, kind, kind) == []


def test_messages_name_key_and_expectation():
    issues = schema_issues({"agent": "a", "updated_at": "2026-02-17", "version": "two",
                            "run_id": "run_1"}, "snapshot", "frontmatter")
    assert [i.message for i in issues] == [
        "frontmatter key 'version': expected a whole number >= 0 (the memory version from "
        "meta.json), got 'two'"]
    assert issues[0].path == ("version",)


@pytest.mark.parametrize("value, ok", [
    ("2026-02-17", True), ("2026-02-17T14:30:00Z", True), ("2026-02-17T14:30Z", True),
    ("2026-02-17T14:30:00.123+02:00", True), ("2026-02-17 14:30:00", True),
    ("2026-02-30", False), ("2026-02-17T25:00:00Z", False), ("17.02.2026", False),
    ("2026-02-17T14:30:00Z\n", False), ("yesterday", False), ("", False),
])
def test_iso8601(value, ok):
    assert is_iso8601(value) is ok


def test_iso_datetime_needs_a_time():
    assert not is_iso_datetime("2026-02-17") and is_iso_datetime("2026-02-17T00:00:00Z")


def test_json_positions_and_duplicates():
    text = '{\n  "a": [1, {"b": 2}],\n  "c": {"d": true, "d": false}\n}'
    positions, dups = json_positions(text)
    assert positions[("a",)] == (2, 3)
    assert positions[("a", 1)] == (2, 12)
    assert positions[("a", 1, "b")] == (2, 13)
    assert dups == [(("c", "d"), (3, 20))]
    assert load_json(text)[1].line == 3


# --------------------------------------------------------------------------- end to end

def test_end_to_end_check_all(tmp_path, mw):
    root = make_repo(tmp_path, GOOD)
    code, out, _ = mw(root, "check", "--all", "--select", "MW2")
    assert code == 0, out
    code, out, _ = mw(root, "check", "--all")
    assert not [r for r in rules_in(out) if r.startswith("MW2")], out

    write_files(root, {
        SNAPSHOT: snapshot_with("version: 47", "version: two"),
        META: "[]",
        AGENT: agent_with('status: "active"', 'status: "paused"'),
        LOOPS: GOOD_LOOPS + "- [?] дивна петля\n",
        f"agents/{A}/memory/decisions.jsonl": '{"ts": "2026-02-14"}\n',
    })
    code, out, _ = mw(root, "check", "--all")
    assert code == 1
    found = set(rules_in(out))
    assert {"MW202", "MW204", "MW206", "MW207"} <= found, out
    assert f"{SNAPSHOT}:4:1: MW202 frontmatter key 'version': expected a whole number" in out

    code, out, _ = mw(root, "check", AGENT, "--format", "json")
    report = json.loads(out)
    assert code == 1
    assert {f["rule"] for f in report["findings"]} >= {"MW207"}


def test_rule_docs(tmp_path, mw):
    for rule_id in ("MW201", "MW202", "MW203", "MW204", "MW206", "MW207"):
        code, text, _ = mw(tmp_path, "rule", rule_id)
        assert code == 0 and "Bad:" in text and "Good:" in text
