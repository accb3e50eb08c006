"""MW313: a small learned scorer for text that speaks to the model, on the entries the
hand-written patterns leave alone.

The model is a logistic regression over the words and word pairs of one entry (a list
item, a paragraph, a quote, a fenced block: the unit memory is written in), trained
offline by bench/train_injection_scorer.py from public attack corpora and benign Markdown
and shipped as policies/pack/scorer/injection_scorer.json. At run time it is pure Python:
an entry's score is the bias plus the weights of the distinct features it holds, so the
cost is linear in the entry.

The gate. Only an entry holding one of GATE_KEYS at a word start is scored (second-person
address, the model's nouns, the verbs of overrides and extraction, their Ukrainian and
Russian forms). The keys are searched with the signal keys in the scanner's one word-start
search (signals.py runs them as the pseudo-pattern of rule MW313), so an entry without one
costs nothing, and each entry is scored once however many keys it holds.

A damaged or missing model fails closed: the first entry that would have been scored gets
an MW313 error naming the file and the reason, never a silent pass.
"""

from __future__ import annotations

import hashlib
import json
import os
import re

from memwarden.policies.rules.injection.common import Hit, _quote

MODEL_NAME = "injection_scorer.json"
FORMAT = "memwarden-injection-scorer 1"

# Gate keys, as the signal keys are written: a word prefix, `$` when it must end the word.
# Chosen from the dev sources and the generated 1,000-agent benchmark repository: words
# that attacks address the model with and that ordinary memory seldom holds. Bare
# imperatives common in runbooks ("print", "call", "delete", "tell") are not keys: a line
# that uses them on the model holds a key anyway ("print your ...").
GATE_KEYS = (
    "you$", "your$", "you're$", "you’re$", "yourself$", "you'll$", "you’ll$", "you've$",
    "ai$", "assistant", "chatbot", "chatgpt", "gpt", "llm$", "llms$", "prompt", "jailbr",
    "instruction", "ignore", "disregard", "pretend", "roleplay", "role-play", "persona",
    "uncensored", "unfiltered", "unrestricted", "dan$", "bot$", "system",
    "send$", "forward$", "email$", "e-mail$", "transfer$", "password", "secret", "credential",
    "api key", "todo", "must$", "always$", "never$", "please$", "immediately$", "important",
    "urgent", "reply$", "respond$", "answer$", "reveal", "user$", "users$", "instead$",
    "override", "forget$", "should$", "ethical",
    "надішли", "відправ", "пароль", "паролі", "секрет", "завжди$", "ніколи$", "будь ласка",
    "відповідай", "забудь", "модель", "систем", "користувач", "помічни",
    "отправь", "перешли", "пароли", "всегда$", "никогда$", "пожалуйста$", "отвечай",
    "пользовател", "помощни",
    "ти$", "ви$", "тобі$", "вам$", "тебе$", "твій$", "твоя$", "твоє$", "твої$", "ваш",
    "асистент", "промпт", "інструкц", "ігнор", "ші$",
    "ты$", "вы$", "тебе$", "тебя$", "твой$", "твоя$", "твоё$", "твое$", "твои$", "вас$",
    "ассистент", "инструкц", "игнор", "ии$",
)

_WORD = re.compile(r"[^\W\d_]+|\d+")
_BLANK = re.compile(r"[ \t\r]*(?:\n|\Z)")
_LIST_MARK = re.compile(r"[ \t>]*(?:[-*+][ \t]|\d{1,9}[.)][ \t]|#|\||```|~~~)")
# An entry longer than this is scored in windows of this many characters (each window a
# unit of its own), so one huge paragraph costs the same per character as many small ones.
UNIT_MAX = 4000


class ScorerError(Exception):
    """The model file is missing or damaged."""


class Lexicon:
    """Ukrainian and Russian words -> the English word weighed instead: whole words, and
    stems that a word starts (the longest wins, at least 3 letters)."""

    __slots__ = ("words", "stems", "longest")

    def __init__(self, words: dict[str, str], stems: dict[str, str]) -> None:
        self.words, self.stems = words, stems
        self.longest = max(map(len, stems), default=0)

    @classmethod
    def parse(cls, text: str) -> Lexicon:
        words: dict[str, str] = {}
        stems: dict[str, str] = {}
        for line in text.splitlines():
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            english, _, rest = line.partition(":")
            for stem in rest.split():
                if stem.endswith("$"):
                    words.setdefault(stem[:-1], english.strip())
                else:
                    stems.setdefault(stem, english.strip())
        return cls(words, stems)

    def map(self, words: list[str]) -> list[str]:
        out = []
        get, stems = self.words.get, self.stems.get
        for w in words:
            if not w.isascii():
                found = get(w)
                k = min(len(w), self.longest)
                while found is None and k >= 3:
                    found = stems(w[:k])
                    k -= 1
                if found is not None:
                    w = found
            out.append(w)
        return out


NO_LEXICON = Lexicon({}, {})


class Model:
    """The bias, the decision threshold, the feature weights and the uk/ru lexicon of one
    trained model."""

    __slots__ = ("bias", "threshold", "weights", "lexicon")

    def __init__(self, bias: float, threshold: float, weights: dict[str, float],
                 lexicon: Lexicon = NO_LEXICON) -> None:
        self.bias, self.threshold, self.weights = bias, threshold, weights
        self.lexicon = lexicon

    def contributions(self, low: str) -> list[tuple[float, str]]:
        """(weight, feature) of every distinct feature of `low` that the model knows."""
        w = self.weights
        return [(w[f], f) for f in features(low, self.lexicon) if f in w]

    def score(self, low: str) -> float:
        return self.bias + sum(x for x, _ in self.contributions(low))


# Words in quotation marks right after a reporting verb are someone else's, recorded as a
# fact ("Customer wrote: \"please send me the invoice\""): the model does not weigh them.
_REPORTED_QUOTE = re.compile(
    r"(?:wrote|writes|said|says|asked|asks|reported|replied|complained|quoted|requested|"
    r"написав|написала|написали|пише|пишуть|сказав|сказала|попросив|попросила|скаржився|"
    r"написал|написали|пишет|пишут|сказал|попросил|жаловался)"
    r"\b[^\n\"“«]{0,30}?[\"“«][^\"”»\n]{0,2000}[\"”»]")


def _unreported(low: str) -> str:
    if '"' not in low and "“" not in low and "«" not in low:
        return low
    return _REPORTED_QUOTE.sub(" ", low)


def features(low: str, lexicon: Lexicon = NO_LEXICON) -> set[str]:
    """The distinct words and word pairs of a lower-cased unit (what the model weighs),
    quotes of reported speech left out, uk/ru words mapped through `lexicon`."""
    words = _WORD.findall(_unreported(low))
    if lexicon.stems and not low.isascii():
        words = lexicon.map(words)
    feats = set(words)
    feats.update(map(" ".join, zip(words, words[1:], strict=False)))
    return feats


# ---- the model file


def model_path() -> str:
    return os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__)))), "pack", "scorer", MODEL_NAME)


def dumps(model: Model) -> bytes:
    """The model file: a header line with the body's sha256, then the JSON body (sorted
    keys, fixed rounding), so training twice writes the same bytes."""
    body = json.dumps({"bias": round(model.bias, 4), "threshold": round(model.threshold, 4),
                       "weights": {k: round(v, 3) for k, v in sorted(model.weights.items())},
                       "lexicon": {"words": model.lexicon.words,
                                   "stems": model.lexicon.stems}},
                      ensure_ascii=False, sort_keys=True, separators=(",", ":")).encode()
    return f"{FORMAT} sha256={hashlib.sha256(body).hexdigest()}\n".encode() + body + b"\n"


def loads(data: bytes) -> Model:
    """Parse and verify a model file; ScorerError says what is wrong."""
    head, sep, body = data.partition(b"\n")
    if not sep or not head.startswith(FORMAT.encode() + b" sha256="):
        raise ScorerError("not a memwarden injection scorer file (bad header)")
    body = body.rstrip(b"\n")
    if hashlib.sha256(body).hexdigest().encode() != head.split(b"sha256=", 1)[1].strip():
        raise ScorerError("checksum mismatch: the file is damaged")
    try:
        doc = json.loads(body)
        bias, threshold, weights = float(doc["bias"]), float(doc["threshold"]), doc["weights"]
        if not isinstance(weights, dict) or not weights or not all(
                isinstance(v, (int, float)) for v in weights.values()):
            raise ValueError("weights")
        lex = doc["lexicon"]
        lexicon = Lexicon({str(k): str(v) for k, v in lex["words"].items()},
                          {str(k): str(v) for k, v in lex["stems"].items()})
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise ScorerError(f"malformed body ({exc})") from None
    return Model(bias, threshold, {str(k): float(v) for k, v in weights.items()}, lexicon)


_LOADED: list[Model | ScorerError] = []


def _read_model() -> bytes:
    """The model file's bytes, from the package folder, or through importlib.resources
    when the package is not a folder (a zip); raises ScorerError."""
    path = model_path()
    try:
        with open(path, "rb") as fh:
            return fh.read()
    except OSError as exc:
        if os.path.isdir(os.path.dirname(path)):  # the folder is there, the file is not
            raise ScorerError(f"cannot read the model file ({exc.strerror})") from None
    try:
        from importlib import resources

        return (resources.files("memwarden.policies").joinpath("pack", "scorer", MODEL_NAME)
                .read_bytes())
    except (OSError, ModuleNotFoundError) as exc:
        raise ScorerError(f"cannot read the model file ({exc})") from None


def shipped() -> Model:
    """The shipped model, loaded and verified once per process; raises ScorerError."""
    if not _LOADED:
        try:
            _LOADED.append(loads(_read_model()))
        except ScorerError as exc:
            _LOADED.append(exc)
    found = _LOADED[0]
    if isinstance(found, ScorerError):
        raise found
    return found


# ---- units


def _starts_unit(low: str, ls: int) -> bool:
    """Whether the line at `ls` opens an entry (or separates two: a blank line): the text
    start, after a blank line, a list item, heading, table row or fence, or where a quote
    begins or ends."""
    if ls == 0 or _LIST_MARK.match(low, ls) or _BLANK.match(low, ls):
        return True
    ps = low.rfind("\n", 0, ls - 1) + 1
    prev = low[ps:ls - 1]
    if not prev.strip() or prev.lstrip().startswith(("```", "~~~")):
        return True
    return prev.lstrip().startswith(">") != low[ls:ls + 40].lstrip().startswith(">")


def _entry(low: str, pos: int, floor: int) -> tuple[int, int]:
    """The entry holding offset `pos`, not starting before `floor` (the end of the entry
    scored before: keys are visited in order, so each line is walked at most twice)."""
    ls = max(low.rfind("\n", floor, pos) + 1, floor)
    while ls > floor and not _starts_unit(low, ls):
        ls = max(low.rfind("\n", floor, ls - 1) + 1, floor)
    end = low.find("\n", pos)
    while end >= 0 and end + 1 < len(low) and not _starts_unit(low, end + 1):
        end = low.find("\n", end + 1)
    return ls, len(low) if end < 0 else end


def gated_units(low: str, offsets: list[int]) -> list[tuple[int, int]]:
    """The entries holding a gate key (offsets of the keys, any order), each once; an entry
    longer than UNIT_MAX is cut into windows of UNIT_MAX, each a unit of its own."""
    out: list[tuple[int, int]] = []
    floor, entry = 0, (0, -1)
    for pos in sorted(offsets):
        if pos < floor:
            continue
        if pos >= entry[1]:
            entry = _entry(low, pos, floor)
        s = entry[0] + (pos - entry[0]) // UNIT_MAX * UNIT_MAX
        e = min(entry[1], s + UNIT_MAX)
        out.append((s, e))
        floor = max(e, pos + 1)
    return out


# ---- the finding


def explain(model: Model, low: str, n: int = 4) -> str:
    """The top contributing features, a uk/ru word shown beside the English word it was
    weighed as: `"all" (усі) +1.44`."""
    top = sorted(model.contributions(low), key=lambda c: (-c[0], c[1]))[:n]
    shown: dict[str, str] = {}
    if not low.isascii() and model.lexicon.stems:
        words = _WORD.findall(_unreported(low))
        for orig, mapped in zip(words, model.lexicon.map(words), strict=True):
            if orig != mapped:
                shown.setdefault(mapped, orig)
    out = []
    for w, f in top:
        if w <= 0:
            continue
        orig = " ".join(shown.get(x, "") for x in f.split(" ")).strip()
        out.append(f"{_quote(f, 40)}{f' ({orig})' if orig else ''} {w:+.2f}")
    return ", ".join(out)


def hits(text: str, low: str, offsets: list[int], taken: list[Hit],
         model: Model | None = None) -> list[Hit]:
    """MW313 warnings for the gated entries of `text` that score at or above the threshold
    and hold no other MW3xx hit; an MW313 error if the model cannot be loaded."""
    units = gated_units(low, offsets)
    if not units:
        return []
    if model is None:
        try:
            model = shipped()
        except ScorerError as exc:
            s, e = units[0]
            return [Hit("MW313", "error", s, e,
                        f"the injection scorer's model (policies/pack/scorer/{MODEL_NAME}) "
                        f"cannot be used: {exc}; reinstall memwarden or retrain it with "
                        "bench/train_injection_scorer.py", text[s:e])]
    starts = sorted(h.start for h in taken)
    out = []
    import bisect

    for s, e in units:
        k = bisect.bisect_left(starts, s)
        if k < len(starts) and starts[k] < e:
            continue  # already reported by a pattern
        unit = low[s:e]
        score = model.score(unit)
        if score < model.threshold:
            continue
        lead = len(unit) - len(unit.lstrip(" \t>-*+#"))
        out.append(Hit("MW313", "warning", s + lead, e,
                       f"entry reads like an instruction to the model (score {score:.2f} >= "
                       f"{model.threshold:.2f}; top features: {explain(model, unit)})",
                       text[s + lead:e]))
    return out
