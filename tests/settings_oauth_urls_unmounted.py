"""The demo host with its OAuth URLs left out of the URLconf (a common set-up mistake).

``mcp_endpoint.E070`` reports exactly that at start-up; it is silenced here, as a host that
deploys without running the checks effectively does, so the server starts and
``mcp_doctor`` meets the mistake from outside.
"""

from project.settings import *  # noqa: F403

ROOT_URLCONF = "tests.urls_oauth_urls_unmounted"
SILENCED_SYSTEM_CHECKS = ["mcp_endpoint.E070"]
