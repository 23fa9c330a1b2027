"""Check a submission file the way Kaggle will run it, before it is uploaded: the ``check_file`` API.

The file is copied ALONE into an empty temporary folder (``stage``; a .tar.gz
is unpacked there).  As on Kaggle, it first plays itself once (the validation
episode): when that fails, Kaggle marks the submission Error, and the check
fails without playing on.  Then it plays Kaggle's built-in ``random`` and
``negamax`` in both seats.  Every game is ``kaggle_game.play``: the real
``kaggle_environments`` interpreter referees in a worker process, and the file
plays in agent hosts (``tools/sandbox``), loaded afresh for each game by
kaggle_environments' loader, under the ``Limits`` given, so Kaggle's own rules
decide INVALID, ERROR and TIMEOUT and nothing the file does reaches the
checker.  The games run on the game tools' worker pool (forked processes);
``verdict.py`` decides, with the floors of the build manifest beside the file
(``read_manifest``), used only when the manifest's sha256 is the file's.
``check_agent`` takes any player ``cxforge check`` accepts (a project folder, a
source ``.py``, a registered agent: built on the fly first).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from connectx_forge.build import manifest as manifests
from connectx_forge.build.cache import Playable
from connectx_forge.tools import kaggle_env
from connectx_forge.tools.errors import UserError
from connectx_forge.tools.options import did_you_mean
from connectx_forge.tools.play import pool
from connectx_forge.tools.play.match import game_seed
from connectx_forge.tools.play.rules import ACT_TIMEOUT, OVERAGE
from connectx_forge.tools.sandbox.limits import Limits
from connectx_forge.tools.submit import kaggle_game
from connectx_forge.tools.submit.archive import unpack
from connectx_forge.tools.submit.verdict import CheckReport, summarize

OPPONENTS = ("random", "negamax")
DEFAULT_GAMES = 8  # per opponent
KAGGLE_ACT_TIMEOUT = float(ACT_TIMEOUT)
KAGGLE_OVERAGE = float(OVERAGE)
VALIDATION_SEED_INDEX = (1 << 32) - 1  # the validation episode is seeded apart from every game
Job = dict[str, Any]


def check_file(path: str | os.PathLike[str], games: int = DEFAULT_GAMES, workers: int | None = None,
               *, opponents: Iterable[str] = OPPONENTS, act_timeout: float = KAGGLE_ACT_TIMEOUT,
               overage: float = KAGGLE_OVERAGE, seed: int | None = 0, progress: bool = False,
               validation: bool = True, limits: Limits | None = None,
               size: tuple[int, int, int] = (6, 7, 4)) -> CheckReport:
    """Check the submission at ``path``: the validation episode, then ``games`` games per opponent.

    Game ``i`` is seeded with ``game_seed(seed, i)`` (``seed=None``: unseeded),
    and each of its seats (the file's host, the built-in opponent) has its own
    ``random`` and ``numpy.random``, seeded from it (``tools/play/seat_random.py``).
    ``workers`` games play at once (default: all cores); ``progress`` shows a bar
    on a terminal; ``validation=False`` skips the validation episode; ``limits``
    bound each agent host (default ``Limits()``); ``size`` is the board (Kaggle's
    leaderboard plays 6x7x4).
    """
    source = Path(path)
    _validate(source, games, act_timeout, overage)
    chosen = tuple(opponents)
    manifest_path, manifest, stale = read_manifest(source)
    jobs = jobs_for(chosen, games, act_timeout, overage, seed)
    kaggle_env.load()  # once, before the workers fork
    with tempfile.TemporaryDirectory(prefix="cxforge-check-") as folder:
        alone = stage(source, Path(folder))
        common = {"path": str(alone), "beside": source.name.endswith(".tar.gz"),
                  "limits": (limits or Limits()).to_json(), "size": list(size),
                  "shown_folder": str(source.resolve().parent)}  # logs name the file where it is, not its stage
        first = None
        if validation:
            first = kaggle_game.play({**validation_job(act_timeout, overage, seed), **common})
        results: list[dict[str, Any]] = []
        if first is None or first["kind"] == "ok":
            results = pool.in_processes(kaggle_game.play, [{**job, **common} for job in jobs],
                                        workers or os.cpu_count() or 1,
                                        progress=pool.Progress("check", "game", enabled=progress))
    report = summarize(str(source), games, act_timeout, overage, chosen, results, manifest_path, manifest,
                       validation=first)
    if stale:
        report.notes = [stale] + [n for n in report.notes if not n.startswith("no manifest beside")]
    if tuple(size) != (6, 7, 4):
        report.notes.append(f"played on a {size[0]}x{size[1]} board, {size[2]} in a row: Kaggle's leaderboard "
                            "plays 6x7, 4 in a row")
    return report


def submission_of(spec: str) -> Playable:
    """The file that ``cxforge check`` and ``upload`` judge for ``spec``: a built file as it is; a project
    folder, a source ``.py`` or a registered agent built on the fly (with its manifest beside it)."""
    from agents import registry
    from connectx_forge.build.cache import playable, registered

    path = Path(spec).expanduser()
    if spec.startswith("kaggle:"):
        raise UserError(f"{spec} is Kaggle's built-in agent, not a submission; check a project folder, "
                        "a .py or .tar.gz file, or a registered agent")
    if path.exists():
        return playable(spec)
    if spec in registry.REGISTRY:
        return registered(spec)
    if spec.endswith((".py", ".tar.gz")) or "/" in spec or os.sep in spec:
        raise UserError(f"{spec}: no such file or folder")
    raise UserError(f"{spec}: no such file or folder, nor a registered agent{did_you_mean(spec, registry.REGISTRY)}; "
                    "give a project folder, a .py or .tar.gz file, or a name from cxforge agents")


def check_agent(spec: str, games: int = DEFAULT_GAMES, workers: int | None = None, **kwargs: Any) -> CheckReport:
    """``check_file`` of whatever ``spec`` names (``submission_of``)."""
    return check_file(submission_of(spec).path, games, workers, **kwargs)


def validation_job(act_timeout: float, overage: float, seed: int | None) -> Job:
    """Kaggle's validation episode: the file against itself."""
    return {"index": -1, "opponent": kaggle_game.SELF, "seat": 0, "act_timeout": act_timeout,
            "overage": overage, "seed": None if seed is None else game_seed(seed, VALIDATION_SEED_INDEX)}


def stage(source: Path, folder: Path) -> Path:
    """Put the submission alone in the empty ``folder`` as Kaggle would; the path to load.

    A ``.py`` file is copied alone.  A ``.tar.gz`` is unpacked there (files
    beside ``main.py`` are importable on Kaggle too) and ``main.py`` is loaded.
    A file that does not compile is staged all the same: it fails to load in
    its games (a ``load`` failure), as it fails on Kaggle.
    """
    if source.name.endswith(".tar.gz"):
        main = unpack(source, folder)
    else:
        main = folder / source.name
        shutil.copyfile(source, main)
    return main


def read_manifest(path: Path) -> tuple[Path | None, dict[str, Any], str | None]:
    """The build manifest beside ``path`` if it describes this file: ``(manifest, data, None)``.

    ``(None, {}, None)`` when there is none; ``(None, {}, note)`` when its sha256 is
    not the file's (another build replaced the file, or the manifest is old):
    its name and floors are then not used, and ``note`` says so.
    """
    manifest = manifests.manifest_path(path)
    if not manifest.is_file():
        return None, {}, None
    try:
        data = json.loads(manifest.read_text())
    except (OSError, ValueError) as exc:
        raise UserError(f"{manifest}: not a readable JSON manifest ({exc})") from None
    if not isinstance(data, dict) or not isinstance(data.get("floors") or {}, dict):
        raise UserError(f"{manifest}: a manifest must be a JSON object with a 'floors' object")
    data["floors"] = data.get("floors") or {}
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    if data.get("sha256") != digest:
        return None, {}, (f"the manifest {manifest} does not match this file (its sha256 is "
                          f"{str(data.get('sha256'))[:12]}..., the file's {digest[:12]}...): its agent name and "
                          "floors are not used; rebuild with cxforge build to check the floors")
    return manifest, data, None


def _validate(source: Path, games: int, act_timeout: float, overage: float) -> None:
    if not source.exists():
        raise UserError(f"{source}: no such file")
    if not source.is_file():
        raise UserError(f"{source}: not a file")
    if games < 1:
        raise UserError(f"--games must be at least 1, not {games}")
    if act_timeout <= 0 or overage < 0:
        raise UserError("--act-timeout must be positive and --overage not negative")
    if not os.access(source, os.R_OK):
        raise UserError(f"{source}: cannot read it")


CHECK_WORKERS = "games played at once, each refereed in its own worker process (default: all cores)"


def builtin_opponent(spec: str) -> str:
    """The check's name (``random``, ``negamax``) of the opponent ``kaggle:random`` or ``kaggle:negamax``: the
    check plays Kaggle's built-in agents, written with their prefix as every command writes them."""
    if spec.startswith("kaggle:") and spec[len("kaggle:"):] in OPPONENTS:
        return spec[len("kaggle:"):]
    known = [f"kaggle:{o}" for o in OPPONENTS]
    hint = f" (did you mean 'kaggle:{spec}'?)" if spec in OPPONENTS else did_you_mean(spec, known)
    raise UserError(f"unknown opponent {spec!r}{hint}; the check plays Kaggle's built-in agents: {', '.join(known)}")


def jobs_for(opponents: tuple[str, ...], games: int, act_timeout: float, overage: float,
             seed: int | None) -> list[Job]:
    """``games`` per opponent, half in each seat (the first seat takes an odd one), interleaved."""
    unknown = [o for o in opponents if o not in OPPONENTS]
    if unknown:
        raise UserError(f"unknown opponent {unknown[0]!r}; Kaggle's built-ins are {', '.join(OPPONENTS)}")
    jobs: list[Job] = []
    for g in range(games):
        for opponent in opponents:
            index = len(jobs)
            jobs.append({"index": index, "opponent": opponent, "seat": g % 2, "act_timeout": act_timeout,
                         "overage": overage, "seed": None if seed is None else game_seed(seed, index)})
    return jobs
