"""A local fake of Kaggle's API server, speaking the real protocol of the kaggle CLI 2.2.4.

The real ``kaggle`` CLI talks to it when run with ``KAGGLE_API_ENVIRONMENT=LOCALHOST``
(the CLI then calls ``http://localhost/api/v1/competitions.CompetitionApiService/<Method>``)
and ``HTTP_PROXY=http://127.0.0.1:PORT``: this server is that proxy, and answers
every request itself.  The field names follow kagglesdk's request and response
types (``kagglesdk/competitions/types/competition_api_service.py``):

* ``StartSubmissionUpload`` {competitionName, contentLength, lastModifiedEpochSeconds,
  fileName} -> {token, createUrl};
* ``PUT createUrl`` with the file's bytes -> 200;
* ``CreateSubmission`` {competitionName, blobFileTokens, submissionDescription} ->
  {message, ref}, or an error body {code, message} with that HTTP status, which the
  CLI turns into an HTTPError carrying the message;
* ``GetSubmissionLimits`` -> {numToday, numTotal, numAllowedNow, limitedByTotal}.

Everything received is recorded for the tests to inspect.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlparse

SERVICE = "/api/v1/competitions.CompetitionApiService/"
UPLOAD_PREFIX = "/fake-upload/"


@dataclass
class Received:
    """One request as the server saw it."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


@dataclass
class FakeKaggle:
    """The server's state: what it received, and how it should answer CreateSubmission."""

    requests: list[Received] = field(default_factory=list)
    uploads: dict[str, bytes] = field(default_factory=dict)
    create_error: tuple[int, str] | None = None  # (HTTP status, message) for CreateSubmission
    submissions: list[dict[str, Any]] = field(default_factory=list)
    port: int = 0

    @property
    def proxy_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def methods(self) -> list[str]:
        """The API methods called, in order (``PUT`` for an upload)."""
        return [r.path.rsplit("/", 1)[-1] if r.method == "POST" else r.method for r in self.requests]


def _handler(state: FakeKaggle) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:  # keep test output quiet
            pass

        def _receive(self) -> Received:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            got = Received(self.command, urlparse(self.path).path, dict(self.headers), body)
            state.requests.append(got)
            return got

        def _reply(self, status: int, payload: dict[str, Any]) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_PUT(self) -> None:
            got = self._receive()
            if not got.path.startswith(UPLOAD_PREFIX):
                return self._reply(404, {"code": 404, "message": f"no upload at {got.path}"})
            state.uploads[got.path[len(UPLOAD_PREFIX):]] = got.body
            self._reply(200, {})

        def do_POST(self) -> None:
            got = self._receive()
            method = got.path[len(SERVICE):] if got.path.startswith(SERVICE) else ""
            if method == "StartSubmissionUpload":
                token = f"blob-token-{len(state.uploads) + 1}"
                return self._reply(200, {"token": token,
                                         "createUrl": f"http://localhost{UPLOAD_PREFIX}{token}"})
            if method == "CreateSubmission":
                request = got.json()
                if state.create_error:
                    status, message = state.create_error
                    return self._reply(status, {"code": status, "message": message})
                if request.get("blobFileTokens") not in state.uploads:
                    return self._reply(400, {"code": 400, "message": "unknown blob token"})
                state.submissions.append(request)
                return self._reply(200, {"message": "Successfully submitted to ConnectX",
                                         "ref": 1000 + len(state.submissions)})
            if method == "GetSubmissionLimits":
                return self._reply(200, {"numToday": len(state.submissions), "numTotal": 5,
                                         "numAllowedNow": 5 - len(state.submissions),
                                         "limitedByTotal": False})
            self._reply(404, {"code": 404, "message": f"the fake server has no {got.path}"})

    return Handler


class FakeKaggleServer:
    """Runs a ``FakeKaggle`` on a free local port in a thread: ``with FakeKaggleServer() as fake:``."""

    def __init__(self) -> None:
        self.state = FakeKaggle()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self.state))
        self.state.port = self._server.server_address[1]
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def __enter__(self) -> FakeKaggle:
        self._thread.start()
        return self.state

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()
