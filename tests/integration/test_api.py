"""The notebook API (``import connectx_forge as cf``, tools/connectx_forge/api/): each function on cheap agents, few
games, fixed
seeds.

Every run happens in an empty working folder that must stay empty; the notebook docs/notebook.ipynb is run
cell by cell in this process (no Jupyter kernel needed), its last expressions shown as Jupyter would show them.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import connectx_forge as cf
from connectx_forge.arena.match import run_match
from connectx_forge.errors import UserError
from connectx_forge.play.game_record import GameRecord

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK = ROOT / "docs" / "notebook.ipynb"
CXFORGE = Path(sys.executable).with_name("cxforge")


@pytest.fixture(scope="module")
def games4(tmp_path_factory: pytest.TempPathFactory) -> cf.MatchResult:
    folder = tmp_path_factory.mktemp("cwd4")
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(folder)
        result = cf.match("random", "negamax-fast", games=4, seed=3, workers=1)
    assert list(folder.iterdir()) == []
    return result


def first_legal(obs: Any, config: Any) -> int:
    return next(c for c in range(config.columns) if obs.board[c] == 0)


def test_the_import_is_light_and_the_packages_keep_their_names() -> None:
    code = ("import sys, connectx_forge as cf; heavy = [m for m in ('torch', 'numpy', 'connectx_forge.cli') "
            "if m in sys.modules]; import connectx_bundler.builder, connectx_forge.cli, "
            "connectx_forge.runtime; print(heavy, callable(cf.match), 'tournament' in dir(cf))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[] True True"
    with pytest.raises(AttributeError):
        cf.no_such_name  # noqa: B018


def test_a_match_gives_the_records_the_command_saves(games4: cf.MatchResult) -> None:
    m = games4
    assert (m.a, m.b) == ("random", "negamax-fast") and len(m.games) == 4
    direct = run_match("random", "negamax-fast", 4, 1, 3, progress=False)
    assert [g["moves"] for g in m.games] == [r.moves for r in direct.records]
    assert [GameRecord.from_json(g).to_json().keys() for g in m.games] == [g.keys() for g in m.games]
    assert m.wins + m.draws + m.losses == 4 and m.losses == 4 and m.score == 0.0
    assert m.overall.to_json() == m.report["overall"] and m.overall.games == 4
    lo, hi = m.win_interval
    assert lo == 0.0 and 0.5 < hi < 0.7  # 0 of 4: continuity-corrected Wilson, 0 to 60%
    assert [row["A plays"] for row in m.tables()["seats"]] == ["first", "second", "overall"]
    page = m._repr_html_()
    assert page.count("<table") == 2 and "negamax-fast" in page and "<iframe" not in page
    assert "A = random" in m.text and repr(m).startswith("<MatchResult random vs negamax-fast: 4 games")


def test_a_match_is_one_run_through_execute_from_the_notebook_and_the_command(
        empty_cwd: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """``cf.match`` and ``cxforge match`` without ``--store`` play through the runs' one driver, ``execute``, in
    memory (nothing written), with the players resolved once as given: a function too."""
    from connectx_forge.api import functions
    from connectx_forge.arena import match_cmd
    from connectx_forge.arena.run import MEMORY, execute
    from connectx_forge.cli import main

    runs: list[tuple[str, object, tuple[str, ...]]] = []

    def spy(run: Any, how: Any) -> Any:
        runs.append((run.kind, how.store, tuple(p.label for p in how.players.values())))
        return execute(run, how)

    monkeypatch.setattr(functions, "execute", spy)
    monkeypatch.setattr(match_cmd, "execute", spy)
    r = cf.match(first_legal, "random", games=2, workers=1)
    assert main(["match", "leftmost", "random", "-n", "2", "-w", "1", "--no-progress", "--json"]) == 0
    assert runs == [("match", MEMORY, ("first_legal", "random")), ("match", MEMORY, ("leftmost", "random"))]
    assert len(r.games) == 2 and json.loads(capsys.readouterr().out)["overall"]["games"] == 2
    assert list(empty_cwd.iterdir()) == []


def test_a_function_plays_a_match_and_one_game_shows_its_replay(empty_cwd: Path) -> None:
    m = cf.match(first_legal, "random", games=2, seed=1)  # all cores: a module-level function pickles
    assert m.a == "first_legal" and len(m.games) == 2
    one = cf.match(lambda obs, config: first_legal(obs, config), "random", games=1, seed=1)  # cannot pickle: 1 worker
    assert one.a == "<lambda>" and one.games[0]["moves"][0] == 0
    page = one._repr_html_()
    assert "<table" in page and '<iframe sandbox="allow-scripts"' in page and "srcdoc=" in page
    assert "kaggle" in one.replay(0).html and "kaggle" not in page  # the full player is what .save() writes


def test_save_writes_the_games_where_asked(tmp_path: Path, empty_cwd: Path) -> None:
    target = tmp_path / "games.jsonl"
    m = cf.match("random", "leftmost", games=3, seed=2, workers=1, save=target)
    assert m.saved == str(target)
    assert [json.loads(line) for line in target.read_text().splitlines()] == m.games
    replay = m.replay(1).save(tmp_path / "game.html")
    assert Path(replay).read_text().startswith("<!DOCTYPE html>") or "<html" in Path(replay).read_text()[:2000]


def test_a_check_gives_its_verdict_and_games(empty_cwd: Path) -> None:
    c = cf.check("random", games=2, workers=1, max_games=2)  # a 30% floor vs random: 2 games cannot decide it
    assert (c.verdict, c.exit_code, c.passed) == ("UNDECIDED", 3, False) and c.verdict == c.report["verdict"]
    assert c.games[0]["index"] == -1 and c.games[0]["opponent"] == "self"  # the validation episode first
    assert {g["opponent"] for g in c.games[1:]} == {"random", "negamax"} and len(c.games) == 5
    assert {row["opponent"] for row in c.tables()["seats"]} == {"random", "negamax"}
    assert "<table" in c._repr_html_() and c.verdict in c._repr_html_()
    with pytest.raises(UserError, match="not a function"):
        cf.check(first_legal)


def test_a_tournament_plays_in_a_temporary_store_unless_given_one(tmp_path: Path, empty_cwd: Path) -> None:
    t = cf.tournament("random", "negamax-fast", "leftmost", openings=1, workers=1)
    assert t.store is None and len(t.games) == 6  # 3 pairings, 1 opening, both colours
    assert [r["rank"] for r in t.ratings] == [1, 2, 3] and t.leader == "negamax-fast"
    assert t.report == t.tournament.to_json() and t.report["info"]["store"] == "(temporary, removed)"
    assert [p.to_json() for p in t.pairs] == t.report["pairs"] and len(t.tables()["pairs"]) == 3
    assert {g["opening"] for g in t.games} == {4}
    assert "<table" in t._repr_html_() and "negamax-fast" in t._repr_html_()
    kept = cf.tournament(["random", "leftmost"], openings=1, workers=1, store=tmp_path / "t.sqlite")
    again = cf.tournament(["random", "leftmost"], openings=1, workers=1, store=tmp_path / "t.sqlite")
    assert kept.store == str(tmp_path / "t.sqlite") and again.report["info"]["played_now"] == 0
    assert again.games == kept.games
    with pytest.raises(UserError, match="not a function"):
        cf.tournament(first_legal, "random")


def test_an_sprt_decides(empty_cwd: Path) -> None:
    s = cf.sprt("negamax-fast", "random", elo0=0, elo1=100, model="logistic", workers=1)
    assert s.decision == "H1" and s.llr >= s.bounds[1] and s.store is None
    assert len(s.games) == s.report["games"] == 2 * len(s.llr_history)
    assert s.elo.lo < s.elo.elo < s.elo.hi and s.report == s.sprt.to_json()
    page = s._repr_html_()
    assert "<svg" in page and "H1 accepted" in page


def test_a_review_marks_the_mistakes(games4: cf.MatchResult, tmp_path: Path, empty_cwd: Path) -> None:
    r = cf.review(games4.games[:1], us="random", time_limit=0.3)
    g = r.games[0]
    assert g["players"] == ["random", "negamax-fast"] and len(g["moves"]) == len(games4.games[0]["moves"])
    assert r.mistakes[0]["blunders_first"] == g["blunders"]["1"] and r.summary["us"] == ["random"]
    assert len(r.tables()["moves"]) == len(g["moves"])
    page = r._repr_html_()
    assert "<iframe" in page and "first losing move" in page and "our agent (random)" in page
    both = cf.review(games4, time_limit=0.1, html=tmp_path / "review")
    assert len(both.games) == 4 and (tmp_path / "review" / "index.html").is_file()
    assert both.games[0]["source"] == "match game 0"


def test_compare_pairs_the_games_and_says_what_the_command_prints(games4: cf.MatchResult, tmp_path: Path,
                                                                   empty_cwd: Path) -> None:
    new = cf.match("leftmost", "negamax-fast", games=4, seed=3, workers=1, save=tmp_path / "new.jsonl")
    base = tmp_path / "base.jsonl"
    base.write_text("".join(json.dumps(g) + "\n" for g in games4.games))
    c = cf.compare(new, base)
    assert (c.new, c.base, c.overall["games"]) == ("leftmost", "random", 4) and c.tables()["rows"] == c.rows
    command = [str(CXFORGE), "compare", "--new", str(tmp_path / "new.jsonl"), "--base", str(base)]
    out = subprocess.run([*command, "--json"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == c.report and c.rows == c.report["rows"]
    assert subprocess.run(command, capture_output=True, text=True, timeout=60).stdout.rstrip("\n") == c.text
    assert cf.compare(new.games, [games4]).report == c.report  # game dicts and results alike
    assert c.difference == c.overall["difference"] and "leftmost" in c._repr_html_()
    with pytest.raises(UserError, match="base: saved games are a file"):
        cf.compare(new, 3)
    with pytest.raises(UserError, match=r"new\[0\]: not a game written with --save"):
        cf.compare([{"moves": [1]}], base)
    with pytest.raises(UserError, match="no game of NEW pairs"):
        cf.compare(new, cf.match("leftmost", "negamax-fast", games=2, seed=4, workers=1))


def test_models_fits_the_opponents_moves_as_the_command_does(games4: cf.MatchResult, tmp_path: Path,
                                                            empty_cwd: Path) -> None:
    """Late positions only (the opening field covers the rest), so each solves at once and both runs agree."""
    late = [{**g, "opening": max(0, len(g["moves"]) - 12)} for g in games4.games]
    saved = tmp_path / "late.jsonl"
    saved.write_text("".join(json.dumps(g) + "\n" for g in late))
    m = cf.models(late, seconds=30)
    out = subprocess.run([str(CXFORGE), "models", str(saved), "--seconds", "30", "--json"], capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == m.report and m.unsolved == 0 and m.fits == m.report["fits"]
    assert m.best == m.report["best"] and set(m.mistake_rates) == {"negamax-fast"}
    assert f"best: {m.best}" in m.text and m.text.startswith("model ") and m.tables()["fits"] == m.fits
    assert "negamax-fast" in m._repr_html_()
    with pytest.raises(UserError, match="seconds must be positive"):
        cf.models(late, seconds=0)
    with pytest.raises(UserError, match="no opponent moves to fit"):
        cf.models([{**g, "opening": len(g["moves"])} for g in late])


def test_mistakes_judges_as_the_command_and_writes_nothing(tmp_path: Path, empty_cwd: Path) -> None:
    r = cf.mistakes("net", "leftmost", sample=6, seed=2)  # deterministic agents: the same moves in two processes
    out = subprocess.run([str(CXFORGE), "mistakes", "--agents", "net,leftmost", "--sample", "6", "--seed", "2",
                          "--json", "--no-cache"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    timing = ("mean_move_s", "max_move_s", "moves_over_2s")
    untimed = [[{k: v for k, v in row.items() if k not in timing} for row in rows]
               for rows in (json.loads(out.stdout), r.report)]
    assert untimed[0] == untimed[1] and len(r.rows) == 8 and "mistake_positions" not in r.rows[0]
    assert {row["agent"] for row in r.rows} == {"net", "leftmost"} and r.tables()["rows"] == r.rows
    assert "Random-Early" in r.text and "leftmost" in r._repr_html_()
    with pytest.raises(UserError, match="cache must be a file"):
        cf.mistakes("net", cache=tmp_path)  # (the held-out sets store their scores: only Pons' sets use a cache)
    with pytest.raises(UserError, match="sample must be a whole number"):
        cf.mistakes("net", sample=0)
    with pytest.raises(UserError, match="did you mean 'sample'"):
        cf.mistakes("net", samples=4)
    with pytest.raises(UserError, match="not a function"):
        cf.mistakes(first_legal)


def test_to_pandas_where_pandas_is_installed(games4: cf.MatchResult) -> None:
    pandas = pytest.importorskip("pandas", reason="pandas is not installed (connectx-forge does not need it)")
    frame = games4.to_pandas()
    assert isinstance(frame, pandas.DataFrame) and len(frame) == 4 and "moves" in frame.columns
    assert list(games4.to_pandas("seats")["A plays"]) == ["first", "second", "overall"]


def test_to_pandas_without_pandas_says_how_to_get_it(games4: cf.MatchResult, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pandas", None)
    with pytest.raises(ImportError, match="pip install pandas"):
        games4.to_pandas()


def test_a_bad_player_is_the_commands_one_line(empty_cwd: Path) -> None:
    with pytest.raises(UserError) as caught:
        cf.match("no-such-bot", "random", games=1)
    cli = subprocess.run([str(CXFORGE), "match", "no-such-bot", "random", "-n", "1"], capture_output=True, text=True,
                         timeout=120, cwd=empty_cwd)
    assert cli.returncode != 0 and str(caught.value) in cli.stderr
    assert "unknown player 'no-such-bot'" in str(caught.value)
    for call in (lambda: cf.tournament("no-such-bot", "random"), lambda: cf.sprt("no-such-bot", "random")):
        with pytest.raises(UserError) as again:
            call()
        assert str(again.value) == str(caught.value)


def _display(value: Any) -> None:
    """What Jupyter does with a cell's last value: its HTML where it has one, else its repr."""
    html = getattr(value, "_repr_html_", None)
    assert isinstance(html() if html is not None else repr(value), str)


def test_the_notebook_runs_and_is_stored_without_outputs(empty_cwd: Path) -> None:
    notebook = json.loads(NOTEBOOK.read_text())
    cells = [c for c in notebook["cells"] if c["cell_type"] == "code"]
    assert cells and all(c["outputs"] == [] and c["execution_count"] is None for c in cells), \
        "store docs/notebook.ipynb without outputs (they would go stale)"
    namespace: dict[str, Any] = {"__name__": "__notebook__"}
    for cell in cells:
        tree = ast.parse("".join(cell["source"]))
        last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
        exec(compile(tree, "<notebook cell>", "exec"), namespace)
        if last is not None:
            _display(eval(compile(ast.Expression(last.value), "<notebook cell>", "eval"), namespace))
    assert namespace["m"].games and namespace["t"].leader and namespace["s"].decision in ("H0", "H1", "none")
    check = namespace["c"]  # a decided floor, not UNDECIDED for want of games
    assert check.verdict == "PASS" and [f["verdict"] for f in check.floors] == ["PASS"]
    one = namespace["one"]._repr_html_()  # the one-game cell shows its replay, and reads right
    assert "<iframe" in one and "1 game;" in one and "1 games" not in one
    assert namespace["lad"].players == ("lookahead",) and namespace["lad"].games
    assert os.listdir(empty_cwd) == []
