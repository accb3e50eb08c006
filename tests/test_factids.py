"""Short fact ids: a fixed word list, one token each, every listed id naming one fact."""

from __future__ import annotations

import hashlib

import pytest

from memwarden.model.factids import WORDS, WORDS_SHA256, resolve, short_ids, split_cited, word_of
from memwarden.tokens.counter import get_encoder


def test_the_word_list_never_changes():
    """Short ids already cited in Facts-Used trailers depend on it word for word."""
    assert hashlib.sha256(" ".join(WORDS).encode()).hexdigest() == WORDS_SHA256
    assert len(WORDS) == len(set(WORDS)) == 3561


@pytest.mark.parametrize("encoding", ["cl100k_base", "o200k_base"])
def test_every_word_is_one_token_after_a_space(encoding):
    enc = get_encoder(encoding)
    assert all(len(enc.encode_ordinary(" " + w)) == 1 for w in WORDS)


def test_short_ids_fall_back_to_the_full_id_on_a_shared_word():
    ids = [hashlib.sha256(str(i).encode()).hexdigest()[:10] for i in range(400)]
    short = short_ids(ids)
    assert len(set(short)) == len(short)  # each listed id names one fact of the list
    assert all(s == word_of(i) or s == i for s, i in zip(short, ids, strict=True))
    shared = [i for s, i in zip(short, ids, strict=True) if s == i]
    assert shared and all(sum(word_of(j) == word_of(i) for j in ids) > 1 for i in shared)
    assert resolve(short, ids) == set(ids)


def test_resolve_names_facts_by_full_id_or_word_only():
    a, b = "0123456789", "abcdefabcd"
    assert resolve([word_of(a)], [a, b]) == {a}
    assert resolve([b], [a, b]) == {b}
    assert resolve(["ffffffffff", "not-a-word", ""], [a, b]) == set()
    assert word_of("XYZ") == "" and word_of("0123") == ""
    assert split_cited("a1, b2 c3,,d4\n") == ["a1", "b2", "c3", "d4"]


def test_remove_entry_and_read_speak_the_same_short_ids(tmp_path, mw):
    """The id `read` shows for a fact is what propose's remove_entry takes."""
    import json

    from conftest import git, make_repo

    facts = "# Facts: a\n\n## Domain\n- MinIO keeps versions\n- notes are Markdown\n"
    root = make_repo(tmp_path, {"memory/a/facts.md": facts, "memory/a/meta.json":
                                '{"agentId": "a", "version": 1, "schemaVersion": "1.0"}\n'})
    code, out, err = mw(root, "read", "a", "--mode", "wide")
    first = json.loads(out)["meta"]["factIds"].split()[0]
    req = tmp_path / "req.json"
    req.write_text(json.dumps({"agentId": "a", "runId": "run_1", "updates": [
        {"file": "facts.md", "operation": "remove_entry", "entryId": first}]}))
    code, out, err = mw(root, "propose", str(req))
    assert code == 0, err
    text = git(root, "show", f"{json.loads(out)['branch']}:memory/a/facts.md")
    assert "MinIO" not in text and "notes are Markdown" in text
