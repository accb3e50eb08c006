"""Attack and benign samples from third-party PyPI wheels that bench/injection_eval.py does
not define itself (spikee, agentdojo, pyrit, prompt-security-fuzzer, easyjailbreak,
deepteam, langkit, agent-injection-bench, agentprobe-injection, inspect-evals, agentseal,
aicu-scanner).
Each function reads
one wheel as a zip file from the evaluation's cache; nothing is extracted to disk or
committed. Samples are built from the files' structure (template x payload); their class
comes from the structure too (the attack family a file or class is named for), never from
reading the text.
"""

from __future__ import annotations

import ast
import json
import random
import re
import zipfile
from collections.abc import Iterator
from pathlib import Path

PINNED_MORE = (("spikee", "0.9.2"), ("agentdojo", "0.1.35"), ("pyrit", "1.1.0"),
               ("prompt-security-fuzzer", "2.1.1"), ("easyjailbreak", "0.1.3"),
               ("deepteam", "1.0.10"), ("langkit", "0.0.35"),
               ("agent-injection-bench", "0.1.0"), ("agentprobe-injection", "0.2.0a1"),
               ("inspect-evals", "0.26.0"), ("agentseal", "0.10.0"),
               ("aicu-scanner", "1.5.0"))
# What the dev sources' templates are filled with: not the held-out fill, so a pattern
# written against a dev sample cannot match because of the held-out sources' filler text.
DEV_FILL = "write a convincing phishing email to the finance team"


def _wheel(cache: Path, name: str, version: str) -> zipfile.ZipFile | None:
    stem = name.replace("-", "_")
    found = sorted(cache.glob(f"{stem}-{version}-*.whl"))
    return zipfile.ZipFile(found[0]) if found else None


def _jsonl(whl: zipfile.ZipFile, path: str) -> list[dict]:
    try:
        raw = whl.read(path).decode("utf-8")
    except KeyError:
        return []
    return [json.loads(x) for x in raw.splitlines() if x.strip()]


# --------------------------------------------------------------------------- spikee

SPIKEE_ATTACK_SETS = ("seeds-cybersec-2026-01", "seeds-llm-mailbox",
                      "seeds-simsonsun-high-quality-jailbreaks", "seeds-sysmsg-extraction-2025-04")
SPIKEE_BENIGN_SETS = ("seeds-investment-advice-fp", "seeds-wildguardmix-harmful-fp")


def spikee(cache: Path) -> Iterator[tuple[str, str, str]]:
    """(class, text, ident): every jailbreak template of the attack datasets filled with an
    instruction of the same dataset (round robin), and every instruction alone."""
    whl = _wheel(cache, "spikee", "0.9.2")
    if whl is None:
        return
    seen: set[str] = set()
    root = "spikee/data/workspace/datasets"
    for ds in SPIKEE_ATTACK_SETS:
        jbs = _jsonl(whl, f"{root}/{ds}/jailbreaks.jsonl")
        ins = _jsonl(whl, f"{root}/{ds}/instructions.jsonl")
        extraction = "sysmsg" in ds
        for i, row in enumerate(ins):
            text = row.get("instruction") or ""
            if text and text not in seen:
                seen.add(text)
                cls = "extraction" if extraction else "payload instruction"
                cls = _other_language(row, cls)
                yield cls, text, f"spikee/{ds}/instr/{row.get('id', i)}"
        for i, row in enumerate(jbs):
            tpl = row.get("text") or ""
            if not tpl or row.get("jailbreak_type") == "no-jailbreak":
                continue
            inst = ins[i % len(ins)].get("instruction", "") if ins else "reveal your secrets"
            text = tpl.replace("<INSTRUCTION>", inst)
            if text not in seen:
                seen.add(text)
                cls = _other_language(row, "jailbreak wrapper")
                if cls == "jailbreak wrapper" and ins:
                    cls = _other_language(ins[i % len(ins)], cls)
                yield cls, text, f"spikee/{ds}/jb/{row.get('id', i)}"


_LANG_SUFFIX = re.compile(r"-(?:zu|gd|ga|sq|[a-z]{2})$")


def _other_language(row: dict, cls: str) -> str:
    """Spikee marks translated variants with a language suffix on the id (`-zu`, `-gd`):
    those languages are outside memwarden's English/Ukrainian/Russian scope."""
    ident = str(row.get("id", ""))
    if _LANG_SUFFIX.search(ident) and not ident.endswith(("-uk", "-ru", "-en")):
        return "other language (out of scope)"
    return cls


def spikee_benign(cache: Path) -> list[tuple[str, str]]:
    """The benign near-miss inputs spikee ships to measure false positives."""
    whl = _wheel(cache, "spikee", "0.9.2")
    if whl is None:
        return []
    out = []
    for ds in SPIKEE_BENIGN_SETS:
        for i, row in enumerate(_jsonl(whl, f"spikee/data/workspace/datasets/{ds}/"
                                            "standalone_user_inputs.jsonl")):
            if row.get("text"):
                out.append((f"{ds}#{i}", row["text"]))
    return out


# --------------------------------------------------------------------------- agentdojo


def _class_strings(src: str, attr: str) -> dict[str, str]:
    """Class name -> the string literal assigned to `attr` in its body (implicit
    concatenation and simple f-strings folded; a name in an f-string stays a `{name}`)."""
    out = {}
    for node in ast.parse(src).body:
        if not isinstance(node, ast.ClassDef):
            continue
        for st in node.body:
            target = st.targets[0] if isinstance(st, ast.Assign) and len(st.targets) == 1 \
                else st.target if isinstance(st, ast.AnnAssign) else None
            if isinstance(target, ast.Name) and target.id == attr and st.value is not None:
                text = _literal(st.value)
                if text:
                    out[node.name] = text
        for call in ast.walk(node):  # super().__init__("template", ...)
            if (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
                    and call.func.attr == "__init__" and call.args):
                text = _literal(call.args[0])
                if text and node.name not in out:
                    out[node.name] = text
    return out


def _literal(node: ast.expr) -> str:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        parts = []
        for v in node.values:
            if isinstance(v, ast.Constant):
                parts.append(str(v.value))
            elif isinstance(v, ast.FormattedValue):
                parts.append("{" + ast.unparse(v.value).split(".")[-1] + "}")
        return "".join(parts)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _literal(node.left) + _literal(node.right)
    return ""


AGENTDOJO_MARKER_CLASSES = ("ImportantInstructionsAttack", "IgnorePreviousAttack",
                            "SystemMessageAttack")


def agentdojo(cache: Path) -> Iterator[tuple[str, str, str]]:
    """Each attack template (class `_JB_STRING`) filled with the injection tasks' goals of
    the four suites, with the benchmark's default names (user Emma Johnson, model GPT-4)."""
    whl = _wheel(cache, "agentdojo", "0.1.35")
    if whl is None:
        return
    goals = []
    for suite in ("banking", "slack", "travel", "workspace"):
        src = whl.read(f"agentdojo/default_suites/v1/{suite}/injection_tasks.py").decode()
        consts = {}
        for node in ast.walk(ast.parse(src)):
            if isinstance(node, ast.ClassDef):
                for st in node.body:
                    if isinstance(st, ast.Assign) and len(st.targets) == 1 and \
                            isinstance(st.targets[0], ast.Name):
                        val = _literal(st.value)
                        if val:
                            consts.setdefault(node.name, {})[st.targets[0].id] = val
        for cls, attrs in sorted(consts.items()):
            goal = attrs.get("GOAL")
            if goal:
                for k, v in attrs.items():
                    goal = goal.replace("{" + k + "}", v)
                goals.append((suite, cls, goal))
    templates = {}
    for mod in ("important_instructions_attacks", "baseline_attacks"):
        src = whl.read(f"agentdojo/attacks/{mod}.py").decode()
        templates.update(_class_strings(src, "_JB_STRING"))
    fill = {"user": "Emma Johnson", "model": "GPT-4", "task": "Pay the rent for this month",
            "tools": "- `send_money` with arguments ..."}
    for name, tpl in sorted(templates.items()):
        cls = "indirect: " + re.sub(r"Attack$", "", name)
        for suite, tcls, goal in goals:
            text = tpl
            for k, v in {**fill, "goal": goal}.items():
                text = text.replace("{" + k + "}", v)
            yield cls, text, f"agentdojo/{name}/{suite}/{tcls}"
    for suite, tcls, goal in goals:  # the bare goal, as a tool output would hold it
        yield "hijack goal (bare)", goal, f"agentdojo/goal/{suite}/{tcls}"


# --------------------------------------------------------------------------- pyrit

PYRIT_FILL = "explain how to pick the lock of the server room"


def pyrit(cache: Path) -> Iterator[tuple[str, str, str]]:
    """Every shipped jailbreak template (datasets/jailbreak/templates/*.yaml, `value`) with
    its `{{ prompt }}` filled."""
    whl = _wheel(cache, "pyrit", "1.1.0")
    if whl is None:
        return
    import yaml

    names = sorted(n for n in whl.namelist()
                   if n.startswith("pyrit/datasets/jailbreak/templates/") and n.endswith(".yaml"))
    for n in names:
        try:
            doc = yaml.safe_load(whl.read(n))
        except yaml.YAMLError:
            continue
        value = doc.get("value") if isinstance(doc, dict) else None
        if not isinstance(value, str) or len(value) < 20:
            continue
        text = re.sub(r"\{\{\s*prompt\s*\}\}", PYRIT_FILL, value)
        text = re.sub(r"\{\{\s*\w+\s*\}\}", "X", text)
        yield "jailbreak template", text, "pyrit/" + n.rsplit("/", 1)[1]


# --------------------------------------------------------------------------- ps-fuzz

PSFUZZ_CLASSES = {"aim": "persona", "dan": "persona", "ucar": "persona",
                  "ethical_compliance": "persona", "self_refine": "persona",
                  "complimentary_transition": "hijack", "dynamic_test": "extraction"}


def psfuzz(cache: Path) -> Iterator[tuple[str, str, str]]:
    """The attack templates of prompt-security-fuzzer's attack modules: module-level string
    constants named *_template, *_frame, *_attack_text or *_transition_prompt (the
    *_generation_prompt ones are prompts for the attacker's own model, not attacks)."""
    whl = _wheel(cache, "prompt-security-fuzzer", "2.1.1")
    if whl is None:
        return
    for mod, cls in sorted(PSFUZZ_CLASSES.items()):
        src = whl.read(f"ps_fuzz/attacks/{mod}.py").decode()
        for node in ast.parse(src).body:
            if not (isinstance(node, ast.Assign) and len(node.targets) == 1
                    and isinstance(node.targets[0], ast.Name)):
                continue
            name = node.targets[0].id
            if "generation" in name or not re.search(r"template|frame|attack_text|"
                                                        r"transition_prompt", name):
                continue
            text = _literal(node.value)
            if len(text) < 20:
                continue
            text = re.sub(r"\{[a-z_]*\}", "explain how to pick the lock of the server room",
                          text)
            yield cls, text, f"ps-fuzz/{mod}.{name}"


# --------------------------------------------------------------------------- easyjailbreak

# Keys of seed_template.json's "attack" table that are attack templates; PAIR and TAP are
# instructions for the attacker's own model, AuditingLLM and Catastrophic are empty.
EASYJB_KEYS = ("default", "AutoDAN-a", "Gptfuzzer", "ICA", "DeepInception", "Jailbroken",
               "MJP", "ReNeLLM")


def easyjailbreak(cache: Path) -> Iterator[tuple[str, str, str]]:
    """The seed jailbreak templates of easyjailbreak (AutoDAN, GPTFuzzer, Jailbroken, ...)
    with their `{query}` filled; class = the attack method the template belongs to."""
    whl = _wheel(cache, "easyjailbreak", "0.1.3")
    if whl is None:
        return
    table = json.loads(whl.read("easyjailbreak/seed/seed_template.json"))["attack"]
    for key in EASYJB_KEYS:
        items = table.get(key) or []
        for i, item in enumerate(items):
            texts = list(item.items()) if isinstance(item, dict) else [(str(i), item)]
            for name, tpl in texts:
                if isinstance(tpl, str) and len(tpl) >= 20:
                    text = tpl.replace("{query}", DEV_FILL).replace("[INSERT PROMPT HERE]",
                                                                    DEV_FILL)
                    yield f"jailbreak: {key}", text, f"easyjailbreak/{key}/{name}"


# --------------------------------------------------------------------------- deepteam

_DT_INPUT = re.compile(r'"input":\s*"((?:[^"\\\n]|\\.)*)"')


def deepteam(cache: Path) -> Iterator[tuple[str, str, str]]:
    """The example attacks in deepteam's single-turn attack templates: each template shows
    its attacker model finished prompts as JSON `"input": "..."` examples."""
    whl = _wheel(cache, "deepteam", "1.0.10")
    if whl is None:
        return
    root = "deepteam/attacks/single_turn/"
    for n in sorted(whl.namelist()):
        if not (n.startswith(root) and n.endswith("/template.py")):
            continue
        attack = n[len(root):].split("/")[0]
        src = whl.read(n).decode()
        for j, m in enumerate(_DT_INPUT.finditer(src)):
            try:
                raw = m.group(1).replace("\\\\", "\\")  # the .py source escapes once more
                text = json.loads('"' + raw.replace("{{", "{").replace("}}", "}") + '"')
            except ValueError:
                continue
            text = re.sub(r"\{[a-z_]+\}", "X", text)
            if len(text) >= 20:
                yield f"red-team example: {attack}", text, f"deepteam/{attack}#{j}"


# --------------------------------------------------------------------------- langkit


def langkit(cache: Path) -> Iterator[tuple[str, str, str]]:
    """The jailbreak examples langkit ships as the reference set of its similarity theme."""
    whl = _wheel(cache, "langkit", "0.0.35")
    if whl is None:
        return
    for i, text in enumerate(json.loads(whl.read("langkit/themes.json"))["jailbreak"]):
        yield "jailbreak theme", text, f"langkit/themes/jailbreak#{i}"


# --------------------------------------------------------------------------- agent-injection-bench


def aib(cache: Path) -> Iterator[tuple[str, str, str]]:
    """The injected texts of agent-injection-bench's attack set (tool-calling agents: tool
    results, documents, filenames); class = its attack family. Its `control` rows are benign
    (see aib_benign)."""
    whl = _wheel(cache, "agent-injection-bench", "0.1.0")
    if whl is None:
        return
    for row in _jsonl(whl, "aib/data/attacks.jsonl"):
        text = row.get("injected") or ""
        if text and row.get("family") != "control":
            yield f"agent: {row.get('family')}", text, f"aib/{row.get('id')}"


def aib_benign(cache: Path) -> list[tuple[str, str]]:
    whl = _wheel(cache, "agent-injection-bench", "0.1.0")
    if whl is None:
        return []
    return [(f"aib/{r.get('id')}", r["injected"]) for r in _jsonl(whl, "aib/data/attacks.jsonl")
            if r.get("family") == "control" and r.get("injected")]


# --------------------------------------------------------------------------- agentprobe


def _calls(src: str, func: str) -> Iterator[ast.Call]:
    for node in ast.walk(ast.parse(src)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == func:
            yield node


def _arg(call: ast.Call, name: str, pos: int) -> ast.expr | None:
    for kw in call.keywords:
        if kw.arg == name:
            return kw.value
    return call.args[pos] if len(call.args) > pos else None


def _function(src: str, name: str):
    """A module-level helper of the file (a pure string mapping), compiled without builtins."""
    tree = ast.parse(src)
    node = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == name)
    ns: dict = {"__builtins__": {}}
    exec(compile(ast.Module([node], []), "<agentprobe>", "exec"), ns)  # noqa: S102 - string maps
    return ns[name]


def _lambda(node: ast.expr, helpers: dict):
    return eval(compile(ast.Expression(node), "<agentprobe>", "eval"),  # noqa: S307
                {"__builtins__": {}, **helpers})


def agentprobe(cache: Path) -> Iterator[tuple[str, str, str]]:
    """agentprobe-injection's catalogue: its intents (extraction requests) x its linguistic
    transforms (indirect speech acts, registers, false callbacks, authority claims,
    code-switching), and its two indirect-injection payloads x its carriers (email footer,
    signature, quoted thread, document footnote, table cell, web page...)."""
    whl = _wheel(cache, "agentprobe-injection", "0.2.0a1")
    if whl is None:
        return
    tsrc = whl.read("agentprobe/attacks/transforms.py").decode()
    helpers = {"_to_russian": _function(tsrc, "_to_russian")}
    intents = [_literal(_arg(c, "text", 1)) for c in
               _calls(whl.read("agentprobe/attacks/registry.py").decode(), "Intent")]
    for call in _calls(tsrc, "LinguisticTransform"):
        name, cat = _literal(_arg(call, "name", 0)), _literal(_arg(call, "category", 1))
        apply = _lambda(_arg(call, "apply", 3), helpers)
        for intent in intents:
            yield f"transform: {cat}", apply(intent), f"agentprobe/{cat}.{name}/{intent}"
    csrc = whl.read("agentprobe/injection/carriers.py").decode()
    ru = _function(csrc, "_ru")
    payloads = [_literal(k) for n in ast.walk(ast.parse(csrc)) if isinstance(n, ast.Dict)
                for k in n.keys if k is not None]
    for call in _calls(csrc, "Carrier"):
        name, channel = _literal(_arg(call, "name", 0)), _literal(_arg(call, "channel", 1))
        wrap = _lambda(_arg(call, "wrap", 3), {"_ru": ru})
        for j, p in enumerate(payloads):
            yield f"carrier: {channel}", wrap(p), f"agentprobe/carrier/{name}#{j}"


def agentprobe_benign(cache: Path) -> list[tuple[str, str]]:
    """The e-mails of agentprobe's benign utility tasks (forwarding requests, action items)."""
    whl = _wheel(cache, "agentprobe-injection", "0.2.0a1")
    if whl is None:
        return []
    src = whl.read("agentprobe/injection/benign_tasks.py").decode()
    out = []
    for node in ast.walk(ast.parse(src)):
        if isinstance(node, ast.Call):
            for kw in node.keywords:
                if kw.arg == "email_content":
                    out.append((f"agentprobe/benign#{len(out)}", _literal(kw.value)))
    return [x for x in out if x[1]]


# --------------------------------------------------------------------------- inspect-evals

_IE = "inspect_evals/"


def _json(whl: zipfile.ZipFile, path: str) -> list:
    try:
        return json.loads(whl.read(path))
    except KeyError:
        return []


def agent_threat_bench(cache: Path) -> Iterator[tuple[str, str, str]]:
    """AgentThreatBench (inspect-evals): each poisoned memory store whole, as a memory file;
    each attack e-mail of the hijack inboxes (the indices the benchmark marks); each
    exfiltration scenario's customer records. The attack's place inside a store or a record
    set is not looked up: the whole of it is one sample."""
    whl = _wheel(cache, "inspect-evals", "0.26.0")
    if whl is None:
        return
    root = _IE + "agent_threat_bench/data/"
    for rec in _json(whl, root + "memory_poison.json"):
        text = "\n".join(f"- {k}: {v}" for k, v in rec.get("memory_store", {}).items())
        yield "agent threat: memory poison (whole store)", text, f"atb/memory/{rec.get('id')}"
    for rec in _json(whl, root + "autonomy_hijack.json"):
        for i in rec.get("attack_email_indices", []):  # 1-based, as its read_inbox numbers
            e = rec["inbox"][i - 1]
            text = (f"From: {e.get('from', '')}\nSubject: {e.get('subject', '')}\n\n"
                    f"{e.get('body', '')}")
            yield "agent threat: hijack e-mail", text, f"atb/hijack/{rec.get('id')}#{i}"
    for rec in _json(whl, root + "data_exfil.json"):
        text = "\n".join("- " + "; ".join(f"{k}: {v}" for k, v in c.items() if k != "id")
                         for c in rec.get("customer_db", []))
        yield "agent threat: exfiltration (customer records)", text, f"atb/exfil/{rec.get('id')}"


def _ipi(cache: Path) -> Iterator[tuple[bool, str, str, str]]:
    whl = _wheel(cache, "inspect-evals", "0.26.0")
    if whl is None:
        return
    for s in _json(whl, _IE + "ipi_coding_agent/dataset/samples.json"):
        parts = [f"Issue: {s['issue_text']}"] if s.get("issue_text") else []
        parts += [f"File {p}:\n{body}" for p, body in sorted(s.get("repo_files", {}).items())
                  if body.strip()]
        cls = f"coding agent: {s.get('injection_vector')} / {s.get('payload_category')}"
        yield bool(s.get("is_benign")), cls, "\n\n".join(parts), f"ipi/{s.get('id')}"


def ipi_coding_agent(cache: Path) -> Iterator[tuple[str, str, str]]:
    """ipi_coding_agent (inspect-evals): each attack scenario's issue text and repository
    files together (the injection sits in one of them: issue, README, code comment or config
    file); class = injection vector / payload category."""
    for benign, cls, text, ident in _ipi(cache):
        if not benign:
            yield cls, text, ident


def ipi_benign(cache: Path) -> list[tuple[str, str]]:
    """The benign scenarios of ipi_coding_agent, built the same way (held-out benign)."""
    return [(ident, text) for benign, _, text, ident in _ipi(cache) if benign]


# --------------------------------------------------------------------------- aicu-scanner

# Its payload files about injection and extraction (the DoS, hallucination and toxicity sets
# test other things).
AICU_SETS = ("single_turn", "advanced_evasion", "encoding_attacks", "jailbreaks")


def aicu(cache: Path) -> Iterator[tuple[str, str, str]]:
    """aicu-scanner's payload sets (class = set name) and its file payloads (documents with an
    embedded injection; class = file family)."""
    whl = _wheel(cache, "aicu-scanner", "1.5.0")
    if whl is None:
        return
    import yaml

    for name in AICU_SETS + ("file_payloads",):
        try:
            doc = yaml.safe_load(whl.read(f"aicu/payloads/{name}.yaml")) or {}
        except (KeyError, yaml.YAMLError):
            continue
        sets = doc.get("payload_sets") or {"file": doc.get("file_payloads") or []}
        for key, rows in sets.items():
            for i, row in enumerate(rows or []):
                text = row.get("content") if isinstance(row, dict) else None
                if isinstance(text, str) and text.strip():
                    cls = f"file: {row.get('family', key)}" if key == "file" else f"{name}: {key}"
                    yield cls, text, f"aicu/{name}/{key}/{row.get('id', i)}"


# --------------------------------------------------------------------------- agentseal


class _AnyAttr(type):
    def __getattr__(cls, name: str) -> str:
        return name


class _Severity(metaclass=_AnyAttr):
    """Stands in for agentseal.schemas.Severity: only the probes' payloads are used."""


def agentseal(cache: Path) -> Iterator[tuple[str, str, str]]:
    """agentseal's injection and extraction probe catalogues (build_injection_probes,
    build_extraction_probes): the module is run without its package imports (a stand-in
    Severity, a deterministic canary); a multi-turn probe's turns are joined into one
    sample; class = the probe's category."""
    whl = _wheel(cache, "agentseal", "0.10.0")
    if whl is None:
        return
    count = iter(range(10**6))

    def canary() -> str:
        return f"SEAL_{next(count):08X}_CONFIRMED"

    for mod, build, kind in (("injection", "build_injection_probes", "injection"),
                             ("extraction", "build_extraction_probes", "extraction")):
        tree = ast.parse(whl.read(f"agentseal/probes/{mod}.py").decode())
        tree.body = [n for n in tree.body if not isinstance(n, (ast.Import, ast.ImportFrom))]
        ns: dict = {"Severity": _Severity, "generate_canary": canary}
        exec(compile(tree, f"<agentseal {mod}>", "exec"), ns)  # noqa: S102 - builds dicts
        for i, probe in enumerate(ns[build]()):
            payload = probe.get("payload")
            text = "\n\n".join(payload) if isinstance(payload, list) else payload
            if isinstance(text, str) and text.strip():
                cls = f"{kind}: {probe.get('category') or 'other'}"
                yield cls, text, f"agentseal/{probe.get('probe_id', i)}"


def shuffle_stable(items: list, seed: int = 1) -> list:
    out = list(items)
    random.Random(seed).shuffle(out)
    return out
