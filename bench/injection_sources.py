"""Attack and benign samples from third-party PyPI wheels that bench/injection_eval.py does
not define itself (spikee, agentdojo, pyrit, prompt-security-fuzzer). Each function reads
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
               ("deepteam", "1.0.10"), ("langkit", "0.0.35"))
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


def shuffle_stable(items: list, seed: int = 1) -> list:
    out = list(items)
    random.Random(seed).shuffle(out)
    return out
