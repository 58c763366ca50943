"""Snippets as files, the way reporting products offer them: renderers with ``format =
"pdf"`` and ``"png"``, a CSV export of the list, a ``FileResponse`` download on a JSON view,
and a server-sent event stream (the one kind of answer no tool result can carry)."""

from __future__ import annotations

import csv
import io
import struct
import zlib
from typing import Any

from django.http import FileResponse, HttpResponse, StreamingHttpResponse
from django.urls import include, path
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework import permissions, renderers, serializers, viewsets
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.routers import SimpleRouter

from mcp_endpoint.authentication import APIKeyAuthentication, OAuth2TokenAuthentication
from tests.hosts import host_endpoint
from tests.hosts.tutorial.models import Snippet


class SnippetSerializer(serializers.ModelSerializer):  # type: ignore[type-arg]
    class Meta:
        model = Snippet
        fields = ["id", "title", "code", "language"]


class FileRenderer(renderers.BaseRenderer):
    """Bytes as they are; an error's detail (a dict) as a line of text."""

    charset = None
    render_style = "binary"

    def render(
        self, data: Any, accepted_media_type: Any = None, renderer_context: Any = None
    ) -> bytes:
        if isinstance(data, bytes):
            return data
        return str(data).encode()


class PDFRenderer(FileRenderer):
    media_type = "application/pdf"
    format = "pdf"


class PNGRenderer(FileRenderer):
    media_type = "image/png"
    format = "png"


class CSVRenderer(renderers.BaseRenderer):
    media_type = "text/csv"
    format = "csv"
    charset = "utf-8"

    def render(
        self, data: Any, accepted_media_type: Any = None, renderer_context: Any = None
    ) -> bytes:
        out = io.StringIO()
        rows = data if isinstance(data, list) else [data]
        writer = csv.DictWriter(out, fieldnames=list(rows[0]) if rows else ["detail"])
        writer.writeheader()
        writer.writerows(rows)
        return out.getvalue().encode("utf-8")


class EventStreamRenderer(renderers.BaseRenderer):
    media_type = "text/event-stream"
    format = "events"

    def render(
        self, data: Any, accepted_media_type: Any = None, renderer_context: Any = None
    ) -> bytes:
        return f"data: {data}\n\n".encode()


def printable(snippet: Snippet) -> bytes:
    """A one-page PDF of the snippet's title (enough of one for a viewer to open)."""
    text = (snippet.title or f"snippet {snippet.pk}").replace("(", "[").replace(")", "]")
    stream = f"BT /F1 18 Tf 72 720 Td ({text}) Tj ET".encode()
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
        b"/Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length %d >>\nstream\n%s\nendstream" % (len(stream), stream),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Courier >>",
    ]
    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (number, body)
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1,
        xref,
    )
    return bytes(out)


def picture(snippet: Snippet) -> bytes:
    """A PNG as wide as the snippet's longest line and as tall as its lines: grey where
    there is code."""
    lines = snippet.code.splitlines() or [""]
    width, height = max(1, max(len(line) for line in lines)), len(lines)
    raw = b"".join(
        b"\x00"
        + bytes(0x40 if x < len(line) and not line[x].isspace() else 0xFF for x in range(width))
        for line in lines
    )

    def chunk(kind: bytes, data: bytes) -> bytes:
        return (
            struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
        )

    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(raw))
        + chunk(b"IEND", b"")
    )


class SnippetFiles(viewsets.ReadOnlyModelViewSet):  # type: ignore[type-arg]
    """Snippets, and their files: a printable page, a picture of the code, a spreadsheet."""

    queryset = Snippet.objects.order_by("id")
    serializer_class = SnippetSerializer
    authentication_classes = [APIKeyAuthentication, OAuth2TokenAuthentication]
    permission_classes = [permissions.IsAuthenticated]
    pagination_class = None
    filter_backends: list[Any] = []
    throttle_classes: list[Any] = []

    @action(detail=True, renderer_classes=[PDFRenderer])
    def printable(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        """The snippet as a one-page PDF."""
        return Response(printable(self.get_object()))

    @action(detail=True, renderer_classes=[PNGRenderer])
    def picture(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        """A picture of the shape of the snippet's code."""
        return Response(picture(self.get_object()))

    @action(detail=False, renderer_classes=[CSVRenderer])
    def export(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        """Every snippet as CSV rows."""
        rows = self.get_queryset().values("id", "title", "language")
        return Response(list(rows))

    @extend_schema(responses={(200, "application/pdf"): OpenApiTypes.BINARY})
    @action(detail=True)
    def download(self, request: Request, *args: Any, **kwargs: Any) -> FileResponse:
        """The printable PDF as a download."""
        snippet = self.get_object()
        return FileResponse(
            io.BytesIO(printable(snippet)),
            as_attachment=True,
            filename=f"snippet-{snippet.pk}.pdf",
            content_type="application/pdf",
        )

    @extend_schema(responses={(200, "text/x-python"): OpenApiTypes.STR})
    @action(detail=True)
    def source(self, request: Request, *args: Any, **kwargs: Any) -> StreamingHttpResponse:
        """The snippet's code as a file, streamed line by line (no length known ahead)."""
        snippet = self.get_object()
        response = StreamingHttpResponse(
            (line.encode() for line in snippet.code.splitlines(keepends=True)),
            content_type="text/x-python; charset=utf-8",
        )
        response["Content-Disposition"] = f'attachment; filename="snippet-{snippet.pk}.py"'
        return response

    @extend_schema(responses={(200, "text/csv"): OpenApiTypes.STR})
    @action(detail=False)
    def legacy_export(self, request: Request, *args: Any, **kwargs: Any) -> HttpResponse:
        """The CSV an older system wrote: Latin-1 bytes, labelled UTF-8."""
        rows = "".join(f"{s.pk},{s.title}\r\n" for s in self.get_queryset())
        return HttpResponse(
            ("id,title,café\r\n" + rows).encode("latin-1"),
            content_type="text/csv; charset=utf-8",
        )

    @extend_schema(responses={(200, "text/event-stream"): OpenApiTypes.STR})
    @action(detail=True)
    def follow(self, request: Request, *args: Any, **kwargs: Any) -> StreamingHttpResponse:
        """The snippet's changes as they happen, from a view that also speaks JSON."""
        snippet = self.get_object()
        return StreamingHttpResponse(
            iter([f"data: {snippet.title}\n\n".encode()]), content_type="text/event-stream"
        )

    @action(detail=True, renderer_classes=[EventStreamRenderer])
    def events(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        """The snippet's changes as they happen."""
        return Response(self.get_object().title)


router = SimpleRouter()
router.register("snippets", SnippetFiles, basename="snippet")

endpoint = host_endpoint("files")
endpoint.register_router(router)

urlpatterns = [
    path("", include(router.urls)),
    path("mcp", endpoint.urls),
]
