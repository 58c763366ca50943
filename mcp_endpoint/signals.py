"""Signals a host connects to for audit trails and metrics, without subclassing.

``api_key_created``
    sent once a key is stored; ``sender`` is the key model, with ``key`` (the row, never
    the raw secret) and ``user``.
``api_key_revoked``
    sent when a key is revoked; ``sender`` is the key model, with ``key`` and ``user``.
``tool_called``
    sent after every ``tools/call``, logged or not; ``sender`` is the endpoint's class, with
    ``endpoint``, ``tool`` (the name), ``user``, ``credential``, ``arguments`` (as the client
    sent them: redact before storing them elsewhere), ``outcome`` (``"ok"`` or an error
    code), ``error`` (the message), ``duration_ms``, ``client_info``, ``request`` (the
    Django request) and ``log_row`` (the :class:`~mcp_endpoint.models.ToolCall` written, or
    None when the log is off; with ``LOG_SPOOL_DIR`` a call that committed nothing has its
    row spooled, not yet in the table, so without a ``pk``).

``tool_called`` is sent with ``send_robust``: a receiver that raises is logged and the
answer to the client stays as it was, since the call's work is already committed.
"""

from __future__ import annotations

from django.dispatch import Signal

api_key_created = Signal()
api_key_revoked = Signal()
tool_called = Signal()
