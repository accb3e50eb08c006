"""The pure-Python byte-pair merge (memwarden/tokens/bpe.py) is tiktoken, token for token.

Proof by comparison with tiktoken's own encoder: generated Unicode text aimed at the
pattern's corners (Cyrillic, emoji with ZWJ, CRLF, whitespace runs, digits, contractions,
lone surrogates), the bench generator's corpus and the bundled example, for both encodings.
"""

from __future__ import annotations

import sys
from importlib import resources
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memwarden.model.errors import EncodingUnavailable
from memwarden.tokens import bpe
from memwarden.tokens import counter as tokens
from memwarden.tokens.counter import count_text, get_encoder

ENCODINGS = ("cl100k_base", "o200k_base")
BENCH = Path(__file__).resolve().parents[1] / "bench"


@pytest.fixture(scope="module")
def pures() -> dict[str, bpe.PureBPE]:
    """Counters over tiktoken's own pattern and the verified ranks."""
    out = {}
    for name in ENCODINGS:
        spec = tokens._spec(name)
        out[name] = bpe.PureBPE(spec["pat_str"], spec["mergeable_ranks"])
    return out


def same(pures: dict[str, bpe.PureBPE], text: str) -> None:
    for name in ENCODINGS:
        want = get_encoder(name).encode_ordinary(text)
        n = pures[name].count(text)
        if n is None:  # left to tiktoken's encoder: a piece too long to merge in Python,
            # or a character the `regex` module's tables may read unlike tiktoken's
            assert bpe.unassigned(bpe._clean(text)) or any(
                len(p.encode()) > bpe.MAX_PIECE_BYTES for p in pures[name]._split(text))
        else:
            assert pures[name].encode(text) == want, (name, text)
            assert n == len(want), (name, text)


# Characters where the two patterns branch: letter classes, marks, digits of other scripts,
# every kind of whitespace (and near-whitespace such as \x1c-\x1f, which str.isspace calls
# space but Unicode does not), apostrophes, joiners and variation selectors.
EDGES = list(
    "aZ'sStTdDmMlLvVrReE \t\n\r\x0b\x0c\x1c\x1d\x1e\x1f\x85\xa0\u1680\u2000\u2028\u2029"
    "\u202f\u205f\u3000\u200b\u200d\ufe0f\ufeff09٣৩௫¹½ⅫюЮїЇєЄґҐ'ʼ’ёЁыъ"
    "\u0301\u0308éñßÆǅǈ\u02b0\u02c6ªº中文字かカ한글ﷺ!?.,;:-_/\\|()[]{}<>#*`~\"@$%^&+="
    "👍🏽👩‍💻🏳️‍🌈🇺🇦\U0001f9d1\U0001f3fb\U000e0067\U0010ffff\U00030000"
)
edge_text = st.text(st.sampled_from(EDGES), max_size=60)
any_text = st.text(st.characters(codec=None, exclude_categories=()), max_size=80)
word = st.sampled_from(["the", "The", "I'm", "you'LL", "don't", "Агент", "зберігає",
                        "пам'яті", "проєкт", "ЇЖАК", "123456", "3.14", "2026-02-17",
                        "#", "##", "- ", "  ", "\r\n", "\n\n", "\t", "😀", "👨‍👩‍👧"])
words = st.lists(word, max_size=40).map("".join)


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(edge_text)
def test_pattern_corners(pures, text):
    same(pures, text)


@settings(max_examples=300, deadline=None)
@given(any_text)
def test_arbitrary_unicode_including_surrogates(pures, text):
    same(pures, text)


@settings(max_examples=300, deadline=None)
@given(words)
def test_word_soup(pures, text):
    same(pures, text)


@pytest.mark.parametrize("text", [
    "", " ", "  \n", "a  \n", "x\r\n\r\n  y", "it's IT'S it’s", "1234567", "ab\x1c cd",
    " \u00a0x", "hello\n\n\n", "\u200d", "\U0001f469\u200d\U0001f4bb", "e\u0301\u0301",
    "---\nagent: a\n---\n# Facts\n- [2026-02-01] Шлюз відхиляє нотатки.\n",
    "\ud800", "a\udfffb", "\ud83d\ude00", " " * 300 + "x", "ab" * 500, "\t\t\r\n \n",
    "\U0003d000{i", "\U000323b0{i", "\U00031350{i",
])
def test_fixed_cases(pures, text):
    same(pures, text)


@pytest.mark.parametrize("unit", ["a", "ab", " ", "\n", "[[", "{{", "|", "<!--", "😀", "é"])
def test_long_runs_of_one_shape(pures, unit):
    """Long pieces (one letter repeated, emoji, punctuation) merge as tiktoken merges them."""
    same(pures, "x " + unit * 3000 + " y")


def corpus_texts(root: Path) -> list[str]:
    out = []
    for p in sorted(root.rglob("*")):
        if p.is_file() and ".git" not in p.parts:
            try:
                out.append(p.read_bytes().decode("utf-8-sig"))
            except UnicodeDecodeError:
                continue
    return out


def test_bench_corpus_and_example_repo(pures, tmp_path):
    sys.path.insert(0, str(BENCH))
    import gen_repo

    gen_repo.generate(tmp_path / "bench", 12, seed=3, jobs=1)
    texts = corpus_texts(tmp_path / "bench")
    with resources.as_file(resources.files("memwarden") / "example") as ex:
        texts += corpus_texts(ex)
    assert len(texts) > 120 and sum(map(len, texts)) > 300_000
    for name in ENCODINGS:
        enc = get_encoder(name)
        for text in texts:
            assert pures[name].count(text) == len(enc.encode_ordinary(text))


@pytest.fixture
def fresh(monkeypatch, tmp_path):
    """A process state with no encoder built, no counter cached, an empty budget."""
    monkeypatch.setenv("MEMWARDEN_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(tokens, "_encoders", {})
    monkeypatch.setattr(tokens, "_pure", {})
    monkeypatch.setattr(tokens, "_verified", set())
    monkeypatch.setattr(tokens, "_MEMO", {})
    monkeypatch.setattr(tokens, "_pure_chars", 0)
    return tmp_path


UK = "Агент зберігає факти про проєкт у пам'яті та перевіряє їх перед кожним запуском. "


def test_count_text_counts_in_python_then_builds_the_encoder(fresh, monkeypatch):
    expect = len(get_encoder("cl100k_base").encode_ordinary(UK * 40))
    monkeypatch.setattr(tokens, "_encoders", {})
    assert count_text(UK * 40, "cl100k_base") == expect
    assert "cl100k_base" not in tokens._encoders  # counted without tiktoken's encoder
    assert list((fresh / "cache").glob("ranks-*.marshal"))  # kept parsed for next time
    monkeypatch.setattr(tokens, "PURE_BUDGET", {"cl100k_base": len(UK) * 50})
    big = UK * 11
    assert count_text(big, "cl100k_base") == len(get_encoder("cl100k_base").encode_ordinary(big))
    monkeypatch.setattr(tokens, "_encoders", {})
    count_text(UK * 12, "cl100k_base")  # past the budget: the encoder is built and used
    assert "cl100k_base" in tokens._encoders


@pytest.mark.parametrize("text", ["\U0003d000{i is new", "x \U000323b0{i y", "\U00031350{i z"])
def test_letters_newer_than_tiktoken_count_as_tiktoken_counts(fresh, monkeypatch, text):
    """The `regex` module's Unicode tables can be newer than tiktoken's: U+3D000 is a letter
    to one and not to the other, so "{i" after it was one piece in Python and two in
    tiktoken, and the count one token short. Such text is counted by tiktoken."""
    expect = len(get_encoder("cl100k_base").encode_ordinary(text))
    monkeypatch.setattr(tokens, "_encoders", {})
    assert count_text(text, "cl100k_base") == expect


def test_cached_ranks_still_need_the_verified_rank_file(fresh, monkeypatch):
    count_text("writes the ranks cache", "cl100k_base")
    monkeypatch.setattr(tokens, "_pure", {})
    monkeypatch.setattr(tokens, "_verified", set())
    monkeypatch.setenv("MEMWARDEN_ENCODINGS_DIR", str(fresh / "empty"))
    with pytest.raises(EncodingUnavailable, match="rank file not found"):
        count_text("fresh text", "cl100k_base")
    src = resources.files("memwarden.tokens") / "encodings" / "cl100k_base.tiktoken"
    data = bytearray(src.read_bytes())
    data[10] ^= 1
    (fresh / "bad").mkdir()
    (fresh / "bad" / "cl100k_base.tiktoken").write_bytes(bytes(data))
    monkeypatch.setenv("MEMWARDEN_ENCODINGS_DIR", str(fresh / "bad"))
    with pytest.raises(EncodingUnavailable, match="does not match the official"):
        tokens.verify_encoding("cl100k_base")
    with pytest.raises(EncodingUnavailable, match="does not match the official"):
        count_text("still refused", "cl100k_base")
    with pytest.raises(EncodingUnavailable, match="not available offline"):
        tokens.verify_encoding("p50k_base")


def test_without_a_cache_dir_the_ranks_dict_is_used(fresh, monkeypatch):
    monkeypatch.setattr(tokens, "user_cache_dir", lambda: None)
    assert count_text(UK, "o200k_base") == len(get_encoder("o200k_base").encode_ordinary(UK))


def test_verify_encoding_builds_nothing(fresh):
    tokens.verify_encoding("o200k_base")
    assert not tokens._encoders and not tokens._pure
    assert not (fresh / "cache").exists()  # nothing built, nothing cached


def test_a_rank_file_changed_after_verification_is_refused(fresh, monkeypatch):
    folder = fresh / "encodings"
    folder.mkdir()
    target = folder / "cl100k_base.tiktoken"
    src = resources.files("memwarden.tokens") / "encodings" / "cl100k_base.tiktoken"
    target.write_bytes(src.read_bytes())
    monkeypatch.setenv("MEMWARDEN_ENCODINGS_DIR", str(folder))
    tokens.verify_encoding("cl100k_base")
    data = bytearray(target.read_bytes())
    data[100] ^= 1
    target.write_bytes(bytes(data))
    monkeypatch.setattr(tokens, "_verified", set())  # a new process
    with pytest.raises(EncodingUnavailable, match="does not match the official"):
        tokens.verify_encoding("cl100k_base")


def test_one_file_check_counts_without_building_tiktoken(tmp_path):
    import subprocess

    from conftest import make_repo

    root = make_repo(tmp_path, {"memory/a/facts.md": "# Facts: a\n\n## Domain\n- x\n"})
    (root / "memory/a/facts.md").write_text("# Facts: a\n\n## Domain\n- Агент зберігає факти\n")
    probe = ("import sys\nfrom memwarden.__main__ import main\n"
             "from memwarden.tokens import counter as tokens\n"
             "code = main(['check', 'memory/a/facts.md'])\n"
             "print('BUILT', sorted(tokens._encoders), 'PURE', sorted(tokens._pure))\n"
             "sys.exit(code)\n")
    proc = subprocess.run([sys.executable, "-c", probe], cwd=root, capture_output=True,
                          text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "BUILT [] PURE ['cl100k_base']" in proc.stdout


def test_a_hook_sized_check_is_not_walked_around_with_unassigned_letters(tmp_path):
    """Each U+3D000 before "{i" was one token short in the Python counter, the one a hook's
    one-file check uses: 300 of them put a snapshot of 2,100+ tokens under its HARD limit of
    2,000. The check in a fresh process (as the hook runs) now counts as tiktoken does."""
    import subprocess

    from conftest import make_repo

    root = make_repo(tmp_path, {"memory/a/facts.md": "# Facts: a\n\n## Domain\n- x\n"})
    snapshot = "# Snapshot: a\n\n## Context\n" + "\U0003d000{i " * 300 + "\n"
    assert count_text(snapshot, "cl100k_base") > 2000
    (root / "memory/a/snapshot.md").write_text(snapshot, "utf-8")
    proc = subprocess.run([sys.executable, "-m", "memwarden", "check", "memory/a/snapshot.md"],
                          cwd=root, capture_output=True, text=True)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "MW101" in proc.stdout and "over its HARD limit of 2000" in proc.stdout


def test_a_forged_cached_pattern_is_not_used(tmp_path, monkeypatch):
    """The parsed ranks are kept in the user's cache folder; a copy whose split pattern reads
    every text as one piece made every file count as 1 token in a hook's check. A cached
    pattern must be the official one, or the cache is not used."""
    from memwarden.cachedir import read_sealed, write_sealed

    monkeypatch.setenv("MEMWARDEN_CACHE_DIR", str(tmp_path / "cache"))
    path = tokens._cache_path("cl100k_base")
    tag = ("ranks", tokens.OFFICIAL_SHA256["cl100k_base"])
    spec = tokens._spec("cl100k_base")  # writes the honest cache
    assert read_sealed(path, tag) is not None
    write_sealed(path, tag, (r"\A[\s\S]", spec["mergeable_ranks"]))
    assert tokens._cached("cl100k_base") is None
    monkeypatch.setattr(tokens, "_pure", {})
    text = "alpha beta gamma delta " * 50
    assert tokens._pure_counter("cl100k_base").count(text) == len(
        get_encoder("cl100k_base").encode_ordinary(text))
