"""A JSON-RPC client for an MCP URL through Django's test client (no demo models, so that
projects with settings of their own can use it)."""

from __future__ import annotations

import json
from typing import Any

from django.test import Client


class MCPClient:
    """Posts JSON-RPC to an MCP URL through Django's test client."""

    def __init__(self, client: Client, url: str = "/mcp", key: str | None = None) -> None:
        self.client = client
        self.url = url
        self.key = key
        self.next_id = 0

    def headers(self, extra: dict[str, str] | None = None) -> dict[str, str]:
        headers: dict[str, str] = {}
        if self.key:
            headers["Authorization"] = f"Bearer {self.key}"
        headers.update(extra or {})
        return headers

    def post(
        self,
        body: Any,
        *,
        raw: bytes | None = None,
        content_type: str = "application/json",
        headers: dict[str, str] | None = None,
    ) -> Any:
        data = raw if raw is not None else json.dumps(body)
        return self.client.post(
            self.url, data=data, content_type=content_type, headers=self.headers(headers)
        )

    def request(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        headers: dict[str, str] | None = None,
    ) -> Any:
        self.next_id += 1
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": self.next_id, "method": method}
        if params is not None:
            message["params"] = params
        return self.post(message, headers=headers)

    def result(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        response = self.request(method, params)
        assert response.status_code == 200, response.content
        body = response.json()
        assert "result" in body, body
        result: dict[str, Any] = body["result"]
        return result

    def call(self, name: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
        return self.result("tools/call", {"name": name, "arguments": arguments or {}})
