"""Every kind's table, from the same fields as the models."""

from django.conf import settings
from django.db import migrations

from tests.hosts.generated.catalog import KINDS, class_name, fields, options


class Migration(migrations.Migration):
    initial = True

    dependencies = [migrations.swappable_dependency(settings.AUTH_USER_MODEL)]

    operations = [
        migrations.CreateModel(name=class_name(kind), fields=fields(), options=options(kind))
        for kind in KINDS
    ]
