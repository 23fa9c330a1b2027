"""``cxforge upload``: the real kaggle CLI against a LOCAL FAKE Kaggle API server.

``tests/fake_kaggle.py`` is a local fake server speaking the real protocol of the
kaggle CLI 2.2.4 (StartSubmissionUpload, a PUT of the file, CreateSubmission).
The real ``kaggle`` executable reaches it through ``KAGGLE_API_ENVIRONMENT=LOCALHOST``
and ``HTTP_PROXY``.  Credentials are fake, and every test asserts the key never
appears in what we print.  Nothing here talks to kaggle.com.
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from connectx_forge import credentials
from connectx_forge.cli import main
from connectx_forge.errors import UserError
from connectx_forge.submit import upload as upload_module
from tests.fake_kaggle import FakeKaggle, FakeKaggleServer, isolate_cli

FAKE_USER = "forge-tester"
FAKE_KEY = "0123456789abcdef-fake-kaggle-key"
GOOD = textwrap.dedent("""
    def agent(obs, config):
        return [c for c in range(config.columns) if obs.board[c] == 0][-1]
""")


@pytest.fixture
def isolated_kaggle(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """No real credentials or proxies reach the CLI; it will call http://localhost/api/..."""
    isolate_cli(monkeypatch, tmp_path)
    return tmp_path


@pytest.fixture
def fake(isolated_kaggle: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeKaggle]:
    with FakeKaggleServer() as server:
        monkeypatch.setenv("HTTP_PROXY", server.proxy_url)
        monkeypatch.setenv("http_proxy", server.proxy_url)
        yield server


def env_credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KAGGLE_USERNAME", FAKE_USER)
    monkeypatch.setenv("KAGGLE_KEY", FAKE_KEY)


def file_credentials(folder: Path) -> None:
    config = folder / "kaggle-config"
    config.mkdir(exist_ok=True)
    (config / "kaggle.json").write_text(json.dumps({"username": FAKE_USER, "key": FAKE_KEY}))


def submission(folder: Path, source: str = GOOD) -> Path:
    path = folder / "submission.py"
    path.write_text(source)
    return path


def cxforge_upload(path: Path, message: str, capsys: pytest.CaptureFixture[str], *flags: str) -> tuple[int, str, str]:
    code = main(["upload", str(path), "-m", message, "--games", "2", *flags])
    out, err = capsys.readouterr()
    assert FAKE_KEY not in out + err
    return code, out, err


def test_a_checked_file_is_submitted_with_its_exact_bytes_and_message(
        fake: FakeKaggle, isolated_kaggle: Path, monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    env_credentials(monkeypatch)
    path = submission(isolated_kaggle, GOOD + "# non-ASCII bytes travel intact: \u00e9\u00e8\u2014\n")
    code, out, err = cxforge_upload(path, "forge test: v1 (lookahead)", capsys)
    assert code == 0, err
    assert fake.methods() == ["StartSubmissionUpload", "PUT", "CreateSubmission", "GetSubmissionLimits"]
    start = fake.requests[0].json()
    assert start["competitionName"] == "connectx" and start["fileName"] == "submission.py"
    assert start["contentLength"] == path.stat().st_size
    assert list(fake.uploads.values()) == [path.read_bytes()]
    [token] = fake.uploads
    assert fake.submissions == [{"competitionName": "connectx", "blobFileTokens": token,
                                 "submissionDescription": "forge test: v1 (lookahead)"}]
    assert fake.requests[0].headers.get("Authorization", "").startswith("Basic ")  # the creds were used
    assert "PASS" in out and "Successfully submitted to ConnectX" in out


def test_a_server_error_exits_2_with_the_servers_message_and_no_key(
        fake: FakeKaggle, isolated_kaggle: Path, capsys) -> None:
    file_credentials(isolated_kaggle)
    fake.create_error = (400, f"Submission rejected: daily limit reached (key {FAKE_KEY})")
    code, out, err = cxforge_upload(submission(isolated_kaggle), "over the limit", capsys)
    assert code == 2
    assert "Submission rejected: daily limit reached (key ***)" in err
    assert err.strip().splitlines()[-1].startswith("cxforge upload: error: upload failed: Submission rejected")
    assert fake.methods() == ["StartSubmissionUpload", "PUT", "CreateSubmission"]


def test_an_unreachable_server_is_a_clear_error(isolated_kaggle: Path, monkeypatch, capsys) -> None:
    env_credentials(monkeypatch)
    with socket.socket() as s:  # a port that nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.setenv("HTTP_PROXY", f"http://127.0.0.1:{port}")
    monkeypatch.setenv("http_proxy", f"http://127.0.0.1:{port}")
    code, out, err = cxforge_upload(submission(isolated_kaggle), "nowhere", capsys)
    assert code == 2
    assert "could not reach Kaggle's API" in err.strip().splitlines()[-1]


def test_a_file_that_fails_the_check_is_refused_before_any_request(
        fake: FakeKaggle, isolated_kaggle: Path, monkeypatch, capsys) -> None:
    env_credentials(monkeypatch)
    path = submission(isolated_kaggle, "def agent(obs, config):\n    return -1\n")
    code, out, err = cxforge_upload(path, "broken", capsys)
    assert code == 1  # the check's FAIL
    assert "refusing to upload" in err and "INVALID" in err
    assert "FAIL" in out
    assert fake.requests == []


def test_missing_credentials_are_one_line_before_the_check(fake: FakeKaggle, isolated_kaggle: Path,
                                                            capsys) -> None:
    code, out, err = cxforge_upload(submission(isolated_kaggle), "no creds", capsys)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and "no Kaggle credentials found" in err and "KAGGLE_CONFIG_DIR" in err
    assert fake.requests == []


def test_a_missing_file_is_one_line(isolated_kaggle: Path, capsys) -> None:
    code = main(["upload", str(isolated_kaggle / "absent.py"), "-m", "x"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "no such file" in err


def test_secrets_cover_env_files_and_the_basic_auth_header(isolated_kaggle: Path, monkeypatch) -> None:
    import base64
    file_credentials(isolated_kaggle)
    monkeypatch.setenv("KAGGLE_API_TOKEN", "KGAT_fake_token_value")
    hidden = credentials.secrets()
    basic = base64.b64encode(f"{FAKE_USER}:{FAKE_KEY}".encode()).decode()
    text = f"key={FAKE_KEY} token=KGAT_fake_token_value auth=Basic {basic}"
    assert credentials.scrub(text, hidden) == "key=*** token=*** auth=Basic ***"
    assert credentials.credential_source() == "KAGGLE_API_TOKEN"


def test_credentials_are_found_where_the_cli_looks(isolated_kaggle: Path, monkeypatch) -> None:
    assert credentials.credential_source() is None
    env_credentials(monkeypatch)
    assert credentials.credential_source() == "KAGGLE_USERNAME/KAGGLE_KEY"
    file_credentials(isolated_kaggle)
    assert credentials.credential_source() == str(isolated_kaggle / "kaggle-config" / "kaggle.json")
    token = Path(os.environ["HOME"]) / ".kaggle" / "access_token"
    token.parent.mkdir()
    token.write_text("KGAT_x")
    assert credentials.credential_source() == "~/.kaggle/access_token"


def test_upload_offers_no_way_to_skip_the_check(capsys) -> None:
    with pytest.raises(SystemExit):
        main(["upload", "--help"])
    assert "skip" not in capsys.readouterr().out.replace("no way to skip", "")


def test_dry_run_checks_and_finds_the_credentials_but_sends_nothing(
        fake: FakeKaggle, isolated_kaggle: Path, monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    env_credentials(monkeypatch)
    path = submission(isolated_kaggle)
    code = main(["upload", str(path), "-m", f"v1 {FAKE_KEY}", "--games", "2", "--dry-run", "--no-progress"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert FAKE_KEY not in out + err and FAKE_USER not in out + err
    assert "PASS" in out and "dry run: nothing was sent" in out and "KAGGLE_USERNAME/KAGGLE_KEY" in out
    command = out.strip().splitlines()[-1].split()
    [would] = [line for line in out.splitlines() if line.startswith("dry run: would upload ")]
    staged = Path(would.split()[4])  # the checked copy that would be sent, named with its sha256
    assert staged != path and staged.name == path.name and str(path) in would
    assert f"(sha256 {hashlib.sha256(path.read_bytes()).hexdigest()})" in would
    assert command[0].endswith("kaggle") and command[1:6] == ["competitions", "submit", "connectx", "-f", str(staged)]
    assert "-m" in command and "***" in out  # the message is shown, a credential in it scrubbed
    assert fake.requests == [] and not staged.parent.exists()  # the copy's folder is gone once it returned


def test_dry_run_checks_without_credentials_then_fails_as_the_upload_would(fake: FakeKaggle,
                                                                             isolated_kaggle: Path, capsys) -> None:
    """``cxforge upload . --dry-run && echo ready`` must not say ready without credentials: the dry run still
    does everything (the check, the copy it would send), then exits 2 with one line, as the real upload."""
    code = main(["upload", str(submission(isolated_kaggle)), "-m", "x", "--games", "2", "--dry-run",
                 "--no-progress"])
    out, err = capsys.readouterr()
    assert code == 2, (out, err)
    lines = out.strip().splitlines()
    assert "PASS" in lines and "validation episode (the file against itself): passed" in out  # the check ran
    assert lines[-1].startswith("dry run: would upload ")  # what it would send
    [line] = err.strip().splitlines()
    assert "the real upload would stop here: no Kaggle credentials found" in line and "KAGGLE_CONFIG_DIR" in line
    assert fake.requests == []


def test_dry_run_without_the_kaggle_cli_fails_as_the_upload_would(fake: FakeKaggle, isolated_kaggle: Path,
                                                                 monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    env_credentials(monkeypatch)

    def missing() -> str:
        raise UserError("the kaggle CLI is not installed (run `make setup`, or pip install kaggle)")

    monkeypatch.setattr(upload_module, "kaggle_executable", missing)
    code = main(["upload", str(submission(isolated_kaggle)), "-m", "x", "--games", "2", "--dry-run",
                 "--no-progress"])
    out, err = capsys.readouterr()
    assert code == 2 and "PASS" in out.splitlines() and "dry run: would upload " in out
    [line] = err.strip().splitlines()
    assert "the real upload would stop here: the kaggle CLI is not installed" in line and fake.requests == []


def test_dry_run_refuses_what_the_upload_refuses(fake: FakeKaggle, isolated_kaggle: Path,
                                                monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    env_credentials(monkeypatch)
    broken = submission(isolated_kaggle, "def agent(obs, config):\n    return -1\n")
    assert main(["upload", str(broken), "-m", "x", "--games", "2", "--dry-run", "--no-progress"]) == 1
    out, err = capsys.readouterr()
    assert "refusing to upload" in err and "dry run" not in out and fake.requests == []


def test_another_games_file_goes_to_its_own_competition(
        fake: FakeKaggle, isolated_kaggle: Path, monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    env_credentials(monkeypatch)
    for game in ("rps", "planet_wars"):
        assert main(["new", str(isolated_kaggle / game), "--game", game]) == 0
        assert main(["build", str(isolated_kaggle / game), "-o", str(isolated_kaggle / f"{game}.py")]) == 0
    capsys.readouterr()
    code, out, err = cxforge_upload(isolated_kaggle / "rps.py", "rps v1", capsys)
    assert code == 0, err
    assert [s["competitionName"] for s in fake.submissions] == ["rock-paper-scissors"]
    # planet_wars' competition is not one the toolkit knows: one line, before any game or request
    code, out, err = cxforge_upload(isolated_kaggle / "planet_wars.py", "pw v1", capsys)
    assert code == 2 and "--competition NAME" in err and err.strip().count("\n") == 0 and out == ""
    assert len(fake.requests) == 4
    code, out, err = cxforge_upload(isolated_kaggle / "planet_wars.py", "pw v1", capsys, "--competition", "Bad/Name")
    assert code == 2 and "is not a Kaggle competition's name" in err and len(fake.requests) == 4
    code, out, err = cxforge_upload(isolated_kaggle / "planet_wars.py", "pw v1", capsys, "--competition",
                                    "planet-wars")
    assert code == 0, err
    assert [s["competitionName"] for s in fake.submissions] == ["rock-paper-scissors", "planet-wars"]
