"""`memwarden init` (a new memory repository) and `memwarden agent add ID` (a new agent).

init writes memwarden.toml (every key commented), an empty registry.json, a pre-commit
config that runs the installed memwarden, and the GitHub workflows for gate and apply, and
commits them with `Human-Edit: true`, so verify-history accepts the history from its first
commit. agent add writes a complete agent contract (it passes MW203 as draft or active),
the agent's Layer 1 memory files and its registry.json entry.
"""

from __future__ import annotations

import datetime as _dt
import json
from importlib import resources
from pathlib import Path
from typing import Any

import click

from memwarden.model.errors import MemwardenError
from memwarden.version import __version__

HOOK_INSTALL = "pre-commit install -t pre-commit -t commit-msg -t prepare-commit-msg"
INIT_MESSAGE = "memwarden init: memory repository\n\nHuman-Edit: true\n"


def _template(name: str) -> str:
    return (resources.files("memwarden") / "templates" / name).read_text("utf-8")


def init_files() -> dict[str, str]:
    """Path -> text of everything `init` writes."""
    return {
        "memwarden.toml": _template("memwarden.toml"),
        "registry.json": json.dumps({"version": "1", "agents": []}, indent=2) + "\n",
        ".pre-commit-config.yaml": _template("pre-commit-config.yaml").replace(
            "{version}", __version__),
        ".github/workflows/memwarden-gate.yml": _template("workflows/gate.yml"),
        ".github/workflows/memwarden-apply.yml": _template("workflows/apply.yml"),
    }


def _git(args: list[str], cwd: Path) -> str:
    from memwarden.git.repo import git_cli

    return git_cli(args, cwd)


def _write_new(root: Path, files: dict[str, str]) -> None:
    """Write `files` under `root`, refusing (before writing anything) to replace one."""
    there = [p for p in files if (root / p).exists() or (root / p).is_symlink()]
    if there:
        raise MemwardenError(f"{there[0]}: already exists; memwarden does not overwrite it "
                             f"({len(there)} of the files to write exist)")
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, "utf-8", newline="\n")


def _commit(root: Path, paths: list[str], message: str) -> str:
    _git(["add", "--", *paths], root)
    _git(["commit", "-q", "-m", message, "--", *paths], root)
    return _git(["rev-parse", "--short", "HEAD"], root).strip()


@click.command("init")
@click.argument("directory", required=False, default=".",
                type=click.Path(file_okay=False))
@click.option("--no-commit", is_flag=True, help="Write the files but do not commit them.")
def init_cmd(directory: str, no_commit: bool) -> None:
    """Make DIRECTORY (default: here) a memory repository: memwarden.toml, registry.json,
    .pre-commit-config.yaml (runs the installed memwarden) and .github/workflows/ for gate
    and apply, committed with `Human-Edit: true`. A folder that is not a git repository yet
    becomes one (branch main). Existing files are never overwritten (exit 2)."""
    from memwarden.git.repo import open_repo

    root = Path(directory)
    root.mkdir(parents=True, exist_ok=True)
    repo = open_repo(root)
    if repo is not None and repo.root is None:
        raise MemwardenError(f"{directory}: a bare repository; run init in a clone of it")
    if repo is not None and repo.root.resolve() != root.resolve():
        raise MemwardenError(f"{directory}: inside the git repository {repo.root}; run init "
                             "at its top level")
    if repo is None:
        _git(["init", "-q", "-b", "main"], root)
    files = init_files()
    _write_new(root, files)
    click.echo(f"memwarden init: wrote {', '.join(files)}")
    if not no_commit:
        sha = _commit(root, list(files), INIT_MESSAGE)
        click.echo(f"committed {sha} (Human-Edit: true; the baseline verify-history starts "
                   "from)")
    click.echo("next:")
    click.echo(f"  {HOOK_INSTALL}   # the hooks of .pre-commit-config.yaml")
    click.echo("  memwarden agent add <id>   # an agent: contract, memory files, registry entry")


# --- agent add -----------------------------------------------------------------------------

def contract(agent: str, name: str, description: str, status: str, model: str,
             now: _dt.datetime, by: str) -> str:
    """A complete `_agent.md`: every field an active agent needs (MW203)."""
    stamp = now.strftime("%Y-%m-%dT%H:%M:%SZ")
    return f"""---
name: {json.dumps(name, ensure_ascii=False)}
slug: "{agent}"
version: "0.1.0"
description: {json.dumps(description, ensure_ascii=False)}

model: "{model}"
temperature: 0.3
max_steps: 6

tools:
  - read-memory
  - create-proposal

safe_outputs:
  - create-proposal

triggers:
  manual: true
  cron: null

created_at: "{stamp}"
updated_at: "{stamp}"
created_by: {json.dumps(by, ensure_ascii=False)}
status: "{status}"
---

# {name}

{description}

## Role

What this agent does, for whom, from which sources.

## Procedure

1. Read memory (`memwarden read {agent} --mode basic`).
2. Do the task.
3. Propose what it learned (`memwarden propose`); never write main directly.

## Limits

- Only proposals; a human reviews anything the gate does not auto-approve.
"""


def memory_files(agent: str, now: _dt.datetime) -> dict[str, str]:
    stamp = now.strftime("%Y-%m-%dT%H:%M:%SZ")
    meta = {"agentId": agent, "version": 0, "schemaVersion": "1.0", "lastUpdate": stamp}
    base = f"memory/{agent}"
    return {
        f"{base}/snapshot.md": f"# Snapshot: {agent}\n\n## Role\n\n## Active context\n",
        f"{base}/facts.md": f"# Facts: {agent}\n\n## Domain\n",
        f"{base}/open_loops.md": f"# Open Loops: {agent}\n",
        f"{base}/meta.json": json.dumps(meta, indent=2) + "\n",
    }


def registry_with(root: Path, entry: dict[str, Any]) -> str:
    """registry.json with `entry` added (sorted by slug); the registry as init writes it
    when there is none yet."""
    path = root / "registry.json"
    doc: dict[str, Any] = {"version": "1", "agents": []}
    if path.exists():
        try:
            doc = json.loads(path.read_text("utf-8-sig"))
        except (OSError, ValueError) as exc:
            raise MemwardenError(f"registry.json: cannot read it ({exc}); fix it or run "
                                 "`memwarden maintain` to rebuild it") from None
        if not isinstance(doc, dict) or not isinstance(doc.get("agents"), list):
            raise MemwardenError("registry.json: expected {\"agents\": [...]}; fix it or run "
                                 "`memwarden maintain` to rebuild it")
    agents = [a for a in doc["agents"] if not (isinstance(a, dict) and
                                               a.get("slug") == entry["slug"])]
    doc["agents"] = sorted([*agents, entry], key=lambda a: str(a.get("slug", "")))
    return json.dumps(doc, ensure_ascii=False, indent=2) + "\n"


@click.group("agent")
def agent_group() -> None:
    """Agents of a memory repository."""


@agent_group.command("add")
@click.argument("agent_id")
@click.option("--name", help="Human-readable name (default: from the id).")
@click.option("--description", help="One sentence: the agent's role.")
@click.option("--status", type=click.Choice(["draft", "active"]), default="draft",
              help="draft (the default; apply refuses its proposals until an owner sets "
                   "active) or active. Default: draft.")
@click.option("--model", default="claude-sonnet-4-5-20250929", show_default=True,
              help="Model id recorded in the contract.")
@click.option("--commit", "do_commit", is_flag=True, help="Commit the new files "
              "(with `Human-Edit: true`).")
def agent_add_cmd(agent_id: str, name: str | None, description: str | None, status: str,
                  model: str, do_commit: bool) -> None:
    """Add agent AGENT_ID: agents/<id>/_agent.md (a complete contract), memory/<id>/
    (snapshot.md, facts.md, open_loops.md, meta.json) and its registry.json entry.
    Nothing is overwritten: an existing agent is an error (exit 2)."""
    from memwarden.git.repo import open_repo
    from memwarden.model.layout import AGENT_ID_RE

    if not AGENT_ID_RE.match(agent_id):
        raise MemwardenError(f"{agent_id}: not a valid agent id (lowercase letters, digits "
                             "and '-', starting with a letter or digit)")
    repo = open_repo(Path.cwd())
    if repo is None or repo.root is None:
        raise MemwardenError("agent add: not inside a git work tree (run `memwarden init` "
                             "first)")
    root = Path(repo.root)
    for folder in (f"agents/{agent_id}", f"memory/{agent_id}"):
        if (root / folder).exists():
            raise MemwardenError(f"{folder}/: already exists; agent {agent_id} is there")
    now = _dt.datetime.now(_dt.UTC).replace(microsecond=0)
    name = name or agent_id.replace("-", " ").title()
    description = description or f"{name}: describe the agent's role in one sentence."
    by = _user(root) or "owner"
    files = {f"agents/{agent_id}/_agent.md": contract(agent_id, name, description, status,
                                                      model, now, by),
             **memory_files(agent_id, now)}
    registry = registry_with(root, {"slug": agent_id, "name": name, "status": status,
                                    "version": "0.1.0"})
    _write_new(root, files)
    (root / "registry.json").write_text(registry, "utf-8", newline="\n")
    paths = [*files, "registry.json"]
    click.echo(f"agent {agent_id} ({status}): wrote {', '.join(paths)}")
    if do_commit:
        sha = _commit(root, paths, f"agent add: {agent_id}\n\nHuman-Edit: true\n")
        click.echo(f"committed {sha}")
    else:
        click.echo("next: git add -A && git commit -m \"add agent " + agent_id + "\"   "
                   "(the prepare-commit-msg hook adds `Human-Edit: true`; without the hooks, "
                   "add that line to the message yourself)")


def _user(root: Path) -> str | None:
    try:
        return _git(["config", "user.name"], root).strip() or None
    except MemwardenError:
        return None
