"""The fixture endpoint the official MCP conformance suite runs against.

``fixture_endpoint`` makes the endpoint and the tools, resources and prompts the suite's
scenarios of every revision expect; ``modern`` adds what the 2026-07-28 scenarios call,
``tasks`` the long-running tools of the tasks extension. Importing this package
registers them all.
"""

from project.conformance import modern, tasks
from project.conformance.fixture_endpoint import fixture

__all__ = ["fixture", "modern", "tasks"]
