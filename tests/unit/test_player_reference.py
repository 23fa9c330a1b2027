"""One player reference: every kind of player argument resolves in one place (tools/connectx_forge/play/resolve.py,
with the names
of tools/connectx_forge/players/player.py), to the right kind and label, and a name that is no player is the same one
line, with
the same did-you-mean, in every command and in the Python API.

The project is made by ``cxforge new`` in a temporary folder; nothing here plays a game.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import connectx_forge as cf
from connectx_bundler.cache import is_built, needs_build
from connectx_forge.cli import main
from connectx_forge.errors import UserError
from connectx_forge.play.resolve import reference
from connectx_forge.players import player as refs
from connectx_forge.players.player import (
    ANY,
    CALLABLE,
    FAST,
    FILE,
    KAGGLE,
    OPPONENTS,
    PLAYERS,
    PROJECT,
    REGISTERED,
    SUBMISSIONS,
    Player,
)

ROOT = Path(__file__).resolve().parents[2]
BUNDLER = ROOT / "build" / "connectx_bundler"
TOOLKIT = ROOT / "tools" / "connectx_forge"


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Path:
    """A new project ``mybot`` in a temporary folder, the working folder beside it."""
    assert main(["new", str(tmp_path / "mybot")]) == 0
    capsys.readouterr()
    monkeypatch.chdir(tmp_path)
    return tmp_path / "mybot"


def test_each_kind_resolves_to_its_kind_and_label(project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    root = project.resolve()
    folder = reference(str(project))
    assert (folder.kind, folder.label, folder.path, folder.canonical) == (PROJECT, "mybot", root, str(root))
    assert reference("mybot").kind == PROJECT  # a bare folder name, from the folder above it
    entry = reference(str(project / "mybot" / "main.py"))  # the project's entry: it builds the project
    assert (entry.kind, entry.label, needs_build(entry), _built(entry)) == (FILE, "mybot", True, False)
    (tmp_path / "left.py").write_text("def agent(obs, config):\n    return 0\n")
    alone = reference("left.py")
    assert (alone.kind, alone.label, alone.path, needs_build(alone)) == (FILE, "left.py", tmp_path.resolve() /
                                                                         "left.py", False)
    assert main(["build", str(project), "-o", "b/mybot.tar.gz"]) == 0
    capsys.readouterr()
    built = reference("b/mybot.tar.gz")
    assert (built.kind, built.label, _built(built), needs_build(built)) == (FILE, "mybot.tar.gz", True, False)

    assert (reference("lookahead").kind, reference("lookahead").label) == (REGISTERED, "lookahead")
    kaggle = reference("kaggle:random")
    assert (kaggle.kind, kaggle.label, kaggle.name, kaggle.canonical) == (KAGGLE, "kaggle:random", "random",
                                                                          "kaggle:random")
    assert (reference("negamax-fast").kind, reference("negamax-fast").label) == (FAST, "negamax-fast")

    def my_agent(obs, config):  # type: ignore[no-untyped-def]
        return 0

    function = reference(my_agent, allow=ANY)
    assert (function.kind, function.label, function.agent) == (CALLABLE, "my_agent", my_agent)

    monkeypatch.chdir(project / "mybot")  # inside the project: its own name means it, not the package mybot/
    own = reference("mybot")
    assert (own.kind, own.label, own.path, own.spec) == (PROJECT, "mybot", root, "mybot")


def test_the_check_takes_kaggles_agents_bare_or_prefixed_and_nothing_else() -> None:
    for spec in ("random", "kaggle:random", "negamax", "kaggle:negamax"):
        ref = reference(spec, allow=OPPONENTS, role="opponent")
        assert ref.kind == KAGGLE and ref.name == spec.removeprefix("kaggle:")
    assert reference("random").kind == REGISTERED  # elsewhere, random is the course's agent
    with pytest.raises(UserError, match=r"^unknown opponent 'lookahead'; use Kaggle's built-in agents"):
        reference("lookahead", allow=OPPONENTS, role="opponent")
    with pytest.raises(UserError, match=r"^player 'kaggle:random' is Kaggle's built-in agent, not a submission; "
                                        r"use a registered agent \("):
        reference("kaggle:random", allow=SUBMISSIONS)
    with pytest.raises(UserError, match=r"^unknown player 'negamax' \(did you mean 'kaggle:negamax'\?\); use "):
        reference("negamax")
    with pytest.raises(UserError, match=r"^player no/such\.py: no such file or folder$"):
        reference("no/such.py")


def _built(player: Player) -> bool:
    """A file the bundler wrote: it plays as it is."""
    return player.path is not None and is_built(player.path)


def _error(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    """The one line a command says to bad input, less its ``cxforge COMMAND: error:`` prefix."""
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    return err.split(": error: ", 1)[1].rstrip("\n")


def test_an_unknown_player_is_one_message_in_every_command_and_the_api(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    head = "unknown player 'lookahaed' (did you mean 'lookahead'?); use a registered agent ("
    playing = str(pytest.raises(UserError, reference, "lookahaed").value)
    submitting = str(pytest.raises(UserError, reference, "lookahaed", allow=SUBMISSIONS).value)
    assert playing.startswith(head) and submitting.startswith(head)
    assert playing.endswith(f"; use {refs.forms(PLAYERS)}") and submitting.endswith(f"; use {refs.forms(SUBMISSIONS)}")
    for argv in (["match", "lookahaed", "random", "-n", "1"], ["tournament", "lookahaed", "random"],
                 ["sprt", "lookahaed", "random"], ["winrates", "--agents", "lookahaed", "-n", "1"]):
        assert _error(argv, capsys) == playing, argv
    for argv in (["check", "lookahaed"], ["upload", "lookahaed", "-m", "x"], ["build", "lookahaed"],
                 ["mistakes", "--agents", "lookahaed"]):
        assert _error(argv, capsys) == submitting, argv
    for call in (lambda: cf.match("lookahaed", "random", games=1), lambda: cf.tournament("lookahaed", "random"),
                 lambda: cf.sprt("lookahaed", "random")):
        with pytest.raises(UserError) as caught:
            call()
        assert str(caught.value) == playing
    with pytest.raises(UserError) as caught:
        cf.check("lookahaed")
    assert str(caught.value) == submitting
    assert _error(["check", str(ROOT / "agents" / "simple.py"), "--opponents", "negamx"], capsys).startswith(
        "unknown opponent 'negamx' (did you mean 'negamax'?); use Kaggle's built-in agents")


def test_only_the_resolver_decides_what_a_player_argument_is() -> None:
    """A static check: the kind of a player argument is decided in tools/connectx_forge/play/resolve.py (paths,
    projects, ghosts)
    and tools/connectx_forge/players/player.py (names, which need no disk) alone: no copied looks_like_path, no second
    did-you-mean, no file or name test on a spec elsewhere."""
    sources = {path: path.read_text(encoding="utf-8") for folder in ("agents", "build", "tools")
               for path in sorted((ROOT / folder).rglob("*.py"))}
    home = TOOLKIT / "play" / "resolve.py"
    names = ROOT / "tools" / "connectx_forge" / "players" / "player.py"
    patterns = {
        "looks_like_path defined": r"def looks_like_path\b",
        "a path test on a spec": r"(os\.path\.(isdir|isfile|exists|lexists)|Path)\(spec\)",
        "a registered-name test on a spec": r"\bspec in (registry\.)?REGISTRY\b",
        "a kaggle: prefix test": r"startswith\((\"kaggle:\"|'kaggle:'|KAGGLE_PREFIX)\)",
        "own_project called": r"\bown_project\(",
    }
    allowed_elsewhere = {"own_project called": {BUNDLER / "project.py"},
                         "a registered-name test on a spec": {names}, "a kaggle: prefix test": {names},
                         # a games file's spec
                         "a path test on a spec": {TOOLKIT / "leaderboard" / "review" / "games.py"}}
    for what, pattern in patterns.items():
        found = {path for path, text in sources.items() if re.search(pattern, text)}
        assert found <= {home, *allowed_elsewhere.get(what, set())}, (what, sorted(map(str, found)))
    assert len(re.findall(r"def looks_like_path\b", sources[home])) == 1
    close = {path for path, text in sources.items() if "get_close_matches" in text}
    assert close == {ROOT / "agents" / "registry.py"}, close  # the one did-you-mean: registry.did_you_mean


def test_a_player_crosses_to_a_worker_as_what_it_plays(tmp_path: Path) -> None:
    """A player pickles field by field: a named one as its name (its agent loaded again there), a file or a
    project as the file it plays, a function with its function; a project not yet built plays nothing."""
    import pickle

    from connectx_forge.play.resolve import as_player, resolve

    (tmp_path / "left.py").write_text("def agent(obs, config):\n    return 0\n")
    for player in (resolve("lookahead"), resolve("kaggle:random"), resolve(str(tmp_path / "left.py"))):
        crossed = pickle.loads(pickle.dumps(player))
        assert crossed == player and crossed.agent is None and callable(crossed.new_agent())
    assert resolve(str(tmp_path / "left.py")).file == str(tmp_path / "left.py")
    assert pickle.loads(pickle.dumps(as_player(len))).agent is len
    with pytest.raises(UserError, match="not built"):
        Player(PROJECT, "p", "p", tmp_path).new_agent()
    with pytest.raises(UserError, match="a game takes a name or a resolved player"):
        refs.player_of(str(tmp_path / "left.py"))  # the game loop reads no disk: the resolver gives it files
