"""`memwarden config`: the effective configuration."""

from __future__ import annotations

import json
from pathlib import Path

import click

from memwarden.cli.options import config_option


@click.command("config")
@config_option()
def config_cmd(config_path: str | None) -> None:
    """Print the effective configuration (defaults merged with memwarden.toml) as JSON."""
    from memwarden.git.repo import open_repo
    from memwarden.model.config import load_config

    repo = open_repo(Path.cwd())
    root = repo.root if repo and repo.root else Path.cwd()
    cfg = load_config(config_path, root)
    doc = {"source": cfg.source, "config": cfg.data}
    click.echo(json.dumps(doc, ensure_ascii=False, indent=2, sort_keys=True))
