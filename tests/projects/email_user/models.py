"""A user model signed in by email: ``USERNAME_FIELD = "email"`` and no ``username``."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.base_user import AbstractBaseUser, BaseUserManager
from django.contrib.auth.models import PermissionsMixin
from django.db import models


class EmailUserManager(BaseUserManager["EmailUser"]):
    def create_user(self, email: str, password: str | None = None, **extra: Any) -> EmailUser:
        user = self.model(email=self.normalize_email(email), **extra)
        user.set_password(password)
        user.save(using=self._db)
        return user

    def create_superuser(self, email: str, password: str | None = None, **extra: Any) -> EmailUser:
        return self.create_user(email, password, is_staff=True, is_superuser=True, **extra)


class EmailUser(AbstractBaseUser, PermissionsMixin):
    email = models.EmailField("email address", unique=True)
    is_staff = models.BooleanField(default=False)
    is_active = models.BooleanField(default=True)

    USERNAME_FIELD = "email"
    EMAIL_FIELD = "email"

    objects = EmailUserManager()

    def __str__(self) -> str:
        return self.email


class Note(models.Model):
    """A user's note: what the host's REST API and its MCP tools serve."""

    owner = models.ForeignKey(EmailUser, on_delete=models.CASCADE, related_name="notes")
    title = models.CharField(max_length=100)
    body = models.TextField(blank=True)
    created = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return self.title
