"""A project's regression cases: the first losing moves of the games we lost kept in its
``tests/regressions.json`` (``add_cases``, with its report and text), and the cases as ``cxforge regress list``
shows them."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from connectx_bundler.project import find_root, name_of
from connectx_forge import progress as progress_bars
from connectx_forge.errors import UserError
from connectx_forge.leaderboard.regress import data
from connectx_forge.leaderboard.regress.find import first_losing_case
from connectx_forge.sandbox.escape import escape
from connectx_forge.table import render

if TYPE_CHECKING:
    from connectx_forge.leaderboard.review.games import Game
    from connectx_forge.leaderboard.review.labeller import Labeller

HEADERS = ("#", "position", "played", "holds", "value", "episode", "source")


@dataclass(frozen=True)
class AddReport:
    """What ``regress add`` did: of the ``games`` of ours, how many we ``lost``; how many cases were ``added``
    (the ``new`` ones), and how many ``cases`` the project keeps now.  ``to_json`` is what ``--json`` prints."""

    games: int
    lost: int
    added: int
    cases: int
    new: tuple[data.Case, ...]

    def to_json(self) -> dict[str, object]:
        return {"games": self.games, "lost": self.lost, "added": self.added, "cases": self.cases,
                "new": list(self.new)}


def project_root(folder: Path) -> Path:
    """The project folder at or above ``folder``; ``UserError`` when there is none."""
    root = find_root(folder.expanduser().resolve())
    if root is None:
        raise UserError(f"{folder}: not inside an agent project (no cxforge.toml here or above); create one with "
                        "cxforge new, or give --project DIR")
    return root


def expand(specs: list[str]) -> list[str]:
    """The games' specs with each folder replaced by its ``*.json`` files (how ``cxforge episodes --download``
    leaves replays)."""
    out: list[str] = []
    for game in specs:
        folder = Path(game)
        out += sorted(str(p) for p in folder.glob("*.json")) if folder.is_dir() else [game]
    return out


def added_text(root: Path, report: AddReport, wrote_test: bool) -> str:
    """What ``regress add`` prints of ``add_cases``'s report: the cases added, and the test where written now."""
    text = (f"{root / data.DATA_FILE}: {report.added} case(s) added from {report.lost} lost game(s) of "
            f"{report.games}; {report.cases} in all")
    return text + (f"\n{root / data.TEST_FILE}: written; run pytest {data.TEST_FILE}" if wrote_test else "")


def add_cases(root: Path, games: list[Game], us: list[str] | None, labeller: Labeller,
              note: Callable[[str], None], progress: bool = False) -> tuple[AddReport, bool]:
    """Keep the first losing move of each of ``games`` that ``us`` (default: the project's name) lost in the
    project at ``root``, and write its test once (``cxforge regress add``, and ``connectx_forge.regress_add``).

    A lost game without such a move is passed to ``note``.  ``progress``: the first line and a bar over the
    games (the solver judges each lost game's moves: seconds a game).  Returns the report (what ``--json``
    prints: games of ours, lost, added, cases in all, the new cases) and whether the test file was written now.
    """
    us = us or [name_of(root)]
    if not any(name in us for g in games for name in g.names):  # before any work: one line, no first line
        names = sorted({n for g in games for n in g.names})
        raise UserError(f"no game has our name {', '.join(repr(u) for u in us)}; the games' players: "
                        f"{', '.join(repr(n) for n in names[:8])}; give --us NAME")
    found: list[data.Case] = []
    ours = lost = 0
    plan = f"cxforge regress add: {progress_bars.count(len(games), 'game')}, the moves of each lost one judged"
    with progress_bars.bar(len(games), "regress", unit="game", enabled=progress, plan=plan) as bar:
        for game in games:
            for mark in (1, 2):
                if game.names[mark - 1] not in us:
                    continue
                ours += 1
                if game.result(mark) != "loss":
                    continue
                lost += 1
                case = first_losing_case(game, mark, labeller)
                if case is None:
                    note(f"{game.source}: lost, but no move of ours turned a won or drawn position into a lost "
                         "one (lost from the start, a rule broken, or a value not solved in time): no case")
                else:
                    found.append(case)
            bar.update(1)
    path = root / data.DATA_FILE
    cases, added = data.merge(data.read(path), found)
    data.write(path, cases)
    wrote_test = data.ensure_test(root)
    return AddReport(ours, lost, added, len(cases), tuple(cases[len(cases) - added:])), wrote_test


def rows_of(cases: Sequence[Mapping[str, Any]]) -> list[list[object]]:
    """A case a row: the position, the move played and the moves that hold (columns from 1, as the position)."""
    def cols(values: Any) -> str:
        return " ".join(str(c + 1) for c in values or [])

    return [[i, c["moves"] or "(empty)", cols([c.get("bad_column", -1)]), cols(c.get("holding_columns")),
             c.get("value"), c.get("episode_id"), escape(Path(str(c.get("source", ""))).name)]
            for i, c in enumerate(cases, 1)]


def list_text(root: Path, cases: Sequence[Mapping[str, Any]]) -> str:
    """What ``regress list`` prints: the cases' table and what its columns mean, or that there is none."""
    if not cases:
        return f"{root / data.DATA_FILE}: no regression case yet; add them with cxforge regress add REPLAYS"
    return (f"{render(HEADERS, rows_of(cases))}\ncolumns from 1, as the position's moves; played: our losing "
            "move; holds: the moves that do not lose")
