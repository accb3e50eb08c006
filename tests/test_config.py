"""memwarden.toml: discovery order, schema validation with key-naming errors, overrides."""

from __future__ import annotations

import json
import os

import pytest
from conftest import make_repo

from memwarden.model.config import load_config, parse_config
from memwarden.model.errors import ConfigError


def test_defaults_without_file():
    cfg = parse_config(None)
    assert cfg.encoding == "cl100k_base"
    assert cfg.limit("facts") == 8000
    assert cfg.limit("layer1_total") == 12000
    assert cfg.data["max_auto_diff_bytes"] == 1024
    assert cfg.rule_enabled("MW303")


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ('[limits]\nfacts = "lots"\n', "limits.facts: expected an integer, got 'lots'"),
        ("[limits]\nfacts = -5\n", "limits.facts: must be >= 1"),
        ('encoding = "p50k_base"\n', "encoding: expected one of 'cl100k_base', 'o200k_base'"),
        ("enocding = 'cl100k_base'\n", "enocding: unknown key (did you mean 'encoding'?)"),
        ("[limits]\nfact = 10\n", "limits.fact: unknown key (did you mean 'facts'?)"),
        ("[agents.Bad_Id]\nauto_approve = true\n", "agents"),
        ("[agents.a]\nauto_approve = 'yes'\n", "agents.a.auto_approve: expected true or false"),
        ("select = ['XX1']\n", "select[0]"),
        ("low_water_ratio = 1.5\n", "low_water_ratio: must be <= 1"),
        ("[[waivers]]\nrule='MW305'\npath='m'\nfingerprint='sha256:00'\nexpires=2026-01-01\n"
         "reason='ok ok'\n", "waivers[0].fingerprint"),
        ("[[waivers]]\nrule='MW305'\npath='m'\nexpires=2026-01-01\nreason='x y'\n"
         "fingerprint='sha256:" + "0" * 64 + "'\nextra=1\n", "waivers[0].extra: unknown key"),
        ("this is = = not toml", "invalid TOML"),
    ],
)
def test_bad_config_names_the_key(text, needle):
    with pytest.raises(ConfigError) as exc:
        parse_config(text, source="memwarden.toml")
    assert needle in str(exc.value)


def test_good_config_merges_over_defaults():
    cfg = parse_config('encoding = "o200k_base"\n[limits]\nfacts = 6000\n'
                       "[agents.archivist-violin]\nauto_approve = false\n"
                       "limits = { facts = 5000 }\n")
    assert cfg.encoding == "o200k_base"
    assert cfg.limit("facts") == 6000
    assert cfg.limit("snapshot") == 2000  # untouched default survives the merge
    assert cfg.limit("facts", "archivist-violin") == 5000
    assert cfg.agent_setting("archivist-violin", "auto_approve") is False


def test_select_ignore_longest_prefix_wins():
    cfg = parse_config('select = ["MW"]\nignore = ["MW3"]\n')
    assert not cfg.rule_enabled("MW303")
    assert cfg.rule_enabled("MW101")
    cfg = parse_config('select = ["MW", "MW305"]\nignore = ["MW3"]\n')
    assert cfg.rule_enabled("MW305") and not cfg.rule_enabled("MW301")


def test_discovery_order(tmp_path, monkeypatch):
    root = make_repo(tmp_path, {"memwarden.toml": "[limits]\nfacts = 100\n"})
    env_cfg = tmp_path / "env.toml"
    env_cfg.write_text("[limits]\nfacts = 200\n")
    cli_cfg = tmp_path / "cli.toml"
    cli_cfg.write_text("[limits]\nfacts = 300\n")
    assert load_config(None, root).limit("facts") == 100
    monkeypatch.setenv("MEMWARDEN_CONFIG", str(env_cfg))
    assert load_config(None, root).limit("facts") == 200
    assert load_config(str(cli_cfg), root).limit("facts") == 300
    monkeypatch.setenv("MEMWARDEN_CONFIG", str(tmp_path / "missing.toml"))
    with pytest.raises(ConfigError, match="MEMWARDEN_CONFIG"):
        load_config(None, root)


def test_config_command_prints_effective_json(tmp_path, mw):
    root = make_repo(tmp_path, {"memwarden.toml": "[limits]\nfacts = 4321\n"})
    code, out, _ = mw(root, "config")
    assert code == 0
    doc = json.loads(out)
    assert doc["config"]["limits"]["facts"] == 4321
    assert doc["config"]["limits"]["snapshot"] == 2000
    assert doc["source"].endswith("memwarden.toml")


def test_bad_config_exits_2_via_check(tmp_path, mw):
    root = make_repo(tmp_path, {"memwarden.toml": "[limits]\nfacts = 'lots'\n",
                                "memory/a/facts.md": "# Facts\n"})
    code, out, err = mw(root, "check", "--all")
    assert code == 2
    assert "limits.facts: expected an integer, got 'lots'" in err
    assert "Traceback" not in err


def test_cli_select_validation(tmp_path, mw):
    root = make_repo(tmp_path, {"memory/a/facts.md": "# Facts\n"})
    code, _, err = mw(root, "check", "--select", "BOGUS")
    assert code == 2 and "--select" in err


def test_valid_config_is_remembered_invalid_never(tmp_path, monkeypatch):
    from memwarden.model.config import ConfigError, _valid_marker, parse_config

    monkeypatch.setenv("MEMWARDEN_CACHE_DIR", str(tmp_path / "cache"))
    parse_config("[limits]\nfacts = 6000\n")
    assert os.path.exists(_valid_marker({"limits": {"facts": 6000}}))
    for _ in range(2):  # no marker is ever written for a bad config
        with pytest.raises(ConfigError, match="limits.facts"):
            parse_config("[limits]\nfacts = 'lots'\n")
    assert len(list((tmp_path / "cache").glob("config-valid-*"))) == 1
