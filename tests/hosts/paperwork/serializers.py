"""Serializers written the way a large product writes them, not the way a schema wants."""

from __future__ import annotations

import datetime
import decimal
from typing import Any

from rest_framework import serializers

from tests.hosts.paperwork.models import ApplicationSettings, Correspondent, Document, Note, Tag


def asked_for(serializer: serializers.BaseSerializer[Any], parameter: str) -> bool:
    request = serializer.context.get("request")
    return request is not None and request.query_params.get(parameter) in {"1", "true"}


class TagSerializer(serializers.ModelSerializer[Tag]):
    # A set, which REST's encoder writes as a list; marked required by the schema, and only
    # there when ?full_perms=true asks for it.
    permissions = serializers.SerializerMethodField()

    class Meta:
        model = Tag
        fields = ["id", "name", "colour", "permissions"]

    def get_permissions(self, tag: Tag) -> set[str]:
        return {"paperwork.change_tag", "paperwork.view_tag", f"paperwork.tag_{tag.pk}"}

    def to_representation(self, instance: Tag) -> dict[str, Any]:
        data = super().to_representation(instance)
        if not asked_for(self, "full_perms"):
            data.pop("permissions")
        return dict(data)


class NoteSerializer(serializers.ModelSerializer[Note]):
    class Meta:
        model = Note
        fields = ["id", "note", "created"]
        read_only_fields = ["id", "created"]


class DocumentSerializer(serializers.ModelSerializer[Document]):
    # A type hint that says a string where the method returns a number.
    notes_count = serializers.SerializerMethodField()
    # Values the serializer leaves to the encoder: a datetime, a Decimal, a UUID.
    last_note_at = serializers.SerializerMethodField()
    amount_with_tax = serializers.SerializerMethodField()
    archive_id = serializers.SerializerMethodField()

    class Meta:
        model = Document
        fields = [
            "id",
            "uuid",
            "title",
            "content",
            "amount",
            "created",
            "correspondent",
            "tags",
            "notes_count",
            "last_note_at",
            "amount_with_tax",
            "archive_id",
        ]

    def get_notes_count(self, document: Document) -> str:
        return document.notes.count()  # type: ignore[return-value]

    def get_last_note_at(self, document: Document) -> datetime.datetime | None:
        last = document.notes.order_by("-created").first()
        return last.created if last is not None else None

    def get_amount_with_tax(self, document: Document) -> decimal.Decimal | None:
        if document.amount is None:
            return None
        return (document.amount * decimal.Decimal("1.2")).quantize(decimal.Decimal("0.01"))

    def get_archive_id(self, document: Document) -> Any:
        return document.uuid

    def to_representation(self, instance: Document) -> dict[str, Any]:
        data = dict(super().to_representation(instance))
        # The content only when asked for: documents are long.
        if not asked_for(self, "full_content"):
            data.pop("content")
        return data


class StatisticsSerializer(serializers.Serializer[Any]):
    documents_total = serializers.IntegerField()
    inbox_tag = serializers.IntegerField(allow_null=True)


class CorrespondentSerializer(serializers.ModelSerializer[Correspondent]):
    class Meta:
        model = Correspondent
        fields = ["id", "name"]


class ApplicationSettingsSerializer(serializers.ModelSerializer[ApplicationSettings]):
    class Meta:
        model = ApplicationSettings
        fields = ["id", "app_title"]
