"""The demo host with its OAuth URLs left out of the URLconf (a common set-up mistake)."""

from project.settings import *  # noqa: F403

ROOT_URLCONF = "tests.urls_no_oauth"
