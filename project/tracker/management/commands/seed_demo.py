"""Demo data: alice, bob and an admin, four projects, about fifty tasks and some comments.

Running it again changes nothing: every object is found by its natural key first.
"""

from __future__ import annotations

import datetime
import random
from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand
from django.db import transaction
from django.utils import timezone

from project.tracker.models import Comment, Project, Task

USERS = [
    # username, password, superuser
    ("alice", "alice-demo-password", False),
    ("bob", "bob-demo-password", False),
    ("admin", "admin-demo-password", True),
]
PROJECTS = [
    # name, owner, members
    ("Website relaunch", "alice", ["bob"]),
    ("Mobile app", "alice", []),
    ("Office move", "bob", ["alice"]),
    ("Hiring", "bob", []),
]
VERBS = ["Draft", "Review", "Fix", "Plan", "Test", "Ship", "Document", "Design", "Order", "Call"]
THINGS = [
    "landing page",
    "login flow",
    "release notes",
    "budget",
    "moving boxes",
    "job advert",
    "push notifications",
    "analytics",
    "floor plan",
    "interview questions",
    "invoices",
    "accessibility audit",
    "search page",
]


class Command(BaseCommand):
    help = "Create the demo users, projects, tasks and comments (idempotent)."

    @transaction.atomic
    def handle(self, *args: Any, **options: Any) -> None:
        users = {}
        User = get_user_model()
        for username, password, superuser in USERS:
            user, created = User.objects.get_or_create(
                username=username,
                defaults={
                    "email": f"{username}@example.com",
                    "is_staff": superuser,
                    "is_superuser": superuser,
                },
            )
            if created:
                user.set_password(password)
                user.save()
            users[username] = user
        rng = random.Random(7)
        today = timezone.localdate()
        created_tasks = 0
        for index, (name, owner, members) in enumerate(PROJECTS):
            project, _ = Project.objects.get_or_create(name=name, owner=users[owner])
            project.members.add(*(users[m] for m in members))
            people = [users[owner], *(users[m] for m in members)]
            for number in range(13 if index < 2 else 12):
                title = f"{rng.choice(VERBS)} {rng.choice(THINGS)} #{number + 1}"
                status = rng.choice(["open", "open", "in_progress", "done"])
                offset = rng.randint(-20, 40)
                due = today + datetime.timedelta(days=offset) if rng.random() < 0.8 else None
                priority = rng.randint(1, 4)
                assignee = rng.choice([*people, None])
                commenter = rng.choice(people)
                task, made = Task.objects.get_or_create(
                    project=project,
                    title=title,
                    defaults={
                        "description": f"{title} for {name.lower()}.",
                        "status": status,
                        "priority": priority,
                        "due": due,
                        "assignee": assignee,
                    },
                )
                created_tasks += int(made)
                if made and number % 3 == 0:
                    Comment.objects.create(
                        task=task, author=commenter, body=f"Started on {title.lower()}."
                    )
        self.stdout.write(
            f"Demo data ready: {User.objects.count()} users, "
            f"{Project.objects.count()} projects, {Task.objects.count()} tasks "
            f"({created_tasks} new), {Comment.objects.count()} comments."
        )
