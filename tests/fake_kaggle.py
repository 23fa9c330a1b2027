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
* ``GetSubmissionLimits`` -> {numToday, numTotal, numAllowedNow, limitedByTotal};
* ``ListSubmissions`` {competitionName, page, pageToken, pageSize} -> {submissions: [...]};
* ``ListSubmissionEpisodes`` {submissionId} -> {episodes: [{id, createTime, endTime, state,
  type, agents: [{submissionId, index, reward, state, teamName, teamId, initialScore,
  updatedScore}]}]} (each agent's rating before and after the episode, as Kaggle's server sends
  them: ``scored_episode`` builds one, ``played_replay`` its real kaggle-environments replay);
* ``GetEpisodeReplay`` {episodeId} and ``GetEpisodeAgentLogs`` {episodeId, agentIndex} -> the
  file's raw bytes (``FileDownload``), 404 for an unknown episode;
* ``security.OAuthService/IntrospectToken`` {token} -> {active, username}, for a token.

``errors`` makes a method answer ``(HTTP status, message)`` as Kaggle's errors do;
``require_auth`` makes every call need HTTP Basic (``username``:``key``) or a
Bearer token introspected as active, else 401.  Everything received is recorded
for the tests to inspect.
"""

from __future__ import annotations

import base64
import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlparse

SERVICE = "/api/v1/competitions.CompetitionApiService/"
INTROSPECT = "/api/v1/security.OAuthService/IntrospectToken"
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
    listed: list[dict[str, Any]] = field(default_factory=list)  # what ListSubmissions answers
    episodes: dict[int, list[dict[str, Any]]] = field(default_factory=dict)  # by submission id
    replays: dict[int, bytes] = field(default_factory=dict)  # by episode id
    logs: dict[tuple[int, int], bytes] = field(default_factory=dict)  # by (episode id, agent index)
    errors: dict[str, tuple[int, str]] = field(default_factory=dict)  # method -> (HTTP status, message)
    file_type: str = "application/octet-stream"  # Content-Type of replays and logs
    require_auth: tuple[str, str, str] | None = None  # (username, key, token) that every call must carry

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

        def _file(self, data: bytes) -> None:
            self.send_response(200)
            self.send_header("Content-Type", state.file_type)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_POST(self) -> None:
            got = self._receive()
            if got.path == INTROSPECT:
                token = got.json().get("token")
                active = state.require_auth is None or token == state.require_auth[2]
                return self._reply(200, {"active": active, "username": "fake-user" if active else ""})
            method = got.path[len(SERVICE):] if got.path.startswith(SERVICE) else ""
            if method and not _authorized(state, got.headers.get("Authorization", "")):
                return self._reply(401, {"code": 401, "message": "Unauthenticated"})
            if method in state.errors:
                status, message = state.errors[method]
                return self._reply(status, {"code": status, "message": message})
            if method in _READS:
                return _READS[method](self, state, got.json())
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


def _authorized(state: FakeKaggle, header: str) -> bool:
    """Whether ``header`` carries the credentials ``state.require_auth`` names (always, when it names none)."""
    if state.require_auth is None:
        return True
    user, key, token = state.require_auth
    basic = base64.b64encode(f"{user}:{key}".encode()).decode()
    return header in (f"Basic {basic}", f"Bearer {token}")


def _list_submissions(handler: Any, state: FakeKaggle, request: dict[str, Any]) -> None:
    if request.get("competitionName") != "connectx":
        return handler._reply(404, {"code": 404, "message": f"Competition {request.get('competitionName')} "
                                                             "not found"})
    handler._reply(200, {"submissions": state.listed})


def _list_episodes(handler: Any, state: FakeKaggle, request: dict[str, Any]) -> None:
    sid = int(request.get("submissionId", 0))
    if sid not in state.episodes:
        return handler._reply(404, {"code": 404, "message": f"Submission {sid} not found"})
    handler._reply(200, {"episodes": state.episodes[sid]})


def _replay(handler: Any, state: FakeKaggle, request: dict[str, Any]) -> None:
    eid = int(request.get("episodeId", 0))
    if eid not in state.replays:
        return handler._reply(404, {"code": 404, "message": f"Episode {eid} not found"})
    handler._file(state.replays[eid])


def _logs(handler: Any, state: FakeKaggle, request: dict[str, Any]) -> None:
    key = (int(request.get("episodeId", 0)), int(request.get("agentIndex", 0)))
    if key not in state.logs:
        return handler._reply(404, {"code": 404, "message": f"No logs for episode {key[0]} agent {key[1]}"})
    handler._file(state.logs[key])


_READS = {"ListSubmissions": _list_submissions, "ListSubmissionEpisodes": _list_episodes,
          "GetEpisodeReplay": _replay, "GetEpisodeAgentLogs": _logs}


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


def isolate_cli(monkeypatch: Any, tmp_path: Any) -> None:
    """No real credentials or proxies reach the kaggle CLI, which will call http://localhost/api/...;
    ``HOME`` and ``KAGGLE_CONFIG_DIR`` are empty folders under ``tmp_path``."""
    home = tmp_path / "home"
    home.mkdir()
    for var in ("KAGGLE_API_TOKEN", "KAGGLE_USERNAME", "KAGGLE_KEY", "HTTPS_PROXY", "https_proxy",
                "ALL_PROXY", "all_proxy", "XDG_CONFIG_HOME", "VERBOSE", "VERBOSE_OUTPUT"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("KAGGLE_CONFIG_DIR", str(tmp_path / "kaggle-config"))
    monkeypatch.setenv("KAGGLE_API_ENVIRONMENT", "LOCALHOST")
    monkeypatch.setenv("NO_PROXY", "")
    monkeypatch.setenv("no_proxy", "")


def scored_episode(eid: int, seats: list[tuple[int, str, float | None, float, float]],
                   kind: str = "PUBLIC") -> dict[str, Any]:
    """An episode as ListSubmissionEpisodes answers it; a seat is ``(submission id, team, reward, score before,
    score after)``; a default 0 index is left out, as kagglesdk leaves it out."""
    agents = []
    for index, (submission, team, reward, before, after) in enumerate(seats):
        agent: dict[str, Any] = {"submissionId": submission, "reward": reward, "teamName": team,
                                 "teamId": submission % 97, "state": "EPISODE_AGENT_STATE_COMPLETE",
                                 "initialScore": before, "updatedScore": after}
        if index:
            agent["index"] = index
        agents.append(agent)
    return {"id": eid, "createTime": "2026-01-02T03:04:05Z", "endTime": "2026-01-02T03:05:05Z",
            "state": "COMPLETED", "type": f"EPISODE_TYPE_{kind}", "agents": agents}


def played_replay(first: str, second: str, teams: tuple[str, str]) -> dict[str, Any]:
    """A real game of two registered agents played by kaggle-environments: ``env.toJSON()``, with
    ``info.TeamNames`` set as Kaggle's replays carry it."""
    from agents.registry import REGISTRY
    from connectx_forge import kaggle_env

    kaggle_env.load()
    from kaggle_environments import make

    env = make("connectx")
    env.run([REGISTRY[first].load(), REGISTRY[second].load()])
    replay: dict[str, Any] = env.toJSON()
    replay.setdefault("info", {})["TeamNames"] = list(teams)
    return replay
