"""The demo host with its call log written through a connection of its own: ``ToolCall``
goes to the alias ``calllog`` by a router, everything else to ``default``; both aliases
are the SQLite file ``ROUTED_DB`` (tests/test_calllog_router.py). Rows that refer to a
user need that user's table in their database, so a log on another alias is most often
another connection to the same database; Django asks such a router to allow the relation.
"""

import os
from typing import Any

from project.settings import *  # noqa: F403

DATABASES = {
    alias: {"ENGINE": "django.db.backends.sqlite3", "NAME": os.environ["ROUTED_DB"]}
    for alias in ("default", "calllog")
}
DATABASE_ROUTERS = ["tests.settings_calllog_router.CallLogRouter"]


def is_call_log(model: Any) -> bool:
    return (model._meta.app_label, model._meta.model_name) == ("mcp_endpoint", "toolcall")


class CallLogRouter:
    """The call log's rows through ``calllog``; every other model left to the default."""

    def db_for_read(self, model: type[Any], **hints: Any) -> str | None:
        return "calllog" if is_call_log(model) else None

    def db_for_write(self, model: type[Any], **hints: Any) -> str | None:
        return "calllog" if is_call_log(model) else None

    def allow_relation(self, obj1: Any, obj2: Any, **hints: Any) -> bool | None:
        return True if is_call_log(obj1) or is_call_log(obj2) else None

    def allow_migrate(self, db: str, app_label: str, **hints: Any) -> bool:
        return db == "default"  # one database: migrated once
