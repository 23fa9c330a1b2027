"""``cxforge mistakes``: the command-line face of the mistake-rate harness (tools/connectx_forge/solver/mistakes.py).

``--sets`` takes ``heldout`` (the default: our four labelled sets, shipped with cxforge), ``pons`` (Pons'
six, downloaded into ``--pons DIR``) or set names (tools/connectx_forge/solver/heldout.py).

Prints one table, a row per agent and set (each row on stderr as it is measured, with progress on);
``--json`` prints the results as JSON on stdout instead, ``-o PATH`` also writes them to a file.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from connectx_forge import options, safe_write
from connectx_forge.errors import UserError
from connectx_forge.games.catalog import CONNECTX, connectx_only
from connectx_forge.paths import HELDOUT_DIR, PONS_DIR
from connectx_forge.solver.mistakes import (
    DEFAULT_CACHE,
    DEFAULT_SETS,
    HELDOUT_SETS,
    PONS_URL,
    SET_NAMES,
    MistakeRun,
    Mistakes,
    WeakCache,
    mistakes_row,
    mistakes_table,
    run_sets,
)

HELP = "mistake rates of agents on our held-out sets (or Pons' six test sets), moves labelled by the exact solver"
EXAMPLE = """\
cxforge mistakes --agents net,net-search --sample 100         # the held-out sets, shipped with cxforge
cxforge mistakes --agents net --sets Random-Middle,Centre-Middle
cxforge mistakes --agents solver --sets pons --pons ~/pons --engine c -o solver.json   # Pons' six"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The flags of ``cxforge mistakes``."""
    options.add_game(parser)
    options.add_names(parser, "--agents", ["net", "net-search"], "registered agents, project folders or files "
                      "(solver@heuristic: the solver with its old fallback)")
    parser.add_argument("--sample", type=options.positive_int, default=200, metavar="N",
                        help="positions per set (sampled, seeded; default 200)")
    parser.add_argument("--hard-sample", type=options.positive_int, default=None, metavar="N",
                        help="positions for Begin-Medium and Begin-Hard (default: --sample)")
    options.add_names(parser, "--sets", list(DEFAULT_SETS), "heldout (our sets "
                      f"{', '.join(HELDOUT_SETS)}, shipped), pons (Pons' {', '.join(SET_NAMES.values())}: "
                      "not shipped, read from --pons), or any of those names", metavar="SET")
    options.add_seed(parser, "seed of the sample")
    parser.add_argument("--budget", type=options.positive_float, default=None, metavar="S",
                        help="the solver agent's seconds a move (default: its normal budget)")
    parser.add_argument("--overage", type=options.nonnegative_float, default=0.0, metavar="S",
                        help="the solver agent meets each position as a fresh game with S seconds of Kaggle's "
                             "overage left (default 0: none)")
    parser.add_argument("--solve-budget", type=options.positive_float, default=20.0, metavar="S",
                        help="labelling seconds per move before skipping (default 20)")
    options.add_engine(parser, "auto", "the solver labelling the moves (auto: c where it loads; python: the same "
                       "scores, about 25x slower)")
    parser.add_argument("--pons", type=Path, default=PONS_DIR, metavar="DIR",
                        help=f"folder of Pons' Test_L*_R* files, downloaded from {PONS_URL}")
    parser.add_argument("--heldout", type=Path, default=HELDOUT_DIR, metavar="DIR",
                        help="folder of the held-out sets (default: the sets shipped with cxforge, "
                             "tools/connectx_forge/datasets/heldout)")
    options.add_json(parser, "print the results as JSON instead of the table")
    options.add_out(parser, "also write the results as JSON to PATH")
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE, metavar="FILE",
                        help=f"weak scores already solved (default {DEFAULT_CACHE})")
    parser.add_argument("--no-cache", action="store_true", help="solve every move again")
    options.add_progress(parser)


def run(args: argparse.Namespace) -> int:
    """Measure every agent on every set asked for; print (and save) the results."""
    connectx_only("cxforge mistakes (the solver's labels)", args.game or CONNECTX)
    to_stdout, out = args.json, args.out
    if not args.no_cache and args.cache.is_dir():
        raise UserError(f"--cache must be a file, {args.cache} is a folder")
    if out is not None and not out.parent.is_dir():
        raise UserError(f"folder of --out does not exist: {out.parent}")

    progress = options.progress_of(args)

    def report(res: Mistakes) -> None:
        if progress:
            name, agent, mistakes, rate = mistakes_row(res)[:4]
            print(f"  {name}, {agent}: {mistakes} mistakes, {rate}", file=sys.stderr, flush=True)

    run = MistakeRun(args.sample, args.hard_sample, args.seed, args.budget, args.overage, args.solve_budget,
                     options.engine_of(args), args.pons, args.heldout)
    results = run_sets(args.agents, args.sets, run, cache=None if args.no_cache else WeakCache(args.cache),
                       progress=progress, report=report)
    rows = [res.to_json() for res in results]
    if to_stdout:
        print(json.dumps(rows, indent=1))
    else:
        print(mistakes_table(results))
    if out is not None:
        safe_write.write_text(out, json.dumps(rows, indent=1), replace=True)  # --force: options.prepare
    return 0
