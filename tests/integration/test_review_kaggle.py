"""``cxforge submissions``, ``episodes`` and ``review EPISODE_ID`` through the real kaggle CLI, against a LOCAL FAKE.

``tests/fake_kaggle.py`` answers the kagglesdk protocol (ListSubmissions,
ListSubmissionEpisodes, GetEpisodeReplay, GetEpisodeAgentLogs, IntrospectToken)
on a local port; the real ``kaggle`` executable and its Python API reach it
through ``KAGGLE_API_ENVIRONMENT=LOCALHOST`` and ``HTTP_PROXY``.  Credentials
are fake, the server checks them, and every test asserts the key never
appears in what we print.  Nothing here talks to kaggle.com.
"""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from connectx_forge.cli import main
from tests.fake_kaggle import FakeKaggle, FakeKaggleServer, isolate_cli
from tests.review_games import BLUNDER_PLY, blunder_replay

USER = "forge-tester"
KEY = "0123456789abcdef-fake-review-key"
TOKEN = "KGAT_fake_review_token_0123456789"
OURS = 51000001
SUBMISSIONS = [
    {"ref": OURS, "date": "2026-01-02T03:04:05Z", "description": "solver v2", "fileName": "submission.py",
     "publicScore": "1012.5", "status": "COMPLETE", "teamName": "Forge"},
    {"ref": OURS + 1, "date": "2026-01-03T03:04:05Z", "description": "broken", "fileName": "submission.py",
     "status": "ERROR", "errorDescription": "Validation Episode failed", "teamName": "Forge"},
]


def agent(index: int, submission: int, team: str, reward: float | None, state: str = "COMPLETE") -> dict[str, Any]:
    out: dict[str, Any] = {"submissionId": submission, "reward": reward, "teamName": team, "teamId": submission % 97,
                           "state": f"EPISODE_AGENT_STATE_{state}"}
    if index:  # kagglesdk leaves a default 0 out, as the real server does
        out["index"] = index
    return out


def episode(eid: int, kind: str, agents: list[dict[str, Any]], state: str = "COMPLETED") -> dict[str, Any]:
    return {"id": eid, "createTime": "2026-01-02T03:04:05Z", "endTime": "2026-01-02T03:05:05Z", "state": state,
            "type": f"EPISODE_TYPE_{kind}", "agents": agents}


EPISODES = [
    episode(7001, "VALIDATION", [agent(0, OURS, "Forge", 0), agent(1, OURS, "Forge", 0)]),
    episode(7002, "PUBLIC", [agent(0, 777, "Rival", -1), agent(1, OURS, "Forge", 1)]),
    episode(7003, "PUBLIC", [agent(0, OURS, "Forge", None, "ERROR_TIMEOUT"), agent(1, 778, "Other", 1)]),
    episode(7004, "PUBLIC", [agent(0, OURS, "Forge", None), agent(1, 779, "Late", None)], state="CREATED"),
]


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[FakeKaggle]:
    """A fake Kaggle that demands USER/KEY (Basic) or TOKEN (Bearer); no real credentials or proxies reach the CLI."""
    isolate_cli(monkeypatch, tmp_path)
    monkeypatch.setenv("KAGGLE_USERNAME", USER)
    monkeypatch.setenv("KAGGLE_KEY", KEY)
    with FakeKaggleServer() as server:
        monkeypatch.setenv("HTTP_PROXY", server.proxy_url)
        monkeypatch.setenv("http_proxy", server.proxy_url)
        server.require_auth = (USER, KEY, TOKEN)
        server.listed = [dict(s) for s in SUBMISSIONS]
        server.episodes[OURS] = [dict(e) for e in EPISODES]
        server.replays[7002] = json.dumps(blunder_replay()).encode()
        server.replays[7003] = json.dumps(blunder_replay()).encode()
        server.replays[7001] = json.dumps(blunder_replay()).encode()
        server.logs[(7001, 0)] = server.logs[(7001, 1)] = b'[[{"stdout": "ok", "stderr": ""}]]'
        server.logs[(7002, 1)] = server.logs[(7003, 0)] = b'[[{"stdout": "", "stderr": ""}]]'
        yield server


def cxforge(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    assert KEY not in out + err and TOKEN not in out + err
    return code, out, err


def one_error_line(err: str, command: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith(f"cxforge {command}: error: ")
    return lines[0]


def test_submissions_lists_status_and_score(fake: FakeKaggle, capsys) -> None:
    code, out, _ = cxforge(["submissions"], capsys)
    assert code == 0
    assert f"{OURS}" in out and "COMPLETE" in out and "1012.5" in out and "solver v2" in out
    assert f"{OURS + 1}" in out and "ERROR" in out
    code, out, _ = cxforge(["submissions", "--json"], capsys)
    rows = json.loads(out)
    assert [(r["ref"], r["status"], r["publicScore"]) for r in rows] == \
        [(OURS, "COMPLETE", "1012.5"), (OURS + 1, "ERROR", "")]
    [request, _] = fake.requests
    assert request.json()["competitionName"] == "connectx"
    assert request.headers["Authorization"].startswith("Basic ")


def test_a_bearer_token_is_introspected_then_used(fake: FakeKaggle, monkeypatch, capsys) -> None:
    monkeypatch.delenv("KAGGLE_USERNAME")
    monkeypatch.delenv("KAGGLE_KEY")
    monkeypatch.setenv("KAGGLE_API_TOKEN", TOKEN)
    code, out, _ = cxforge(["submissions", "--json"], capsys)
    assert code == 0 and len(json.loads(out)) == 2
    assert [r.path.rsplit("/", 1)[-1] for r in fake.requests] == ["IntrospectToken", "ListSubmissions"]
    assert fake.requests[1].headers["Authorization"] == f"Bearer {TOKEN}"


def test_episodes_show_opponent_seat_result_and_our_errors(fake: FakeKaggle, capsys) -> None:
    code, out, _ = cxforge(["episodes", str(OURS), "--json"], capsys)
    assert code == 0
    rows = {r["id"]: r for r in json.loads(out)}
    assert rows[7001]["validation"] and rows[7001]["our_seat"] == "both" and rows[7001]["opponent"] == "(itself)"
    assert (rows[7002]["our_seat"], rows[7002]["opponent"], rows[7002]["result"], rows[7002]["reward"]) == \
        ("second", "Rival", "win", 1.0)
    assert (rows[7003]["our_seat"], rows[7003]["result"], rows[7003]["our_error"]) == ("first", "error", "timeout")
    assert rows[7004]["result"] is None and rows[7004]["state"] == "CREATED"
    assert rows[7002]["our_error"] is None
    code, out, _ = cxforge(["episodes", str(OURS)], capsys)
    lines = {line[3:].split()[0]: line for line in out.splitlines() if line[3:].split()[:1] != ["episode"]}
    assert lines["7003"].startswith("!!") and "timeout" in lines["7003"] and "ERROR_TIMEOUT" in lines["7003"]
    assert not lines["7002"].startswith("!!") and "Rival" in lines["7002"]
    assert "VALIDATION" in lines["7001"]
    assert "ours broke in 1" in out


def test_download_fetches_replays_and_our_logs_once(fake: FakeKaggle, tmp_path: Path, capsys) -> None:
    folder = tmp_path / "replays"
    code, out, _ = cxforge(["episodes", str(OURS), "--download", str(folder), "--logs", "--no-progress"], capsys)
    assert code == 0
    names = sorted(p.name for p in folder.iterdir())
    assert names == ["episode-7001-agent-0-logs.json", "episode-7001-agent-1-logs.json", "episode-7001-replay.json",
                     "episode-7002-agent-1-logs.json", "episode-7002-replay.json",
                     "episode-7003-agent-0-logs.json", "episode-7003-replay.json"]  # 7004 never started
    assert json.loads((folder / "episode-7002-replay.json").read_text()) == blunder_replay()
    assert "7 files downloaded, 0 already there" in out
    before = len(fake.requests)
    code, out, _ = cxforge(["episodes", str(OURS), "--download", str(folder), "--logs", "--no-progress"], capsys)
    assert code == 0 and "0 files downloaded, 7 already there" in out
    assert [r.path.rsplit("/", 1)[-1] for r in fake.requests[before:]] == ["ListSubmissionEpisodes"]
    (folder / "episode-7002-replay.json").write_text("mine")  # --force fetches what is there again, replaced
    code, out, _ = cxforge(["episodes", str(OURS), "--download", str(folder), "--no-progress", "--force"], capsys)
    assert code == 0 and "3 files downloaded, 0 already there" in out
    assert json.loads((folder / "episode-7002-replay.json").read_text()) == blunder_replay()


def test_review_an_episode_id_downloads_its_replay_once(fake: FakeKaggle, tmp_path: Path, capsys) -> None:
    argv = ["review", "7002", "--episodes", str(tmp_path / "eps"), "--json", "--no-progress", "--time-limit", "60"]
    code, out, _ = cxforge(argv, capsys)
    assert code == 0
    review = json.loads(out)
    assert review["episode_id"] == 7002 and review["first_losing_move"]["1"] == BLUNDER_PLY
    assert (tmp_path / "eps" / "episode-7002-replay.json").is_file()
    code, again, _ = cxforge(argv, capsys)
    assert code == 0 and json.loads(again)["moves"] == review["moves"]
    assert [r.path.rsplit("/", 1)[-1] for r in fake.requests] == ["GetEpisodeReplay"]


def test_replay_an_episode_id_writes_its_page(fake: FakeKaggle, tmp_path: Path, capsys) -> None:
    out = tmp_path / "game.html"
    code, said, _ = cxforge(["replay", "7002", "--episodes", str(tmp_path / "eps"), "-o", str(out),
                             "--time-limit", "60"], capsys)
    assert code == 0 and f"wrote {out}" in said
    page = out.read_text()
    assert page.count('<tr class="move') == len(blunder_replay()["steps"]) and "first losing move" in page


@pytest.mark.parametrize("argv, method", [
    (["submissions"], "ListSubmissions"),
    (["episodes", str(OURS)], "ListSubmissionEpisodes"),
    (["review", "7002"], "GetEpisodeReplay"),
    (["episodes", str(OURS), "--download", "DIR", "--logs"], "GetEpisodeAgentLogs"),
])
@pytest.mark.parametrize("status", [400, 401, 404])
def test_http_errors_are_one_clear_line(fake: FakeKaggle, tmp_path: Path, capsys, argv: list[str], method: str,
                                        status: int) -> None:
    argv = [str(tmp_path / "dl") if a == "DIR" else a for a in argv]
    if argv[0] == "review":
        argv += ["--episodes", str(tmp_path / "eps")]
    fake.errors[method] = (status, f"{method} said no ({status}) to key {KEY}")
    code, _, err = cxforge(argv + ["--no-progress"] if argv[0] != "submissions" else argv, capsys)
    assert code == 2
    line = one_error_line(err, argv[0])
    if status == 401:
        assert "Kaggle refused the credentials" in line
    else:
        assert f"{method} said no ({status}) to key ***" in line
    if argv[0] == "review":  # nothing half-written is left to be mistaken for a replay
        assert not (tmp_path / "eps").exists() or list((tmp_path / "eps").iterdir()) == []


def test_wrong_credentials_and_unknown_ids(fake: FakeKaggle, monkeypatch, tmp_path: Path, capsys) -> None:
    code, _, err = cxforge(["episodes", "424242"], capsys)
    assert code == 2 and "Submission 424242 not found" in one_error_line(err, "episodes")
    code, _, err = cxforge(["review", "999", "--episodes", str(tmp_path)], capsys)
    assert code == 2 and "Episode 999 not found" in one_error_line(err, "review")
    code, _, err = cxforge(["episodes", "seven"], capsys)
    assert code == 2 and "SUBMISSION_ID is a number" in one_error_line(err, "episodes")
    monkeypatch.setenv("KAGGLE_KEY", "not-the-key-at-all")
    code, _, err = cxforge(["submissions"], capsys)
    assert code == 2 and "Kaggle refused the credentials" in one_error_line(err, "submissions")
    assert "not-the-key-at-all" not in err


def test_no_credentials_is_one_line_before_any_request(fake: FakeKaggle, monkeypatch, capsys) -> None:
    monkeypatch.delenv("KAGGLE_USERNAME")
    monkeypatch.delenv("KAGGLE_KEY")
    for argv in (["submissions"], ["episodes", str(OURS)], ["review", "7002"]):
        code, _, err = cxforge(argv, capsys)
        assert code == 2 and "no Kaggle credentials found" in one_error_line(err, argv[0])
    assert fake.requests == []


def test_an_unreachable_server_is_one_line(fake: FakeKaggle, monkeypatch, tmp_path: Path, capsys) -> None:
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.setenv("HTTP_PROXY", f"http://127.0.0.1:{port}")
    monkeypatch.setenv("http_proxy", f"http://127.0.0.1:{port}")
    for argv in (["submissions"], ["episodes", str(OURS)], ["review", "7002", "--episodes", str(tmp_path)]):
        code, _, err = cxforge(argv, capsys)
        assert code == 2 and "could not reach Kaggle's API" in one_error_line(err, argv[0])


@pytest.mark.parametrize("content_type", ["application/octet-stream", "application/json"])
def test_a_corrupt_replay_is_one_line(fake: FakeKaggle, tmp_path: Path, capsys, content_type: str) -> None:
    fake.replays[7002] = json.dumps(blunder_replay()).encode()[:5000]  # cut short
    fake.file_type = content_type
    code, _, err = cxforge(["review", "7002", "--episodes", str(tmp_path)], capsys)
    assert code == 2
    line = one_error_line(err, "review")
    if content_type == "application/json":  # the kaggle CLI parses it, and fails
        assert "downloading the replay of episode 7002 failed" in line
        assert not (tmp_path / "episode-7002-replay.json").exists()
    else:  # downloaded as it is, then refused by us
        assert "episode-7002-replay.json: is not a Kaggle replay or saved games: not valid JSON" in line
