"""A view's response as a tool result: compact text, ``structuredContent``, a file as an
embedded resource, or a tool error."""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, unquote, urlsplit

from django.http import HttpResponseBase, StreamingHttpResponse

from mcp_endpoint import client_logging
from mcp_endpoint.protocol.content import EmbeddedResource, ResourceContents, Text, ToolResult
from mcp_endpoint.protocol.jsonrpc import Encoded
from mcp_endpoint.rest_framework.descriptions import counted
from mcp_endpoint.rest_framework.spec import ITEMS_ARGUMENT, JSON
from mcp_endpoint.tools import ToolError

if TYPE_CHECKING:
    from mcp_endpoint.credential import Credential
    from mcp_endpoint.rest_framework.spec import ActionSpec

logger = logging.getLogger("mcp_endpoint.rest_framework")

# Left out of the text rendering (they stay in structuredContent): noise for a model.
BOOKKEEPING_FIELDS = {"created", "updated", "modified", "created_at", "updated_at", "url"}
SKIPPED_IN_TEXT = BOOKKEEPING_FIELDS | {"id", "pk"}
# Pages a model reads as they are: their text is the result, without a resource around it.
PLAIN_TEXT = frozenset({"text/html", "text/plain"})
# Answers that go on for as long as the view likes: no tool result can hold one.
EVENT_STREAMS = frozenset({"text/event-stream", "multipart/x-mixed-replace"})


def result_from(
    spec: ActionSpec,
    response: HttpResponseBase,
    kwargs: Mapping[str, str],
    *,
    credential: Credential | None,
    max_items: int,
    refusal: str | None = None,
    max_bytes: int = 5 * 1024 * 1024,
    uri: str = "",
) -> ToolResult:
    """The result of a 2xx answer; raises the :class:`ToolError` of any other.

    ``uri`` names a file the action answers with (its REST URL), and ``max_bytes`` is the
    largest such file that is returned.
    """
    status = response.status_code
    media = media_type_of(response)
    if (
        200 <= status < 300
        and status != 204
        and (spec.media_type != JSON or (media and not is_json(media)))
    ):
        # A page, a file or a download (a FileResponse, say), whatever the renderers.
        return file_success(response, media or spec.media_type, uri, max_bytes)
    data, text = rest_json(response, media)
    if 200 <= status < 300:
        return success(spec, status, data, kwargs, max_items, text)
    raise error_from(spec, status, data, response, credential, refusal)


def rest_json(response: HttpResponseBase, media: str) -> tuple[Any, str | None]:
    """The JSON the REST API sends for this answer, parsed from the very bytes it sends, and
    those bytes as text when the answer can carry them as they are (see :func:`spliceable`).

    A DRF ``Response`` is rendered by the renderer content negotiation picked for it, with
    the view's own encoder: what a REST client parses is what the tool returns (a ``set``
    as a list, datetimes as DRF writes them, decimals as ``COERCE_DECIMAL_TO_STRING`` says,
    a host's renderer that camel-cases keys). Not the serializer's data, which only that
    encoder knows how to write. An answer that is not JSON (an error page) gives None.
    """
    if response.status_code == 204:
        return None, None
    render = getattr(response, "render", None)
    if render is not None and not getattr(response, "is_rendered", True):
        render()
    if (media and not is_json(media)) or isinstance(response, StreamingHttpResponse):
        return None, None
    content: bytes = getattr(response, "content", b"")
    if not content:
        return None, None
    finite = True

    def constant(name: str) -> float:
        nonlocal finite
        finite = False
        return float(name)

    try:
        text: str | None = content.decode("utf-8")
    except UnicodeDecodeError:
        text = None  # JSON in another encoding (UTF-16, say): parsed, never spliced
    try:
        # The standard library, not orjson: orjson reads an integer past 64 bits (which
        # DRF's encoder writes) as a float, and the result would differ from REST's.
        data = json.loads(content if text is None else text, parse_constant=constant)
    except ValueError as exc:
        raise ToolError(
            "The view's renderer wrote an answer that is not JSON", code="internal_error"
        ) from exc
    return data, text if text is not None and finite and spliceable(text) else None


def spliceable(text: str) -> bool:
    """Whether JSON text (parsed already, so valid, and without NaN or Infinity) can be
    sent in an answer as it is: on one line, since SSE sends an answer as one ``data:``
    line. Only whitespace can break a line of JSON: an indenting renderer's answer is
    encoded again."""
    return "\n" not in text and "\r" not in text


def media_type_of(response: HttpResponseBase) -> str:
    """The type of the answer; for a DRF ``Response`` not rendered yet (whose header still
    says text/html), the type its renderer will give it."""
    declared: Any
    if getattr(response, "is_rendered", True):
        declared = response.get("Content-Type", "")
    else:
        renderer = getattr(response, "accepted_renderer", None)
        declared = getattr(response, "content_type", None) or getattr(renderer, "media_type", "")
    return str(declared or "").split(";", 1)[0].strip().lower()


def is_json(media: str) -> bool:
    return media == JSON or media.endswith("+json")


def file_success(response: HttpResponseBase, media: str, uri: str, max_bytes: int) -> ToolResult:
    """A page (``text/html``, ``text/plain``) as its text; any other file (a PDF, an image,
    a CSV export) as an embedded resource at ``uri``: text for a text type, else the bytes
    (base64 in ``blob``). Never a part of a file: one over ``max_bytes`` is an error."""
    if media in EVENT_STREAMS:
        raise ToolError(
            f"The action answered with a stream ({media}), which a tool result cannot carry",
            code="internal_error",
        )
    body = response_bytes(response, max_bytes)
    charset = getattr(response, "charset", None) or "utf-8"
    text: str | None = None
    if media.startswith("text/") or is_json(media):
        try:
            text = body.decode(charset)
        except (UnicodeDecodeError, LookupError):
            text = None  # not the text it says it is: passed on as bytes
    if text is not None and media in PLAIN_TEXT:
        return ToolResult(content=[Text(text)])
    name = attachment_name(response)
    about = f"{name}: " if name else ""
    about += f"{media}, {counted(len(body), 'byte', 'bytes')}, attached as a resource"
    about += f" ({uri})." if uri else "."
    resource = (
        ResourceContents(uri=uri, text=text, mime_type=media)
        if text is not None
        else ResourceContents(uri=uri, blob=body, mime_type=media or None)
    )
    return ToolResult(content=[Text(about), EmbeddedResource(resource)])


def response_bytes(response: HttpResponseBase, max_bytes: int) -> bytes:
    """The whole body of the view's answer, streamed or not, or :class:`ToolError` when it
    is over ``max_bytes`` (read no further than that)."""
    declared = response.get("Content-Length", "")
    if declared.isdigit() and int(declared) > max_bytes:
        close_file(response)
        raise too_large(max_bytes, int(declared))
    if isinstance(response, StreamingHttpResponse):
        chunks: list[bytes] = []
        size = 0
        try:
            # Iterating the response, not its streaming_content: Django maps an async
            # iterator's chunks for a synchronous reader there.
            for chunk in response:
                data = chunk if isinstance(chunk, bytes) else bytes(chunk)
                size += len(data)
                if size > max_bytes:
                    raise too_large(max_bytes, None)
                chunks.append(data)
        finally:
            close_file(response)
        return b"".join(chunks)
    render = getattr(response, "render", None)
    if render is not None and not getattr(response, "is_rendered", True):
        render()
    content: bytes = getattr(response, "content", b"")
    if len(content) > max_bytes:
        raise too_large(max_bytes, len(content))
    return content


def close_file(response: HttpResponseBase) -> None:
    # The file a FileResponse streams. Not response.close(): that sends request_finished,
    # which closes the database connection under the call's transaction.
    file = getattr(response, "file_to_stream", None)
    if file is not None and hasattr(file, "close"):
        file.close()


def too_large(max_bytes: int, size: int | None) -> ToolError:
    told = f" ({counted(size, 'byte', 'bytes')})" if size is not None else ""
    details: dict[str, Any] = {"max_bytes": max_bytes}
    if size is not None:
        details["size"] = size
    return ToolError(
        f"The file the action answered with is larger{told} than this endpoint returns "
        f"({counted(max_bytes, 'byte', 'bytes')}, MAX_BINARY_RESULT_BYTES); fetch it from "
        "the REST API instead",
        code="too_large",
        **details,
    )


def attachment_name(response: HttpResponseBase) -> str:
    """The file name a ``Content-Disposition`` header gives, if any."""
    disposition = response.get("Content-Disposition", "")
    match = re.search(r"filename\*=(?:UTF-8'')?([^;]+)|filename=\"?([^\";]+)", disposition)
    if match is None:
        return ""
    encoded, plain = match.groups()
    return unquote(encoded.strip()) if encoded else plain.strip()


def success(
    spec: ActionSpec,
    status: int,
    data: Any,
    kwargs: Mapping[str, str],
    max_items: int,
    text: str | None = None,
) -> ToolResult:
    """The result of a 2xx answer: ``data`` as ``structuredContent``, and a compact text.

    ``text`` is the REST answer's own JSON (:func:`rest_json`): the structured content is
    the parsed object, carrying that text, which the answer splices in as it is rather
    than encoding the object again.
    """
    if status == 204 or data is None:
        target = " ".join(kwargs.values())
        verb = "Deleted" if spec.action == "destroy" else "Done:"
        noun = spec.singular.replace("_", " ")
        return ToolResult(content=[Text(f"{verb} {noun} {target}".strip() + ".")])
    # ``data`` is parsed from the REST answer's bytes: plain JSON, sent on as it is.
    if isinstance(data, list):
        note = None
        if len(data) > max_items:
            note = (
                f"[showing the first {max_items} of "
                f"{counted(len(data), spec.item_singular, spec.item_plural)}; narrow the "
                "query with filters or search]"
            )
            data = data[:max_items]
            text = None  # not the answer REST sent any more
        structured: dict[str, Any] = {"results": data}
        if text is not None:
            structured = Encoded(structured, '{"results":' + text + "}")
        rendered = render_list(spec, data, None, note)
    elif isinstance(data, dict):
        structured = data if text is None else Encoded(data, text)
        if isinstance(data.get("results"), list):
            rendered = render_list(spec, data["results"], data, None)
        else:
            rendered = render_object(spec.item_singular, data)
    else:
        structured = {"results": data}
        rendered = json.dumps(data, ensure_ascii=False, separators=(",", ":"), default=str)
    return ToolResult(content=[Text(rendered)], structured=structured)


def error_from(
    spec: ActionSpec,
    status: int,
    data: Any,
    response: HttpResponseBase,
    credential: Credential | None,
    refusal: str | None = None,
) -> ToolError:
    """The tool error for a 4xx or 5xx answer; ``refusal`` says why the view could not
    authenticate the caller, when it could not."""
    detail = _detail(data)
    if status == 400:
        fields = field_errors(data)
        if spec.body_list and not (isinstance(data, dict) and "non_field_errors" in data):
            # The body was the "items" argument: its messages are that argument's, by item.
            fields = {ITEMS_ARGUMENT: _field_messages(data)}
        return ToolError("The arguments were refused", code="invalid_arguments", fields=fields)
    if status == 404:
        return ToolError(
            detail or f"No such {spec.singular.replace('_', ' ')}, or it is not visible to you.",
            code="not_found",
        )
    if status == 409:
        return ToolError(detail or "The request conflicts with the current state", code="conflict")
    if status == 429:
        retry = response.get("Retry-After")
        return ToolError(
            detail or "Rate limit reached",
            code="throttled",
            retry_after=int(retry) if retry and retry.isdigit() else None,
        )
    if status in (401, 403):
        if refusal is not None:
            return ToolError(
                f"{refusal}: it cannot authenticate the credential this call carries",
                code="permission_denied",
                view_detail=detail,
            )
        scopes = spec.required_scopes
        granted = credential.scopes if credential is not None else None
        if scopes and granted is not None and not scopes <= granted:
            return ToolError(
                f"This tool needs the scope(s) {' '.join(sorted(scopes))}",
                code="insufficient_scope",
                required_scopes=sorted(scopes),
                granted_scopes=sorted(granted),
            )
        return ToolError(
            detail or "You do not have permission to do this", code="permission_denied"
        )
    logger.error(
        "tool %s: the view answered %s: %s",
        spec.name,
        status,
        detail,
        extra=client_logging.SERVER_ONLY,
    )
    return ToolError("Internal error running tool", code="internal_error")


def _detail(data: Any) -> str:
    if isinstance(data, dict) and "detail" in data:
        return str(data["detail"])
    if isinstance(data, str):
        return data
    return ""


def field_errors(data: Any) -> dict[str, Any]:
    if isinstance(data, dict):
        return {str(k): _field_messages(v) for k, v in data.items()}
    if isinstance(data, list):
        return {"non_field_errors": [str(m) for m in data]}
    return {"non_field_errors": [str(data)]}


def _field_messages(value: Any) -> Any:
    """One field's messages as strings; a nested serializer's errors keep their shape, as in
    the REST answer (``{"address": {"city": [...]}}``, ``{"items": {"1": {...}}}``)."""
    if isinstance(value, dict):
        return {str(k): _field_messages(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_field_messages(m) if isinstance(m, dict | list) else str(m) for m in value]
    return [str(value)]


def render_object(noun: str, data: Mapping[str, Any]) -> str:
    """One line naming the object's id, then its short fields: compact, not the JSON."""
    return _render_object(noun, noun.replace("_", " ").capitalize(), data)


def _render_object(noun: str, label: str, data: Mapping[str, Any]) -> str:
    # ``label``, the noun as the line starts with it, is worked out once for a whole list.
    ident = data.get("id", data.get("pk"))
    head = f"{label} {ident}" if ident is not None else noun
    parts = []
    for key, value in data.items():
        if value is None or key in SKIPPED_IN_TEXT:
            continue
        if isinstance(value, str):
            text = value
        elif isinstance(value, dict):
            text = str(value.get("id", "{…}"))
        elif isinstance(value, list):
            text = ",".join(
                str(v.get("id", "…") if isinstance(v, dict) else v) for v in value[:10]
            ) + ("…" if len(value) > 10 else "")
        else:
            text = str(value)
        if not text:
            continue
        if len(text) > 80:
            text = text[:77] + "…"
        if " " in text or '"' in text:
            text = '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
        parts.append(f"{key}={text}")
    return f"{head}: {', '.join(parts)}" if parts else head


def next_page_hint(spec: ActionSpec, next_url: str) -> str:
    """Where the next page is, as the argument to pass: ``page=3``, ``offset=20``,
    ``cursor="cD0y..."``, read from the paginator's own link to it."""
    query = parse_qs(urlsplit(next_url).query)
    for name in spec.page_arguments:
        values = query.get(name)
        if values:
            value = values[0]
            shown = value if value.isdigit() else json.dumps(value)
            return f"More on the next page: call again with {name}={shown}."
    return "More on the next page."


def render_list(
    spec: ActionSpec,
    items: Sequence[Any],
    envelope: Mapping[str, Any] | None,
    note: str | None,
) -> str:
    count = envelope.get("count") if envelope is not None else None
    if isinstance(count, int):
        head = (
            f"{counted(count, spec.item_singular, spec.item_plural)} in all; "
            f"{len(items)} on this page."
        )
    else:
        head = f"{counted(len(items), spec.item_singular, spec.item_plural)}."
    if envelope is not None and envelope.get("next"):
        head += " " + next_page_hint(spec, str(envelope["next"]))
    noun = spec.item_singular
    label = noun.replace("_", " ").capitalize()
    lines = [head]
    lines += [
        "- " + (_render_object(noun, label, item) if isinstance(item, dict) else str(item))
        for item in items
    ]
    if note:
        lines.append(note)
    return "\n".join(lines)
