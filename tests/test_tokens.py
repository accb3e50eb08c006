"""Token counting (offline, hash-verified, cached per blob) and the MW1xx limit rules."""

from __future__ import annotations

import shutil
from importlib import resources

import pytest
from conftest import make_repo, rules_in
from hypothesis import given, settings
from hypothesis import strategies as st

from memwarden.model.errors import EncodingUnavailable
from memwarden.tokens import counter as tokens
from memwarden.tokens.counter import OFFICIAL_SHA256, TokenCounter, count_text, get_encoder

UK = "Агент зберігає факти про проєкт у пам'яті та перевіряє їх перед кожним запуском. "


def body(n_tokens: int, encoding: str = "cl100k_base") -> str:
    """Text of exactly n_tokens tokens (' w' is one token each in both encodings)."""
    text = "x" + " w" * (n_tokens - 1)
    assert count_text(text, encoding) == n_tokens
    return text


def test_counts_match_tiktoken_and_len_over_4_would_undercount_ukrainian():
    enc = get_encoder("cl100k_base")
    text = UK * 20
    n = count_text(text, "cl100k_base")
    assert n == len(enc.encode_ordinary(text))
    assert len(text) / 4 < n * 0.75  # the approximation we refuse to make


def test_o200k_selectable_and_different():
    text = UK * 10
    assert count_text(text, "o200k_base") != count_text(text, "cl100k_base")


def test_special_tokens_count_as_text():
    assert count_text("<|endoftext|>", "cl100k_base") > 1


def test_tampered_rank_file_is_refused(tmp_path, monkeypatch):
    src = resources.files("memwarden.tokens") / "encodings" / "cl100k_base.tiktoken"
    data = bytearray(src.read_bytes())
    data[10] ^= 1
    (tmp_path / "cl100k_base.tiktoken").write_bytes(bytes(data))
    monkeypatch.setenv("MEMWARDEN_ENCODINGS_DIR", str(tmp_path))
    monkeypatch.setattr(tokens, "_encoders", {})
    with pytest.raises(EncodingUnavailable, match="does not match the official"):
        get_encoder("cl100k_base")


def test_missing_rank_file_is_a_config_error(tmp_path, monkeypatch, mw):
    monkeypatch.setenv("MEMWARDEN_ENCODINGS_DIR", str(tmp_path / "empty"))
    monkeypatch.setattr(tokens, "_encoders", {})
    monkeypatch.setattr(tokens, "_pure", {})
    monkeypatch.setattr(tokens, "_verified", set())
    root = make_repo(tmp_path, {"memory/a/snapshot.md": "# Snapshot\n"})
    code, _, err = mw(root, "check", "--all", "--no-cache")
    assert code == 2
    assert "rank file not found" in err and "Traceback" not in err


def test_unknown_encoding_refused():
    with pytest.raises(EncodingUnavailable, match="not available offline"):
        get_encoder("p50k_base")


def test_shipped_files_match_official_hashes():
    import hashlib

    for name, digest in OFFICIAL_SHA256.items():
        data = (resources.files("memwarden.tokens") / "encodings" / f"{name}.tiktoken").read_bytes()
        assert hashlib.sha256(data).hexdigest() == digest


def test_counter_cache_reused_and_corrupt_cache_rebuilt(tmp_path):
    cache = tmp_path / "c"
    path = cache / "tokens-cl100k_base.marshal"
    c1 = TokenCounter("cl100k_base", cache)
    assert c1.count("blob1", UK) == count_text(UK, "cl100k_base")
    c1.save()
    stored = tokens.read_counts(path)
    assert stored["blob1"] == count_text(UK, "cl100k_base")
    # A cached count is used without tokenizing: prove it with a planted value.
    stored["blob1"] = 7
    assert tokens.write_counts(path, stored)
    assert TokenCounter("cl100k_base", cache).count("blob1", UK) == 7
    # Garbage, a flipped byte or a truncated file is rebuilt, never trusted.
    good = path.read_bytes()
    for bad in (b"\x00not a cache", good[:-3] + bytes([good[-3] ^ 1]) + good[-2:], good[:-4]):
        path.write_bytes(bad)
        c3 = TokenCounter("cl100k_base", cache)
        assert c3.cached("blob1") is None
        assert c3.count("blob1", UK) == count_text(UK, "cl100k_base")
    c3.save()
    assert tokens.read_counts(path) == {"blob1": count_text(UK, "cl100k_base")}
    # Another encoding's cache file does not leak in.
    assert TokenCounter("o200k_base", cache).cached("blob1") is None


def test_check_writes_cache_under_git_dir(tmp_path, mw):
    root = make_repo(tmp_path, {"memory/a/snapshot.md": "# Snapshot\n" + UK})
    code, _, _ = mw(root, "check", "--all")
    assert code == 0
    assert tokens.read_counts(root / ".git" / "memwarden" / "tokens-cl100k_base.marshal")


@pytest.mark.parametrize(
    ("name", "rule", "limit"),
    [("snapshot.md", "MW101", 2000), ("facts.md", "MW102", 8000),
     ("open_loops.md", "MW103", 2000)],
)
def test_hard_limits(tmp_path, mw, name, rule, limit):
    root = make_repo(tmp_path, {f"memory/a/{name}": body(limit + 1)})
    code, out, _ = mw(root, "check", "--all")
    assert code == 1
    assert rule in rules_in(out)
    assert f"{limit + 1} tokens, over its HARD limit of {limit}" in out

    ok = make_repo(tmp_path / "ok", {f"memory/a/{name}": body(limit)})
    code, out, _ = mw(ok, "check", "--all")
    assert code == 0, out
    assert f"{rule} " in out and "[warning]" in out  # at 100%: near-limit warning only


def test_near_limit_warning_threshold(tmp_path, mw):
    root = make_repo(tmp_path, {"memory/a/snapshot.md": body(1799)})
    code, out, _ = mw(root, "check", "--all")
    assert code == 0 and "MW101" not in out
    root2 = make_repo(tmp_path / "b", {"memory/a/snapshot.md": body(1800)})
    code, out, _ = mw(root2, "check", "--all")
    assert code == 0 and "MW101" in out and "90% of its HARD limit" in out


def test_per_agent_limit_override(tmp_path, mw):
    root = make_repo(tmp_path, {
        "memwarden.toml": "[agents.a]\nlimits = { facts = 100 }\n",
        "memory/a/facts.md": body(150),
        "memory/b/facts.md": body(150),
    })
    code, out, _ = mw(root, "check", "--all")
    assert code == 1
    assert "memory/a/facts.md:" in out and "memory/b/facts.md:" not in out


def test_layer1_total(tmp_path, mw):
    files = {"memory/a/snapshot.md": body(1000), "memory/a/facts.md": body(1000),
             "memory/a/open_loops.md": body(500)}
    root = make_repo(tmp_path, {"memwarden.toml": "[limits]\nlayer1_total = 2400\n", **files})
    code, out, _ = mw(root, "check", "--all")
    assert code == 1 and "MW104" in rules_in(out)
    assert "Layer 1 of a has 2500 tokens" in out
    ok = make_repo(tmp_path / "ok", {"memwarden.toml": "[limits]\nlayer1_total = 2500\n",
                                     **files})
    code, out, _ = mw(ok, "check", "--all")
    assert code == 0 and "MW104" not in out


def test_layer1_total_reported_for_a_single_staged_file(tmp_path, mw):
    root = make_repo(tmp_path, {"memwarden.toml": "[limits]\nlayer1_total = 1500\n",
                                "memory/a/snapshot.md": body(1000),
                                "memory/a/facts.md": body(1000)})
    code, out, _ = mw(root, "check", "memory/a/snapshot.md")
    assert code == 1 and "MW104" in rules_in(out)
    assert out.startswith("memory/a/snapshot.md:")


def test_layer2_soft_limit_is_a_warning(tmp_path, mw):
    root = make_repo(tmp_path, {"memory/a/changelog.md": body(4001),
                                "memory/a/timeline/2026-02-17.md": body(2001),
                                "memory/a/runs/run_1.md": body(100)})
    code, out, _ = mw(root, "check", "--all")
    assert code == 0
    assert rules_in(out).count("MW105") == 2
    assert "run_1.md" not in out


def test_huge_file_is_reported_without_tokenizing(tmp_path, mw):
    root = make_repo(tmp_path, {"memory/a/facts.md": "# Facts\n"}, commit=False)
    with open(root / "memory/a/facts.md", "wb") as fh:
        fh.write(b"- fact\n" * (100 * 1024 * 1024 // 7))
    code, out, _ = mw(root, "check", "--all")
    assert code == 1 and "too large to count" in out and "MW102" in out


def test_encoding_from_config_changes_counts(tmp_path, mw):
    text = body(1990)
    uk = (UK * 200)[: len(text)]
    root = make_repo(tmp_path, {"memory/a/snapshot.md": uk})
    n_cl = count_text(uk, "cl100k_base")
    n_o2 = count_text(uk, "o200k_base")
    assert n_cl != n_o2
    _, out_cl, _ = mw(root, "check", "--all", "--format", "json")
    (root / "memwarden.toml").write_text('encoding = "o200k_base"\n')
    _, out_o2, _ = mw(root, "check", "--all", "--format", "json")
    assert out_cl != out_o2 or (n_cl < 1800 and n_o2 < 1800)


def test_cached_check_gives_same_findings(tmp_path, mw):
    root = make_repo(tmp_path, {"memory/a/snapshot.md": body(2100),
                                "memory/a/notes.txt": "x"})
    first = mw(root, "check", "--all", "--format", "json")
    second = mw(root, "check", "--all", "--format", "json")
    assert first == second
    shutil.rmtree(root / ".git" / "memwarden")
    assert mw(root, "check", "--all", "--format", "json") == first


def test_parsed_rank_cache_is_verified_and_rebuilt(tmp_path, monkeypatch):
    """The pure counter keeps the parsed ranks in the user cache; a damaged file is rebuilt."""
    from memwarden.cachedir import read_sealed

    monkeypatch.setenv("MEMWARDEN_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(tokens, "_pure", {})
    n = len(get_encoder("cl100k_base").encode_ordinary(UK))
    assert tokens._pure_counter("cl100k_base").count(UK) == n
    (cache,) = tmp_path.glob("ranks-*.marshal")
    data = bytearray(cache.read_bytes())
    data[-5] ^= 0xFF  # corrupt the payload: its checksum no longer matches
    cache.write_bytes(bytes(data))
    monkeypatch.setattr(tokens, "_pure", {})
    assert tokens._pure_counter("cl100k_base").count(UK) == n
    assert read_sealed(cache, ("ranks", OFFICIAL_SHA256["cl100k_base"])) is not None  # rewritten


@pytest.mark.parametrize("enc", ["cl100k_base", "o200k_base"])
@settings(max_examples=300, deadline=None)
@given(text=st.text(alphabet=st.characters(), max_size=200) |
       st.sampled_from(["<|endoftext|>", "a<|fim_prefix|>b", "\ud800x", "Привіт\r\n  світ"]))
def test_token_length_is_the_length_of_encode_ordinary(enc, text):
    """The count that skips building the list of ids is exactly len(encode_ordinary)."""
    assert tokens.token_length(enc)(text) == len(get_encoder(enc).encode_ordinary(text))


@pytest.mark.parametrize("enc", ["cl100k_base", "o200k_base"])
@settings(max_examples=300, deadline=None)
@given(text=st.text(alphabet=st.characters(exclude_categories=("Cs",)), max_size=300))
def test_no_text_has_more_tokens_than_utf8_bytes(enc, text):
    """MW105 skips counting a file no larger than its soft limit in bytes: every token is at
    least one byte of the text."""
    assert count_text(text, enc) <= len(text.encode("utf-8"))


def test_soft_limit_skips_counting_files_within_it_in_bytes(tmp_path, mw):
    """A Layer 2 file no larger than its soft limit in bytes is never tokenized (its count
    is not cached), one larger is; the findings stay those of an exact count."""
    small, large = "x " * 1500, body(4001)  # 3,000 bytes < 5,000; over it in tokens
    root = make_repo(tmp_path, {"memory/a/changelog.md": large,
                                "memory/b/changelog.md": small})
    code, out, _ = mw(root, "check", "--all")
    assert rules_in(out).count("MW105") == 1 and "memory/a/changelog.md" in out
    counts = tokens.read_counts(root / ".git" / "memwarden" / "tokens-cl100k_base.marshal")
    from memwarden.git.repo import hash_blob

    assert hash_blob(large.encode()) in counts
    assert hash_blob(small.encode()) not in counts


@pytest.mark.parametrize("enc", ["cl100k_base", "o200k_base"])
@settings(max_examples=200, deadline=None)
@given(text=st.lists(st.sampled_from(["a", "aa", " ", "  ", "\n", "[[", "{{", "|", "<!--", "😀",
                                      "Агент", "x1", "\t", "don't", "\ud800"]),
                     max_size=120).map("".join))
def test_long_pieces_count_as_bytes_never_under(enc, text):
    """Past MAX_PIECE_CHARS (made small here) a piece counts its bytes: the count is exact
    when no piece is that long and never below tiktoken's otherwise."""
    import regex

    from memwarden.tokens.bpe import _clean

    cap = 6
    exact = len(get_encoder(enc).encode_ordinary(text))
    old = tokens.MAX_PIECE_CHARS
    tokens.MAX_PIECE_CHARS = cap
    try:
        got = tokens.token_length(enc)(text)
    finally:
        tokens.MAX_PIECE_CHARS = old
    pieces = regex.findall(get_encoder(enc)._pat_str, _clean(text))
    if not pieces or max(map(len, pieces)) <= cap:
        assert got == exact
    else:
        assert got >= exact


def test_a_long_run_of_one_letter_fails_the_hard_limit(tmp_path, mw):
    """40,000 letters appended to facts.md are counted (fast) and over the limit."""
    root = make_repo(tmp_path, {"memory/a/facts.md": "# Facts: a\n\n## Domain\n- x\n"})
    (root / "memory/a/facts.md").write_text("# Facts: a\n\n## Domain\n- " + "a" * 80_000 + "\n")
    code, out, _ = mw(root, "check", "memory/a/facts.md")
    assert code == 1 and ("MW101" in out or "MW102" in out)


def test_a_byte_order_mark_counts_as_apply_and_the_runtimes_count_it(tmp_path, mw):
    """A snapshot of exactly 2,000 tokens after a byte-order mark: the check counted it
    without the mark (2,000, a warning) while apply and any reader of the bytes count
    2,001 (over the HARD limit), so the hook let in a file every later apply refused."""
    from conftest import make_repo

    head = "Snapshot notes of a\n\n"
    body = head + "- alpha" * 10
    k = 10
    while count_text(body, "cl100k_base") < 2000:
        k += 1
        body = head + "- alpha" * k
    while count_text(body, "cl100k_base") > 2000:
        body = body[:-1]
    assert count_text(body, "cl100k_base") == 2000
    assert count_text("\ufeff" + body, "cl100k_base") > 2000
    root = make_repo(tmp_path, {"memory/a/facts.md": "# Facts: a\n\n## Domain\n- x\n"})
    (root / "memory/a/snapshot.md").write_bytes(b"\xef\xbb\xbf" + body.encode())
    code, out, _ = mw(root, "check", "memory/a/snapshot.md")
    assert code == 1 and "MW101" in out and "over its HARD limit of 2000" in out, out
