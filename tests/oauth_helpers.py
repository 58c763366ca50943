"""What the OAuth tests need besides the host: a user's browser, a client's metadata
document on a loopback HTTPS server, and a fetcher that may read it there.

``LoopbackMetadataFetcher`` is for tests only: fetching documents from loopback addresses is
exactly what the toolkit's fetcher refuses in production (server-side request forgery).
"""

from __future__ import annotations

import http.server
import json
import socket
import ssl
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urljoin, urlsplit

import httpx2
import trustme
import urllib3
from oauth2_provider.cimd import CIMDError, _validate_client_id_url
from oauth2_provider.settings import oauth2_settings

from mcp_endpoint.oauth.registration import MetadataDocumentFetcher, is_loopback_host

LOOPBACK = "127.0.0.1"


class LoopbackMetadataFetcher(MetadataDocumentFetcher):
    """The toolkit's document checks, for documents served on loopback only.

    The URL rules (https, a path, no fragment), the size and type limits and the
    redirect-URI policy are the production ones; only the address rule is turned around.
    Certificates are verified against the default trust store, which a test points at its
    own CA with ``SSL_CERT_FILE``.
    """

    def fetch(self, client_id: str) -> tuple[dict[str, Any], int]:
        parsed = _validate_client_id_url(client_id)
        if not is_loopback_host(parsed.hostname):
            raise CIMDError("this fetcher reads loopback documents only")
        timeout = oauth2_settings.CIMD_FETCH_TIMEOUT_SECONDS
        pool = urllib3.HTTPSConnectionPool(
            host=parsed.hostname,
            port=parsed.port or 443,
            timeout=urllib3.Timeout(total=timeout),
            retries=False,
            ssl_context=ssl.create_default_context(),
            server_hostname=parsed.hostname,
        )
        try:
            response = pool.urlopen(
                "GET",
                parsed.path + (f"?{parsed.query}" if parsed.query else ""),
                headers={"Accept": "application/json"},
                redirect=False,
                preload_content=False,
            )
            try:
                metadata, max_age = self._read_document(response)
            finally:
                response.release_conn()
        except urllib3.exceptions.HTTPError as exc:
            raise CIMDError(f"could not fetch client_id document: {exc}") from exc
        finally:
            pool.close()
        self.check(client_id, metadata)
        return metadata, max_age


# -- a loopback HTTPS server for client metadata documents ---------------------------------


@dataclass
class Document:
    body: bytes
    content_type: str = "application/json"


@dataclass
class DocumentServer:
    """Serves ``documents`` (path -> :class:`Document`) over HTTPS on 127.0.0.1.

    Its certificate comes from a throwaway CA; ``ca_path`` is that CA's certificate, for
    ``SSL_CERT_FILE`` in the environment of whatever must trust it.
    """

    workdir: Path
    documents: dict[str, Document] = field(default_factory=dict)
    requests: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.ca = trustme.CA()
        self.ca_path = self.workdir / "test-ca.pem"
        self.ca.cert_pem.write_to_path(str(self.ca_path))
        self.httpd: http.server.ThreadingHTTPServer | None = None

    def url(self, path: str) -> str:
        assert self.httpd is not None
        return f"https://{LOOPBACK}:{self.httpd.server_address[1]}{path}"

    def serve_json(self, path: str, data: Any) -> str:
        self.documents[path] = Document(json.dumps(data).encode())
        return self.url(path)

    def start(self) -> DocumentServer:
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                server.requests.append(self.path)
                document = server.documents.get(self.path)
                if document is None:
                    self.send_error(404)
                    return
                self.send_response(200)
                self.send_header("Content-Type", document.content_type)
                self.send_header("Content-Length", str(len(document.body)))
                self.end_headers()
                self.wfile.write(document.body)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        self.ca.issue_cert(LOOPBACK, "localhost").configure_cert(context)
        self.httpd = http.server.ThreadingHTTPServer((LOOPBACK, 0), Handler)
        self.httpd.socket = context.wrap_socket(self.httpd.socket, server_side=True)
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        if self.httpd is not None:
            self.httpd.shutdown()
            self.httpd.server_close()
            self.httpd = None

    def __enter__(self) -> DocumentServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


@contextmanager
def callback_listener() -> Iterator[CallbackListener]:
    """An HTTP server on a loopback port that records the requests a browser makes to it."""
    listener = CallbackListener()
    try:
        yield listener
    finally:
        listener.stop()


class CallbackListener:
    def __init__(self) -> None:
        self.hits: list[str] = []
        listener = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                listener.hits.append(self.path)
                body = b"You can close this page."
                self.send_response(200)
                self.send_header("Content-Type", "text/plain")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.httpd = http.server.ThreadingHTTPServer((LOOPBACK, 0), Handler)
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    @property
    def redirect_uri(self) -> str:
        return f"http://{LOOPBACK}:{self.httpd.server_address[1]}/callback"

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind((LOOPBACK, 0))
        port: int = sock.getsockname()[1]
        return port


# -- the user's browser, played over HTTP ---------------------------------------------------


class FormInputs(HTMLParser):
    """The named inputs of the form with a given id."""

    def __init__(self, form_id: str) -> None:
        super().__init__()
        self.form_id = form_id
        self.inside = False
        self.fields: dict[str, str] = {}

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        if tag == "form":
            self.inside = values.get("id") == self.form_id
        elif (
            tag == "input" and self.inside and values.get("name") and values.get("type") != "submit"
        ):
            self.fields[values["name"] or ""] = values.get("value") or ""

    def handle_endtag(self, tag: str) -> None:
        if tag == "form":
            self.inside = False


def form_fields(html: str, form_id: str) -> dict[str, str]:
    parser = FormInputs(form_id)
    parser.feed(html)
    return parser.fields


class Browser:
    """A user at the host's login and consent pages, with a session cookie."""

    def __init__(self, base_url: str) -> None:
        self.base_url = base_url
        self.http = httpx2.Client(base_url=base_url, follow_redirects=False, timeout=30)
        self.pages: list[str] = []

    def close(self) -> None:
        self.http.close()

    def log_in(self, username: str, password: str) -> None:
        page = self.http.get("/accounts/login/")
        page.raise_for_status()
        token = self.http.cookies["csrftoken"]
        done = self.http.post(
            "/accounts/login/",
            data={"username": username, "password": password, "csrfmiddlewaretoken": token},
            headers={"Referer": self.base_url + "/accounts/login/"},
        )
        assert done.status_code == 302, f"login failed: {done.status_code} {done.text[:300]}"

    def consent(self, authorize_url: str, *, allow: bool = True) -> str:
        """Open the authorisation URL, answer the consent page; the URL sent back to the client."""
        page = self.http.get(authorize_url)
        assert page.status_code == 200, f"no consent page: {page.status_code} {page.text[:500]}"
        self.pages.append(page.text)
        fields = form_fields(page.text, "authorizationForm")
        fields["csrfmiddlewaretoken"] = self.http.cookies["csrftoken"]
        if allow:
            fields["allow"] = "Allow"
        answer = self.http.post(str(page.url), data=fields, headers={"Referer": str(page.url)})
        assert answer.status_code == 302, f"consent gave {answer.status_code}: {answer.text[:500]}"
        return urljoin(str(page.url), answer.headers["Location"])


def query_of(url: str) -> dict[str, str]:
    return {key: values[0] for key, values in parse_qs(urlsplit(url).query).items()}


def wait_for(predicate: Any, timeout: float = 30.0, interval: float = 0.1) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(interval)
    return False
