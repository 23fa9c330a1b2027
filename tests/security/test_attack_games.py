"""Hostile agents on games other than ConnectX (docs/security.md): on Rock, Paper, Scissors (one sign a step,
both seats at once), Planet Wars (a list of orders) and Kore Fleets (an object of commands), an agent that
raises, exits, hangs, returns an action over the game's bound or one that is not JSON, eats memory, forks
without end, reads credentials or reaches for the network is contained by the jail and scored as Kaggle
scores it: its seat's status is the one kaggle-environments gives an agent that fails the same way in its own
process (ERROR, INVALID, TIMEOUT; Rock, Paper, Scissors' interpreter makes every failure INVALID), the record's
outcome and culprit follow, and the other seat, an honest agent in a jail of its own, wins (an action that is
not JSON is the one exception: where the game's schema has a default, Kaggle plays the default and the game goes
on).  The referee is unharmed: no process of the game is left, the planted ``~/.kaggle/kaggle.json`` is unread
and unchanged, and no secret is in the record.  Skipped where bubblewrap is missing or refused."""

from __future__ import annotations

import base64
import json
import os
import socket
import threading
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from connectx_forge import kaggle_env
from connectx_forge.games import catalog
from connectx_forge.play.episode import BROKE, configuration, episode_result
from connectx_forge.play.game import play_job
from connectx_forge.play.game_record import GameRecord
from connectx_forge.play.resolve import as_player
from connectx_forge.play.settings import GameJob, GameSettings
from connectx_forge.sandbox import jail, warden
from connectx_forge.sandbox.limits import MIB, Limits
from tests.harness import live_descendants, new_descendants, wait_gone, warden_processes

JAILED, HOW = jail.status()
pytestmark = pytest.mark.skipif(not (JAILED and jail.probe().alone), reason=f"agents are {HOW}")

GAMES = ("rps", "planet_wars", "kore_fleets")
SECRET = "cxforge-games-secret-" + uuid.uuid4().hex[:16]
FAKE_KEY = "cxforge-games-env-key-7c41d9e0"
LIMITS = Limits(memory=512 * MIB)
OVERAGE = 1  # the overage the hang tests give (kaggle-environments' own is 60 s: test_a_hang_with_kaggles_overage)

# Each kind: the agent's body (``ACTION`` is the game's legal action; ``PLANTED`` the planted file's path and
# ``PORT`` a listener on localhost), and what the same failure is in kaggle-environments' own process.
ATTACKS: dict[str, str] = {
    "raises": 'raise RuntimeError("cxforge-attack raises")',
    "exits": "os._exit(3)",
    "hangs": "while True:\n    pass",
    "huge": 'return "x" * (MAX_ACTION + 1)',
    "enormous": 'return "x" * (8 << 20)',
    "not_json": "return {0, 1}",
    "memory": "HOARD.append(bytearray(3 << 30))\nreturn ACTION",
    "forks": """\
started, refused = 0, 0
for _ in range(300):
    try:
        pid = os.fork()
    except OSError:
        refused += 1
        continue
    if pid == 0:
        time.sleep(300)
        os._exit(0)
    started += 1
print("FOUND " + json.dumps({"started": started, "refused": refused}))
raise RuntimeError(f"forked {started}, refused {refused}")""",
    "credentials": """\
found = {"env": os.environ.get("KAGGLE_KEY", ""), "home": read(os.path.expanduser("~/.kaggle/kaggle.json")),
         "planted": read(PLANTED), "folder": "\\n".join(os.listdir(os.path.dirname(PLANTED)))
         if os.path.isdir(os.path.dirname(PLANTED)) else ""}
pid = os.getpid()
for i in range(8):  # every ancestor's environment, and the kaggle.json under each HOME it names
    pid = int((read(f"/proc/{pid}/stat").rsplit(")", 1)[1].split() or ["0", "0"])[1])
    if pid <= 1:
        break
    env = read(f"/proc/{pid}/environ")
    found[f"environ{i}"] = env
    for item in env.split("\\0"):
        if item.startswith("HOME="):
            found[f"home{i}"] = read(item[5:] + "/.kaggle/kaggle.json")
text = " | ".join(found.values())
print("FOUND " + json.dumps({"marker": MARKER in text, "seen": os.path.exists(PLANTED) or "kaggle.json" in text,
                             "b64": base64.b64encode(text.encode()).decode()}))
raise RuntimeError(text.replace(chr(10), " ")[:2000])""",
    "network": """\
found = {}
for name, address in (("localhost", ("127.0.0.1", PORT)), ("internet", ("1.1.1.1", 443)),
                      ("dns", ("8.8.8.8", 53))):
    try:
        socket.create_connection(address, timeout=2).close()
        found[name] = "connected"
    except OSError as exc:
        found[name] = type(exc).__name__
try:
    found["resolve"] = socket.gethostbyname("www.kaggle.com")
except OSError as exc:
    found["resolve"] = type(exc).__name__
print("FOUND " + json.dumps(found))
raise RuntimeError("network: " + json.dumps(found))""",
}
DETAILS = {"raises": "cxforge-attack raises", "exits": "status 3", "huge": "over the bound",
           "enormous": "over the bound", "not_json": "not JSON", "memory": "memory", "forks": "forked",
           "network": "network"}


def agent_text(kind: str, info: catalog.GameInfo, planted: str, port: int) -> str:
    body = "\n".join("    " + line for line in ATTACKS[kind].splitlines())
    return (f"import base64, json, os, socket, time\n\nACTION = {info.action!r}\nMAX_ACTION = {info.max_action}\n"
            f"PLANTED = {planted!r}\nPORT = {port}\nMARKER = {SECRET[:24]!r}\nHOARD = []\n\n\n"
            "def read(path):\n    try:\n        with open(path, 'rb') as fh:\n"
            "            return fh.read().decode(errors='replace')\n    except OSError:\n        return ''\n\n\n"
            f"def agent(obs, config):\n{body}\n")


def stand_in(kind: str) -> Callable[[Any, Any], object]:
    """The same failure in kaggle-environments' own process: a raise, a timeout, or the value itself."""
    from kaggle_environments.errors import DeadlineExceeded

    def agent(obs: Any, config: Any) -> object:
        if kind == "hangs":
            return DeadlineExceeded()
        if kind == "not_json":
            return {0, 1}
        raise RuntimeError(kind)  # a crash, memory, an action over the bound: ERROR

    return agent


def honest(info: catalog.GameInfo) -> Callable[[Any, Any], object]:
    return lambda obs, config: info.action


def kaggle_statuses(kind: str, info: catalog.GameInfo, seat: int, seed: int) -> list[str]:
    """The final statuses kaggle-environments gives the failure in its own process, ``seat`` failing."""
    kaggle_env.load()
    from kaggle_environments import make

    env = make(info.name, configuration=configuration(info, seed))
    agents = [honest(info), honest(info)]
    agents[seat - 1] = stand_in(kind)
    return [str(s.status) for s in env.run(agents)[-1]]


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, Any]]:
    """HOME holding a fake ``.kaggle/kaggle.json``, a key in the environment, a listener on localhost that
    records what it accepts, and a warden started afterwards (so that it has all of it to hide)."""
    home = tmp_path / "home"
    (home / ".kaggle").mkdir(parents=True)
    planted = home / ".kaggle" / "kaggle.json"
    planted.write_text(json.dumps({"username": "victim", "key": SECRET}) + "\n")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("KAGGLE_KEY", FAKE_KEY)
    monkeypatch.setenv("CXFORGE_CACHE", str(tmp_path / "cache"))
    server = socket.create_server(("127.0.0.1", 0))
    accepted: list[Any] = []
    threading.Thread(target=lambda: accepted.append(server.accept()), daemon=True).start()
    warden.reset()
    try:
        yield {"planted": str(planted), "port": server.getsockname()[1], "accepted": accepted,
               "text": planted.read_text()}
    finally:
        warden.reset()
        server.close()


@pytest.fixture
def short_overage(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every game's remainingOverageTime at ``OVERAGE`` s: a hang is cut after actTimeout + 1 s + the margin,
    as Kaggle's own accounting cuts it (the referee takes the overage from the observation)."""
    kaggle_env.load()
    import kaggle_environments

    for name in GAMES:
        kaggle_environments.make(name)  # its first make expands the specification's shorthand (60) in place
        spec = kaggle_environments.environments[name]["specification"]["observation"]["remainingOverageTime"]
        monkeypatch.setitem(spec, "default", OVERAGE)


def attack(kind: str, game: str, world: dict[str, Any], tmp_path: Path, seat: int) -> GameRecord:
    """One game of ``kind``'s agent (in ``seat``) against an honest file, both jailed; checked as Kaggle scores
    it and for what it left behind."""
    info = catalog.get(game)
    hostile = tmp_path / f"{kind}.py"
    hostile.write_text(agent_text(kind, info, world["planted"], world["port"]))
    good = tmp_path / "honest.py"
    good.write_text(f"def agent(obs, config):\n    return {info.action!r}\n")
    a, b = (hostile, good) if seat == 1 else (good, hostile)
    before = set(live_descendants(os.getpid()))
    rec = play_job(GameJob(as_player(str(a)), as_player(str(b)), 1, 11, 0,
                           settings=GameSettings(game=game, limits=LIMITS)))
    other = 3 - seat
    expected = kaggle_statuses(kind, info, seat, 11)
    assert rec.statuses == expected, (rec.statuses, expected, rec.detail)
    assert (rec.outcome, rec.winner, rec.culprit) == episode_result(rec.statuses, rec.rewards)
    assert expected[other - 1] == "DONE"
    if kind == "not_json" and expected[seat - 1] == "DONE":  # the schema's default stood in, as Kaggle's does
        assert rec.culprit is None and rec.rewards is not None and None not in rec.rewards, rec
    else:
        assert expected[seat - 1] in BROKE, expected
        assert (rec.outcome, rec.winner, rec.culprit) == (BROKE[expected[seat - 1]], other, seat), rec.detail
        assert rec.rewards is not None and rec.rewards[seat - 1] is None and rec.rewards[other - 1] is not None
        if kind in DETAILS:
            assert DETAILS[kind] in (rec.detail or ""), rec.detail
    text = json.dumps(rec.to_json())
    assert SECRET not in text and FAKE_KEY not in text
    assert base64.b64encode(SECRET.encode()).decode()[:20] not in text
    assert Path(world["planted"]).read_text() == world["text"]
    left = wait_gone(lambda: new_descendants(before, warden_processes()))
    assert not left, f"processes left behind: {left}"
    return rec


def found(rec: GameRecord, seat: int) -> dict[str, Any]:
    """What the agent in ``seat`` reported on its ``FOUND`` line."""
    lines = [ln for ln in (rec.logs or {}).get(str(seat), "").splitlines() if ln.startswith("FOUND ")]
    assert lines, rec.logs
    result: dict[str, Any] = json.loads(lines[-1][len("FOUND "):])
    return result


@pytest.mark.parametrize("game", GAMES)
@pytest.mark.parametrize("kind", ["raises", "exits", "huge", "enormous", "not_json", "memory"])
def test_a_broken_agent_loses_as_kaggle_scores_it(kind: str, game: str, world: dict[str, Any],
                                                   tmp_path: Path) -> None:
    attack(kind, game, world, tmp_path, seat=1 if kind in ("raises", "huge", "memory") else 2)


@pytest.mark.parametrize("game", GAMES)
def test_a_hang_is_a_timeout(game: str, world: dict[str, Any], tmp_path: Path, short_overage: None) -> None:
    rec = attack("hangs", game, world, tmp_path, seat=1)
    assert rec.statuses is not None and rec.statuses[0] == ("INVALID" if game == "rps" else "TIMEOUT")


@pytest.mark.slow
def test_a_hang_with_kaggles_overage(world: dict[str, Any], tmp_path: Path) -> None:
    """actTimeout + the whole 60 s of overage, as Kaggle gives it."""
    rec = attack("hangs", "planet_wars", world, tmp_path, seat=2)
    assert rec.outcome == "timeout"


@pytest.mark.parametrize("game", GAMES)
def test_forks_are_bounded_and_reaped(game: str, world: dict[str, Any], tmp_path: Path) -> None:
    rec = attack("forks", game, world, tmp_path, seat=1)
    said = found(rec, 1)
    assert said["refused"] > 0 and said["started"] < 300, said


@pytest.mark.parametrize("game", GAMES)
def test_credentials_cannot_be_read(game: str, world: dict[str, Any], tmp_path: Path) -> None:
    rec = attack("credentials", game, world, tmp_path, seat=2)
    said = found(rec, 2)
    assert said["marker"] is False and said["seen"] is False, said
    read = base64.b64decode(said["b64"]).decode(errors="replace")
    assert SECRET not in read and FAKE_KEY not in read, read[:500]


@pytest.mark.parametrize("game", GAMES)
def test_the_network_cannot_be_reached(game: str, world: dict[str, Any], tmp_path: Path) -> None:
    rec = attack("network", game, world, tmp_path, seat=1)
    said = found(rec, 1)
    assert set(said) == {"localhost", "internet", "dns", "resolve"}, said
    assert "connected" not in said.values(), said
    assert not any(part.count(".") == 3 and part.replace(".", "").isdigit() for part in said.values()), said
    assert not world["accepted"], said


def test_a_replay_its_schema_refuses_is_drawn_as_text(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A replay kaggle-environments' schema refuses (rps' own summed rewards do) is drawn without the schema:
    what it holds still reaches the page only as script-safe data, under the page's policy."""
    from connectx_forge.cli import main

    kaggle_env.load()
    from kaggle_environments import make

    env = make("rps", configuration={"episodeSteps": 5})
    env.run(["rock", "paper"])
    replay = env.toJSON()
    hostile = "</script><img src=x onerror=alert(1)><!--"
    replay["info"] = {"TeamNames": [hostile, hostile]}
    replay["steps"][-1][0]["reward"] = 919  # outside the schema's enum, as Kaggle's own rps episodes are
    replay["steps"][1][0]["observation"]["note"] = hostile
    path = tmp_path / "hostile-replay.json"
    path.write_text(json.dumps(replay))
    page = tmp_path / "page.html"
    assert main(["replay", str(path), "-o", str(page)]) == 0
    html = page.read_text()
    assert "rps replay" in capsys.readouterr().out
    assert "<img src=x" not in html and "</script><img" not in html
    assert "Content-Security-Policy" in html and "default-src 'none'" in html
