"""`memwarden entities`: the graph from [[wiki-links]] and Entity-Refs trailers."""

from __future__ import annotations

import json

import pytest
from conftest import git, make_repo, write_files
from hypothesis import given
from hypothesis import strategies as st

from memwarden.git.repo import open_repo
from memwarden.model.entries import body_start
from memwarden.read.entities import (
    _scan_lines,
    entity_graph,
    parse_target,
    scan_links,
    slugify,
)

# --------------------------------------------------------------------------- the parser


def ids(text):
    return [(lk.entity_id, lk.type, lk.label) for lk in scan_links(text)]


@pytest.mark.parametrize("text,expected", [
    ("uses [[MinIO]] daily", [("minio", None, "MinIO")]),
    ("[[s3-bucket|the bucket]]", [("s3-bucket", None, "the bucket")]),
    ("[[artifact:Report 2026]]", [("report-2026", "artifact", "Report 2026")]),
    ("[[Agent:archivist-violin|A]]", [("archivist-violin", "agent", "A")]),
    ("[[http://x]]", [("http-x", None, "http://x")]),  # not a type prefix: part of the name
    ("[[page#Heading]] and ![[diagram.md]]", [("page", None, "page"),
                                               ("diagram", None, "diagram.md")]),
    ("[[АРХІТЕКТУРНИЙ_КОРІНЬ]] — аксіоми", [("архітектурний-корінь", None,
                                              "АРХІТЕКТУРНИЙ_КОРІНЬ")]),
    ("[[ПАМ_ЯТЬ_АГЕНТА_GIT_DIFFMEM_V1]]", [("пам-ять-агента-git-diffmem-v1", None,
                                             "ПАМ_ЯТЬ_АГЕНТА_GIT_DIFFMEM_V1")]),
    ("[[ ]] [[!!]] [[]] [x] [[a\nb]]", []),
    ("inline `[[compost-tea]]` is an example; ``[[x]]`` too; [[real]]",
     [("real", None, "real")]),
    ("unmatched ` backtick [[kept]]", [("kept", None, "kept")]),
    ("```\n[[in-code]]\n```\n[[after]]", [("after", None, "after")]),
    ("  ~~~~ python\n[[in-code]]\n  ~~~\n[[still-code]]\n~~~~\n[[after]]",
     [("after", None, "after")]),
    ("```\n[[unclosed-fence]]", []),
    ("---\nrelated: [[in-frontmatter]]\n---\n[[body]]", [("body", None, "body")]),
    ("a\r\n[[crlf]]\r\n", [("crlf", None, "crlf")]),
])
def test_scan_links(text, expected):
    assert ids(text) == expected


def test_entries_group_links_for_co_reference():
    text = ("## Heading [[h]]\n- item [[a]] and [[b]]\n  continued [[c]]\n- next [[d]]\n\n"
            "para [[e]]\nstill para [[f]]\n")
    entries = {}
    for lk in scan_links(text):
        entries.setdefault(lk.entry, []).append(lk.entity_id)
    assert sorted(entries.values()) == [["a", "b", "c"], ["d"], ["e", "f"], ["h"]]


_name_chars = st.characters(blacklist_characters="[]|#\n\r`:", blacklist_categories=("Cs",))
names = st.text(_name_chars, min_size=1, max_size=30).filter(lambda s: slugify(s) != "")
plain = st.text(st.characters(blacklist_characters="[]`\n\r~", blacklist_categories=("Cs",)),
                max_size=40)


@given(st.text(max_size=200))
def test_slugify_is_idempotent_and_safe(text):
    s = slugify(text)
    assert slugify(s) == s
    assert s == "" or (not s.startswith("-") and not s.endswith("-") and "--" not in s)
    assert all(c.isalnum() or c == "-" for c in s)


@given(names, st.one_of(st.none(), names), plain, plain)
def test_a_link_in_text_is_found_once(name, label, before, after):
    link = f"[[{name}|{label}]]" if label else f"[[{name}]]"
    found = ids(f"{before}{link}{after}")
    assert found == [(slugify(name), None, (label or name).strip())]


@given(names, plain)
def test_links_in_fenced_code_are_never_found(name, prose):
    text = f"{prose}\n```\n[[{name}]]\n```\n~~~\n[[{name}]]\n~~~\n"
    assert ids(text) == []


@given(st.text(max_size=300))
def test_scanner_never_fails_and_links_come_from_their_line(text):
    lines = text.split("\n")
    for lk in scan_links(text):
        assert "[[" in lines[lk.line - 1] and lk.entity_id == slugify(lk.entity_id)


_md_line = st.one_of(
    st.sampled_from(["", "  ", "# H [[h]]", "## [[x]] y", "- [[a]] [[b]]", "  * [[c]]",
                     "1. [[d]]", "text [[e]]", "more [[f|F]] `[[g]]`", "---", "#no-space [[i]]",
                     "+ [[j]]", "10) [[k]]"]),
    st.text(st.characters(blacklist_characters="`~\n\r", blacklist_categories=("Cs",)),
            max_size=25))


@given(st.lists(_md_line, max_size=25))
def test_fast_path_equals_the_line_scanner(lines):
    """Texts without fences take a shortcut that finds entries backwards; it must agree
    with the full line-by-line scan."""
    text = "\n".join(lines)
    split = text.split("\n")
    assert scan_links(text) == _scan_lines(split, body_start(split, 500))


def test_parse_target_types():
    assert parse_target("decision:Use MinIO", None) == ("use-minio", "decision", "Use MinIO")
    assert parse_target("concept:", None) == ("concept", None, "concept:")
    assert parse_target("#only-anchor", None) is None


# --------------------------------------------------------------------------- the graph

T1, T2, T3 = "2026-02-10T10:00:00Z", "2026-02-12T09:30:00Z", "2026-02-14T08:00:00Z"


def commit(root, monkeypatch, when, message, files=None):
    if files:
        write_files(root, files)
    monkeypatch.setenv("GIT_COMMITTER_DATE", when)
    monkeypatch.setenv("GIT_AUTHOR_DATE", when)
    git(root, "add", "-A")
    git(root, "commit", "-q", "--allow-empty", "-m", message)
    return git(root, "rev-parse", "HEAD").strip()


@pytest.fixture
def graph_repo(tmp_path, monkeypatch):
    monkeypatch.setenv("GIT_COMMITTER_DATE", T1)
    monkeypatch.setenv("GIT_AUTHOR_DATE", T1)
    root = make_repo(tmp_path, {
        "memory/a/facts.md": "# Facts\n\n## D\n- [[MinIO]] stores [[s3|the S3 bucket]]\n"
                             "- ask [[b]] about [[minio]]\n\n```\n[[ignored]]\n```\n",
        "memory/b/facts.md": "# Facts\n\n- [[artifact:Report]] by [[a]]\n",
        "logic/a/current.pseudo.md": "# Logic\n\nread [[report]]\n",
        "agents/c/_agent.md": "---\nname: C\n---\n[[not-scanned]]\n",
        "notes/x.md": "[[outside]]\n",
    })
    c2 = commit(root, monkeypatch, T2, "edit b\n\nHuman-Edit: true",
                {"memory/b/facts.md": "# Facts\n\n- [[artifact:Report]] by [[a]] and [[c]]\n"})
    c3 = commit(root, monkeypatch, T3, "memory-update: a / run_1 / p-1\n\nAgent-Id: a\n"
                "Run-Id: run_1\nProposal-Id: p-1\nPriority: normal\nExpected-Version: 1\n"
                "Entity-Refs: minio, Kafka")
    return root, c2, c3


def node(graph, eid):
    return next(n for n in graph["nodes"] if n["entity_id"] == eid)


def test_graph_nodes_refs_and_dates(graph_repo, mw):
    root, c2, c3 = graph_repo
    code, out, err = mw(root, "entities", "--format", "json")
    assert code == 0, err
    g = json.loads(out)
    assert g["commit"] == c3
    assert [n["entity_id"] for n in g["nodes"]] == ["a", "b", "c", "kafka", "minio", "report",
                                                     "s3"]
    minio = node(g, "minio")
    assert minio == {"entity_id": "minio", "type": "concept", "label": "MinIO",
                     "refs": ["memory/a/facts.md", c3], "last_updated": T3}
    assert node(g, "s3")["label"] == "the S3 bucket" and node(g, "s3")["last_updated"] == T1
    report = node(g, "report")
    assert report["type"] == "artifact" and report["label"] == "Report"
    assert report["refs"] == ["logic/a/current.pseudo.md", "memory/b/facts.md"]
    assert report["last_updated"] == T2  # memory/b/facts.md changed at T2
    assert node(g, "a")["type"] == "agent" and node(g, "a")["refs"] == ["memory/b/facts.md"]
    assert node(g, "c")["type"] == "agent"  # agents/c/ exists
    assert node(g, "kafka")["refs"] == [c3]
    assert "ignored" not in out and "not-scanned" not in out and "outside" not in out
    edges = {(e["source"], e["target"], e["kind"]): e["weight"] for e in g["edges"]}
    assert edges[("minio", "s3", "co-reference")] == 1
    assert edges[("b", "minio", "co-reference")] == 1
    assert edges[("a", "minio", "mentions")] == 3  # two links + one Entity-Refs
    assert edges[("a", "report", "mentions")] == 1  # from logic/a/
    assert edges[("b", "report", "mentions")] == 1
    assert edges[("a", "kafka", "mentions")] == 1
    assert ("a", "a", "mentions") not in edges and ("b", "b", "mentions") not in edges


def test_graph_is_deterministic_and_cache_is_transparent(graph_repo, mw, monkeypatch):
    root, _, c3 = graph_repo
    cold = mw(root, "entities", "--format", "json", "--no-cache")[1]
    first = mw(root, "entities", "--format", "json")[1]
    warm = mw(root, "entities", "--format", "json")[1]
    assert cold == first == warm
    assert list((root / ".git/memwarden/entities").glob("*.graph"))
    # incremental: a new commit reuses the cached parent and still equals a cold build
    commit(root, monkeypatch, "2026-02-15T00:00:00Z", "more\n\nHuman-Edit: true",
           {"memory/a/facts.md": "# Facts\n\n- only [[Kafka]] now\n"})
    inc = json.loads(mw(root, "entities", "--format", "json")[1])
    assert inc == json.loads(mw(root, "entities", "--format", "json", "--no-cache")[1])
    assert node(inc, "kafka")["last_updated"] == "2026-02-15T00:00:00Z"
    assert "s3" not in [n["entity_id"] for n in inc["nodes"]]
    assert node(inc, "minio")["refs"] == [c3]  # only the Entity-Refs commit is left


def test_graph_at_older_revision_and_bare_repo(graph_repo, mw, tmp_path):
    root, c2, _ = graph_repo
    g = json.loads(mw(root, "entities", "--at", c2, "--format", "json")[1])
    assert g["commit"] == c2 and "kafka" not in [n["entity_id"] for n in g["nodes"]]
    bare = tmp_path / "bare.git"
    git(tmp_path, "clone", "-q", "--bare", str(root), str(bare))
    assert mw(bare, "entities", "--format", "json", "--no-cache")[1] == \
        mw(root, "entities", "--format", "json", "--no-cache")[1]


def test_one_node_view(graph_repo, mw):
    root, _, c3 = graph_repo
    code, out, err = mw(root, "entities", "MinIO", "--format", "json")
    assert code == 0, err
    view = json.loads(out)
    assert view["node"]["entity_id"] == "minio" and view["commit"] == c3
    assert {(e["source"], e["target"]) for e in view["edges"]} == {
        ("b", "minio"), ("minio", "s3"), ("a", "minio")}
    code, text, _ = mw(root, "entities", "minio")
    assert code == 0 and text.startswith("minio (concept): MinIO\n")
    assert "<- a  mentions x3" in text and "-- s3  co-reference x1" in text
    assert mw(root, "entities", "artifact:report")[0] == 0


def test_unknown_entity_exits_1(graph_repo, mw):
    root, _, _ = graph_repo
    code, out, err = mw(root, "entities", "no-such-thing")
    assert code == 1 and out == "" and "unknown entity 'no-such-thing'" in err


def test_text_listing_and_empty_repo(graph_repo, mw, tmp_path):
    root, _, _ = graph_repo
    code, out, _ = mw(root, "entities")
    assert code == 0 and out.splitlines()[0].startswith("a\tagent\trefs=1\t")
    head = git(root, "rev-parse", "HEAD").strip()
    assert out.splitlines()[-1] == f"7 entities, 13 edges at {head[:12]}"
    empty = make_repo(tmp_path / "e", {"memory/z/facts.md": "# Facts\n"})
    code, out, _ = mw(empty, "entities", "--format", "json")
    assert code == 0 and json.loads(out)["nodes"] == []


def test_broken_cache_is_rebuilt(graph_repo, mw):
    root, _, c3 = graph_repo
    good = mw(root, "entities", "--format", "json")[1]
    for p in (root / ".git/memwarden/entities").glob("*"):
        p.write_bytes(b"\x00garbage")
    assert mw(root, "entities", "--format", "json")[1] == good
    assert entity_graph(open_repo(root), c3, use_cache=False) == json.loads(good)
