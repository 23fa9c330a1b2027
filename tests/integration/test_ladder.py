"""``cxforge ladder``: Kaggle's rating process simulated (determinism, resume, the order it gives against a
tournament's, narrowing intervals, the CLI's output) and ``--fit`` (recovery of known parameters)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest
import trueskill

from connectx_forge.arena.ladder.episodes_in import episodes_of
from connectx_forge.arena.ladder.fit import fit
from connectx_forge.arena.ladder.ladder_report import LadderReport, ladder_report
from connectx_forge.arena.ladder.process import LadderPlan, Process, matchmaking_rng
from connectx_forge.arena.ladder.rating import RatingSettings, Skill, TrueSkillModel
from connectx_forge.arena.ladder.replicates import spread
from connectx_forge.arena.ladder.simulate import Ladder, candidates_first, validate
from connectx_forge.arena.ladder.synthetic import kaggle_episodes, of_submission
from connectx_forge.arena.run import Execution, execute
from connectx_forge.arena.tournament import Tournament
from connectx_forge.cli import main
from connectx_forge.errors import UserError
from connectx_forge.leaderboard.review.episodes import episode_row

SNAPSHOT = Path(__file__).resolve().parents[1] / "snapshots" / "ladder.txt"
CHEAP = Ladder(players=("lookahead",), pool=("random", "leftmost"), days=4, per_day=6, new_per_day=8,
               replicates=40)


def report_of(t: Ladder, store: Path) -> LadderReport:
    played = execute(t, Execution(workers=1, store=store, progress=False))
    return ladder_report(played, spread(played.process, played.days, played.scores, t.seed, t.replicates))


def trajectories(report: LadderReport) -> dict[str, list[tuple[float, float]]]:
    return {s.player: [(b.mu, b.sigma) for b in s.by_day] for s in report.submissions}


# -- the rating model ----------------------------------------------------------------------

@pytest.mark.parametrize("a, b, score", [((600, 200), (650, 150), 1.0), ((600, 200), (650, 150), 0.0),
                                         ((700, 50), (640, 80), 0.5), ((600, 30), (900, 20), 1.0)])
def test_the_closed_form_update_is_the_library_s_factor_graph(a: tuple, b: tuple, score: float) -> None:
    s = RatingSettings(sigma0=180, beta=90, tau=4, draw_probability=0.2)
    env = s.env()
    got = TrueSkillModel(s).update(Skill(*a), Skill(*b), score)
    ra, rb = env.create_rating(*a), env.create_rating(*b)
    if score == 1.0:
        want = trueskill.rate_1vs1(ra, rb, env=env)
    elif score == 0.0:
        want = trueskill.rate_1vs1(rb, ra, env=env)[::-1]
    else:
        want = trueskill.rate_1vs1(ra, rb, drawn=True, env=env)
    for mine, theirs in zip(got, want, strict=True):
        assert mine.mu == pytest.approx(theirs.mu, abs=1e-6)
        assert mine.sigma == pytest.approx(theirs.sigma, abs=1e-6)


def test_bad_rating_settings_are_one_line_errors() -> None:
    with pytest.raises(UserError, match="draw-probability"):
        RatingSettings(draw_probability=1.5)
    with pytest.raises(UserError, match="beta"):
        RatingSettings(beta=0)


# -- the simulated ladder ------------------------------------------------------------------

def test_the_same_seed_gives_the_same_ladder_and_another_seed_another(tmp_path: Path) -> None:
    one = report_of(CHEAP, tmp_path / "a.sqlite")
    two = report_of(CHEAP, tmp_path / "b.sqlite")
    assert trajectories(one) == trajectories(two)
    assert [s.predicted for s in one.submissions] == [s.predicted for s in two.submissions]
    other = report_of(Ladder(**{**CHEAP.__dict__, "seed": 1}), tmp_path / "c.sqlite")
    assert trajectories(other) != trajectories(one)


def test_a_rerun_plays_nothing_and_more_days_play_on_from_the_store(tmp_path: Path) -> None:
    store = tmp_path / "l.sqlite"
    first = report_of(CHEAP, store)
    assert first.played_now > 0
    again = report_of(CHEAP, store)
    assert again.played_now == 0 and trajectories(again) == trajectories(first)
    longer = report_of(Ladder(**{**CHEAP.__dict__, "days": 6}), store)
    assert 0 < longer.played_now < first.played_now  # only days 5 and 6
    for name, days in trajectories(longer).items():
        assert days[:4] == trajectories(first)[name]


def test_a_broken_submission_fails_its_validation_episode_and_is_never_rated(tmp_path: Path) -> None:
    t = Ladder(players=("lookahead",), pool=("random", "middle"), days=2, per_day=4, new_per_day=4, replicates=10)
    subs = {s.player: s for s in report_of(t, tmp_path / "m.sqlite").submissions}
    assert subs["middle"].status == "error" and subs["middle"].episodes == 0
    assert subs["lookahead"].episodes > 0


def test_only_the_latest_n_submissions_of_the_team_play(tmp_path: Path) -> None:
    t = Ladder(players=("leftmost", "lookahead"), pool=("random", "weighted"), days=4, per_day=4, new_per_day=4,
               active=1, stagger=2, replicates=10)
    subs = {s.player: s for s in report_of(t, tmp_path / "n.sqlite").submissions}
    by_day = {b.day: b.episodes for b in subs["leftmost"].by_day}
    assert subs["leftmost"].status == "retired" and subs["lookahead"].status == "rated"
    assert by_day[2] > 0 and by_day[4] == by_day[2]  # retired when lookahead came, on day 3
    assert subs["lookahead"].by_day[1].episodes == 0  # submitted on day 3
    assert subs["lookahead"].submitted_day == 3


def ordering_agrees(t: Ladder, tmp_path: Path, openings: int) -> None:
    ladder = report_of(t, tmp_path / "ladder.sqlite")
    by_ladder = [s.player for s in ladder.submissions]
    tour = execute(Tournament(t.specs(), openings=openings), Execution(workers=1, store=tmp_path / "t.sqlite",
                          progress=False)).report
    by_tournament = [r.player for r in tour.ratings]
    assert by_ladder == by_tournament
    for s in ladder.submissions:  # the intervals narrow as the days go by
        assert s.by_day[-1].sigma < s.by_day[0].sigma
    cand = ladder.submissions[0]
    assert cand.by_day[-1].hi - cand.by_day[-1].lo < cand.by_day[0].hi - cand.by_day[0].lo


def test_the_ladder_orders_cheap_agents_as_a_tournament_does(tmp_path: Path) -> None:
    ordering_agrees(Ladder(players=("lookahead",), pool=("random", "leftmost"), days=8, per_day=6,
                           new_per_day=8, replicates=60), tmp_path, openings=6)


@pytest.mark.slow
def test_the_ladder_orders_a_spread_pool_as_a_long_tournament_does(tmp_path: Path) -> None:
    ordering_agrees(Ladder(players=("alphabeta",), pool=("random", "leftmost", "lookahead"), days=20,
                           replicates=200), tmp_path, openings=30)


# -- the fit -------------------------------------------------------------------------------

TRUE = RatingSettings(sigma0=170, beta=130, tau=6, draw_probability=0.15)
TOLERANCE = 0.01  # relative, on every parameter


def assert_recovered(got: RatingSettings, tolerance: float) -> None:
    for name in ("sigma0", "beta", "tau", "draw_probability"):
        assert getattr(got, name) == pytest.approx(getattr(TRUE, name), rel=tolerance), name


@pytest.mark.long
def test_the_fit_recovers_known_parameters(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    kaggle = kaggle_episodes(TRUE, submissions=20, days=10, seed=5)  # holds a draw of two new submissions at mu0
    files = []
    for k in range(0, 20, 3):
        path = tmp_path / f"episodes-{k}.json"
        path.write_text(json.dumps(of_submission(kaggle, 1000 + k)), encoding="utf-8")
        files.append(str(path))
    assert main(["ladder", "--fit", *files, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert_recovered(RatingSettings(**out["settings"]), TOLERANCE)
    assert out["tracked_submissions"] >= 7


def test_the_fit_recovers_them_from_scores_rounded_to_a_tenth(tmp_path: Path) -> None:
    kaggle = kaggle_episodes(TRUE, submissions=20, days=10, seed=4)
    for e in kaggle["episodes"]:
        for a in e["agents"]:
            a["initialScore"], a["updatedScore"] = round(a["initialScore"], 1), round(a["updatedScore"], 1)
    assert_recovered(fit(episodes_of(kaggle, "x")).settings, 0.05)


def test_cxforge_episodes_rows_are_read_as_kaggle_s_list() -> None:
    kaggle = of_submission(kaggle_episodes(TRUE, submissions=8, days=3, seed=5), 1000)
    rows = [episode_row(e, 1000).to_json() for e in kaggle["episodes"]]
    assert episodes_of(rows, "rows") == episodes_of(kaggle, "raw")
    assert len(episodes_of(rows, "rows")) == len(kaggle["episodes"]) - 1  # less the validation episode


def test_fit_input_errors_are_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"submissions": 3}', encoding="utf-8")
    assert main(["ladder", "--fit", str(bad)]) == 2
    assert "not an episode list" in capsys.readouterr().err
    empty = tmp_path / "empty.json"
    empty.write_text('{"episodes": []}', encoding="utf-8")
    assert main(["ladder", "--fit", str(empty)]) == 2
    assert "no rated episode" in capsys.readouterr().err
    assert main(["ladder", "lookahead", "--fit", str(empty)]) == 2
    assert "give no PLAYER" in capsys.readouterr().err


# -- the interval: coverage of known strengths -------------------------------------------------

STRENGTHS = (380.0, 540.0, 660.0, 820.0)  # hidden strengths, mean mu0: the process's own scale


def known_ladder(seed: int, days: int) -> tuple[Process, list[list[tuple[int, int]]], list[list[float]]]:
    """The ladder process over players of ``STRENGTHS``, each episode drawn from TrueSkill's own generative
    model (each side performs N(strength, beta^2); a gap within the draw margin is a draw): a main run whose
    truth is known, at no cost of real games."""
    n = len(STRENGTHS)
    plan = LadderPlan(tuple(f"p{i}" for i in range(n)), tuple(f"team {i}" for i in range(n)), (0,) * n)
    model = TrueSkillModel(RatingSettings())
    proc, rng = Process(plan, model), np.random.default_rng([seed, 7])
    days_played, scores = [], []
    for day in range(days):
        pairs = proc.day_pairings(day, matchmaking_rng(seed, day))
        gaps = [rng.normal(STRENGTHS[i], model.settings.beta) - rng.normal(STRENGTHS[j], model.settings.beta)
                for i, j in pairs]
        day_scores = [1.0 if g > model.margin else 0.0 if g < -model.margin else 0.5 for g in gaps]
        proc.rate_day(pairs, day_scores)
        days_played.append(pairs)
        scores.append(day_scores)
    return proc, days_played, scores


def coverage(mains: int, days: int, replicates: int) -> tuple[float, float, float]:
    """Over ``mains`` main runs of ``known_ladder``: how often the 95% interval holds the truth (the score the
    process gives each player after ``days``: its median over 100 independent runs), how often it holds the
    main run's own score, and how often that score is under the predicted median."""
    truth = np.median([[s.mu for s in known_ladder(10_000 + k, days)[0].skills] for k in range(100)], axis=0)
    held = inside = below = 0
    for seed in range(mains):
        proc, days_played, scores = known_ladder(seed, days)
        band = spread(proc, days_played, scores, seed, replicates)
        for i, skill in enumerate(proc.skills):
            held += band.lo[-1][i] <= truth[i] <= band.hi[-1][i]
            inside += band.lo[-1][i] <= skill.mu <= band.hi[-1][i]
            below += skill.mu < band.median[-1][i]
    n = mains * len(STRENGTHS)
    return held / n, inside / n, below / n


def test_the_interval_covers_the_truth_and_the_main_run() -> None:
    held, inside, below = coverage(mains=12, days=6, replicates=60)
    assert 0.9 <= held <= 1 and 0.9 <= inside <= 1
    assert 0.25 <= below <= 0.75  # the main run is one draw of the process the replicates rerun


@pytest.mark.slow
def test_the_interval_covers_the_truth_95_percent_of_the_time() -> None:
    held, inside, below = coverage(mains=40, days=20, replicates=100)
    assert 0.93 <= held <= 1 and 0.93 <= inside <= 1 and 0.35 <= below <= 0.65


# -- the command ---------------------------------------------------------------------------

def test_the_command_s_output_matches_its_snapshot(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["ladder", "lookahead", "--pool", "random", "leftmost", "middle", "--days", "3", "--per-day", "4",
                 "--replicates", "30", "-w", "1", "--store", str(tmp_path / "s.sqlite"), "--no-progress",
                 "-o", str(tmp_path / "out")])
    assert code == 0
    text = capsys.readouterr().out
    if os.environ.get("CXFORGE_UPDATE_SNAPSHOTS") == "1":
        SNAPSHOT.write_text(text, encoding="utf-8")
    assert text == SNAPSHOT.read_text(encoding="utf-8")
    report = json.loads((tmp_path / "out" / "report.json").read_text(encoding="utf-8"))
    assert {s["player"] for s in report["submissions"]} == {"lookahead", "random", "leftmost", "middle"}
    assert list(report) == ["kind", "run", "days", "settings", "episodes", "validation_episodes", "submissions",
                            "run_note", "store", "played_now", "executor", "distinct_games"]
    assert LadderReport.from_json(report).to_json() == report  # read back, it writes what it read


def test_the_command_refuses_bad_input_in_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["ladder"]) == 2
    assert "give at least one PLAYER" in capsys.readouterr().err
    assert main(["ladder", "random", "--pool", "random"]) == 2
    assert "repeated: random" in capsys.readouterr().err
    assert main(["ladder", "no-such-agent", "--days", "1"]) == 2
    assert "no-such-agent" in capsys.readouterr().err


def test_a_candidate_the_default_pool_holds_is_taken_once_as_a_candidate() -> None:
    t = candidates_first(Ladder(players=("lookahead", "random", "alphabeta")))
    assert t.players == ("lookahead", "random", "alphabeta") and t.pool == ("net", "solver")
    validate(t)
    own = Ladder(players=("random",), pool=("random", "leftmost"))
    assert candidates_first(own) == own  # a pool of one's own choosing is taken as given, and refused
    with pytest.raises(UserError, match="repeated: random"):
        validate(own)


def test_the_header_counts_what_it_says_and_a_pipe_gets_a_line_a_day(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = ["ladder", "lookahead", "--pool", "random", "leftmost", "--days", "3", "--per-day", "4",
            "--replicates", "20", "-w", "1", "--store", str(tmp_path / "s.sqlite")]
    assert main([*args, "--json"]) == 0
    out, err = capsys.readouterr()
    report = json.loads(out)
    assert report["validation_episodes"] == 3 and report["episodes"] + 3 == report["played_now"]
    first, *days = err.splitlines()  # the first line says what it plays (tests/integration/test_users_time.py)
    assert first.startswith("cxforge ladder: about ") and " over 3 days: lookahead against the pool " in first
    assert [line.split(" rated")[0] for line in days] == [f"cxforge ladder: day {d}/3" for d in (1, 2, 3)]
    assert main([*args, "--days", "4", "--no-progress"]) == 0
    out, err = capsys.readouterr()
    header = out.splitlines()[0]
    rated = int(header.split(" rated episodes")[0].rsplit(" ", 1)[1])
    assert err == "" and rated > report["episodes"]
    assert f"{rated} rated episodes + 3 validation episodes = {rated + 3} games ({rated - report['episodes']} " \
           f"played now, {report['episodes'] + 3} from the store; this process)" in header


def test_a_project_of_ones_own_climbs_the_ladder(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["new", "mybot"]) == 0
    capsys.readouterr()
    assert main(["ladder", "mybot", "--pool", "random", "leftmost", "--days", "2", "--per-day", "4",
                 "--replicates", "10", "-w", "1", "--no-progress", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    (mine,) = [s for s in report["submissions"] if s["role"] == "candidate"]
    assert mine["player"] == "mybot" and mine["status"] == "rated" and mine["episodes"] > 0


def test_resume_alone_continues_the_store_s_ladder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = str(tmp_path / "r.sqlite")
    common = ["-w", "1", "--no-progress", "--json", "--replicates", "10"]
    assert main(["ladder", "lookahead", "--pool", "random", "--days", "3", "--per-day", "4", "--store", store,
                 *common]) == 0
    first = json.loads(capsys.readouterr().out)
    assert main(["ladder", "--resume", "--store", store, *common]) == 0
    again = json.loads(capsys.readouterr().out)
    assert again["days"] == 3 and again["played_now"] == 0
    assert trajectories(LadderReport.from_json(again)) == trajectories(LadderReport.from_json(first))
    assert main(["ladder", "--resume", "--store", store, "--days", "4", *common]) == 0
    longer = json.loads(capsys.readouterr().out)
    assert longer["days"] == 4 and longer["played_now"] > 0
    assert main(["ladder", "--resume", "--store", str(tmp_path / "none.sqlite")]) == 2
    assert "nothing to resume" in capsys.readouterr().err


def test_dask_plays_the_same_ladder_as_this_process(tmp_path: Path) -> None:
    pytest.importorskip("distributed")
    t = Ladder(players=("lookahead",), pool=("random", "leftmost"), days=2, per_day=4, new_per_day=4,
               replicates=10)
    here = report_of(t, tmp_path / "here.sqlite")
    played = execute(t, Execution(workers=2, store=tmp_path / "dask.sqlite", dask="local", progress=False))
    assert played.executor == "dask"
    assert [[(s.mu, s.sigma) for s in day] for day in played.process.history] == \
        [[(s.mu, s.sigma) for s in day] for day in execute(t, Execution(workers=1, store=tmp_path / "here.sqlite",
                                                               progress=False)).process.history]
    assert here.played_now > 0
