"""``cxforge check``: the real kaggle_environments loads small hand-written files from an empty folder.

Each test writes a tiny single-file agent and checks it with few games (mostly
against ``random``, which is fast); the timeout tests shrink actTimeout and the
overage bank so that Kaggle's own timeout rule triggers in a fraction of a second.
Tests that count broken games skip the validation episode (``validation=False``),
which would stop the check at once; tests/integration/test_check_hosts.py covers it.
"""

from __future__ import annotations

import hashlib
import json
import textwrap
from pathlib import Path

import pytest

from connectx_forge.arena.match import game_seed
from connectx_forge.cli import main
from connectx_forge.errors import UserError
from connectx_forge.play.settings import GameSettings
from connectx_forge.submit import check
from connectx_forge.submit.check import Gate, check_file
from connectx_forge.submit.check_report import format_report
from connectx_forge.submit.kaggle_game import GameResult
from connectx_forge.submit.verdict import Checked, CheckReport, summarize

LEFTMOST = """
def agent(obs, config):
    return [c for c in range(config.columns) if obs.board[c] == 0][0]
"""


def write(folder: Path, name: str, source: str) -> Path:
    path = folder / name
    path.write_text(textwrap.dedent(source))
    return path


def quick(path: Path, games: int = 2, act_timeout: float = 2.0, overage: float = 60.0) -> CheckReport:
    """A check against random alone, without the validation episode, on one worker."""
    return check_file(path, Gate(games, opponents=("random",), workers=1), validation=False,
                      settings=GameSettings(act_timeout=act_timeout, overage=overage))


def test_a_legal_agent_passes_against_both_opponents_in_both_seats(tmp_path: Path) -> None:
    report = check_file(write(tmp_path, "good.py", LEFTMOST), Gate(2, workers=2))
    assert report.passed, report.problems
    assert [(s.opponent, s.seat, s.games) for s in report.seats] == [
        ("random", "first", 1), ("random", "second", 1), ("negamax", "first", 1), ("negamax", "second", 1)]
    for s in report.seats:
        assert s.wins + s.draws + s.losses == s.games
    assert (report.invalid, report.errors, report.timeouts) == (0, 0, 0)
    assert report.moves >= 4 and report.slowest_first_move_s > 0
    assert any("no manifest" in n for n in report.notes)


def test_an_invalid_column_fails_with_exit_1_and_is_counted(tmp_path: Path, capsys) -> None:
    path = write(tmp_path, "bad.py", "def agent(obs, config):\n    return config.columns\n")
    code = main(["check", str(path), "--games", "2", "--opponents", "kaggle:random", "--json", "--no-validation"])
    out = json.loads(capsys.readouterr().out)
    assert code == 1
    assert out["passed"] is False and out["invalid"] == 2 and out["errors"] == 0
    assert out["breaks"] == {"invalid": 2} and out["validation"] is None
    assert "column 7" in out["errors_seen"][0]


def test_a_failed_validation_episode_fails_the_check_and_stops_it(tmp_path: Path, capsys) -> None:
    path = write(tmp_path, "bad.py", "def agent(obs, config):\n    return config.columns\n")
    code = main(["check", str(path), "--games", "2", "--opponents", "kaggle:random", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 1 and out["passed"] is False
    assert out["validation"]["status"] == "INVALID" and out["validation"]["opponent"] == "self"
    assert out["seats"] == [] and out["breaks"] == {}  # Kaggle plays nothing after a failed validation
    assert "validation episode" in out["problems"][0] and "column 7" in out["problems"][0]


def test_the_validation_episode_is_the_file_against_itself_in_two_hosts(tmp_path: Path) -> None:
    """Each seat loads the file in its own host: a module-level counter starts at 0 in both."""
    path = write(tmp_path, "counts.py", """
        calls = 0
        def agent(obs, config):
            global calls
            calls += 1
            if obs.step != 2 * (calls - 1) + obs.mark - 1:
                raise RuntimeError(f"shared state: call {calls} at step {obs.step}")
            return [c for c in range(config.columns) if obs.board[c] == 0][0]
    """)
    report = check_file(path, Gate(1, opponents=("random",), workers=1))
    assert report.validation is not None and report.validation.kind == "ok", report.validation
    assert report.passed, report.problems


def test_a_numpy_int_is_invalid_as_on_kaggle(tmp_path: Path) -> None:
    path = write(tmp_path, "np_int.py", "import numpy as np\ndef agent(obs, config):\n    return np.int64(3)\n")
    report = quick(path, games=1)
    assert report.invalid == 1 and not report.passed


def test_a_raising_agent_fails_with_its_error(tmp_path: Path) -> None:
    path = write(tmp_path, "raises.py", "def agent(obs, config):\n    raise RuntimeError('boom at move')\n")
    report = quick(path)
    assert report.errors == 2 and not report.passed
    assert "boom at move" in report.errors_seen[0]


def test_a_file_without_a_callable_fails(tmp_path: Path) -> None:
    report = quick(write(tmp_path, "nothing.py", "x = 3\n"), games=1)
    assert report.errors == 1 and not report.passed


def test_a_syntax_error_is_a_load_failure_and_a_missing_file_one_clear_line(tmp_path: Path, capsys) -> None:
    broken = write(tmp_path, "broken.py", "def agent(obs, config)\n    return 1\n")
    assert main(["check", str(broken)]) == 1  # played, as Kaggle plays it: it fails to load
    out, err = capsys.readouterr()
    assert "ERROR (load: InvalidArgument: Invalid raw Python: SyntaxError" in out and "Traceback" not in err
    assert all(line.startswith("  | ") for line in out.splitlines() if "Traceback" in line)  # only the agent's log
    assert f'  |   File "{broken}", line 1' in out and "cxforge-game-" not in out  # its own file, not the game folder
    assert main(["check", str(tmp_path / "absent.py")]) == 2  # an error, not a verdict
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no such file" in err


def test_a_slow_agent_is_a_timeout_under_kaggles_rule(tmp_path: Path) -> None:
    path = write(tmp_path, "slow.py", """
        import time
        def agent(obs, config):
            time.sleep(0.15)
            return [c for c in range(config.columns) if obs.board[c] == 0][0]
    """)
    report = quick(path, act_timeout=0.05, overage=0.2)
    assert report.timeouts == 2 and not report.passed
    assert report.moves_over_act_timeout >= 2


def test_the_load_counts_against_the_first_move(tmp_path: Path) -> None:
    path = write(tmp_path, "slow_load.py", "import time\ntime.sleep(0.4)\n" + LEFTMOST)
    enough = quick(path, games=1, act_timeout=0.1, overage=1.0)
    assert enough.passed, enough.problems  # had every move been charged the 0.4 s load, 1 s of overage would not do
    assert enough.slowest_first_move_s >= 0.4  # move 1 was
    short = quick(path, games=1, act_timeout=0.1, overage=0.1)
    assert short.timeouts == 1 and not short.passed


def test_a_hung_agent_is_killed_and_counted_as_timeout(tmp_path: Path) -> None:
    path = write(tmp_path, "hangs.py", "def agent(obs, config):\n    while True:\n        pass\n")
    report = quick(path, act_timeout=0.05, overage=0.1)
    assert report.timeouts == 2 and report.breaks == {"timeout": 2}  # the second game ran in a fresh host
    assert "its process group was killed" in report.errors_seen[0]


def test_an_agent_that_kills_its_process_is_an_error(tmp_path: Path) -> None:
    report = quick(write(tmp_path, "exits.py", "import os\ndef agent(obs, config):\n    os._exit(3)\n"))
    assert report.errors == 2 and report.breaks == {"crash": 2}
    assert "crash: exited with status 3" in report.errors_seen[0]


def test_a_sibling_import_fails_although_the_sibling_exists(tmp_path: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    write(src, "cxf_sibling_helper.py", LEFTMOST.replace("def agent", "def pick"))
    path = write(src, "uses_sibling.py", "from cxf_sibling_helper import pick\n"
                                         "def agent(obs, config):\n    return pick(obs, config)\n")
    # Where it is, Kaggle's loader finds the sibling (it appends the file's folder to sys.path) ...
    from kaggle_environments import make
    env = make("connectx")
    env.run([str(path), "random"])
    assert env.steps[-1][0].status == "DONE"
    # ... but alone, as Kaggle runs an uploaded file, it cannot.
    report = quick(path)
    assert report.errors == 2 and not report.passed
    assert "cxf_sibling_helper" in report.errors_seen[0]
    assert any("imports a module" in n for n in report.notes)


def test_the_project_is_invisible_to_the_loaded_file(tmp_path: Path) -> None:
    import agents.board  # importable here ...

    assert agents.board.Board
    path = write(tmp_path, "uses_project.py", "from agents.board import Board\n" + LEFTMOST)
    report = quick(path)  # ... not in the checker's processes
    assert report.errors == 2 and not report.passed


def test_floors_from_the_manifest_are_enforced(tmp_path: Path) -> None:
    path = write(tmp_path, "submission.py", LEFTMOST)
    manifest = tmp_path / "submission.py.json"
    manifest.write_text(json.dumps({"agent": "leftmost", "floors": {"negamax": 0.9, "random": 0.05},
                                    "valid": True, "sha256": hashlib.sha256(path.read_bytes()).hexdigest()}))
    report = check_file(path, Gate(2, workers=2))
    assert report.agent == "leftmost" and report.manifest == str(manifest)
    assert (report.invalid, report.errors, report.timeouts) == (0, 0, 0)
    verdicts = {f.opponent: f.verdict for f in report.floors}
    assert verdicts["negamax"] == "FAIL"  # negamax stops a column stacker: it cannot win 2 of 2
    assert verdicts["random"] != "FAIL"
    assert not report.passed and report.problems == [p for p in report.problems if "negamax" in p]


def test_a_broken_manifest_is_one_clear_error(tmp_path: Path, capsys) -> None:
    path = write(tmp_path, "submission.py", LEFTMOST)
    (tmp_path / "submission.py.json").write_text("{not json")
    assert main(["check", str(path), "--games", "1"]) == 2
    assert "submission.py.json: not a readable JSON manifest" in capsys.readouterr().err


def _games(opponent: str, wins: int, n: int) -> list[GameResult]:
    return [GameResult("DONE", 1 if i < wins else -1, i % 2, "win" if i < wins else "loss", "ok", durations=(0.01,),
                       opponent=opponent, seat=i % 2) for i in range(n)]


@pytest.mark.parametrize("wins, verdict, exit_code", [
    (10, "PASS", 0),  # P(10 of 10 | 70%) = 2.8%: the lower bound is above the floor
    (5, "UNDECIDED", 3),  # 50%: neither bound clears 70% in 10 games
    (3, "FAIL", 1),  # P(3 or fewer of 10 | 70%) = 1.1%: the upper bound is below it
])
def test_the_floor_rule_is_the_exact_bounds_at_95_percent(wins: int, verdict: str, exit_code: int) -> None:
    from connectx_forge.stats import clopper_pearson

    floor = 0.7
    lower, upper = clopper_pearson(wins, 10, 0.05)  # one look: all of the 5% spent there
    assert (lower >= floor, upper < floor) == (verdict == "PASS", verdict == "FAIL")  # the rule, stated in --help
    report = summarize(Checked("x.py", 10, 2.0, 60.0, ("random",)), _games("random", wins, 10),
                       Path("x.json"), {"floors": {"random": floor}})
    assert [f.verdict for f in report.floors] == [verdict]
    assert (report.verdict, report.exit_code, report.passed) == (verdict, exit_code, verdict == "PASS")
    assert report.to_json()["exit_code"] == exit_code
    last = format_report(report).splitlines()[-1]
    assert last.startswith({"PASS": "PASS", "FAIL": "FAIL: ", "UNDECIDED": "UNDECIDED: "}[verdict])


def test_help_states_the_floor_rule_and_the_exit_codes(capsys) -> None:
    with pytest.raises(SystemExit):
        main(["check", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "sequential test" in text and "Clopper-Pearson" in text and "--max-games" in text
    assert "0 PASS" in text and "1 FAIL" in text and "2 an error" in text and "3 UNDECIDED" in text


def _manifest(path: Path, floors: dict[str, float]) -> None:
    path.with_name(path.name + ".json").write_text(json.dumps({"agent": path.stem, "floors": floors, "valid": True,
                                                     "sha256": hashlib.sha256(path.read_bytes()).hexdigest()}))


RANDOM_MOVER = """
import random
def agent(obs, config):
    return random.choice([c for c in range(config.columns) if obs.board[c] == 0])
"""

TACTICAL = """
def agent(obs, config):
    cols, rows, board, me = config.columns, config.rows, list(obs.board), obs.mark
    def wins(b, c, m):
        r = max(r for r in range(rows) if b[r * cols + c] == 0)
        for dr, dc in ((0, 1), (1, 0), (1, 1), (1, -1)):
            n = 1
            for s in (1, -1):
                rr, cc = r + s * dr, c + s * dc
                while 0 <= rr < rows and 0 <= cc < cols and b[rr * cols + cc] == m:
                    n, rr, cc = n + 1, rr + s * dr, cc + s * dc
            if n >= config.inarow:
                return True
        return False
    legal = [c for c in range(cols) if board[c] == 0]
    for m in (me, 3 - me):
        for c in legal:
            if wins(board, c, m):
                return c
    return min(legal, key=lambda c: abs(2 * c - cols + 1))
"""


@pytest.mark.long
def test_a_random_mover_never_passes_a_20_percent_floor_against_negamax(tmp_path: Path, capsys) -> None:
    """The issue's case: 8 games cannot show it is below 20%, so the check plays on until it can."""
    path = write(tmp_path, "rnd.py", RANDOM_MOVER)
    _manifest(path, {"negamax": 0.2})
    code = main(["check", str(path), "-w", "2", "--opponents", "kaggle:negamax", "--seed", "0", "--json"])
    out, err = capsys.readouterr()
    report = json.loads(out)
    assert (code, report["verdict"]) == (1, "FAIL")
    floor = report["floors"][0]
    assert floor["verdict"] == "FAIL" and floor["games"] in (32, 64) and floor["upper"] < 0.2
    assert "floor vs negamax 20%: won" in err and "playing on to 16 games" in err and "FAIL" in err


def test_a_strong_agent_passes_as_soon_as_its_floor_is_shown(tmp_path: Path, capsys) -> None:
    path = write(tmp_path, "strong.py", TACTICAL)
    _manifest(path, {"random": 0.8})
    code = main(["check", str(path), "-w", "2", "--opponents", "random", "--seed", "0", "--no-progress"])
    out = capsys.readouterr().out
    assert code == 0 and out.rstrip().endswith("PASS"), out
    assert "random    first      16" in out and "floor vs random: 80%; won" in out  # 32 games: 8, 16, then 32


def test_a_floor_not_decided_within_max_games_is_undecided_exit_3(tmp_path: Path, capsys) -> None:
    path = write(tmp_path, "left.py", LEFTMOST)
    _manifest(path, {"random": 0.5})
    code = main(["check", str(path), "-n", "2", "--max-games", "4", "-w", "1", "--opponents", "random",
                 "--no-validation", "--no-progress"])
    out = capsys.readouterr().out
    assert code == 3
    assert out.splitlines()[-1].startswith("UNDECIDED: floor vs random 50% neither met nor missed in 4 games")
    assert "up to 4 while a floor is undecided" in out


def test_no_floors_checks_validity_alone_with_the_games_asked(tmp_path: Path, capsys) -> None:
    path = write(tmp_path, "left.py", LEFTMOST)
    _manifest(path, {"negamax": 0.9})
    assert main(["check", str(path), "-n", "1", "--no-floors", "--opponents", "negamax", "--no-validation",
                 "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["floors"] == [] and report["verdict"] == "PASS" and report["seats"][0]["games"] == 1
    assert any("--no-floors" in n for n in report["notes"])


@pytest.mark.parametrize("argv, message", [
    (["-n", "8", "--max-games", "4"], "--max-games 4 is less than --games 8"),
    (["--append"], "--append adds games to the file of --save FILE"),
    (["--opponents", "minimax"], "unknown opponent 'minimax'"),
])
def test_bad_flags_are_one_line(tmp_path: Path, capsys, argv: list[str], message: str) -> None:
    path = write(tmp_path, "left.py", LEFTMOST)
    assert main(["check", str(path), *argv]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err and "Traceback" not in err


def test_opponents_are_named_as_floors_name_them() -> None:
    assert [check.builtin_opponent(o) for o in ("random", "kaggle:random", "negamax", "kaggle:negamax")] == [
        "random", "random", "negamax", "negamax"]


def test_save_writes_every_game_as_a_games_file_and_never_replaces_one(tmp_path: Path, capsys) -> None:
    from connectx_forge.play.records import load_records

    path = write(tmp_path, "left.py", LEFTMOST)
    games = tmp_path / "games.jsonl"
    argv = ["check", str(path), "-n", "2", "-w", "1", "--opponents", "random", "--save", str(games), "--no-progress"]
    assert main(argv) == 0
    records = load_records(games)
    assert [r.players for r in records] == [("left.py", "left.py"), ("left.py", "kaggle:random"),
                                            ("kaggle:random", "left.py")]  # the validation episode first
    assert all(r.moves and len(r.times) == len(r.moves) for r in records)
    assert records[1].moves[0] == 0 and records[1].a_seat == 1  # leftmost, first, opens in column 0
    capsys.readouterr()
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "the file exists; add --append" in err and "--force to replace it" in err
    assert len(load_records(games)) == 3
    assert main([*argv, "--append"]) == 0
    assert len(load_records(games)) == 6
    assert main(["logs", str(games), "--index", "1"]) == 0


def test_later_batches_keep_each_games_seat_and_seed() -> None:
    full = check.jobs_for(("random", "negamax"), 8, 2.0, 60.0, 5)
    later = check.jobs_for(("random", "negamax"), 8, 2.0, 60.0, 5, start=4, only="negamax")
    assert later == [j for j in full if j.opponent == "negamax" and j.index >= 8]


def test_games_are_split_evenly_across_seats() -> None:
    jobs = check.jobs_for(("random", "negamax"), 5, 2.0, 60.0, None)
    for opponent in ("random", "negamax"):
        seats = [j.seat for j in jobs if j.opponent == opponent]
        assert sorted(seats) == [0, 0, 0, 1, 1]
    assert [j.index for j in jobs] == list(range(10)) and {j.seed for j in jobs} == {None}


def test_each_game_is_seeded_from_the_base_seed_as_in_match() -> None:
    jobs = check.jobs_for(("random",), 4, 2.0, 60.0, 3)
    assert [j.seed for j in jobs] == [game_seed(3, i) for i in range(4)]
    assert [j.seed for j in check.jobs_for(("random",), 4, 2.0, 60.0, 4)] != [j.seed for j in jobs]
    with pytest.raises(UserError, match="unknown opponent 'minimax'"):
        check.jobs_for(("random", "minimax"), 1, 2.0, 60.0, 0)


def test_the_same_seed_plays_the_same_games(tmp_path: Path, capsys) -> None:
    """--seed (default 0) seeds Kaggle's random in each game: same seed, same moves; another, others."""
    path = write(tmp_path, "rand.py", """
        import random
        def agent(obs, config):
            return random.choice([c for c in range(config.columns) if obs.board[c] == 0])
    """)
    runs = []
    for seed in ("0", "0", "1"):
        assert main(["check", str(path), "-n", "4", "-w", "2", "--opponents", "kaggle:random", "--seed", seed,
                     "--json", "--no-progress"]) in (0, 1)
        report = json.loads(capsys.readouterr().out)
        runs.append([(s["wins"], s["draws"], s["losses"]) for s in report["seats"]] + [report["moves"]])
    assert runs[0] == runs[1]
    assert runs[0] != runs[2]


def _tar(folder: Path, name: str, files: dict[str, str]) -> Path:
    import io
    import tarfile

    path = folder / name
    with tarfile.open(path, "w:gz") as archive:
        for member, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(member)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return path


def test_a_tar_gz_runs_main_py_with_its_own_files_beside_it(tmp_path: Path) -> None:
    path = _tar(tmp_path, "submission.tar.gz", {
        "main.py": "from cxf_tar_helper import pick\ndef agent(obs, config):\n    return pick(obs, config)\n",
        "cxf_tar_helper.py": LEFTMOST.replace("def agent", "def pick")})
    (tmp_path / "submission.tar.gz.json").write_text(json.dumps({"agent": "tarred", "floors": {},
                                                          "sha256": hashlib.sha256(path.read_bytes()).hexdigest()}))
    report = quick(path)
    assert report.passed, report.problems
    assert report.agent == "tarred"


def test_a_tar_gz_without_main_py_is_one_clear_line(tmp_path: Path, capsys) -> None:
    path = _tar(tmp_path, "sub.tar.gz", {"agent.py": LEFTMOST})
    assert main(["check", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no main.py" in err


def test_a_built_submission_is_checked_with_its_manifest(tmp_path: Path, capsys) -> None:
    out = tmp_path / "submission.py"
    assert main(["build", "random", "-o", str(out)]) == 0
    capsys.readouterr()
    assert main(["check", str(out), "--games", "2", "--opponents", "kaggle:random", "--json"]) in (0, 1)
    report = json.loads(capsys.readouterr().out)
    assert report["agent"] == "random" and report["manifest"] == str(tmp_path / "submission.py.json")
    assert (report["invalid"], report["errors"], report["timeouts"]) == (0, 0, 0)
    assert [f["opponent"] for f in report["floors"]] == ["random"]
