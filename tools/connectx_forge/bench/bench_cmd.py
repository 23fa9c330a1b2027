"""``cxforge bench [NAME]``: the command-line face of the benchmarks in tools/connectx_forge/bench/ (and
negamax-fast's).

With no NAME it runs the quick set (tools/connectx_forge/bench/quick.py, what ``make bench``
runs); each NAME is one benchmark with its own flags: ``loop`` (our game loop
against kaggle_environments.evaluate), ``agents`` (the classic agents against
their plain definitions), ``solver`` (the solver on Pons' files; ``--agent``:
the solver agent's mistake rate), ``book`` (the opening book's size against the
search it leaves), ``net`` (the network's weight precisions and move time),
``search`` (the network search's depth in a move's time), ``negamax``
(negamax-fast against Kaggle's negamax), ``arena`` (tournament games per
second on the process pool and a Dask LocalCluster) and ``games`` (each playable
two-player game's episodes per second jailed against kaggle_environments.evaluate).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path

from connectx_forge import options
from connectx_forge.bench import agents, arena, games, loop
from connectx_forge.bench.book_size import report
from connectx_forge.bench.quick import steps
from connectx_forge.bench.reference_bitbully import against_bitbully
from connectx_forge.bench.solver import agent_mistakes, side_by_side, solve_files
from connectx_forge.boundedread import read_positions
from connectx_forge.errors import UserError
from connectx_forge.paths import PONS_DIR
from connectx_forge.players.fast_negamax import bench

HELP = "benchmarks: the quick set (no NAME), or loop, agents, solver, book, net, search, negamax, arena, games"
EXAMPLE = """\
cxforge bench
cxforge bench loop --seconds 3 -w 1 2 --json
cxforge bench agents --rows 10 --columns 10 --fast-only
cxforge bench solver ../shared/data/pons/Test_L2_R1 --engine c --sample 100
cxforge bench negamax
cxforge bench arena -w 1 2 --dask-workers 2
cxforge bench games --games rps,planet_wars -n 3"""

BENCHES = ("loop", "agents", "solver", "book", "net", "search", "negamax", "arena", "games")


def _sub(sub: argparse._SubParsersAction[argparse.ArgumentParser], name: str, help: str, example: str,
         run: Callable[[argparse.Namespace], int]) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = sub.add_parser(name, help=help, description=help,
                                                     epilog="example:\n  " + example)
    parser.set_defaults(_bench=run)
    return parser


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """One subparser per benchmark, each with its own flags; none: the quick set."""
    sub = parser.add_subparsers(dest="bench", metavar="[NAME]")
    sub.required = False

    p = _sub(sub, "loop", "games per second of our game loop against kaggle_environments.evaluate",
             "cxforge bench loop --seconds 3 -w 1 2", _loop)
    p.add_argument("--seconds", type=options.positive_float, default=3.0, metavar="S",
                   help="target seconds per measurement (default 3)")
    options.add_workers(p, many=True)
    p.add_argument("--isolated", action="store_true",
                   help="also time A as a built submission file, played in agent hosts (a process per game)")
    p.add_argument("--rounds", type=options.positive_int, default=1, metavar="N",
                   help="measure every figure N times, the harnesses alternated, and keep the medians: a noisy "
                        "machine's slow spells fall on all alike (default 1)")
    options.add_json(p, "print the rows as JSON instead of the table")

    p = _sub(sub, "agents", "the classic agents' move time against their plain transcriptions",
             "cxforge bench agents --rows 10 --columns 10 --fast-only", _agents)
    options.add_size(p)
    p.add_argument("--positions", type=options.positive_int, default=30, metavar="N",
                   help="positions to time (default 30)")
    p.add_argument("--ref-positions", type=options.nonnegative_int, default=None, metavar="N",
                   help="time the plain reference on the first N positions only (default: all)")
    options.add_seed(p, "seed of the positions")
    p.add_argument("--agents", nargs="+", choices=list(agents.FAST), default=None, metavar="NAME",
                   help=f"agents to time (default all: {', '.join(agents.FAST)})")
    p.add_argument("--fast-only", action="store_true", help="skip the plain references (big boards)")
    options.add_progress(p)

    p = _sub(sub, "solver", "run the solver on Pons-format benchmark files (<moves> <score> per line)",
             "cxforge bench solver ../shared/data/pons/Test_L2_R1 --engine c --sample 100\n  "
             "cxforge bench solver ../shared/data/pons/Test_L2_R2 "
             "tools/connectx_forge/datasets/heldout/Random-Middle.txt --reference bitbully --sample 100", _solver)
    p.add_argument("paths", metavar="PATH", nargs="+", type=Path, help="Pons-format files")
    p.add_argument("--limit", type=options.positive_int, metavar="N", help="only the first N positions of each file")
    p.add_argument("--sample", type=options.positive_int, metavar="N",
                   help="N positions drawn at random (seeded) from each file")
    options.add_seed(p, "seed of --sample")
    p.add_argument("--weak", action="store_true", help="win/draw/loss only (compares signs)")
    p.add_argument("--agent", action="store_true",
                   help="instead: the solver agent's mistake rate (a move whose win/draw/loss class is below the best)")
    p.add_argument("--budget", type=float, metavar="S",
                   help="the agent's seconds per move (default: its normal budget)")
    options.add_engine(p, "python", "the solver timed (c: C-speed figures and, with --agent, fast labels)")
    p.add_argument("--side-by-side", action="store_true",
                   help="instead: the compiled and the Python solver on the same positions in one run, with "
                        "nodes per second as a ratio (to --reference's where given)")
    p.add_argument("--reference", metavar="PROGRAM",
                   help="bitbully: the compiled solver at the agent's table size beside bitbully (installed by "
                        "make bench-reference into a bench-only layer), CPU time per position and their ratio; or, "
                        "with --side-by-side, a solver program answering 'score nodes seconds' per move string "
                        "(tools/connectx_forge/bench/pons_harness.cpp builds one around Pons' C++)")
    options.add_progress(p)

    p = _sub(sub, "book", "the opening book's size against the search it leaves to the agent",
             "cxforge bench book --progress runs/book/progress.jsonl --side first", _book)
    p.add_argument("--progress", type=Path, default=Path("runs/book/progress.jsonl"), metavar="FILE",
                   help="a book build's progress file (default runs/book/progress.jsonl)")
    p.add_argument("--side", choices=("first", "second"), default="first", help="the book's side (default first)")

    p = _sub(sub, "net", "the policy network's weight precisions, and its move time",
             "cxforge bench net --checkpoint runs/net/checkpoint.pt", _net)
    p.add_argument("--checkpoint", type=Path, default=Path("runs/net/checkpoint.pt"), metavar="FILE",
                   help="a supervised training checkpoint (default runs/net/checkpoint.pt)")
    p.add_argument("--positions", type=options.positive_int, default=3000, metavar="N",
                   help="Pons positions to compare on (default 3000)")
    p.add_argument("--pons", type=Path, default=PONS_DIR, metavar="DIR", help="folder of Pons' Test_L*_R* files")

    p = _sub(sub, "search", "the network search: the depth it reaches in a move's time",
             "cxforge bench search --positions 60 --budget 0.3", _search)
    p.add_argument("--positions", type=options.positive_int, default=60, metavar="N",
                   help="Begin-Medium positions, in file order (default 60)")
    p.add_argument("--budget", type=options.positive_float, default=0.3, metavar="S",
                   help="seconds a position (default 0.3, net-search's move)")
    p.add_argument("--pons", type=Path, default=PONS_DIR, metavar="DIR", help="folder of Pons' Test_L*_R* files")

    p = _sub(sub, "negamax", "negamax-fast against Kaggle's negamax: CPU time a move, empty memo",
             "cxforge bench negamax --positions 60", _negamax)
    p.add_argument("--positions", type=options.positive_int, default=60, metavar="N",
                   help="seeded positions to time (default 60)")

    p = _sub(sub, "arena", "tournament games per second: the process pool at each -w, and a Dask LocalCluster",
             "cxforge bench arena -w 1 2 --dask-workers 2", _arena)
    options.add_workers(p, many=True)
    p.add_argument("--dask-workers", type=options.positive_int, default=2, metavar="N",
                   help="worker processes of the LocalCluster (default 2)")
    p.add_argument("--openings", type=options.positive_int, default=30, metavar="M",
                   help="openings of the 4-ply suite, each played twice per pairing (default 30)")
    options.add_json(p, "print the rows as JSON instead of the table")

    p = _sub(sub, "games", "each two-player game's episodes per second, jailed, against kaggle_environments.evaluate",
             "cxforge bench games --game rps --game planet_wars -n 3", _games)
    p.add_argument("--game", action="append", default=None, metavar="NAME",
                   help="a game to measure; repeat for several (default: every two-player game playable here)")
    options.add_games(p, 3, "games (episodes) of each game in each harness")
    options.add_progress(p)


def _loop(args: argparse.Namespace) -> int:
    rows = loop.run_bench(args.seconds, args.workers, getattr(args, "isolated", False), args.rounds)
    print(json.dumps([r.to_json() for r in rows], indent=2) if args.json else loop.markdown(rows))
    return 0


def _agents(args: argparse.Namespace) -> int:
    size = options.size_of(args)
    boards = agents.bench_positions(size, args.positions, args.seed)
    ref_n = args.positions if args.ref_positions is None else args.ref_positions
    rows = agents.run(args.agents or list(agents.FAST), boards, args.fast_only, ref_n, options.progress_of(args))
    print(agents.table(rows, size, len(boards), args.seed, args.fast_only))
    return 1 if any(row.mismatches for row in rows) else 0


def _solver(args: argparse.Namespace) -> int:
    if args.reference == "bitbully" and not args.side_by_side:
        if args.agent:
            raise UserError("--reference bitbully times the solver, not the agent: drop --agent")
        return against_bitbully([(path, read_positions(path)) for path in args.paths], args.weak, args.limit,
                                args.sample, args.seed, options.progress_of(args))
    files = [(path, read_positions(path)) for path in args.paths]
    if args.reference and not args.side_by_side:
        raise UserError("--reference PROGRAM goes with --side-by-side (or name --reference bitbully)")
    if args.side_by_side:
        return side_by_side(files, args.weak, args.reference, args.limit, args.sample, args.seed,
                            options.progress_of(args))
    if args.agent:
        return agent_mistakes(files, args.budget,
                              options.engine_of(args), args.limit, args.sample, args.seed,
                              options.progress_of(args))
    return solve_files(files, args.weak, options.engine_of(args), args.limit, args.sample, args.seed,
                       options.progress_of(args))


def _book(args: argparse.Namespace) -> int:
    return report(args.progress, args.side)


def _net(args: argparse.Namespace) -> int:
    from connectx_forge.bench.net import compare  # loads the net's weights at import (agents.net.agent), as _search

    return compare(args.checkpoint, args.positions, args.pons)


def _search(args: argparse.Namespace) -> int:
    from connectx_forge.bench import search_depth  # loads the net's weights at import: not for ``cxforge bench --help``

    return search_depth.run(args.pons, args.positions, args.budget)


def _negamax(args: argparse.Namespace) -> int:
    kaggle_ms, fast_ms = bench(args.positions)
    print(f"Kaggle negamax {kaggle_ms:.1f} ms a move, negamax-fast (empty memo) {fast_ms:.1f} ms: "
          f"{kaggle_ms / fast_ms:.1f}x on {args.positions} seeded positions (CPU time)")
    return 0


def _arena(args: argparse.Namespace) -> int:
    rows = arena.run_bench(arena.PLAYERS, args.openings, args.workers, args.dask_workers)
    print(json.dumps([r.to_json() for r in rows], indent=2) if args.json else
          arena.markdown(rows, arena.PLAYERS, args.openings))
    return 0 if all(r.same_table is not False for r in rows) else 1


def _games(args: argparse.Namespace) -> int:
    names = games.chosen(args.game)
    if args.game is None:
        for line in games.left_out():
            print(f"cxforge bench games: left out {line}", file=sys.stderr)
    print(games.markdown(games.run_bench(names, args.games, options.progress_of(args))))
    return 0


def _quick(parser: argparse.ArgumentParser) -> int:
    """The quick set: each step's heading, then the benchmark run as ``cxforge bench NAME`` would."""
    status = 0
    for i, step in enumerate(steps()):
        print(("\n" if i else "") + f"## {step.heading}\n", flush=True)
        if step.argv is None:
            print(step.skipped, flush=True)
            continue
        args = parser.parse_args(step.argv)
        status = max(status, int(args._bench(args) or 0))
    return status


def run(args: argparse.Namespace) -> int:
    """The benchmark named, or the quick set."""
    if args.bench is None:
        parser = options.Parser(prog="cxforge bench")
        add_arguments(parser)
        return _quick(parser)
    if args.bench not in BENCHES:  # argparse has already refused it; here for callers that build args by hand
        raise UserError(f"unknown benchmark {args.bench!r}; choose from {', '.join(BENCHES)}")
    return int(args._bench(args) or 0)
