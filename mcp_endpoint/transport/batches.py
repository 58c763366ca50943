"""JSON-RPC batches (2025 revisions): each message runs as it would alone, within the
batch's time budget, counted against the rate limits one by one
(:mod:`mcp_endpoint.protocol.batch` has the rules)."""

from __future__ import annotations

import time
from typing import Any

from django.http import HttpRequest, HttpResponse

from mcp_endpoint import outages, sessions, throttling
from mcp_endpoint.protocol import batch, jsonrpc
from mcp_endpoint.protocol.versions import LEGACY
from mcp_endpoint.responses import answer_response, empty_response, error_response, json_response
from mcp_endpoint.transport.base import TransportView, retry_after


class BatchMixin(TransportView):
    """A batch's answers: one per request message, in order."""

    def answer_batch(
        self,
        request: HttpRequest,
        messages: list[Any],
        credential: Any,
        header_version: str | None,
        limits: throttling.RateLimits,
        selection: Any = None,
    ) -> HttpResponse:
        assert self.endpoint is not None
        settings = self.endpoint.settings
        refused = batch.batch_problem(messages, header_version, settings.MAX_BATCH_SIZE)
        if refused is not None:
            return error_response(400, refused.code, refused.message, refused.data)
        budget: float | None = settings.BATCH_TIME_BUDGET
        started = time.monotonic()
        answers = []
        waits: list[float] = []
        for index, message in enumerate(messages):
            if budget is not None and index and time.monotonic() - started >= budget:
                # What the budget leaves is answered, not run, so the worker answers before
                # the server's timeout kills it; the first message always runs.
                if not batch.is_notification(message):
                    answers.append(batch.not_run(message, budget))
                continue
            # Each message counts as it would alone; one over the limit is answered so in its
            # place, and the others still run.
            wait = limits.check(message)
            if wait is not None:
                waits.append(wait)
                answers.append(batch.rate_limited(message, retry_after(wait)))
                continue
            context = self.message_context(request, LEGACY, credential, limits, selection)
            if self.endpoint.settings.SESSIONS:
                try:
                    sessions.enter(self.endpoint, request.META.get(sessions.META_HEADER), context)
                except sessions.SessionRefused as exc:
                    return error_response(
                        exc.status,
                        jsonrpc.INVALID_REQUEST,
                        exc.message,
                        request_id=jsonrpc.request_id_of(message),
                    )
            try:
                answer = self.endpoint.handle(message, context)
            except outages.ServiceUnavailable as exc:
                body = outages.error_body(jsonrpc.request_id_of(message), exc, settings)
                return answer_response(body, LEGACY)
            if answer is not None:
                answers.append(answer)
        headers = {"Retry-After": str(retry_after(max(waits)))} if waits else None
        if not answers:
            return empty_response(202)
        # Every message refused: the batch as a whole was over the limit.
        status = 429 if len(waits) == len(messages) else 200
        return json_response(answers, status, headers)
