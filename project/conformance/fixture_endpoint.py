"""The fixture endpoint the official MCP conformance suite runs against.

The suite's server scenarios expect an "everything" server: tools, resources and prompts
with fixed names and fixed answers. They are registered here on an endpoint of their own,
mounted at ``/conformance/mcp`` (see ``project/urls.py``), so the product's ``/mcp`` keeps
only the product's tools. The endpoint needs no credential and no database rows, so it
answers loopback clients only: from anywhere else it would be an open door to the task
workers the product's users share.

``tests/test_conformance.py`` starts the host and runs the suite against it; which
scenarios still fail, and why, is in ``tests/conformance/expected-failures-*.yml``.
"""

from __future__ import annotations

import io
import struct
import time
import wave
import zlib
from pathlib import Path
from typing import Annotated, Any

from pydantic import Field

from mcp_endpoint.context import Context
from mcp_endpoint.endpoint import Endpoint
from mcp_endpoint.prompts import PromptArgument
from mcp_endpoint.protocol.content import (
    Audio,
    EmbeddedResource,
    Image,
    Message,
    ResourceContents,
    Text,
    ToolResult,
)
from mcp_endpoint.tools import Tool

fixture = Endpoint(
    "conformance",
    require_credential=False,
    # Anonymous, so only the suite on the same machine may call it (403 otherwise).
    loopback_only=True,
    # The json-schema-2020-12 scenario checks that $defs and $ref reach the client intact.
    portable_schemas=False,
    server_name="mcp-endpoint-conformance-fixture",
    server_title="Conformance fixture",
    server_version="1.0.0",
    instructions="A fixture for the MCP conformance suite; its tools do nothing useful.",
    instructions_template="",
    # The suite sends a few hundred requests in a minute from one address.
    throttle_classes=[],
    log_tool_calls=False,
)


# -- small media, built in code --------------------------------------------------------


def _png_chunk(kind: bytes, data: bytes) -> bytes:
    body = kind + data
    return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body) & 0xFFFFFFFF)


def make_png(red: int = 255, green: int = 0, blue: int = 0) -> bytes:
    """A valid 1x1 RGB PNG of one colour."""
    header = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)  # 1x1, 8-bit, truecolour
    scanline = bytes([0, red, green, blue])  # filter type 0, then one pixel
    return (
        b"\x89PNG\r\n\x1a\n"
        + _png_chunk(b"IHDR", header)
        + _png_chunk(b"IDAT", zlib.compress(scanline))
        + _png_chunk(b"IEND", b"")
    )


def make_wav(milliseconds: int = 100, rate: int = 8000) -> bytes:
    """A valid mono 16-bit PCM WAV of silence."""
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(rate)
        out.writeframes(b"\x00\x00" * (rate * milliseconds // 1000))
    return buffer.getvalue()


PNG = make_png()
WAV = make_wav()


# -- tools -------------------------------------------------------------------------------


@fixture.tool(name="test_simple_text", description="Returns a simple text response")
def simple_text() -> str:
    return "This is a simple text response for testing."


@fixture.tool(name="test_image_content", description="Returns a 1x1 PNG image")
def image_content() -> Image:
    return Image(PNG, "image/png")


@fixture.tool(name="test_audio_content", description="Returns a short WAV clip of silence")
def audio_content() -> Audio:
    return Audio(WAV, "audio/wav")


@fixture.tool(name="test_embedded_resource", description="Returns an embedded text resource")
def embedded_resource() -> EmbeddedResource:
    return EmbeddedResource(
        ResourceContents(
            "test://embedded-resource",
            text="This is an embedded resource content.",
            mime_type="text/plain",
        )
    )


@fixture.tool(
    name="test_multiple_content_types",
    description="Returns text, an image and an embedded resource in one result",
)
def multiple_content_types() -> ToolResult:
    return ToolResult(
        content=[
            Text("Multiple content types test:"),
            Image(PNG, "image/png"),
            EmbeddedResource(
                ResourceContents(
                    "test://mixed-content-resource",
                    text='{"test":"data","value":123}',
                    mime_type="application/json",
                )
            ),
        ]
    )


@fixture.tool(name="test_error_handling", description="Always returns a tool error")
def error_handling() -> ToolResult:
    return ToolResult(
        content=[Text("This tool intentionally returns an error for testing")], is_error=True
    )


@fixture.tool(
    name="test_tool_with_logging",
    description="Sends three info log messages about 50 ms apart while it runs",
)
def tool_with_logging(context: Context) -> str:
    context.log("info", "Tool execution started")
    time.sleep(0.05)
    context.log("info", "Tool processing data")
    time.sleep(0.05)
    context.log("info", "Tool execution completed")
    return "Tool with logging executed successfully"


@fixture.tool(
    name="test_reconnection",
    description="Closes its SSE stream mid-call; the client resumes it with Last-Event-ID",
)
def reconnection(context: Context) -> str:
    context.close_stream()
    # The answer comes after the client has gone, so it can only arrive by resumption.
    time.sleep(0.2)
    return "Reconnection test completed: the answer arrived on the resumed stream"


@fixture.tool(
    name="test_custom_header",
    description="Echoes an argument the client also sends as the Mcp-Param-Region header",
)
def custom_header(
    region: Annotated[str, Field(json_schema_extra={"x-mcp-header": "Region"})],
) -> str:
    return f"Routed to region {region!r}"


@fixture.tool(
    name="test_tool_with_progress",
    description="Reports progress 0, 50 and 100 of 100 about 50 ms apart",
)
def tool_with_progress(context: Context) -> str:
    context.report_progress(0, 100)
    time.sleep(0.05)
    context.report_progress(50, 100)
    time.sleep(0.05)
    context.report_progress(100, 100)
    return "Tool with progress executed successfully"


@fixture.tool(
    name="test_logging_tool",
    description="Logs while it runs; the log must not reach a client that set no log level",
)
def logging_tool(context: Context) -> str:
    context.log("info", "test_logging_tool ran")
    return "Logging tool executed"


# test_sampling, test_elicitation, test_elicitation_sep1034_defaults and
# test_elicitation_sep1330_enums need requests from the server to the client in the middle
# of a call, which the endpoint does not make; the 2026-07-28 diagnostic tools
# test_missing_capability, test_streaming_elicitation and test_input_required_result_* need
# capability errors and input-required results from a tool, which it does not offer yet.
# They are left out; the expected-failures files say which scenarios that costs.

JSON_SCHEMA_2020_12: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "$defs": {
        "address": {
            "$anchor": "addressDef",
            "type": "object",
            "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
        }
    },
    "properties": {
        "name": {"type": "string"},
        "address": {"$ref": "#/$defs/address"},
        "contactMethod": {"type": "string", "enum": ["phone", "email"]},
        "phone": {"type": "string"},
        "email": {"type": "string"},
    },
    "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
    "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
    "then": {"required": ["phone"]},
    "else": {"required": ["email"]},
    "additionalProperties": False,
}


class JsonSchema202012Tool(Tool):
    """A tool whose input schema uses JSON Schema 2020-12 keywords, listed as written."""

    name = "json_schema_2020_12_tool"
    description = "Tool with JSON Schema 2020-12 features"
    input_schema = JSON_SCHEMA_2020_12

    def run(self, arguments: dict[str, Any], call: Context) -> Any:
        return f"Received: {sorted(arguments)}"


fixture.add_tool(JsonSchema202012Tool())


# -- resources ---------------------------------------------------------------------------


@fixture.resource(
    "test://static-text",
    name="static-text",
    description="A static text resource",
    mime_type="text/plain",
)
def static_text() -> str:
    return "This is the content of the static text resource."


@fixture.resource(
    "test://static-binary",
    name="static-binary",
    description="A static binary resource (a 1x1 PNG)",
    mime_type="image/png",
)
def static_binary() -> bytes:
    return PNG


@fixture.resource(
    "test://template/{id}/data",
    name="template-data",
    description="JSON data for an id, from a URI template",
    mime_type="application/json",
)
def template_data(id: str) -> dict[str, Any]:
    return {"id": id, "templateTest": True, "data": f"Data for ID: {id}"}


@fixture.resource(
    "test://watched-resource",
    name="watched-resource",
    description="A resource for subscription tests",
    mime_type="text/plain",
)
def watched_resource() -> str:
    return "Watched resource content"


# -- skills ------------------------------------------------------------------------------

# A folder with a SKILL.md and a references/ folder: the skills extension's scenarios read
# its entry, its files and its directories.
fixture.skill_directory(Path(__file__).resolve().parent / "skills" / "fixture-conventions")


# -- prompts -----------------------------------------------------------------------------


@fixture.prompt(name="test_simple_prompt", description="A simple prompt without arguments")
def simple_prompt() -> str:
    return "This is a simple prompt for testing."


@fixture.prompt(
    name="test_prompt_with_arguments",
    description="A prompt with two required arguments",
    arguments=[
        PromptArgument("arg1", "First test argument"),
        PromptArgument("arg2", "Second test argument"),
    ],
)
def prompt_with_arguments(arg1: str, arg2: str) -> str:
    return f"Prompt with arguments: arg1='{arg1}', arg2='{arg2}'"


@fixture.prompt(
    name="test_prompt_with_embedded_resource",
    description="A prompt that embeds a resource",
    arguments=[PromptArgument("resourceUri", "URI of the resource to embed")],
)
def prompt_with_embedded_resource(resourceUri: str) -> list[Message]:
    return [
        Message(
            EmbeddedResource(
                ResourceContents(
                    resourceUri,
                    text="Embedded resource content for testing.",
                    mime_type="text/plain",
                )
            )
        ),
        Message("Please process the embedded resource above."),
    ]


@fixture.prompt(name="test_prompt_with_image", description="A prompt with an image")
def prompt_with_image() -> list[Message]:
    return [Message(Image(PNG, "image/png")), Message("Please analyze the image above.")]


# -- completion --------------------------------------------------------------------------

SUGGESTIONS = ("paris", "park", "party", "test", "testing", "hello", "world")


@fixture.completer("ref/prompt", "test_prompt_with_arguments", "arg1")
@fixture.completer("ref/prompt", "test_prompt_with_arguments", "arg2")
def complete_argument(value: str, context: Context, arguments: Any) -> list[str]:
    return [word for word in SUGGESTIONS if word.startswith(value)]


# The fixtures that ask the client for input (both eras) and those of the tasks extension
# live beside this module.
