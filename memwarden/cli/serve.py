"""`memwarden serve`, `memwarden mcp` and `memwarden token issue`: the service's front doors.

Only click at import time; the service (FastAPI, uvicorn, the MCP SDK, PyJWT) loads inside
the commands, so no other command pays for it. Those packages are the `serve` extra
(`pip install 'memwarden[serve]'`): the pre-commit hook and the CI gate go without them.
"""

from __future__ import annotations

import importlib.util
import sys
from typing import Any

import click

from memwarden.model.errors import MemwardenError

_REPO_HELP = "The memory repository (a work tree or a bare repository; default: here)."
_CONFIG_HELP = ("memwarden.toml to use (default: the work tree's, else the one committed on "
                "main).")


# module -> the distribution pip installs it from
_SERVICE_PACKAGES = {"mcp": "mcp", "fastapi": "fastapi", "uvicorn": "uvicorn", "jwt": "PyJWT",
                     "cryptography": "cryptography"}


def _need_service_packages() -> None:
    """Without the `serve` extra, say what to install rather than fail on an import."""
    missing = [dist for module, dist in _SERVICE_PACKAGES.items()
               if importlib.util.find_spec(module) is None]
    if missing:
        raise MemwardenError(f"the service needs {', '.join(missing)}, which are not "
                             "installed: pip install 'memwarden[serve]'")


def _service(repo: str, config_path: str | None) -> Any:
    from memwarden.service.core import MemoryService

    return MemoryService(repo, config_path=config_path)


def _log_stream(where: str) -> Any:
    if where in ("", "off", "none"):
        return None
    if where == "-":
        return sys.stderr
    try:
        return open(where, "a", encoding="utf-8")  # noqa: SIM115 - lives as long as the server
    except OSError as exc:
        raise MemwardenError(f"--access-log {where}: cannot open ({exc.strerror})") from None


def run_http(repo: str, config_path: str | None, host: str | None, port: int | None,
             access_log: str | None, max_connections: int | None = None,
             request_timeout: float | None = None) -> int:
    """Serve REST + MCP over HTTP until SIGINT/SIGTERM; in-flight requests finish first."""
    from memwarden.service import server
    from memwarden.service.auth import Verifier
    from memwarden.service.http import create_app

    server.plain_logging()
    service = _service(repo, config_path)
    settings = service.settings
    verifier = Verifier(settings["auth"], settings["grants"])
    log = _log_stream(settings["access_log"] if access_log is None else access_log)
    app = create_app(service, verifier, log)
    if max_connections is None:
        max_connections = int(settings.get("max_connections", server.MAX_CONNECTIONS))
    if request_timeout is None:
        request_timeout = float(settings.get("request_timeout_seconds",
                                             server.REQUEST_TIMEOUT))
    server.serve(app, host or settings["host"], settings["port"] if port is None else port,
                 max_connections, request_timeout)
    return 0


_MAX_CONNECTIONS_HELP = ("Client connections open at once (default 1000, and never more "
                         "than the open-file limit allows); more are answered 503.")
_REQUEST_TIMEOUT_HELP = ("Seconds a connection has to send one whole request (default 10); "
                         "slower ones are dropped.")


@click.command("serve")
@click.option("--repo", default=".", show_default=True, help=_REPO_HELP)
@click.option("--host", help="Address to bind (default [service] host, 127.0.0.1).")
@click.option("--port", type=click.IntRange(0, 65535), help="Port (default [service] port).")
@click.option("--config", "config_path", type=click.Path(), help=_CONFIG_HELP)
@click.option("--access-log", metavar="FILE|-|off", help="JSON access log: a file, - for "
              "standard error, off (default [service] access_log).")
@click.option("--max-connections", type=click.IntRange(1, 1_000_000),
              help=_MAX_CONNECTIONS_HELP)
@click.option("--request-timeout", type=click.FloatRange(0.1, 3600), metavar="SECONDS",
              help=_REQUEST_TIMEOUT_HELP)
def serve_cmd(repo: str, host: str | None, port: int | None, config_path: str | None,
              access_log: str | None, max_connections: int | None,
              request_timeout: float | None) -> None:
    """Serve the memory over HTTP: REST routes under /memory, /entities, /proposals, the
    MCP streamable HTTP endpoint at /mcp, /health and /openapi.json. Every request except
    /health needs a bearer JWT ([service.auth] in memwarden.toml). Reads come from main;
    writes are proposal branches; main never moves."""
    _need_service_packages()
    raise SystemExit(run_http(repo, config_path, host, port, access_log, max_connections,
                              request_timeout))


@click.command("mcp")
@click.option("--repo", default=".", show_default=True, help=_REPO_HELP)
@click.option("--agent", metavar="AGENT", help="Who the stdio client is (default [service] "
              "stdio_agent): it reads, proposes and snapshots for this agent only.")
@click.option("--transport", type=click.Choice(["stdio", "http"]), default="stdio",
              show_default=True, help="http: the same app as `memwarden serve` (MCP at /mcp, "
              "bearer tokens).")
@click.option("--host", help="http: address to bind.")
@click.option("--port", type=click.IntRange(0, 65535), help="http: port.")
@click.option("--config", "config_path", type=click.Path(), help=_CONFIG_HELP)
def mcp_cmd(repo: str, agent: str | None, transport: str, host: str | None,
            port: int | None, config_path: str | None) -> None:
    """Run the MCP server (tools read-memory, propose-memory-update, memory-diff,
    memory-snapshot, memory-search, memory-context, memory-entities, memory-layer2,
    proposal-status). stdio carries no credentials: the caller is --agent."""
    _need_service_packages()
    if transport == "http":
        raise SystemExit(run_http(repo, config_path, host, port, None))
    from memwarden.service.core import AGENT_RE
    from memwarden.service.errors import make_principal
    from memwarden.service.mcp_server import build_mcp

    service = _service(repo, config_path)
    who = agent or service.settings.get("stdio_agent") or ""
    if not AGENT_RE.match(who):
        raise click.UsageError("name the agent this stdio server acts for: --agent AGENT "
                               "(or [service] stdio_agent)")
    principal = make_principal(who, {"memory:read", "memory:propose", "memory:snapshot"},
                               service.settings["grants"])
    try:
        build_mcp(service, stdio_principal=principal).run("stdio")
    finally:
        service.close()
    raise SystemExit(0)


@click.group("token")
def token_group() -> None:
    """Bearer tokens for the service (development)."""


@token_group.command("issue")
@click.option("--sub", required=True, help="Who the token is for: an agent id or a person.")
@click.option("--scope", "scopes", multiple=True, required=True,
              type=click.Choice(["memory:read", "memory:propose", "memory:snapshot",
                                 "memory:admin"]), help="Repeatable.")
@click.option("--ttl", type=click.IntRange(1, 366 * 86400), default=3600, show_default=True,
              help="Seconds until it expires.")
@click.option("--key", "key_file", type=click.Path(dir_okay=False), help="Private key (PEM) "
              "for RS256/EdDSA; HS256 signs with the configured secret.")
@click.option("--repo", default=".", show_default=True, help=_REPO_HELP)
@click.option("--config", "config_path", type=click.Path(), help=_CONFIG_HELP)
def token_issue_cmd(sub: str, scopes: tuple[str, ...], ttl: int, key_file: str | None,
                    repo: str, config_path: str | None) -> None:
    """Print a signed JWT with sub, scope, aud, iss, iat and exp from [service.auth]."""
    _need_service_packages()
    from pathlib import Path

    from memwarden.git.repo import open_repo
    from memwarden.service.auth import issue_token
    from memwarden.service.core import service_config

    opened = open_repo(Path(repo))
    if opened is None:
        raise MemwardenError(f"{repo}: not a git repository")
    settings = service_config(opened, config_path).data["service"]["auth"]
    key = None
    if key_file:
        try:
            key = Path(key_file).read_text("utf-8")
        except OSError as exc:
            raise MemwardenError(f"--key {key_file}: cannot read ({exc.strerror})") from None
    click.echo(issue_token(settings, sub, list(scopes), ttl, key))
