import django_filters

from project.tracker.models import Task


class TaskFilter(django_filters.FilterSet):
    due_before = django_filters.DateFilter(
        field_name="due", lookup_expr="lte", label="Due on or before this date"
    )
    due_after = django_filters.DateFilter(
        field_name="due", lookup_expr="gte", label="Due on or after this date"
    )

    class Meta:
        model = Task
        fields = ["status", "priority", "project", "assignee"]
