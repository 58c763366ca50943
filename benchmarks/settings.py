"""Settings for the benchmarks: the demo host's, with the bench URL conf, no throttles and
no tool-call log (the "demo as configured" rows use ``project.settings`` itself).

The demo host's user throttle (2000 requests a minute) is sized for people, not for a load
generator: a run would be answered 429 after a second. The throttle counters are also a
shared cost of REST and MCP alike (MCP counts once per HTTP request, as REST does), so the
comparisons leave them out on both sides. The admin's log of tool calls (a database write
per call, off by default, on in the demo) has no REST counterpart, so it is off here too.
"""

from __future__ import annotations

import os

from project.settings import *  # noqa: F403
from project.settings import CACHES, MCP_ENDPOINT, REST_FRAMEWORK

ROOT_URLCONF = "benchmarks.urls"

REST_FRAMEWORK = {**REST_FRAMEWORK, "DEFAULT_THROTTLE_CLASSES": []}

MCP_ENDPOINT = {
    **MCP_ENDPOINT,
    "LOG_TOOL_CALLS": False,
    "PROTOCOL_RATE": None,
    # The opt-in cache of validated keys, for the rows that measure it.
    "API_KEY_CACHE_SECONDS": int(os.environ.get("BENCH_API_KEY_CACHE_SECONDS", "0")),
    # Each worker's memory of keys (on by default where the cache is Redis); 0 turns it off.
    "KEY_MEMORY_SECONDS": int(os.environ.get("BENCH_KEY_MEMORY_SECONDS", "60")),
    # Log records sent to clients (on, as in the demo): a legacy tools/call that accepts an
    # event stream then runs on the stream pool, in case the tool logs. BENCH_LOGGING=0
    # measures the same calls without that.
    "LOGGING": os.environ.get("BENCH_LOGGING", "1") == "1",
}
# The bench endpoints list their 500 tools whole on purpose (rows 3 and 3b).
SILENCED_SYSTEM_CHECKS = ["mcp_endpoint.W052"]

# The key cache in each worker's own memory: no round trip, but a revocation reaches the
# other workers only when their entry expires (system check mcp_endpoint.W040 says so).
if os.environ.get("BENCH_KEY_CACHE_LOCAL") == "1":
    CACHES = {**CACHES, "local": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
    MCP_ENDPOINT["CACHE"] = "local"
