"""The check of a submission for a game other than ConnectX, as Kaggle's competition for that game runs it.

Kaggle's validation episode is the file against itself; then the file plays the game's built-in agents
(``kaggle:NAME``, ``GameInfo.builtins``) in both seats, each game seeded alone.  Every game is
``play.game.play_job``: the game's own kaggle-environments interpreter referees in a worker process and the
file plays in an agent host (``play/episode.py``).  Each game's result is Kaggle's final statuses and
rewards, read as a win, a draw or a loss of the file's seat (``GameRecord.result``), and turned into the
check's ``GameResult`` so that ``verdict.py`` judges it as it judges ConnectX's.

The floors are decided by the same sequential test (``sequential.py``), over the games that are evidence
(``play/evidence.py``): a game whose trace (every step's actions) and result repeat an earlier game against
the same agent in the same seat tells nothing new, and is held back while the pair looks deterministic.  A
batch that shows the pair deterministic stops the games against that agent: its floor is UNDECIDED, with
the number of distinct games, never PASS.

ConnectX's own parts are refused in one line: the board size (``--rows``...), and ``--act-timeout`` and
``--overage`` (each game plays its own clock).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from agents.board import STANDARD
from connectx_bundler import manifest as manifests
from connectx_bundler.project import floor_opponent
from connectx_forge import kaggle_env
from connectx_forge import progress as bars
from connectx_forge.arena.match import game_seed
from connectx_forge.errors import UserError
from connectx_forge.games import catalog
from connectx_forge.games.catalog import GameInfo
from connectx_forge.play.evidence import Evidence, play_of
from connectx_forge.play.game import play_job
from connectx_forge.play.game_record import GameRecord
from connectx_forge.play.rules import ACT_TIMEOUT, OVERAGE
from connectx_forge.play.settings import GameJob, GameSettings
from connectx_forge.play.worker_pool import Progress, in_processes
from connectx_forge.players.player import FILE, KAGGLE, Player
from connectx_forge.submit import sequential
from connectx_forge.submit.kaggle_game import FAILED_STATUSES, SELF, GameResult
from connectx_forge.submit.verdict import Checked, CheckReport, FloorResult, judge_floor, summarize

Look = Callable[[FloorResult, str], None]
VALIDATION_SLOT = -1


@dataclass(frozen=True)
class GameCheckPlan:
    """What a check of another game plays: the game, the opponents (bare built-in names), the floors by
    opponent, the games first, the cap, the seed, the workers."""

    info: GameInfo
    opponents: tuple[str, ...]
    floors: dict[str, float]
    games: int
    cap: int
    seed: int | None
    workers: int


def manifest_game(path: Path) -> str | None:
    """The game a built file's manifest names (None: no manifest, or one that names none: ConnectX)."""
    data = manifests.read_manifest(path)
    game = None if data is None else data.get("game")
    return game if isinstance(game, str) else None


def game_checked(explicit: str | None, built_for: str | None, named: Path) -> str:
    """The game a check plays: the one asked for (``--game``), else the one the file was built for (its
    manifest), else ConnectX; one line when the two differ."""
    if explicit is not None and built_for is not None and explicit != built_for:
        raise UserError(f"{named.name} was built for {built_for} (its manifest says so), not {explicit}: drop "
                        f"--game, or rebuild it with game = \"{explicit}\" in cxforge.toml")
    game = explicit or built_for or catalog.CONNECTX
    catalog.get(game)  # one line for an unknown game, or one whose packages this Python lacks
    return game


def refuse_connectx_flags(game: str, settings: GameSettings) -> None:
    """One line for a ConnectX setting asked of another game: the board size, its clock."""
    if tuple(settings.size) != STANDARD:
        catalog.connectx_only("the board size (--rows, --columns, --inarow)", game)
    if float(settings.act_timeout) != float(ACT_TIMEOUT) or float(settings.overage) != float(OVERAGE):
        raise UserError(f"--act-timeout and --overage are ConnectX's; {game} plays its own clock (kaggle-"
                        "environments' actTimeout for it, and a 60 s overage bank)")


def opponents_of(asked: tuple[str, ...], floors: dict[str, float], info: GameInfo) -> tuple[str, ...]:
    """The built-ins the check plays: those asked for (``--opponents``, bare names or ``kaggle:NAME``), else
    those the floors name, else the game's first built-in agent."""
    if asked:
        chosen = tuple(dict.fromkeys(floor_opponent(o, info.name) for o in asked))
    else:
        chosen = tuple(sorted(floors)) or (info.builtins[0],)
    left_out = sorted(set(floors) - set(chosen))
    if left_out:
        raise UserError(f"the file has a win-rate floor vs kaggle:{left_out[0]}, but --opponents leaves it out: "
                        "play it too, or check validity alone with --no-floors")
    return chosen


def game_floors(manifest: manifests.Manifest, info: GameInfo, where: Path | None) -> dict[str, float]:
    """The manifest's floors by the game's built-in names; one line for a floor against no built-in of it."""
    out: dict[str, float] = {}
    for spec, floor in (manifest.get("floors") or {}).items():
        if isinstance(floor, bool) or not isinstance(floor, (int, float)) or not 0 <= floor <= 1:
            raise UserError(f"{where}: the floor vs {spec} must be a win rate from 0 to 1, not {floor!r}")
        out[floor_opponent(str(spec), info.name, role="floor opponent")] = float(floor)
    return out


def result_of(record: GameRecord, opponent: str, seat: int, index: int) -> GameResult:
    """The check's ``GameResult`` of a game's record, from the file's seat ``seat`` (0: first); in the
    validation episode (``opponent`` SELF) the seat that broke a rule, if one did."""
    mine = seat + 1
    if record.culprit is not None and (opponent == SELF or record.culprit == mine):
        culprit = record.culprit - 1
        kind = record.outcome
        error: str | None = f"{record.outcome}: {record.detail}" if record.detail else record.outcome
        outcome = "loss"
    else:
        culprit, kind = seat, "ok"
        outcome = record.result(mine) if opponent != SELF else "draw"
        error = None if record.culprit is None else (
            f"the opponent's status was {record.statuses[record.culprit - 1]}" if record.statuses else None)
    statuses = record.statuses or ["DONE", "DONE"]
    rewards = record.rewards or [None, None]
    log = (record.logs or {}).get(str(culprit + 1)) if kind != "ok" else None
    return GameResult(statuses[culprit], rewards[culprit], culprit, outcome, kind, error, (), log, (),
                      record.slowed, index, opponent, seat, 0, record.seed, record=record)


def _jobs(player: Player, plan: GameCheckPlan, settings: GameSettings, targets: dict[str, int],
          played: dict[str, int]) -> list[tuple[GameJob, str, int]]:
    """The games of a batch: game ``g`` against the ``i``-th opponent is index ``g * len(opponents) + i``, the
    file in seat ``g % 2``, seeded ``game_seed(seed, index)``, whatever the batches."""
    out = []
    for g in range(max(targets.values(), default=0)):
        for i, opponent in enumerate(plan.opponents):
            if not played.get(opponent, 0) <= g < targets.get(opponent, 0):
                continue
            index = g * len(plan.opponents) + i
            seed = game_seed(plan.seed, index) if plan.seed is not None else int.from_bytes(os.urandom(4), "big")
            seat = g % 2
            rival = Player(KAGGLE, f"kaggle:{opponent}", f"kaggle:{opponent}", name=opponent)
            job = GameJob(player, rival, 1 + seat, seed, index, settings=settings)
            out.append((job, opponent, seat))
    return out


def _play(item: tuple[GameJob, str, int]) -> GameResult:
    job, opponent, seat = item
    return result_of(play_job(job), opponent, seat, job.slot)


def counted(results: list[GameResult]) -> tuple[list[GameResult], Evidence[GameResult]]:
    """The results that are evidence (``play/evidence.py``), in the order of their games: against each
    opponent, in each seat, a game that repeats an earlier one move for move is held back while the pair
    looks deterministic.  The validation episode is none of them."""
    evidence: Evidence[GameResult] = Evidence()
    out: list[GameResult] = []
    for r in sorted(results, key=lambda r: r.index):
        play = play_of(r.record) if r.record is not None else (r.index,)
        out.extend(evidence.add(r.opponent, r.seat, play, r))
    return out, evidence


def check_game(source: Path, named: Path, plan: GameCheckPlan, settings: GameSettings, manifest_path: Path | None,
               manifest: manifests.Manifest, *, progress: bool = False, validation: bool = True,
               on_look: Look | None = None, on_game: Callable[[GameResult], None] | None = None) -> CheckReport:
    """Check the file ``source`` (shown as ``named``) on ``plan.info``'s game: the validation episode, then
    ``plan.games`` games against each opponent, more against one whose floor is undecided, up to ``plan.cap``.
    """
    test = sequential.FloorLooks(plan.games, plan.cap)
    kaggle_env.load()  # once, before the workers fork
    from kaggle_environments import make

    clock = float(make(plan.info.name).configuration.actTimeout)  # the game's own actTimeout
    with tempfile.TemporaryDirectory(prefix="cxforge-check-") as folder:
        staged = Path(folder) / source.name  # a .tar.gz stays one: its host unpacks it where Kaggle does
        shutil.copyfile(source, staged)
        player = Player(FILE, str(staged), named.name, path=staged, submission=str(staged))
        first = None
        if validation:
            seed = game_seed(plan.seed, (1 << 32) - 1) if plan.seed is not None else 0
            first = result_of(play_job(GameJob(player, player, 1, seed, VALIDATION_SLOT, settings=settings)),
                              SELF, 0, VALIDATION_SLOT)
            if on_game is not None:
                on_game(first)
        results: list[GameResult] = []
        stopped: dict[str, str] = {}
        if first is None or not first.broke:
            played = {o: 0 for o in plan.opponents}
            target = {o: plan.games for o in plan.opponents}
            line: str | None = (f"cxforge check: {named.name} ({plan.info.name}): "
                                f"{bars.count(plan.games, 'game')} against each of "
                                f"{', '.join('kaggle:' + o for o in plan.opponents)}, up to {plan.cap:,} while a "
                                f"floor is undecided, -w {plan.workers}")
            while target:
                batch = _jobs(player, plan, settings, target, played)
                results += in_processes(_play, batch, plan.workers,
                                        progress=Progress("check", "game", enabled=progress, plan=line,
                                                          sample=plan.workers),
                                        on_result=None if on_game is None else lambda _i, r: on_game(r))
                played.update(target)
                line = None
                if any(r.status in FAILED_STATUSES and r.kind != "ok" for r in results):
                    break  # a rule broken: the check has failed, whatever the floors
                evidence_of, evidence = counted(results)
                target = _next(plan, test, evidence_of, evidence, played, set(target), stopped, on_look)
    evidence_of, evidence = counted(results)
    repeats = {o: len(evidence.held.get(o, [])) for o in plan.opponents if evidence.held.get(o)}
    checked = Checked(str(named), plan.games, clock, float(OVERAGE), plan.opponents, plan.info.name)
    report = summarize(checked, results, manifest_path, {**manifest, "floors": plan.floors}, validation=first,
                       plan=test, floor_results=evidence_of, repeats=repeats)
    notes = [n for n in report.notes if not n.startswith("the agent's native library")]
    notes += [f"{n} game(s) against kaggle:{o} repeated an earlier game of the same seat move for move: "
              "counted once, as no new evidence" + (f"; {stopped[o]}" if o in stopped else "")
              for o, n in sorted(repeats.items())]
    return replace(report, notes=notes)


def _next(plan: GameCheckPlan, test: sequential.FloorLooks, results: list[GameResult], evidence: Evidence[GameResult],
          played: dict[str, int], batch: set[str], stopped: dict[str, str], on_look: Look | None) -> dict[str, int]:
    """After a batch: the games each opponent whose floor is not decided must reach next; none for an
    opponent whose games repeat (a pair shown deterministic: more games are no new evidence), and none at all
    once a floor has failed."""
    looked = [judge_floor(o, f, results, test) for o, f in sorted(plan.floors.items()) if o in batch]
    failed = any(d.verdict == sequential.FAIL for _, d in looked)
    target: dict[str, int] = {}
    for result, decision in looked:
        o = result.opponent
        nxt = test.next_look(played[o]) if decision.verdict == sequential.MORE else None
        if nxt is not None and evidence.held.get(o) and not evidence.shown_stochastic(o):
            stopped[o] = f"no more games were played against it after {played[o]}"
            nxt = None
        if nxt is not None and not failed:
            target[o] = nxt
        if on_look is not None:
            action = (result.verdict if nxt is None else "stopped: another floor failed" if failed
                      else f"playing on to {nxt} games")
            on_look(result, action)
    return target
