"""The test processes' own database (tests/conftest.py): a copy of the run's migrated
template, which must be what a migrate of its own would have made."""

from __future__ import annotations

import pytest
from django.apps import apps
from django.contrib.auth.models import Permission
from django.contrib.contenttypes.models import ContentType
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from tests.live_server import TEMPLATE_PREFIX

pytestmark = pytest.mark.django_db


def test_every_migration_is_applied() -> None:
    executor = MigrationExecutor(connection)
    assert executor.migration_plan(executor.loader.graph.leaf_nodes()) == []


def test_every_model_has_its_table_and_every_app_its_rows() -> None:
    tables = set(connection.introspection.table_names())
    models = [
        model
        for model in apps.get_models(include_auto_created=True)
        if model._meta.managed and not model._meta.proxy
    ]
    assert {model._meta.db_table for model in models} <= tables
    # What migrate's post_migrate signal writes: a content type and permissions per model.
    for model in models:
        kind = ContentType.objects.get_for_model(model, for_concrete_model=False)
        if not model._meta.auto_created:
            assert Permission.objects.filter(content_type=kind).exists(), model


def test_on_postgresql_the_database_is_created_from_the_template() -> None:
    if connection.vendor != "postgresql":
        pytest.skip("SQLite's in-memory test database is filled from the template instead")
    assert connection.settings_dict["TEST"]["TEMPLATE"].startswith(TEMPLATE_PREFIX)
