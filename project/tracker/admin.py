from django.contrib import admin

from project.tracker.models import Comment, Project, Task


@admin.register(Project)
class ProjectAdmin(admin.ModelAdmin[Project]):
    list_display = ["name", "owner", "created"]
    filter_horizontal = ["members"]


@admin.register(Task)
class TaskAdmin(admin.ModelAdmin[Task]):
    list_display = ["title", "project", "status", "priority", "due", "assignee"]
    list_filter = ["status", "priority", "project"]
    search_fields = ["title", "description"]


@admin.register(Comment)
class CommentAdmin(admin.ModelAdmin[Comment]):
    list_display = ["task", "author", "created"]
