"""The demo host with its OAuth URLs left out of the URLconf (a common set-up mistake)."""

from project.settings import *  # noqa: F403

ROOT_URLCONF = "tests.urls_no_oauth"

# The check that names this mistake at start-up is silenced here so the host can start at
# all: mcp_doctor must find the same mistake from outside, as a client meets it.
SILENCED_SYSTEM_CHECKS = ["mcp_endpoint.E070"]
