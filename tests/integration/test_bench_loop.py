"""``cxforge bench loop --rounds N`` (tools/connectx_forge/bench/loop.py): every figure measured N times, the harnesses
alternated round by round, the medians kept, so that a slow spell of a shared machine falls on all alike."""

from __future__ import annotations

from collections.abc import Callable

from connectx_forge.bench.loop import GameCounts, alternate, markdown, row_of


def test_the_harnesses_take_turns_in_every_round() -> None:
    calls: list[str] = []

    def timer(name: str, value: float) -> Callable[[], float]:
        def run() -> float:
            calls.append(name)
            return value + len(calls)
        return run

    figures = alternate({"ours": timer("ours", 100), "evaluate": timer("evaluate", 10)}, 3)
    assert calls == ["ours", "evaluate"] * 3
    assert figures == {"ours": [101, 103, 105], "evaluate": [12, 14, 16]}


def test_a_row_keeps_the_medians_and_their_ratio_and_shows_the_ranges() -> None:
    figures = {"ours": [100.0, 400.0, 120.0], "evaluate": [10.0, 12.0, 5.0], "isolated": [40.0, 20.0, 44.0],
               "evaluate_files": [8.0, 9.0, 10.0], "floor": [90.0, 70.0, 95.0]}
    row = row_of("a", "b", 1, figures, GameCounts(isolated_files="a.py vs b.py")).to_json()
    assert (row["ours_games_per_s"], row["evaluate_games_per_s"], row["ratio"]) == (120.0, 10.0, 12.0)
    assert (row["isolated_games_per_s"], row["isolated_ratio"], row["floor_ratio"]) == (40.0, 4.4, 10.0)
    assert row["rounds"] == 3 and row["ranges"]["ours"] == [100.0, 400.0]
    assert "median of 3 rounds" in markdown([row_of("a", "b", 1, figures, GameCounts())])


def test_one_round_is_the_plain_figure() -> None:
    row = row_of("a", "b", 2, {"ours": [50.0], "evaluate": [5.0]}, GameCounts())
    as_json = row.to_json()
    assert as_json["ratio"] == 10.0 and as_json["rounds"] == 1
    assert "ranges" not in as_json and "isolated_ratio" not in as_json
    assert "rounds" not in markdown([row])
