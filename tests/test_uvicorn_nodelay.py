"""``python -m mcp_endpoint.uvicorn``: the socket uvicorn binds for several workers (or a
descriptor) says it is TCP, so that asyncio turns Nagle's algorithm off on each connection
it accepts, as it does for one worker.

No timing: what decides the ~40 ms wait is whether the accepted connection has
``TCP_NODELAY``, read here from the server's side of a real loopback connection. The live
servers of the suite (``tests/live_server.UvicornServer``) run uvicorn through the module.
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import uvicorn.config

from mcp_endpoint import uvicorn as nodelay


async def app(scope: object, receive: object, send: object) -> None:  # pragma: no cover
    """Never called: only the listening socket is looked at."""


def config(**options: object) -> uvicorn.config.Config:
    return uvicorn.config.Config(app, log_level="warning", **options)  # type: ignore[arg-type]


@pytest.fixture
def sockets() -> Iterator[list[socket.socket]]:
    made: list[socket.socket] = []
    yield made
    for sock in made:
        sock.close()


def accepted_nodelay(listener: socket.socket) -> int:
    """``TCP_NODELAY`` on the server's side of a connection that asyncio accepts from
    ``listener``, as uvicorn's server does (``loop.create_server(sock=...)``)."""
    seen: list[int] = []

    class Accepted(asyncio.Protocol):
        def connection_made(self, transport: asyncio.BaseTransport) -> None:
            sock = transport.get_extra_info("socket")
            seen.append(sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
            transport.close()

    async def connect() -> None:
        listener.listen()
        server = await asyncio.get_running_loop().create_server(Accepted, sock=listener)
        host, port = listener.getsockname()[:2]
        _reader, writer = await asyncio.open_connection(host, port)
        for _ in range(200):
            if seen:
                break
            await asyncio.sleep(0.01)
        writer.close()
        server.close()
        await server.wait_closed()

    asyncio.run(connect())
    assert seen, "no connection was accepted"
    return seen[0]


def test_upstream_still_needs_it(sockets: list[socket.socket]) -> None:
    """uvicorn's own socket for several workers has no protocol, and its connections keep
    Nagle on. The day this fails, uvicorn has mended it: mcp_endpoint.uvicorn can go."""
    sock = nodelay._uvicorn_bind_socket(config(host="127.0.0.1", port=0))
    sockets.append(sock)
    assert sock.proto != socket.IPPROTO_TCP
    assert accepted_nodelay(sock) == 0


def test_the_bound_socket_says_tcp(sockets: list[socket.socket]) -> None:
    sock = nodelay.bind_socket(config(host="127.0.0.1", port=0))
    sockets.append(sock)
    assert (sock.family, sock.type, sock.proto) == (
        socket.AF_INET,
        socket.SOCK_STREAM,
        socket.IPPROTO_TCP,
    )
    # Still bound where uvicorn bound it, and handed down to the workers as uvicorn's is.
    assert sock.getsockname()[0] == "127.0.0.1"
    assert sock.getsockname()[1] > 0
    assert sock.get_inheritable()
    assert accepted_nodelay(sock) == 1


def test_a_descriptor_is_read_as_the_tcp_socket_it_is(sockets: list[socket.socket]) -> None:
    """``--fd``: uvicorn takes any descriptor for a Unix socket."""
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    sockets.append(listener)
    assert nodelay._uvicorn_bind_socket(config(fd=listener.fileno())).family == socket.AF_UNIX

    sock = nodelay.bind_socket(config(fd=listener.fileno()))
    sockets.append(sock)
    assert (sock.family, sock.proto) == (socket.AF_INET, socket.IPPROTO_TCP)
    assert sock.getsockname() == listener.getsockname()
    assert accepted_nodelay(sock) == 1


def test_a_unix_socket_is_left_as_it_is(tmp_path: Path, sockets: list[socket.socket]) -> None:
    sock = nodelay.bind_socket(config(uds=str(tmp_path / "web.sock")))
    sockets.append(sock)
    assert sock.family == socket.AF_UNIX
    assert sock.getsockname() == str(tmp_path / "web.sock")


def test_uvicorn_binds_through_it() -> None:
    """Importing the module is what ``python -m mcp_endpoint.uvicorn`` does before
    uvicorn's command line runs: every socket uvicorn binds goes through it."""
    bind: Callable[..., socket.socket] = uvicorn.config.Config.bind_socket
    assert bind is nodelay.bind_socket
    assert nodelay.main.name == "main"
