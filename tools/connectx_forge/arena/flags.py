"""The flags ``cxforge tournament`` and ``cxforge sprt`` share: suite, executor, store, resume, clock, agent-host
limits and outputs (``cxforge match`` takes the store's: ``add_store_flags``).

The common ones (``-w``, ``--seed``, ``--json``, ``-o``, ``--no-progress``, and
``--memory`` and ``--slowdown`` as ``cxforge match`` has them) come from
``tools/connectx_forge/options``, so that they mean what they mean everywhere.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from agents.board import STANDARD
from connectx_bundler.errors import BuildError
from connectx_bundler.manifest import read_manifest
from connectx_bundler.project import read_settings, settings_file
from connectx_forge import options, outputs
from connectx_forge.arena.dask_cluster import DaskTarget, dask_target
from connectx_forge.arena.openings import DEFAULT_BAND, DEFAULT_PLIES
from connectx_forge.arena.openings_cmd import add_plies, band
from connectx_forge.arena.run import MIX, NEW_RUN, Execution, RunInterrupted, resume_hint
from connectx_forge.arena.store import RunConfig, Store
from connectx_forge.errors import UserError
from connectx_forge.games.catalog import CONNECTX
from connectx_forge.leaderboard.ghosts.agent_file import Ghosts
from connectx_forge.play.game_record import GameRecord
from connectx_forge.play.records import GameWriter
from connectx_forge.play.replays import ReplayFolder
from connectx_forge.play.resolve import reference
from connectx_forge.play.rules import ACT_TIMEOUT, OVERAGE
from connectx_forge.play.settings import GameSettings, host_limits
from connectx_forge.players.player import FILE, PROJECT
from connectx_forge.sandbox.limits import Limits

STORE_DEFAULT = "default: runs/arena/<run>.sqlite, named for the run"


def add_store_flags(parser: argparse.ArgumentParser, default: str = STORE_DEFAULT) -> None:
    """``--store FILE``, ``--resume``, ``--new-run`` and ``--mix-versions``: one wording wherever a run is stored
    (``tournament``, ``sprt``, ``match``); ``default``: where the games go without ``--store``."""
    parser.add_argument("--store", type=Path, default=None, metavar="FILE",
                        help=f"SQLite results database, each game committed as it ends ({default})")
    parser.add_argument("--resume", action="store_true",
                        help="continue the run in the store (the store must exist; with --store and no players, "
                             "the store's last run); rerunning with the same store also plays only what is missing; "
                             "refused, naming the player, when a player's sources changed since its games")
    changed = parser.add_mutually_exclusive_group()
    changed.add_argument("--new-run", dest="on_change", action="store_const", const=NEW_RUN,
                         help="when a player's sources changed since the store's games (--resume refuses then): "
                              "start a new run in the same store, with the new version")
    changed.add_argument("--mix-versions", dest="on_change", action="store_const", const=MIX,
                         help="when a player's sources changed since the store's games: continue the old run on "
                              "purpose, its games kept and new ones played by the new version (the report says "
                              "the versions are mixed)")


def add_play_flags(parser: argparse.ArgumentParser) -> None:
    """How a run's games are played: on Dask or not, Kaggle's clock, the hosts' limits, where ghosts come from
    (tournament, sprt and ladder alike)."""
    parser.add_argument("--dask", default=None, metavar="ADDRESS|local",
                        help="run the games on Dask: local for a cluster of -w worker processes on 127.0.0.1 "
                             "over TLS, or a scheduler's address (tls://host:8786, with --tls) (needs the "
                             "dask extra)")
    parser.add_argument("--tls", default=None, metavar="CA,CERT,KEY",
                        help="a tls:// scheduler's CA certificate, and this client's certificate and key "
                             "(default: Dask's distributed.comm.tls config)")
    parser.add_argument("--dashboard", action="store_true",
                        help="with --dask local: serve Dask's dashboard on 127.0.0.1 (off by default)")
    parser.add_argument("--insecure", action="store_true",
                        help="let --dask use an unauthenticated tcp:// scheduler: whoever reaches it runs code "
                             "as you")
    parser.add_argument("--act-timeout", type=options.positive_float, default=ACT_TIMEOUT, metavar="S",
                        help=f"seconds per move before overage is used (Kaggle: {ACT_TIMEOUT})")
    parser.add_argument("--overage", type=options.positive_float, default=OVERAGE, metavar="S",
                        help=f"overage seconds per player per game (Kaggle: {OVERAGE})")
    options.add_memory(parser)
    options.add_slowdown(parser)
    options.add_ghosts(parser)
    options.add_game(parser)


def add_run_flags(parser: argparse.ArgumentParser, out_what: str, files: Sequence[str],
                  plies: int = DEFAULT_PLIES, score_band: tuple[int, int] = DEFAULT_BAND) -> None:
    """Suite (``plies`` and ``score_band``: the command's defaults), seed, workers, store, resume, Dask, Kaggle's
    clock, host limits, JSON, output folder (``files``: what the run writes in it, which ``-o DIR`` refuses to
    replace without ``--force``) and saved games."""
    add_plies(parser, plies)
    lo, hi = score_band
    parser.add_argument("--band", type=band, default=score_band, metavar="LO:HI",
                        help=f"the suite's score band (default {lo}:{hi}; see cxforge openings)")
    options.add_seed(parser, "base seed; each game's seed derives from it and the game's key")
    options.add_size(parser)
    options.add_workers(parser)
    add_store_flags(parser)
    add_play_flags(parser)
    options.add_json(parser, "print the final report as one JSON object instead of the table")
    options.add_out(parser, out_what, kind="folder", written=outputs.named(*files))
    options.add_save(parser)
    options.add_progress(parser)


def standard_board(args: argparse.Namespace) -> None:
    """Tournaments and SPRTs play the 6x7 opening suite, labelled by the exact solver: other sizes are refused."""
    size = options.size_of(args)
    if tuple(size) != STANDARD:
        raise UserError(f"cxforge {args.command} plays paired openings of the 6x7 four-in-a-row suite, labelled by "
                        f"the exact solver; for a {size[0]}x{size[1]}x{size[2]} board use cxforge match with the "
                        "same --rows/--columns/--inarow")


def game_settings_of(args: argparse.Namespace, specs: Sequence[str] = ()) -> GameSettings:
    """The games' settings the flags ask for: the board, Kaggle's clock (as Kaggle's numbers), the agent hosts'
    limits, ``--isolate`` where the command has them, and the game (``--game``, else the game of the projects
    among ``specs``)."""
    game = args.game or projects_game(specs) or CONNECTX
    return GameSettings.of(options.size_of(args), args.act_timeout, args.overage, args.memory, args.slowdown,
                           bool(getattr(args, "isolate", False)), game)


def projects_game(specs: Sequence[str]) -> str | None:
    """The game the projects and built files among the player ``specs`` play (a project's settings' ``game``,
    a built file's manifest's), None where none names one; one line when two name different games."""
    games: dict[str, str] = {}
    for spec in specs:
        found = game_named(spec)
        if found is not None:
            games.setdefault(found, spec)
    if len(games) > 1:
        raise UserError("the players' projects play different games: "
                        + ", ".join(f"{spec} plays {game}" for game, spec in games.items()) + "; give --game")
    return next(iter(games), None)


def game_named(spec: str) -> str | None:
    """The game a player spec names: its project's settings' ``game``, or the one its built file's manifest
    names; None for any other (a ghost, a built-in, or a spec the players' own resolution refuses later, with
    its own message)."""
    try:
        player = reference(spec)
    except UserError:
        return None
    if player.path is None:
        return None
    if player.kind == PROJECT:
        return game_setting(player.path)
    if player.kind == FILE:
        try:
            manifest = read_manifest(player.path)
        except (BuildError, UserError):
            return None  # a manifest that does not describe its file: the check says so, not the flags
        game = None if manifest is None else manifest.get("game")
        return game if isinstance(game, str) else None
    return None


def game_setting(root: Path) -> str | None:
    """The ``game`` a project's settings name (None: it names none, so ConnectX)."""
    path = settings_file(root)
    if path is None:
        return None
    try:
        game = read_settings(path).get("game")
    except BuildError as exc:
        raise UserError(str(exc)) from None
    if game is not None and not isinstance(game, str):
        raise UserError(f"{path}: game must be a game's name such as \"rps\", not {game!r}")
    return game


def execution_of(args: argparse.Namespace, writer: GameWriter | None) -> Execution:
    """How the flags ask for a run to be carried out: ``-w``, ``--dask``, ``--store``, ``--resume``,
    ``--new-run``/``--mix-versions``, the bar, ``--save``'s writer given each game as it ends, and where ghosts
    come from (``--replays``, ``--fallback``)."""
    return Execution(args.workers, dask_of(args), None, args.store, args.resume, args.on_change,
                     options.progress_of(args), None if writer is None else writer.add, ghosts_of(args))


def dask_of(args: argparse.Namespace) -> DaskTarget | None:
    """``--dask`` with its locks (``--tls``, ``--insecure``, ``--dashboard``), checked: one line for
    an unauthenticated scheduler, or a lock given without a scheduler it fits."""
    return dask_target(getattr(args, "dask", None), getattr(args, "tls", None), getattr(args, "insecure", False),
                       getattr(args, "dashboard", False))


def resumed_settings(args: argparse.Namespace, kind: str) -> RunConfig | None:
    """The config of the store's last run of ``kind`` when ``--resume`` stands alone (its ``settings`` the run's
    ``from_json`` reads), else None.

    ``UserError`` when ``--resume`` names a store that does not exist, or when
    there is nothing to take the settings from.
    """
    if not args.resume:
        return None
    if args.store is not None and not args.store.is_file():
        raise UserError(f"nothing to resume: no results store at {args.store}")
    if not _alone(args, kind):
        return None
    if args.store is None:
        raise UserError(f"--resume without players needs --store FILE (the store of the {kind} to resume)")
    with Store(args.store) as db:
        runs = db.runs(kind)
    if not runs:
        raise UserError(f"nothing to resume: the store {args.store} holds no {kind}")
    return runs[-1].config


def _alone(args: argparse.Namespace, kind: str) -> bool:
    if kind == "tournament":
        return not args.players
    if kind == "match":
        return args.a is None and args.b is None
    return args.new is None


def game_writer(args: argparse.Namespace) -> GameWriter | None:
    """``--save``'s writer (``--append``: after the file's games), opened before the run: each game is written
    as it ends."""
    writer: GameWriter | None = writer_of(args)
    return writer


def interrupted(args: argparse.Namespace, stop: RunInterrupted, writer: GameWriter | None) -> int:
    """Ctrl-C: keep what was saved, say how to resume; exit status 130."""
    if writer is not None:
        writer.close()
    print(resume_hint(args.command, stop.store, output_flags(args)), file=sys.stderr)
    return 130


def output_flags(args: argparse.Namespace) -> list[str]:
    """The output flags the command was given, as its resume line repeats them: ``-o``, ``--save FILE`` with
    ``--append`` (its file holds the games played so far; the resumed run adds exactly those it lacks) and
    ``--json``."""
    out: list[str] = []
    if getattr(args, "out", None) is not None:
        out += ["-o", str(args.out)]
    if getattr(args, "save", None) is not None:
        out += ["--save", str(args.save), "--append"]
    if getattr(args, "json", False) is True:
        out.append("--json")
    return out


def finish(args: argparse.Namespace, report: Mapping[str, object], records: Sequence[GameRecord], text: str,
           notes: Sequence[str] = (), writer: GameWriter | None = None) -> None:
    """Save the run's games in order (``--save``), print the report (JSON with ``--json``, else ``text``),
    then ``notes`` (files skipped, such as a plot without matplotlib) on stderr."""
    if writer is not None:
        writer.close(records)
    print(json.dumps(report) if args.json else text)
    for note in notes:
        print(f"cxforge {args.command}: note: {note}", file=sys.stderr)


def limits_of(args: argparse.Namespace) -> Limits | None:
    """The agent hosts' ``Limits`` the flags ask for (``None``: the defaults)."""
    return host_limits(args.memory, args.slowdown)


def writer_of(args: argparse.Namespace) -> GameWriter | None:
    """``--save``'s ``GameWriter`` (appending with ``--append``, replacing with ``--force``), opened before the
    run; ``None`` without ``--save``."""
    path = getattr(args, "save", None)
    replays = getattr(args, "save_replays", None)
    if path is None:
        if replays is not None:
            raise UserError("--save-replays DIR needs --save FILE (FILE holds the games' results, DIR their replays)")
        return None
    append = bool(getattr(args, "append", False))
    return GameWriter(path, append=append, replace=not append and bool(getattr(args, "force", False)),
                      replays=None if replays is None else ReplayFolder(replays))


def ghosts_of(args: argparse.Namespace) -> Ghosts:
    """Where ``ghost:TEAM`` players come from, as ``--replays`` and ``--fallback`` say (a
    ``agent_file.Ghosts``: the commands pass it to the players' resolver)."""
    replays = getattr(args, "replays", None) or ()
    return Ghosts(tuple(str(Path(r).resolve()) for r in replays), getattr(args, "fallback", None))
