"""Generate a realistic N-agent memory repository for benchmarks (a git repo, one commit).

Every agent gets the memory layout and formats of docs/memory-format.md: snapshot.md, facts.md
and open_loops.md filled to 78-93% of their HARD limits (cl100k_base; a fifth of the agents
are "young", at 35-60%), decisions.md, changelog.md, two timeline days, a run report and
meta.json, plus agents/<slug>/_agent.md in the example contracts' style and a registry.json that
matches the contracts. N=1000 gives about 34 MB and 10.7M tokens of Markdown. Text is built
from English and Ukrainian word lists with a seeded RNG (deterministic, no network) and is
benign on purpose: `memwarden check --all` on the result finds no errors, only near-limit
warnings, so the benchmark measures the cost of a clean run.

Usage: python bench/gen_repo.py OUT_DIR --agents N [--seed S] [--jobs J]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from memwarden.tokens.counter import count_text, get_encoder

ENCODING = "cl100k_base"
BASE_DATE = (2026, 2, 17)  # the repository's "today": every date is at or before it
FILL = (0.78, 0.93)  # most agents fill Layer 1 to this fraction of its HARD limits
YOUNG_FILL = (0.35, 0.6)  # ...and young agents (YOUNG_SHARE of them) to this fraction
YOUNG_SHARE = 0.2
LIMITS = {"snapshot": 2000, "facts": 8000, "open_loops": 2000}
UK_SHARE = 0.6  # agents whose memory is written mostly in Ukrainian

GIT_ENV = {
    "GIT_AUTHOR_NAME": "memwarden bench",
    "GIT_AUTHOR_EMAIL": "bench@memwarden.invalid",
    "GIT_COMMITTER_NAME": "memwarden bench",
    "GIT_COMMITTER_EMAIL": "bench@memwarden.invalid",
    "GIT_AUTHOR_DATE": "2026-02-17T18:00:00Z",
    "GIT_COMMITTER_DATE": "2026-02-17T18:00:00Z",
}

# ---------------------------------------------------------------------------- word lists

ROLES = ["archivist", "curator", "reviewer", "indexer", "planner", "scribe", "librarian",
         "auditor", "editor", "tagger", "summarizer", "researcher", "translator", "steward"]
DOMAINS = ["violin", "garden", "music", "notes", "papers", "recipes", "history", "physics",
           "drakon", "botany", "poetry", "archive", "library", "theatre", "chess", "maps"]
ROLE_UK = {"archivist": "Архіваріус", "curator": "Куратор", "reviewer": "Рецензент",
           "indexer": "Індексатор", "planner": "Планувальник", "scribe": "Писар",
           "librarian": "Бібліотекар", "auditor": "Аудитор", "editor": "Редактор",
           "tagger": "Тегувальник", "summarizer": "Резюматор", "researcher": "Дослідник",
           "translator": "Перекладач", "steward": "Доглядач"}

EN = {
    "subj": ["The agent", "The owner", "The reviewer", "The nightly job", "The gateway",
             "The indexer", "The apply step", "The curator", "The research team",
             "The migration script", "The search service", "The release manager",
             "Each run", "The weekly digest", "The archive service", "The summary pipeline"],
    "verb": ["checks", "updates", "archives", "stores", "analyses", "compares", "syncs",
             "reads", "marks", "groups", "summarises", "rejects", "approves", "publishes",
             "removes", "caches", "indexes", "moves", "restores", "normalises", "reviews",
             "links", "counts", "rotates", "tags", "drafts", "validates", "exports"],
    "obj": ["new notes in the violin folder", "summaries of recent articles",
            "tags for the catalogue", "the search index", "the run journal",
            "source metadata", "links to the scores", "the proposal queue",
            "draft summaries", "the memory snapshot", "duplicate entries",
            "the weekly digest", "citations in the reading list", "broken cross-references",
            "the glossary of terms", "notes shorter than 200 words", "the folder index",
            "open questions from the owner", "stale facts", "the taxonomy of topics",
            "the changelog", "timeline entries", "decision records", "entity references"],
    "tail": ["every morning at 08:00", "after each run", "once a week",
             "only with the owner's approval", "without changing the original text",
             "within the token budget", "using the previous decisions",
             "before the end of the sprint", "when the queue is empty",
             "for the Bach partitas", "for the Sibelius concerto", "in the garden folder",
             "with a short rationale", "for every new source", "during the quiet hours",
             "in batches of ten", "with stable fact ids", "on the main branch only"],
    "adj": ["reliable", "slow", "fast", "stable", "fragile", "verbose", "concise",
            "outdated", "current", "consistent", "incomplete", "accurate", "noisy"],
    "noun": ["NotebookLM", "MinIO", "the BM25 index", "the registry", "the cron trigger",
             "the summary template", "the tag list", "the note parser", "the review queue",
             "the DRAKON diagram", "the folder slug", "the proposal format"],
}

UK = {
    "subj": ["Агент", "Власник", "Рецензент", "Нічний процес", "Шлюз", "Індексатор",
             "Крок застосування", "Куратор", "Команда дослідників", "Скрипт міграції",
             "Сервіс пошуку", "Менеджер релізу", "Кожен запуск", "Щотижневий дайджест",
             "Сервіс архіву", "Конвеєр резюме"],
    "verb": ["перевіряє", "оновлює", "архівує", "зберігає", "аналізує", "порівнює",
             "синхронізує", "читає", "позначає", "групує", "резюмує", "відхиляє",
             "затверджує", "публікує", "видаляє", "кешує", "індексує", "переносить",
             "відновлює", "нормалізує", "переглядає", "пов'язує", "підраховує", "ротує",
             "тегує", "готує", "валідує", "експортує"],
    "obj": ["нові нотатки у папці violin.pp.ua", "резюме свіжих статей", "теги для каталогу",
            "пошуковий індекс", "журнал запусків", "метадані джерел",
            "посилання на партитури", "чергу пропозицій", "чернетки резюме",
            "знімок пам'яті", "дублікати записів", "щотижневий дайджест",
            "цитати у списку літератури", "зламані перехресні посилання",
            "глосарій термінів", "нотатки коротші за 200 слів", "індекс папки",
            "відкриті питання власника", "застарілі факти", "таксономію тем",
            "журнал змін", "записи хронології", "записи рішень", "посилання на сутності"],
    "tail": ["щоранку о 08:00", "після кожного запуску", "раз на тиждень",
             "лише за погодженням власника", "без зміни оригінального тексту",
             "у межах бюджету токенів", "з урахуванням попередніх рішень",
             "до кінця спринту", "коли черга порожня", "для партит Баха",
             "для концерту Сібеліуса", "у папці саду", "з коротким обґрунтуванням",
             "для кожного нового джерела", "у тихі години", "пакетами по десять",
             "зі стабільними ідентифікаторами фактів", "лише на гілці main"],
    "adj": ["надійний", "повільний", "швидкий", "стабільний", "крихкий", "багатослівний",
            "стислий", "застарілий", "актуальний", "послідовний", "неповний", "точний",
            "шумний"],
    "noun": ["NotebookLM", "MinIO", "індекс BM25", "реєстр", "cron-тригер",
             "шаблон резюме", "список тегів", "парсер нотаток", "черга рецензій",
             "діаграма DRAKON", "slug папки", "формат пропозиції"],
}

HEAD = {
    "en": {
        "snapshot": ["Role", "Active context", "Key facts", "Recent decisions"],
        "facts": ["Domain", "Technical knowledge", "Project context", "Deprecated"],
        "loops": ["Critical", "Waiting", "Closed (last 7 days)"],
        "updated": "Updated", "version": "Version", "status": "Status",
        "accepted": "Accepted", "dfields": ["Context", "Decision", "Rationale", "Consequences"],
        "runs": "Runs", "duration": "Duration", "task": "Task", "result": "Result",
        "pstatus": "Proposal status",
        "run_sections": ["Context (loaded)", "Steps", "Proposals", "Result"],
        "started": "Started", "finished": "Finished",
    },
    "uk": {
        "snapshot": ["Роль", "Активний контекст", "Ключові факти", "Останні рішення"],
        "facts": ["Домен", "Технічні знання", "Проєктний контекст", "Застаріло"],
        "loops": ["Критичні", "Очікування", "Закриті (останні 7 днів)"],
        "updated": "Оновлено", "version": "Версія", "status": "Статус",
        "accepted": "Прийнято", "dfields": ["Контекст", "Рішення", "Обґрунтування", "Наслідки"],
        "runs": "Запуски", "duration": "Тривалість", "task": "Задача", "result": "Результат",
        "pstatus": "Статус Proposal",
        "run_sections": ["Контекст (завантажений)", "Виконані кроки", "Сформовані Proposals",
                         "Результат"],
        "started": "Час початку", "finished": "Час завершення",
    },
}


# ---------------------------------------------------------------------------- text


class Writer:
    """Sentence source for one agent: seeded, mostly one language, some of the other."""

    def __init__(self, rng: random.Random, lang: str) -> None:
        self.rng = rng
        self.lang = lang
        self.seen: set[str] = set()

    def sentence(self, lang: str | None = None) -> str:
        rng = self.rng
        lang = lang or (self.lang if rng.random() < 0.85 else ("en" if self.lang == "uk"
                                                                 else "uk"))
        w = UK if lang == "uk" else EN
        s = f"{rng.choice(w['subj'])} {rng.choice(w['verb'])} {rng.choice(w['obj'])}"
        r = rng.random()
        if r < 0.55:
            s += f" {rng.choice(w['tail'])}"
        if r < 0.35:
            link = "; " + ("джерело" if lang == "uk" else "source") + ":"
            s += f"{link} {rng.choice(w['noun'])} ({rng.choice(w['adj'])}, {rng.randint(2, 480)})"
        elif r < 0.5:
            s += f" ({rng.randint(3, 95)}%, v{rng.randint(1, 4)}.{rng.randint(0, 12)})"
        elif r < 0.6:
            s += f", [[{rng.choice(DOMAINS)}-{rng.choice(ROLES)}]]"
        return s + "."

    def unique(self, make: Callable[[], str]) -> str:
        """A line not used before in this agent (fact ids must not collide)."""
        for _ in range(50):
            text = make()
            if text not in self.seen:
                self.seen.add(text)
                return text
        text = f"{make()} #{len(self.seen)}"
        self.seen.add(text)
        return text

    def para(self, n: int) -> str:
        return " ".join(self.sentence() for _ in range(n))


def date(rng: random.Random, back: int) -> str:
    """A date up to `back` days before the repository's base date."""
    import datetime as dt

    d = dt.date(*BASE_DATE) - dt.timedelta(days=rng.randint(0, back))
    return d.isoformat()


def run_id(rng: random.Random) -> str:
    return f"run_{rng.randrange(16**8):08x}"


class Budget:
    """Builds a file line by line towards a token target, then trims it to fit exactly.

    Lines are costed one at a time (`line + "\\n"`), which overestimates the whole file a
    little (joined text merges some whitespace tokens), so the builder overfills by that
    margin and `fit` drops removable lines from the end until the exact count of the whole
    text is at or under the target.
    """

    def __init__(self, enc: object, target: int) -> None:
        self.enc = enc
        self.target = target
        self.limit = int(target * 1.08)
        self.used = 0
        self.lines: list[str] = []
        self.removable: list[int] = []  # indices of lines `fit` may drop

    def cost(self, line: str) -> int:
        return len(self.enc.encode_ordinary(line + "\n"))  # type: ignore[attr-defined]

    def add(self, line: str, removable: bool = True) -> None:
        if removable:
            self.removable.append(len(self.lines))
        self.lines.append(line)
        self.used += self.cost(line)

    def force(self, *lines: str) -> None:
        for line in lines:
            self.add(line, removable=False)

    def fits(self, line: str, stop: int | None = None) -> bool:
        bound = self.limit if stop is None else min(stop, self.limit)
        return self.used + self.cost(line) <= bound

    def fit(self) -> str:
        """The text, with trailing removable lines dropped until it is within the target."""
        while True:
            text = "\n".join(self.lines) + "\n"
            exact = len(self.enc.encode_ordinary(text))  # type: ignore[attr-defined]
            if exact <= self.target or not self.removable:
                return text
            over = exact - self.target
            drop: set[int] = set()
            while over > 0 and self.removable:
                i = self.removable.pop()
                drop.add(i)
                over -= max(1, self.cost(self.lines[i]) - 1)
            self.lines = [ln for i, ln in enumerate(self.lines) if i not in drop]
            keep = sorted(drop)
            self.removable = [i - sum(1 for d in keep if d < i) for i in self.removable]


# ---------------------------------------------------------------------------- files


@dataclass
class Agent:
    slug: str
    lang: str
    name: str
    version: int
    last_run: str
    rng: random.Random
    w: Writer
    runs: list[str] = field(default_factory=list)
    contract_version: str = ""
    fill: tuple[float, float] = FILL


def frontmatter(fields: dict[str, object]) -> list[str]:
    out = ["---"]
    for k, v in fields.items():
        out.append(f"{k}: {json.dumps(v, ensure_ascii=False)}")
    out.append("---")
    return out


def gen_snapshot(a: Agent, enc: object) -> str:
    rng, w, h = a.rng, a.w, HEAD[a.lang]
    b = Budget(enc, int(LIMITS["snapshot"] * rng.uniform(*a.fill)))
    stamp = f"{date(rng, 0)}T{rng.randint(6, 20):02d}:{rng.randint(0, 59):02d}:00Z"
    b.force(*frontmatter({"agent": a.slug, "updated_at": stamp, "version": a.version,
                          "run_id": a.last_run}))
    b.force(f"# Snapshot: {a.slug}", f"**{h['updated']}:** {stamp}  ",
            f"**{h['version']}:** {a.version}", "")
    role, active, facts, decisions = h["snapshot"]
    b.force(f"## {role}", w.para(2))
    # Share the rest between the three bullet sections (active context gets half).
    room = b.limit - b.used - 3 * 6
    for head, share in ((active, 0.5), (facts, 0.3), (decisions, 0.2)):
        b.force("", f"## {head}")
        stop = b.used + int(room * share)
        while b.fits(line := f"- {w.unique(w.sentence)}", stop):
            b.add(line)
    return b.fit()


def gen_facts(a: Agent, enc: object) -> str:
    rng, w, h = a.rng, a.w, HEAD[a.lang]
    b = Budget(enc, int(LIMITS["facts"] * rng.uniform(*a.fill)))
    b.force(*frontmatter({"agent": a.slug, "updated_at": f"{date(rng, 3)}T09:00:00Z"}))
    b.force(f"# Facts: {a.slug}")
    room = b.limit - b.used - 4 * 6
    # Most facts live in the first three sections, a handful are deprecated.
    for head, share in zip(h["facts"], (0.4, 0.3, 0.27, 0.03), strict=True):
        b.force("", f"## {head}")
        stop = b.used + int(room * share)
        while True:
            body = w.unique(w.sentence)
            if rng.random() < 0.4:
                body = f"[{date(rng, 120)}] {body}"
            if not b.fits(line := f"- {body}", stop):
                break
            b.add(line)
    return b.fit()


def gen_loops(a: Agent, enc: object) -> str:
    rng, w, h = a.rng, a.w, HEAD[a.lang]
    b = Budget(enc, int(LIMITS["open_loops"] * rng.uniform(*a.fill)))
    b.force(*frontmatter({"agent": a.slug, "updated_at": f"{date(rng, 2)}T10:30:00Z"}))
    b.force(f"# Open Loops: {a.slug}")
    crit, wait, closed = h["loops"]
    room = b.limit - b.used - 3 * 6
    n = 0
    for head, share in ((crit, 0.25), (wait, 0.55), (closed, 0.2)):
        b.force("", f"## {head}")
        stop = b.used + int(room * share)
        while True:
            n += 1
            text = w.unique(w.sentence).rstrip(".")
            lid = f"loop_{n:03d}{rng.randrange(16**4):04x}"
            if head == closed:
                line = f"- [x] {lid}: {text} — closed {date(rng, 6)} | {run_id(rng)}"
            elif a.lang == "uk" and rng.random() < 0.3:
                line = f"- [ ] {text} — відкрита з {date(rng, 40)}"
            else:
                prio = "high" if head == crit else rng.choice(["normal", "normal", "low"])
                line = f"- [ ] {lid}: {text} (opened {date(rng, 40)}, priority {prio})"
            if not b.fits(line, stop):
                break
            b.add(line)
    return b.fit()


def gen_decisions(a: Agent) -> tuple[str, int]:
    rng, w, h = a.rng, a.w, HEAD[a.lang]
    n = rng.randint(1, 2)
    dates = sorted(date(rng, 90) for _ in range(n))
    out = [f"# Decisions: {a.slug}", ""]
    for d in dates:
        title = w.sentence(a.lang).rstrip(".")
        out += [f"## {d} — {title}", f"**{h['status']}:** {h['accepted']}"]
        for key in h["dfields"]:
            out.append(f"**{key}:** {w.sentence(a.lang)}")
        out += [f"**Run:** {rng.choice(a.runs)}", ""]
    return "\n".join(out), n


def gen_changelog(a: Agent) -> str:
    rng, w = a.rng, a.w
    out = [f"# Changelog: {a.slug}", ""]
    for d in sorted({date(rng, 20) for _ in range(2)}, reverse=True):
        out += [f"## {d}", "", f"### {rng.randint(6, 21):02d}:{rng.randint(0, 59):02d} — "
                f"{rng.choice(a.runs)} / proposal_{rng.randrange(16**6):06x}"]
        for f in rng.sample(["facts.md", "open_loops.md", "snapshot.md"], rng.randint(1, 2)):
            out.append(f"- **{f}:** {w.sentence(a.lang)}")
        out.append("")
    return "\n".join(out)


def gen_timeline(a: Agent, day: str) -> str:
    rng, w, h = a.rng, a.w, HEAD[a.lang]
    out = [f"# Timeline: {a.slug} / {day}", "", f"## {h['runs']}", ""]
    for _ in range(1):
        out += [f"### {rng.randint(6, 21):02d}:{rng.randint(0, 59):02d} — {rng.choice(a.runs)}",
                f"**{h['duration']}:** {rng.randint(8, 300)}s  ",
                f"**{h['task']}:** {w.sentence(a.lang)}  ",
                f"**{h['result']}:** {w.sentence(a.lang)}  ",
                f"**Proposal:** proposal_{rng.randrange(16**6):06x}  ",
                f"**{h['pstatus']}:** {rng.choice(['applied', 'applied', 'rejected'])}", ""]
    return "\n".join(out)


def gen_run(a: Agent, rid: str) -> str:
    rng, w, h = a.rng, a.w, HEAD[a.lang]
    d = date(rng, 30)
    ctx, steps, props, result = h["run_sections"]
    return "\n".join([
        f"# Run: {rid}", f"**Agent:** {a.slug}  ",
        f"**{h['started']}:** {d}T08:00:00Z  ",
        f"**{h['finished']}:** {d}T08:01:{rng.randint(10, 59)}Z  ",
        f"**{h['task']}:** {w.sentence(a.lang)}", "",
        f"## {ctx}", f"- snapshot.md (v{a.version})", "- facts.md", "",
        f"## {steps}", "1. read-memory(mode=basic)", f"2. read-notes({rng.choice(DOMAINS)})",
        "3. propose-memory-update(facts.md, append)", "",
        f"## {props}", f"- proposal_{rng.randrange(16**6):06x}: facts.md", "",
        f"## {result}", w.para(2), "",
    ])


def gen_contract(a: Agent) -> str:
    rng, w = a.rng, a.w
    role, dom = a.slug.split("-")[:2]
    version = f"1.{rng.randint(0, 9)}.{rng.randint(0, 9)}"
    a.contract_version = version
    tools = ["read-memory", "read-context", "read-notes", "create-proposal"]
    tools += rng.sample(["notebooklm-query", "search-notes", "read-drakon", "write-memory"], 2)
    fm = {
        "name": a.name,
        "slug": a.slug,
        "version": version,
        "description": w.sentence(a.lang),
        "model": "claude-sonnet-4-5-20250929",
        "temperature": round(rng.uniform(0.1, 0.6), 1),
        "max_steps": rng.randint(3, 12),
    }
    lines = frontmatter(fm)[:-1]
    lines += ["tools:"] + [f"  - {t}" for t in tools]
    lines += ["safe_outputs:", "  - propose-summary", "  - propose-tag"]
    lines += ["triggers:", "  manual: true", f'  cron: "0 {rng.randint(5, 9)} * * 1-5"',
              "context:", f'  folder: "{dom}.pp.ua"', f"  max_sources: {rng.randint(3, 10)}"]
    lines += ['created_at: "2026-01-15T10:00:00Z"',
              f'updated_at: "{date(rng, 20)}T12:00:00Z"', 'created_by: "owner"',
              'status: "active"', "---", ""]
    uk = a.lang == "uk"
    lines += [f"# {a.name}", "", "## Роль" if uk else "## Role", w.para(2), "",
              "## Процедура" if uk else "## Procedure"]
    lines += [f"{i}. {w.sentence(a.lang)}" for i in range(1, 4)]
    lines += ["", "## Обмеження" if uk else "## Limits"]
    lines += [f"- {w.sentence(a.lang)}" for _ in range(2)]
    return "\n".join(lines) + "\n"


def make_agent(index: int, seed: int) -> Agent:
    rng = random.Random(f"{seed}:{index}")
    role = ROLES[index % len(ROLES)]
    dom = DOMAINS[(index // len(ROLES)) % len(DOMAINS)]
    slug = f"{role}-{dom}-{index:04d}"
    lang = "uk" if rng.random() < UK_SHARE else "en"
    name = f"{ROLE_UK[role]} {dom.capitalize()} {index}" if lang == "uk" else \
        f"{role.capitalize()} {dom.capitalize()} {index}"
    runs = sorted({run_id(rng) for _ in range(6)})
    fill = YOUNG_FILL if rng.random() < YOUNG_SHARE else FILL
    return Agent(slug, lang, name, rng.randint(3, 240), runs[-1], rng, Writer(rng, lang), runs,
                 fill=fill)


def gen_agent(index: int, seed: int, out: Path) -> dict[str, object]:
    """Write one agent's files; return its registry entry and per-file totals."""
    enc = get_encoder(ENCODING)
    a = make_agent(index, seed)
    mem = f"memory/{a.slug}"
    files: dict[str, str] = {
        f"{mem}/snapshot.md": gen_snapshot(a, enc),
        f"{mem}/facts.md": gen_facts(a, enc),
        f"{mem}/open_loops.md": gen_loops(a, enc),
    }
    decisions, n_decisions = gen_decisions(a)
    files[f"{mem}/decisions.md"] = decisions
    files[f"{mem}/changelog.md"] = gen_changelog(a)
    for day in sorted({date(a.rng, 10) for _ in range(2)}):
        files[f"{mem}/timeline/{day}.md"] = gen_timeline(a, day)
    for rid in a.runs[-1:]:
        files[f"{mem}/runs/{rid}.md"] = gen_run(a, rid)
    files[f"agents/{a.slug}/_agent.md"] = gen_contract(a)
    tokens = {p: count_text(t, ENCODING) for p, t in files.items()}
    for kind, limit in LIMITS.items():
        n = tokens[f"{mem}/{kind}.md"]
        if n > limit:  # cannot happen (Budget is an upper bound); refuse rather than lie
            raise RuntimeError(f"{mem}/{kind}.md has {n} tokens, over {limit}")
    loops = files[f"{mem}/open_loops.md"].count("\n- [ ] ")
    meta = {
        "agentId": a.slug, "version": a.version, "schemaVersion": "1.0",
        "lastUpdate": f"{BASE_DATE[0]}-{BASE_DATE[1]:02d}-{BASE_DATE[2]:02d}T18:00:00Z",
        "lastRunId": a.last_run,
        "snapshotTokenCount": tokens[f"{mem}/snapshot.md"],
        "factsTokenCount": tokens[f"{mem}/facts.md"],
        "openLoopsCount": loops, "decisionsCount": n_decisions,
    }
    files[f"{mem}/meta.json"] = json.dumps(meta, ensure_ascii=False, indent=2) + "\n"
    tokens[f"{mem}/meta.json"] = count_text(files[f"{mem}/meta.json"], ENCODING)
    for rel, text in files.items():
        path = out / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8", newline="")
    md = [p for p in files if p.endswith(".md")]
    return {
        "registry": {"slug": a.slug, "name": a.name, "status": "active",
                     "version": a.contract_version,
                     "last_run": f"{date(a.rng, 1)}T08:00:00Z", "last_run_status": "completed",
                     "pending_proposals": a.rng.randint(0, 3)},
        "files": len(files),
        "md_files": len(md),
        "md_bytes": sum(len(files[p].encode()) for p in md),
        "md_tokens": sum(tokens[p] for p in md),
        "bytes": sum(len(t.encode()) for t in files.values()),
        "tokens": sum(tokens.values()),
        "layer1": {k: tokens[f"{mem}/{k}.md"] for k in LIMITS},
    }


def _gen_chunk(args: tuple[list[int], int, str]) -> list[dict[str, object]]:
    indices, seed, out = args
    return [gen_agent(i, seed, Path(out)) for i in indices]


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                   env={**os.environ, **GIT_ENV})


def generate(out: Path, agents: int, seed: int = 0, jobs: int | None = None) -> dict[str, object]:
    """Write the repository under `out` (must be empty or absent) and commit it once."""
    if out.exists() and any(out.iterdir()):
        raise SystemExit(f"{out}: exists and is not empty")
    out.mkdir(parents=True, exist_ok=True)
    jobs = jobs or os.cpu_count() or 1
    chunks = [list(range(i, agents, jobs * 4)) for i in range(min(agents, jobs * 4))]
    results: list[dict[str, object]] = []
    if jobs == 1 or agents < 8:
        for c in chunks:
            results += _gen_chunk((c, seed, str(out)))
    else:
        with ProcessPoolExecutor(jobs) as pool:
            for part in pool.map(_gen_chunk, [(c, seed, str(out)) for c in chunks]):
                results += part
    registry = {
        "version": "1",
        "updated_at": "2026-02-17T18:00:00Z",
        "agents": sorted((r["registry"] for r in results), key=lambda e: e["slug"]),
    }
    reg_text = json.dumps(registry, ensure_ascii=False, indent=2) + "\n"
    (out / "registry.json").write_text(reg_text, encoding="utf-8")
    git(out, "init", "-q", "-b", "main")
    git(out, "add", "-A")
    git(out, "commit", "-q", "-m", f"Bench memory repo: {agents} agents (seed {seed})\n\n"
        "Human-Edit: true")
    reg_tokens = count_text(reg_text, ENCODING)
    return {
        "agents": agents,
        "seed": seed,
        "files": sum(int(r["files"]) for r in results) + 1,  # type: ignore[call-overload]
        "md_files": sum(int(r["md_files"]) for r in results),  # type: ignore[call-overload]
        "md_bytes": sum(int(r["md_bytes"]) for r in results),  # type: ignore[call-overload]
        "md_tokens": sum(int(r["md_tokens"]) for r in results),  # type: ignore[call-overload]
        "bytes": sum(int(r["bytes"]) for r in results) + len(reg_text.encode()),  # type: ignore
        "tokens": sum(int(r["tokens"]) for r in results) + reg_tokens,  # type: ignore
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", type=Path, help="directory to create (must be empty or absent)")
    ap.add_argument("--agents", type=int, required=True, help="number of agents")
    ap.add_argument("--seed", type=int, default=0, help="RNG seed (default 0)")
    ap.add_argument("--jobs", type=int, default=None, help="worker processes (default: cores)")
    args = ap.parse_args(argv)
    if args.agents < 1:
        ap.error("--agents must be at least 1")
    t0 = time.perf_counter()
    totals = generate(args.out, args.agents, args.seed, args.jobs)
    dt = time.perf_counter() - t0
    print(f"{args.out}: {totals['agents']} agents, {totals['files']} files "
          f"({totals['md_files']} Markdown), generated and committed in {dt:.1f} s")
    print(f"  Markdown: {totals['md_bytes'] / 1e6:.1f} MB, {totals['md_tokens']:,} tokens "
          f"({ENCODING})")
    print(f"  all files: {totals['bytes'] / 1e6:.1f} MB, {totals['tokens']:,} tokens")
    return 0


if __name__ == "__main__":
    sys.exit(main())
