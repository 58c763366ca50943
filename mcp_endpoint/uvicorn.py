"""``python -m mcp_endpoint.uvicorn``: uvicorn's command line, with its listening socket
known as what it is, so that every connection it accepts sends without delay.

asyncio turns Nagle's algorithm off (``TCP_NODELAY``) on an accepted connection only when
the listening socket's Python object says it is TCP (``proto == IPPROTO_TCP``). uvicorn
binds that socket itself when it runs several workers (``--workers N``, whose supervisor
hands the socket down; ``--reload`` too), and makes the object without a protocol (from a
descriptor, ``--fd``: as a Unix socket). Its connections then keep Nagle on, and on Linux
an answer written in two pieces (the headers, then the body, as uvicorn writes every ASGI
response) waits for the client's delayed acknowledgement before the body goes: about
40 ms added to every request after the first on a kept-alive connection, whatever the
application does. With one worker uvicorn lets asyncio bind, and nothing is delayed
(except with ``--fd``, whose one-worker socket uvicorn makes inside its server, out of
reach here).

Here the socket uvicorn binds is made again from its descriptor, whose family, type and
protocol Python reads from the kernel; nothing else of uvicorn changes, and every option
of its command line works as documented::

    python -m mcp_endpoint.uvicorn myproject.asgi:application --workers 4

:func:`test_upstream_still_needs_it` (run by this app's tests) fails the day uvicorn makes
the socket with its protocol, and this module can go.
"""

from __future__ import annotations

import socket
import sys

import uvicorn.config
from uvicorn.main import main

__all__ = ["bind_socket", "main"]

_uvicorn_bind_socket = uvicorn.config.Config.bind_socket


def bind_socket(self: uvicorn.config.Config) -> socket.socket:
    """:meth:`uvicorn.config.Config.bind_socket`, returning the same descriptor as a
    socket whose family, type and protocol are the kernel's (a TCP socket says TCP; a
    Unix one, ``--uds``, stays what it was)."""
    known = socket.socket(fileno=_uvicorn_bind_socket(self).detach())
    known.set_inheritable(True)
    return known


uvicorn.config.Config.bind_socket = bind_socket  # type: ignore[method-assign]

if __name__ == "__main__":
    sys.exit(main())
