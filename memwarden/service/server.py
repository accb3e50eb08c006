"""Running the HTTP app under uvicorn so that many, slow or unfinished connections cannot
take the process down.

Every connection costs a file descriptor, and a process out of descriptors cannot accept,
open a pack file or even import the module that would log the failure. So: the soft
RLIMIT_NOFILE is raised to the hard one at start; connections beyond a cap (at most
`max_connections`, and never more than half the descriptors left after a reserve for the
repository, the search index and the logs) are answered 503 and closed at once, before
anything is read, and the listen backlog is cut to fit as well; a connection has
`request_timeout` seconds to deliver a whole request (headers and body), counted from its
opening or from its previous response, so a client that trickles a header line every few
seconds is dropped; a client that stops reading its answers (the app then waits for the
socket to drain, past any request deadline) is dropped when it has read nothing for
`request_timeout` seconds; and the event loop's exception handler never raises, so an
accept() that fails with EMFILE is reported and retried (as asyncio does) instead of
ending the loop. uvicorn's own `limit_concurrency` is not enough here: it counts a connection only
once its headers are complete, and never closes one.

Every request carries its connection's `Link` in the ASGI scope, so the app can count a
token's open connections (http.py) and learn when one closes. X-Forwarded-For is not
trusted: the address a request comes from is the peer's. A client can still choose its
source address within what it owns (any 127.0.0.0/8 address on this machine, any address
of its IPv6 /64), so http.py groups addresses that way before limiting them.
"""

from __future__ import annotations

import asyncio
import errno
import json
import logging
import os
import sys
import time
from collections.abc import Callable
from typing import Any

MAX_CONNECTIONS = 1000
REQUEST_TIMEOUT = 10.0  # seconds to send one whole request
FD_RESERVE = 64  # descriptors kept for the repository, the search index and the logs
BACKLOG = 2048  # uvicorn's default
_OUT_OF = (errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM)
WARN_EVERY = 10.0  # seconds between two out-of-resources warnings
_warned = [-WARN_EVERY]


def raise_fd_limit() -> int | None:
    """Raise the soft limit on open files to the hard one; the soft limit now (None where
    the platform has no such limit)."""
    try:
        import resource
    except ImportError:
        return None
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = hard if hard != resource.RLIM_INFINITY else max(soft, 1 << 16)
    if soft != resource.RLIM_INFINITY and want > soft:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
        except (ValueError, OSError):
            pass  # a container may cap it below the hard limit: keep what we have
    soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    return None if soft == resource.RLIM_INFINITY else soft


def budget(max_connections: int, fd_limit: int | None) -> tuple[int, int]:
    """(connections open at once, listen backlog). A readiness event accepts up to the
    backlog's worth of sockets before any of them is seen by the protocol, a few times
    over, so both come out of the descriptors left after FD_RESERVE: half of them for
    connections, an eighth for the backlog, leaving room for those bursts."""
    if fd_limit is None:
        return max(1, max_connections), BACKLOG
    usable = max(2, fd_limit - FD_RESERVE)
    return max(1, min(max_connections, usable // 2)), max(1, min(BACKLOG, usable // 8))


def _busy_response() -> bytes:
    body = json.dumps({"error": {"code": "too_many_connections", "message": (
        "the server has as many connections open as it serves at once; retry in a "
        "second"), "requestId": None}}).encode()
    head = ("HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\n"
            f"content-length: {len(body)}\r\nretry-after: 1\r\nconnection: close\r\n\r\n")
    return head.encode() + body


LINK = "memwarden.connection"  # the scope key of a request's Link


class Link:
    """The connection a request came on, as the app sees it: whether it is still open, and
    one callback to run when it closes (what the app holds for it is let go then)."""

    __slots__ = ("open", "_on_close")

    def __init__(self) -> None:
        self.open = True
        self._on_close: Callable[[], None] | None = None

    def on_close(self, callback: Callable[[], None] | None) -> None:
        self._on_close = callback

    def closed(self) -> None:
        self.open = False
        callback, self._on_close = self._on_close, None
        if callback is not None:
            callback()


def guarded_protocol(cap: int, timeout: float) -> type:
    """uvicorn's h11 protocol with the connection cap, the whole-request deadline, a
    deadline for a client that reads nothing, and a Link in every request's scope."""
    from uvicorn.protocols.http.h11_impl import H11Protocol

    busy = _busy_response()

    class GuardedH11Protocol(H11Protocol):  # type: ignore[misc]
        _deadline: asyncio.TimerHandle | None = None
        _stall: asyncio.TimerHandle | None = None  # while the client reads nothing
        _link: Link | None = None

        def connection_made(self, transport: Any) -> None:
            super().connection_made(transport)
            self._link = link = Link()
            inner = self.app

            async def app(scope: Any, receive: Any, send: Any) -> None:
                scope[LINK] = link
                await inner(scope, receive, send)

            self.app = app  # this connection's requests only: uvicorn reads it per request
            if len(self.connections) > cap:
                # refused before reading anything, so its descriptor is free again at once
                self.connections.discard(self)
                transport.write(busy)
                transport.close()
                return
            self._arm()

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            self._unstall()
            if self._link is not None:
                self._link.closed()
            super().connection_lost(exc)

        def handle_events(self) -> None:
            before = self.cycle
            super().handle_events()
            if self.cycle is not before and self.cycle is not None \
                    and not self.cycle.response_complete:
                self._arm()  # a new request: its body gets the whole deadline too

        def on_response_complete(self) -> None:
            super().on_response_complete()
            # the next request has the deadline to arrive whole (or a closing connection
            # to hand its answer to a client that reads it)
            self._arm()

        def pause_writing(self) -> None:
            super().pause_writing()
            # the app waits for the client to read, so the request deadline is not running:
            # a client that stops reading gets this much time to start again
            if self._stall is None:
                self._stall = self.loop.call_later(timeout, self._stalled)

        def resume_writing(self) -> None:
            self._unstall()
            super().resume_writing()

        def _unstall(self) -> None:
            if self._stall is not None:
                self._stall.cancel()
                self._stall = None

        def _stalled(self) -> None:
            self._stall = None
            self.transport.abort()  # close() would wait for the unread bytes to go out

        def _arm(self) -> None:
            self._disarm()
            self._deadline = self.loop.call_later(timeout, self._expire)

        def _disarm(self) -> None:
            if self._deadline is not None:
                self._deadline.cancel()
                self._deadline = None

        def _expire(self) -> None:
            self._deadline = None
            if self.transport.is_closing():
                if self.transport.get_write_buffer_size():
                    self.transport.abort()  # closing waits for the client to read it all
                return
            cycle = self.cycle
            waiting = cycle is None or cycle.response_complete or cycle.more_body
            if not waiting:
                return  # the app is working on a whole request: its answer is on the way
            if self.transport.get_write_buffer_size():
                self.transport.abort()  # a client that reads nothing must not pin it open
            else:
                self.transport.close()

    return GuardedH11Protocol


def _say(text: str) -> None:
    """One line to standard error through the descriptor already open (opening or
    importing anything may be what just failed)."""
    try:
        os.write(2, (text + "\n").encode("utf-8", "backslashreplace"))
    except OSError:
        pass


def loop_error(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
    """The event loop's exception handler: reports and returns, never raises (an exception
    escaping it would end the loop, and the server with it)."""
    exc = context.get("exception")
    if isinstance(exc, OSError) and exc.errno in _OUT_OF:
        now = time.monotonic()
        if now - _warned[0] >= WARN_EVERY:  # asyncio retries every second: say it seldom
            _warned[0] = now
            _say(f"memwarden: warning: {context.get('message', 'out of resources')}: "
                 f"{exc.strerror}; retrying")
        return
    try:
        loop.default_exception_handler(context)
    except Exception:  # noqa: BLE001 - logging itself failed; say the least
        _say(f"memwarden: error: {context.get('message', 'event loop error')}: {exc!r}")


def plain_logging() -> None:
    """Warnings to standard error through a plain handler (set before FastMCP would add a
    rich one, which imports modules, and so opens files, when it logs a failure)."""
    root = logging.getLogger()
    if not root.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("memwarden: %(levelname)s %(name)s: "
                                               "%(message)s"))
        root.addHandler(handler)
        root.setLevel(logging.WARNING)


def serve(app: Any, host: str, port: int, max_connections: int = MAX_CONNECTIONS,
          request_timeout: float = REQUEST_TIMEOUT) -> None:
    """Serve `app` until SIGINT/SIGTERM (in-flight requests finish first)."""
    import uvicorn

    cap, backlog = budget(max_connections, raise_fd_limit())
    config = uvicorn.Config(app, host=host, port=port, log_level="warning",
                            access_log=False, lifespan="on", timeout_graceful_shutdown=30,
                            server_header=False, h11_max_incomplete_event_size=64 * 1024,
                            http=guarded_protocol(cap, request_timeout), backlog=backlog,
                            # a client on loopback could otherwise name any address it
                            # likes, and so escape the limits kept per address
                            proxy_headers=False)
    server = uvicorn.Server(config)

    async def run() -> None:
        asyncio.get_running_loop().set_exception_handler(loop_error)
        await server.serve()

    with asyncio.Runner(loop_factory=config.get_loop_factory()) as runner:
        runner.run(run())
