"""Hostile input files: every file a user gives cxforge is bounded before it is parsed
(``tools/connectx_forge/boundedread.py``).

A replay, a games file, an episode list, a regressions file, a results store or a ``cxforge.toml`` may be
anyone's.  Each attack goes through the real command and must end in one error line naming the file and the
bound (exit status 2), never a traceback and never unbounded memory: a 200,000-deep JSON list (json recursed
into a ``RecursionError``), a 100,000-deep TOML array and a 100,000-part dotted key (``tomllib`` recursed, or
ate gigabytes), a 164-byte replay declaring a 10^9 x 10^9 board (``review`` grew to 21 GB), a file over the
size bound, a FIFO.  Hypothesis then feeds random and adversarial JSON and TOML into every reader, which must
return or raise ``UserError``, nothing else.
"""

from __future__ import annotations

import json
import os
import resource
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from connectx_bundler.errors import BuildError
from connectx_bundler.project import read_settings
from connectx_forge import boundedread
from connectx_forge.arena.ladder.episodes_in import read_episodes
from connectx_forge.arena.store import RunConfig, Store
from connectx_forge.boundedread import too_deep
from connectx_forge.cli import main
from connectx_forge.credentials import secrets
from connectx_forge.errors import UserError
from connectx_forge.leaderboard.regress import data as regressions
from connectx_forge.leaderboard.review.games import read_file
from connectx_forge.play.records import GameWriter, read_games
from connectx_forge.solver.book_builder import read_progress
from connectx_forge.solver.heldout import read_records
from connectx_forge.solver.mistakes import WeakCache

DEEP_JSON = "[" * 200_000 + "]" * 200_000
DEEP_TOML = {
    "array": "a = " + "[" * 100_000 + "]" * 100_000 + "\n",
    "inline table": "a = " + "{b = " * 100_000 + "1" + "}" * 100_000 + "\n",
    "dotted key": "a" + ".a" * 100_000 + " = 1\n",
    "table header": "[" + "a." * 100_000 + "a]\n",
}
HUGE_BOARD = {"configuration": {"rows": 10**9, "columns": 10**9, "inarow": 4},
              "steps": [[{"observation": {"board": []}, "status": "ACTIVE"}, {"status": "INACTIVE"}]]}
AGENT = "def agent(obs, config):\n    return 0\n"


def one_line_error(code: int, err: str, *words: str) -> None:
    """The command failed with exit status 2 and one error line holding ``words``."""
    lines = err.strip().splitlines()
    assert code == 2, err
    assert len(lines) == 1 and "Traceback" not in err, err
    assert all(w in lines[0] for w in words), lines[0]


def project(root: Path, settings_text: str) -> Path:
    """An agent project at ``root``: ``cxforge.toml`` holding ``settings_text`` and a one-line agent."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "cxforge.toml").write_text(settings_text)
    (root / "main.py").write_text(AGENT)
    return root


@pytest.mark.parametrize("command", [
    ["review", "{f}"], ["replay", "{f}", "-o", "{d}/game.html"], ["logs", "{f}"],
    ["compare", "--new", "{f}", "--base", "{f}"], ["models", "{f}"], ["regress", "add", "--project", "{d}/proj", "{f}"],
    ["ladder", "--fit", "{f}"]])
def test_a_deep_json_file_is_one_line_in_every_command(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                      command: list[str]) -> None:
    file = tmp_path / "deep.json"
    file.write_text(DEEP_JSON)
    project(tmp_path / "proj", 'name = "mybot"\nentry = "main:agent"\n')
    code = main([arg.format(f=file, d=tmp_path) for arg in command])
    one_line_error(code, capsys.readouterr().err, str(file), "nested deeper than 64 levels")


def test_ghosts_skip_a_deep_replay_with_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    file = tmp_path / "deep.json"
    file.write_text(DEEP_JSON)
    assert main(["ghosts", str(file)]) == 0  # ghosts skip what is no replay (logs sit beside the replays)
    err = capsys.readouterr().err
    assert f"skipped {file}: JSON nested deeper than 64 levels" in err and "Traceback" not in err


def test_a_deep_regressions_file_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = project(tmp_path / "proj", 'name = "mybot"\n')
    (root / "tests").mkdir()
    (root / "tests" / "regressions.json").write_text(DEEP_JSON)
    code = main(["regress", "list", "--project", str(root)])
    one_line_error(code, capsys.readouterr().err, "regressions.json", "nested deeper than 64 levels")


@pytest.mark.parametrize("kind", list(DEEP_TOML))
@pytest.mark.parametrize("command", [["build", "{p}", "-o", "{d}/out/s.py"], ["check", "{p}"],
                                     ["match", "{p}", "random", "-n", "1"]])
def test_a_deep_cxforge_toml_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str], command: list[str],
                                         kind: str) -> None:
    root = project(tmp_path / "proj", DEEP_TOML[kind])
    start = time.process_time()
    code = main([arg.format(p=root, d=tmp_path) for arg in command])
    one_line_error(code, capsys.readouterr().err, "cxforge.toml", "TOML nested deeper than 32 levels")
    assert time.process_time() - start < 10  # the dotted key ran tomllib for minutes and gigabytes


def test_a_deep_build_manifest_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    built = tmp_path / "submission.py"
    built.write_text(AGENT)
    (tmp_path / "submission.py.json").write_text(DEEP_JSON)
    one_line_error(main(["check", str(built)]), capsys.readouterr().err, "submission.py.json",
                   "not a readable JSON manifest", "nested deeper than 64 levels")


def test_a_cxforge_toml_over_the_size_bound_is_one_line(tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    root = project(tmp_path / "proj", "")
    with open(root / "cxforge.toml", "w") as fh:
        fh.write('name = "mybot"\n' + "#" * boundedread.MAX_SETTINGS + "\n")
    code = main(["build", str(root), "-o", str(tmp_path / "s.py")])
    one_line_error(code, capsys.readouterr().err, "cxforge.toml", "larger than 1 MiB")


def _limited(megabytes: int) -> Callable[[], None]:
    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (megabytes << 20, megabytes << 20))
    return limit


@pytest.mark.parametrize(("command", "content"), [
    (["review"], json.dumps(HUGE_BOARD)),
    (["replay"], json.dumps(HUGE_BOARD)),
    (["logs"], json.dumps({"players": ["a", "b"], "size": [10**9, 10**9, 4], "seed": 0, "moves": [0],
                           "times": [0.0], "outcome": "draw"}))])
def test_a_file_declaring_a_huge_board_is_refused_within_memory(tmp_path: Path, command: list[str],
                                                               content: str) -> None:
    """The replay that made ``review`` grow to 21 GB, run under a 1 GiB address space: the bound refuses it
    before anything is sized by it (without it, a MemoryError traceback)."""
    file = tmp_path / "huge.json"
    file.write_text(content)
    out = tmp_path / "out.html"
    argv = [*command, str(file)] + (["-o", str(out)] if command == ["replay"] else [])
    proc = subprocess.run([sys.executable, "-m", "connectx_forge", *argv], capture_output=True, text=True,
                          timeout=120, preexec_fn=_limited(1024))
    one_line_error(proc.returncode, proc.stderr, str(file), "1000000000x1000000000 board",
                   "rows and columns 1 to 20")


def test_a_replay_with_more_steps_than_its_board_holds_is_refused(tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    step = [{"observation": {"board": [0] * 42}, "status": "ACTIVE"}, {"status": "INACTIVE"}]
    file = tmp_path / "long.json"
    file.write_text(json.dumps({"configuration": {"rows": 6, "columns": 7, "inarow": 4}, "steps": [step] * 44}))
    one_line_error(main(["review", str(file)]), capsys.readouterr().err, "44 steps", "6x7")


def test_files_over_the_size_bound_and_fifos_are_refused(tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    big = tmp_path / "big.json"
    with open(big, "wb") as fh:
        fh.truncate(boundedread.MAX_DOCUMENT + 1)  # sparse: no disk, and never read
    one_line_error(main(["review", str(big)]), capsys.readouterr().err, str(big), "larger than 64 MiB")
    fifo = tmp_path / "games.jsonl"
    os.mkfifo(fifo)  # opening it to read would wait for a writer forever
    one_line_error(main(["logs", str(fifo)]), capsys.readouterr().err, str(fifo), "not a regular file")


def test_a_games_file_with_a_line_over_the_bound_is_refused(tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    file = tmp_path / "games.jsonl"
    file.write_text('"' + "x" * boundedread.MAX_LINE + '"\n')
    one_line_error(main(["logs", str(file)]), capsys.readouterr().err, str(file), "line 1 is longer than 1 MiB")


def test_numbers_beyond_bounds_are_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    file = tmp_path / "episodes.json"
    for number in ("1" + "0" * 5000, "NaN", "1e999"):
        file.write_text('{"episodes": [{"id": ' + number + "}]}")
        one_line_error(main(["ladder", "--fit", str(file)]), capsys.readouterr().err, str(file),
                       "not JSON within bounds")


def test_a_results_store_with_hostile_rows_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "runs.sqlite"
    with Store(path) as store:
        store.register("r", "match", RunConfig({"a": 1}))
    db = sqlite3.connect(path)
    db.execute("UPDATE runs SET config = ?", (DEEP_JSON,))
    db.execute("INSERT INTO games VALUES ('r', 'a vs b', '', 1, 0, 0, 'a', 'b', ?)",
               (json.dumps({"players": ["a", "b"], "size": [10**9, 10**9, 4], "seed": 0, "moves": [],
                            "times": [], "outcome": "draw"}),))
    db.commit()
    db.close()
    with Store(path) as store:
        with pytest.raises(UserError, match="nested deeper than 64 levels"):
            store.runs()
        with pytest.raises(UserError, match="1000000000x1000000000 board"):
            store.games("r")


@pytest.mark.parametrize("extras", [{"versions": ["a"]}, {"labels": {"a": 1}}, {"mixed": "a"},
                                    {"settings_run": 5}])
def test_a_stored_run_whose_labels_or_versions_are_not_cxforge_s_is_one_line(tmp_path: Path,
                                                                            extras: dict[str, object]) -> None:
    """A run's config read back from a store (anyone's file): what it adds to the settings is checked, so that
    choosing the run to resume never compares or joins values of another type."""
    path = tmp_path / "runs.sqlite"
    with Store(path) as store:
        store.register("r", "tournament", RunConfig({"players": ["a", "b"]}))
    db = sqlite3.connect(path)
    db.execute("UPDATE runs SET config = ?", (json.dumps({"players": ["a", "b"], **extras}),))
    db.commit()
    db.close()
    with Store(path) as store, pytest.raises(UserError, match="labels, versions or mixed are not what cxforge"):
        store.runs()


def test_appending_to_a_games_file_with_a_deep_line_keeps_it(tmp_path: Path) -> None:
    """``--save FILE --append`` reads the keys of the games the file holds: a deep line is skipped, and kept."""
    file = tmp_path / "games.jsonl"
    file.write_text(DEEP_JSON + "\n")
    GameWriter(file, append=True).close()
    assert file.read_text() == DEEP_JSON + "\n"


def test_a_deep_kaggle_json_leaves_the_scrubbing_alone(tmp_path: Path) -> None:
    (tmp_path / ".kaggle").mkdir()
    (tmp_path / ".kaggle" / "kaggle.json").write_text(DEEP_JSON)
    (tmp_path / "kaggle.json").write_text('{"username": "me", "key": "s3cr3t-key"}')
    assert "s3cr3t-key" in secrets({"HOME": str(tmp_path), "KAGGLE_CONFIG_DIR": str(tmp_path)})


def test_the_solvers_own_files_skip_a_deep_line(tmp_path: Path) -> None:
    """The book's progress file, a held-out scores file and the mistakes' cache skip a line they cannot read (a
    torn write): a deep one too, never a RecursionError."""
    file = tmp_path / "progress.jsonl"
    file.write_text(DEEP_JSON + "\n")
    assert read_progress(file) == {}
    assert read_records(file) == (None, [])
    assert WeakCache(file).scores == {}


def test_the_nesting_scan_is_linear_in_escaped_quotes() -> None:
    """An unterminated string of escaped quotes made the scan retry from each one: 40 KB took 40 s of CPU."""
    text = "[" * 100 + '"' + '\\"' * 500_000
    start = time.process_time()
    assert too_deep(text, 64)
    assert time.process_time() - start < 5


# -- Hypothesis: random and adversarial input into every reader -----------------------------------------------

_LEAVES = st.one_of(st.none(), st.booleans(), st.integers(-10**30, 10**30), st.floats(allow_nan=False),
                    st.text(max_size=8), st.sampled_from([6, 7, 4, 0, -1, 10**9, "6", 6.5]))
_JSON_VALUES = st.recursive(_LEAVES, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(st.sampled_from(
        ["steps", "moves", "size", "players", "configuration", "rows", "columns", "inarow", "observation",
         "board", "status", "episodes", "agents", "id", "outcome", "seed", "times", "opening", "info"]),
        inner, max_size=5)), max_leaves=30)


@st.composite
def _replays(draw: st.DrawFn) -> str:
    """A replay-shaped document with random sizes, boards and statuses."""
    rows, columns = draw(st.integers(-2, 25)), draw(st.integers(-2, 25))
    cells = max(rows, 0) * max(columns, 0)
    board = st.lists(st.integers(0, 2), min_size=cells, max_size=cells) if cells <= 64 else st.just([])
    agent = st.fixed_dictionaries({"observation": st.fixed_dictionaries({"board": board}),
                                   "status": st.sampled_from(["ACTIVE", "INACTIVE", "DONE", "INVALID"]),
                                   "action": st.integers(-1, 30)})
    steps = draw(st.lists(st.lists(agent, min_size=2, max_size=2), max_size=6))
    return json.dumps({"configuration": {"rows": rows, "columns": columns, "inarow": draw(st.integers(-1, 30))},
                       "steps": steps})


@st.composite
def _nested(draw: st.DrawFn, opens: tuple[str, ...], closes: tuple[str, ...]) -> str:
    """Brackets nested up to thousands deep (past the parsers' recursion limit), with quotes, escapes and text
    spliced in."""
    noise = st.sampled_from(["", '"', '\\"', "\\", "'", "'''", '"""', "#", "\n", "1", ",", "a.b", "=", ":"])
    opening = "".join(draw(st.sampled_from(opens)) + draw(noise) for _ in range(draw(st.integers(1, 4))))
    closing = "".join(draw(noise) + draw(st.sampled_from(closes)) for _ in range(draw(st.integers(0, 4))))
    depth = draw(st.integers(0, 3000))
    return opening * depth + closing * draw(st.integers(0, depth))


def _deep(starts: list[tuple[str, str]]) -> st.SearchStrategy[str]:
    """A start, then its opener repeated past the parsers' recursion limit, then a little text."""
    return st.builds(lambda start, depth, tail: start[0] + start[1] * depth + tail, st.sampled_from(starts),
                     st.integers(900, 5000), st.text(max_size=5))


JSON_INPUTS = st.one_of(st.binary(max_size=200), st.text(max_size=200), _JSON_VALUES.map(json.dumps),
                        st.lists(_JSON_VALUES.map(json.dumps), max_size=4).map("\n".join), _replays(),
                        _nested(("[", "{\"a\":", "[\"", "{"), ("]", "}", "\"]")),
                        _deep([("", "["), ("", '{"a":'), ("", "[1,"), ('{"steps":', "["), ('{"episodes":', "[")]))
TOML_INPUTS = st.one_of(st.binary(max_size=200), st.text(max_size=200),
                        _deep([("a = ", "["), ("a = ", "{b = "), ("a", ".a"), ("[", "a.")]),
                        _nested(("a = [", "[", "{b = ", "a.", '"', "'''", '"""'), ("]", "}", "\n")),
                        st.lists(st.sampled_from(['name = "x"', 'entry = "main:agent"', "[floors]",
                                                 "random = 0.9", "a.b.c = 1", "x = [1, [2, [3]]]",
                                                 "t = {a = {b = 1}}", 'q = """\\"""', "d = 1979-05-27T07:32:00.999",
                                                 "[[a.b]]", "#", "f = 1.5e3", "'k' = 1"]), max_size=8)
                        .map("\n".join))


def _write(path: Path, content: bytes | str) -> Path:
    path.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8", "surrogatepass"))
    return path


def _regressions(path: Path) -> Any:
    return regressions.read(path)


JSON_READERS: dict[str, Callable[[Path], Any]] = {
    "review": read_file, "games": read_games, "episodes": lambda p: read_episodes([p]),
    "regressions": _regressions, "json": boundedread.read_json}


@pytest.mark.parametrize("reader", list(JSON_READERS))
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(content=JSON_INPUTS)
def test_every_json_reader_returns_or_says_user_error(tmp_path: Path, reader: str, content: bytes | str) -> None:
    path = _write(tmp_path / "input.json", content)
    try:
        JSON_READERS[reader](path)
    except UserError:
        pass  # any other exception fails the test


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(content=TOML_INPUTS)
def test_every_toml_reader_returns_or_says_user_error(tmp_path: Path, content: bytes | str) -> None:
    path = _write(tmp_path / "cxforge.toml", content)
    for read in (boundedread.read_toml, read_settings):
        try:
            read(path)
        except (UserError, BuildError):
            pass


@settings(max_examples=60, deadline=None)
@given(rows=_LEAVES, columns=_LEAVES, inarow=_LEAVES)
def test_board_size_is_within_bounds_or_refused(rows: Any, columns: Any, inarow: Any) -> None:
    try:
        r, c, k = boundedread.board_size(rows, columns, inarow, "f")
    except UserError:
        return
    assert 1 <= r <= boundedread.MAX_SIDE and 1 <= c <= boundedread.MAX_SIDE and 1 <= k <= max(r, c)


@pytest.mark.parametrize("episodes", [
    [{"id": 1, "agents": "ab"}], [{"id": 1, "agents": 5}], [{"id": 1, "agents": [1, 2]}],
    [{"id": 1, "type": "EPISODE_TYPE_VALIDATION", "agents": [{"submissionId": [1]}, {"submissionId": "²"}]}],
    [{"id": 1, "agents": [{"submissionId": 1, "initialScore": "x", "updatedScore": 1, "index": 0},
                          {"submissionId": 2, "initialScore": 1, "updatedScore": 1, "index": 1}]}]])
def test_an_episode_list_with_fields_of_other_types_is_one_user_error(tmp_path: Path, episodes: list[Any]) -> None:
    path = _write(tmp_path / "e.json", json.dumps({"episodes": episodes}))
    try:
        read_episodes([path])
    except UserError as exc:
        assert str(path) in str(exc)
