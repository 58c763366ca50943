"""Prompts, from Python functions or rendered from Django templates."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, get_type_hints

from django.template.loader import render_to_string

from mcp_endpoint.context import Context
from mcp_endpoint.protocol.content import Content, Message
from mcp_endpoint.registry import NamedRegistry


@dataclass(frozen=True)
class PromptArgument:
    name: str
    description: str = ""
    required: bool = True

    def to_dict(self) -> dict[str, Any]:
        body: dict[str, Any] = {"name": self.name, "required": self.required}
        if self.description:
            body["description"] = self.description
        return body


class MissingArgument(ValueError):
    pass


class Prompt:
    """One prompt; subclasses implement :meth:`messages`."""

    name: str = ""
    title: str | None = None
    description: str = ""
    arguments: Sequence[PromptArgument] = ()
    required_scopes: frozenset[str] = frozenset()

    def describe(self) -> dict[str, Any]:
        body: dict[str, Any] = {"name": self.name}
        if self.title:
            body["title"] = self.title
        if self.description:
            body["description"] = self.description
        body["arguments"] = [a.to_dict() for a in self.arguments]
        return body

    def check_arguments(self, arguments: dict[str, str]) -> None:
        missing = [a.name for a in self.arguments if a.required and a.name not in arguments]
        if missing:
            raise MissingArgument(f"Missing required argument(s): {', '.join(missing)}")

    def messages(self, arguments: dict[str, str], context: Context) -> list[Message]:
        raise NotImplementedError(".messages() must be overridden")

    def render(self, arguments: dict[str, str], context: Context) -> dict[str, Any]:
        self.check_arguments(arguments)
        body: dict[str, Any] = {}
        if self.description:
            body["description"] = self.description
        body["messages"] = [m.to_dict() for m in self.messages(arguments, context)]
        return body


def as_messages(value: Any) -> list[Message]:
    if isinstance(value, Message):
        return [value]
    if isinstance(value, str | Content):
        return [Message(value)]
    return [v if isinstance(v, Message) else Message(v) for v in value]


class FunctionPrompt(Prompt):
    """A prompt made from a function whose ``str`` parameters are its arguments."""

    def __init__(
        self,
        fn: Callable[..., Any],
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        arguments: Sequence[PromptArgument] | None = None,
        scopes: Iterable[str] = (),
    ) -> None:
        self.fn = fn
        self.name = name or fn.__name__
        self.title = title
        self.description = description or inspect.cleandoc(fn.__doc__ or "")
        self.required_scopes = frozenset(scopes)
        hints = get_type_hints(fn)
        self.context_parameter: str | None = None
        derived = []
        for pname, param in inspect.signature(fn).parameters.items():
            hint = hints.get(pname)
            if inspect.isclass(hint) and issubclass(hint, Context):
                self.context_parameter = pname
                continue
            derived.append(PromptArgument(pname, required=param.default is inspect.Parameter.empty))
        if arguments is not None:
            known = {a.name for a in derived}
            unknown = [a.name for a in arguments if a.name not in known]
            if unknown:
                raise TypeError(f"Prompt {self.name!r} has no parameter(s) {unknown}")
        self.arguments = tuple(arguments) if arguments is not None else tuple(derived)

    def messages(self, arguments: dict[str, str], context: Context) -> list[Message]:
        names = {a.name for a in self.arguments}
        kwargs: dict[str, Any] = {k: v for k, v in arguments.items() if k in names}
        if self.context_parameter:
            kwargs[self.context_parameter] = context
        return as_messages(self.fn(**kwargs))


class TemplatePrompt(Prompt):
    """A prompt rendered from a Django template, as one user message.

    The template sees the arguments by name, plus ``user`` (the caller) and ``arguments``.
    """

    def __init__(
        self,
        name: str,
        template_name: str,
        *,
        title: str | None = None,
        description: str = "",
        arguments: Sequence[PromptArgument] = (),
        scopes: Iterable[str] = (),
    ) -> None:
        self.name = name
        self.template_name = template_name
        self.title = title
        self.description = description
        self.arguments = tuple(arguments)
        self.required_scopes = frozenset(scopes)

    def messages(self, arguments: dict[str, str], context: Context) -> list[Message]:
        values = {a.name: arguments.get(a.name, "") for a in self.arguments}
        text = render_to_string(
            self.template_name, {**values, "arguments": values, "user": context.user}
        )
        return [Message(text.strip())]


class PromptRegistry(NamedRegistry[Prompt]):
    """The prompts of one endpoint, in registration order; names are unique."""
