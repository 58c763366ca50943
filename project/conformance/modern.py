"""Fixtures of the conformance suite that need input from the client, on the fixture endpoint.

The 2026-07-28 scenarios (``--requirements 2026-07-28``) call tools and a prompt that
answer with input-required results (multi round-trip requests), and a tool that needs a
client capability the request may not declare. The 2025-11-25 scenarios call tools that
ask the client for sampling and elicitation during the call, and log while they run;
those need a legacy session (where the client's capabilities live) and a streamed answer.
The same tool code serves both eras: ``Context.ask`` becomes an input-required result on a
modern request and a request on the stream in a legacy session.

Registered on the fixture when ``project.conformance`` is imported; the names and answers
are the suite's.
"""

from __future__ import annotations

import json
from typing import Any

from mcp_endpoint.context import Context
from mcp_endpoint.protocol.content import Message
from mcp_endpoint.protocol.mrtr import InputRequired, elicitation, list_roots, sampling
from project.conformance.fixture_endpoint import fixture

# Legacy sessions (so the 2025-11-25 tools can ask the client during a call) and the
# deprecated logging capability (so test_tool_with_logging's messages reach the client).
fixture.settings.overrides.update({"SESSIONS": True, "LOGGING": True})
fixture.settings.reload()

NAME_SCHEMA = {
    "type": "object",
    "properties": {"name": {"type": "string"}},
    "required": ["name"],
}
CONFIRM_SCHEMA = {
    "type": "object",
    "properties": {"ok": {"type": "boolean"}},
    "required": ["ok"],
}


def content_of(answer: dict[str, Any]) -> dict[str, Any]:
    """The form an accepted elicitation returned (empty when declined or cancelled)."""
    content = answer.get("content")
    return content if answer.get("action") == "accept" and isinstance(content, dict) else {}


def sampled_text(answer: dict[str, Any]) -> str:
    content = answer.get("content")
    if isinstance(content, list):
        content = content[0] if content else {}
    return str(content.get("text", "")) if isinstance(content, dict) else ""


def dump(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), sort_keys=True)


# -- 2026-07-28: multi round-trip requests ----------------------------------------------------


@fixture.tool(
    name="test_input_required_result_elicitation",
    description="Asks for the user's name (input-required result), then greets them",
)
def input_required_elicitation(context: Context) -> str:
    answers = context.ask({"user_name": elicitation("What is your name?", NAME_SCHEMA)})
    return f"Hello, {content_of(answers['user_name']).get('name', 'stranger')}!"


@fixture.tool(
    name="test_input_required_result_sampling",
    description="Asks the client's model a question (input-required result), then repeats it",
)
def input_required_sampling(context: Context) -> str:
    answers = context.ask(
        {"capital_question": sampling("What is the capital of France?", max_tokens=100)}
    )
    return f"The client's model says: {sampled_text(answers['capital_question'])}"


@fixture.tool(
    name="test_input_required_result_list_roots",
    description="Asks for the client's roots (input-required result), then lists them",
)
def input_required_list_roots(context: Context) -> str:
    answers = context.ask({"client_roots": list_roots()})
    roots = answers["client_roots"].get("roots") or []
    uris = [str(r.get("uri")) for r in roots if isinstance(r, dict)]
    return "Client roots: " + (", ".join(uris) or "none")


def confirm_with_state(context: Context, tool: str) -> str:
    """Ask for a confirmation, keeping a state; complete only when the state came back."""
    state = {"tool": tool, "step": "confirm"}
    question = {"confirm": elicitation("Please confirm", CONFIRM_SCHEMA)}
    if context.request_state != state:
        raise InputRequired(question, state)
    answers = context.ask(question, state)
    return f"state-ok: confirmed={content_of(answers['confirm']).get('ok')}"


@fixture.tool(
    name="test_input_required_result_request_state",
    description="Asks for a confirmation with a request state, and checks the state comes back",
)
def input_required_request_state(context: Context) -> str:
    return confirm_with_state(context, "request_state")


@fixture.tool(
    name="test_input_required_result_tampered_state",
    description="Like the request-state tool; a changed requestState is refused",
)
def input_required_tampered_state(context: Context) -> str:
    return confirm_with_state(context, "tampered_state")


@fixture.tool(
    name="test_input_required_result_multiple_inputs",
    description="Asks for elicitation, sampling and roots in one input-required result",
)
def input_required_multiple_inputs(context: Context) -> str:
    answers = context.ask(
        {
            "user_name": elicitation("What is your name?", NAME_SCHEMA),
            "greeting": sampling("Generate a greeting", max_tokens=50),
            "client_roots": list_roots(),
        },
        state={"tool": "multiple_inputs"},
    )
    name = content_of(answers["user_name"]).get("name", "stranger")
    roots = len(answers["client_roots"].get("roots") or [])
    return f"{sampled_text(answers['greeting'])} {name} ({roots} roots)"


@fixture.tool(
    name="test_input_required_result_multi_round",
    description="Asks two questions in two rounds, keeping the first answer in the state",
)
def input_required_multi_round(context: Context) -> str:
    state = context.request_state if isinstance(context.request_state, dict) else {}
    name = state.get("name")
    if not isinstance(name, str):
        step1 = elicitation("Step 1: What is your name?", NAME_SCHEMA)
        answers = context.ask({"step1": step1}, state={"round": 1})
        name = str(content_of(answers["step1"]).get("name", "stranger"))
    step2 = elicitation(
        "Step 2: What is your favorite color?",
        {"type": "object", "properties": {"color": {"type": "string"}}, "required": ["color"]},
    )
    answers = context.ask({"step2": step2}, state={"round": 2, "name": name})
    return f"state-ok: {name} likes {content_of(answers['step2']).get('color', 'no colour')}"


@fixture.tool(
    name="test_input_required_result_capabilities",
    description="Asks only for input the client declared it can give",
)
def input_required_capabilities(context: Context) -> str:
    declared = context.client_capabilities
    wanted: dict[str, dict[str, Any]] = {}
    if "elicitation" in declared:
        wanted["user_name"] = elicitation("What is your name?", NAME_SCHEMA)
    if "sampling" in declared:
        wanted["capital_question"] = sampling("What is the capital of France?")
    if "roots" in declared:
        wanted["client_roots"] = list_roots()
    if not wanted:
        return "The client declared no capability to ask with."
    answers = context.ask(wanted, state={"tool": "capabilities"})
    return "Answered: " + ", ".join(sorted(answers))


@fixture.tool(
    name="test_missing_capability",
    description="Needs the sampling capability; a request that does not declare it is refused",
)
def missing_capability(context: Context) -> str:
    context.require_capabilities("sampling")
    answers = context.ask({"sample": sampling("Say hello", max_tokens=20)})
    return f"Sampled: {sampled_text(answers['sample'])}"


@fixture.tool(
    name="test_streaming_elicitation",
    description="Reports progress, then asks for input with an input-required result",
)
def streaming_elicitation(context: Context) -> str:
    context.report_progress(0, 1, "Starting")
    answers = context.ask({"user_name": elicitation("What is your name?", NAME_SCHEMA)})
    context.report_progress(1, 1, "Done")
    return f"Hello, {content_of(answers['user_name']).get('name', 'stranger')}!"


@fixture.prompt(
    name="test_input_required_result_prompt",
    description="Asks for the context to use (input-required result), then renders",
)
def input_required_prompt(context: Context) -> list[Message]:
    answers = context.ask(
        {
            "user_context": elicitation(
                "What context should the prompt use?",
                {
                    "type": "object",
                    "properties": {"context": {"type": "string"}},
                    "required": ["context"],
                },
            )
        }
    )
    given = content_of(answers["user_context"]).get("context", "")
    return [Message(f"Use this context: {given}")]


# -- 2025-11-25: requests to the client during a call, in a session ---------------------------


@fixture.tool(
    name="test_sampling",
    description="Asks the client's model to answer a prompt (sampling/createMessage)",
)
def sampling_tool(prompt: str, context: Context) -> str:
    answers = context.ask({"sample": sampling(prompt, max_tokens=100)})
    return f"LLM response: {sampled_text(answers['sample'])}"


@fixture.tool(
    name="test_elicitation",
    description="Asks the user for a username and an email (elicitation/create)",
)
def elicitation_tool(message: str, context: Context) -> str:
    schema = {
        "type": "object",
        "properties": {
            "username": {"type": "string", "description": "User's response"},
            "email": {"type": "string", "description": "User's email address"},
        },
        "required": ["username", "email"],
    }
    answer = context.ask({"form": elicitation(message, schema)})["form"]
    return f"User response: action={answer.get('action')}, content={dump(answer.get('content'))}"


@fixture.tool(
    name="test_elicitation_sep1034_defaults",
    description="Asks for a form whose fields all have defaults (SEP-1034)",
)
def elicitation_defaults(context: Context) -> str:
    schema = {
        "type": "object",
        "properties": {
            "name": {"type": "string", "default": "John Doe"},
            "age": {"type": "integer", "default": 30},
            "score": {"type": "number", "default": 95.5},
            "status": {
                "type": "string",
                "enum": ["active", "inactive", "pending"],
                "default": "active",
            },
            "verified": {"type": "boolean", "default": True},
        },
    }
    answer = context.ask({"form": elicitation("Please review your details", schema)})["form"]
    return (
        f"Elicitation completed: action={answer.get('action')}, "
        f"content={dump(answer.get('content'))}"
    )


@fixture.tool(
    name="test_elicitation_sep1330_enums",
    description="Asks for a form with the five kinds of enum field (SEP-1330)",
)
def elicitation_enums(context: Context) -> str:
    schema = {
        "type": "object",
        "properties": {
            "untitledSingle": {"type": "string", "enum": ["option1", "option2", "option3"]},
            "titledSingle": {
                "type": "string",
                "oneOf": [
                    {"const": "value1", "title": "First Option"},
                    {"const": "value2", "title": "Second Option"},
                    {"const": "value3", "title": "Third Option"},
                ],
            },
            "legacyEnum": {
                "type": "string",
                "enum": ["opt1", "opt2", "opt3"],
                "enumNames": ["Option One", "Option Two", "Option Three"],
            },
            "untitledMulti": {
                "type": "array",
                "items": {"type": "string", "enum": ["option1", "option2", "option3"]},
            },
            "titledMulti": {
                "type": "array",
                "items": {
                    "anyOf": [
                        {"const": "value1", "title": "First Choice"},
                        {"const": "value2", "title": "Second Choice"},
                        {"const": "value3", "title": "Third Choice"},
                    ]
                },
            },
        },
    }
    answer = context.ask({"form": elicitation("Pick your options", schema)})["form"]
    return (
        f"Elicitation completed: action={answer.get('action')}, "
        f"content={dump(answer.get('content'))}"
    )
