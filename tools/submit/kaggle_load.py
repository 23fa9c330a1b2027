"""Play checker games with a submission file loaded exactly the way Kaggle loads it.

This module runs as a SEPARATE, isolated process (``python -I kaggle_load.py``),
started by ``connectx_forge.tools.submit.loader`` with its working folder set to an empty temporary
folder that holds only the submission.  It imports nothing from the project:
only the standard library and ``kaggle_environments``.  Before any game it
removes the project from the import system (the editable-install finder and any
path inside the project), so a submission that still imports ``agents.*`` or a
sibling module fails here as it would on Kaggle.

The submission is handed to ``env.run`` BY PATH: ``kaggle_environments`` reads
the file, and exec's it inside the first call (so move 1 includes the load
time), takes the last callable, and applies its own validity and
``actTimeout``/overage rules.  Move times are read from the environment's own
logs (the ``duration`` it measures around each call).

Protocol: one JSON job per line on stdin, one JSON result per line on the
original stdout (the agent's own prints go to stderr, never into the protocol).
"""

from __future__ import annotations

import copy
import json
import os
import random
import sys
from typing import Any, TextIO

FAILED_STATUSES = ("INVALID", "ERROR", "TIMEOUT")


def isolate_from(project_root: str) -> None:
    """Remove every route back into the project from the import system."""
    root = os.path.realpath(project_root)
    environments = {os.path.realpath(sys.prefix), os.path.realpath(sys.base_prefix)}

    def within(real: str, folder: str) -> bool:
        return real == folder or real.startswith(folder + os.sep)

    def inside(entry: str) -> bool:
        """In the project's sources (its virtualenv, often inside it, stays visible)."""
        real = os.path.realpath(entry or os.getcwd())
        return within(real, root) and not any(within(real, env) for env in environments)

    sys.path[:] = [p for p in sys.path if not inside(p)]
    sys.meta_path[:] = [f for f in sys.meta_path if not is_editable_hook(f)]
    sys.path_hooks[:] = [h for h in sys.path_hooks if not is_editable_hook(h)]
    sys.path_importer_cache.clear()
    for name, module in list(sys.modules.items()):
        where = getattr(module, "__file__", None)
        if where and inside(where):
            del sys.modules[name]


def is_editable_hook(obj: Any) -> bool:
    """True for the finders and path hooks that setuptools' editable installs add."""
    owner = obj if isinstance(obj, type) else type(obj)
    module = getattr(obj, "__module__", None) or getattr(owner, "__module__", "") or ""
    return module.startswith("__editable__")


def make_env(act_timeout: float, overage: float) -> Any:
    """The real ConnectX environment; only ``actTimeout`` and the overage bank may differ.

    With Kaggle's values (2 s, 60 s) this is plain ``make("connectx")``.  The
    overage bank is an observation default, not a configuration field, so a
    different bank means building the environment from a copy of the registered
    ConnectX specification, as ``make`` itself does.
    """
    from kaggle_environments import environments, make
    from kaggle_environments.core import Environment

    configuration = {"actTimeout": act_timeout} if act_timeout != 2 else {}
    if overage == 60:
        return make("connectx", configuration=configuration)
    make("connectx")  # resolves the lazily registered environment
    spec = copy.deepcopy(environments["connectx"]["specification"])
    spec["observation"]["remainingOverageTime"]["default"] = overage
    return Environment(**{**environments["connectx"], "specification": spec}, configuration=configuration)


def play_game(path: str, opponent: str, seat: int, act_timeout: float, overage: float,
              seed: int | None) -> dict[str, Any]:
    """One game of the file at ``path`` (in ``seat`` 0 or 1) against a built-in opponent."""
    if seed is not None:
        random.seed(seed)
    env = make_env(act_timeout, overage)
    players: list[Any] = [opponent, opponent]
    players[seat] = path
    result: dict[str, Any] = {"opponent": opponent, "seat": seat}
    try:
        env.run(players)
    except BaseException as exc:  # the environment itself broke (e.g. a float action)
        if isinstance(exc, KeyboardInterrupt):
            raise
        result.update(status="ERROR", outcome="loss", reward=None,
                      error=f"the environment crashed on the agent's action (return a plain int): "
                            f"{type(exc).__name__}: {exc}")
        result.update(_timings(env, seat))
        return result
    final = env.steps[-1]
    mine, theirs = final[seat], final[1 - seat]
    result["status"] = mine.status
    result["reward"] = mine.reward
    if mine.status in FAILED_STATUSES:
        result["outcome"] = "loss"
        result["error"] = _failure(env, seat, mine)
    elif theirs.status in FAILED_STATUSES:
        result["outcome"] = "win"
        result["error"] = f"the opponent's status was {theirs.status}"
    else:
        result["outcome"] = {1: "win", 0: "draw", -1: "loss"}.get(mine.reward, "draw")
    result.update(_timings(env, seat))
    return result


def _timings(env: Any, seat: int) -> dict[str, Any]:
    """The agent's move durations, as the environment measured them (first one includes the load)."""
    durations = [step[seat]["duration"] for step in env.logs
                 if len(step) > seat and isinstance(step[seat], dict) and "duration" in step[seat]]
    return {"durations": durations, "moves": len(durations)}


def _failure(env: Any, seat: int, state: Any) -> str:
    """What went wrong, in a line: the invalid action, the agent's error, or the timeout."""
    if state.status == "INVALID":
        if state.action is None:
            return "invalid move: the action was not a plain int >= 0 (numpy ints and bools are refused)"
        return f"invalid move: column {state.action!r} (not on the board, or full)"
    if state.status == "TIMEOUT":
        spent = _timings(env, seat)["durations"]
        return f"timeout: a move took {max(spent, default=0):.2f} s with the overage bank spent"
    return _last_error(env, seat) or state.status


def _last_error(env: Any, seat: int) -> str:
    """The last line of the agent's captured stderr (a traceback's final line), if any."""
    for step in reversed(env.logs):
        if len(step) > seat and isinstance(step[seat], dict) and step[seat].get("stderr", "").strip():
            return step[seat]["stderr"].strip().splitlines()[-1][:500]
    return ""


def serve(jobs: TextIO, results: TextIO) -> None:
    """Play each job read from ``jobs``; write one JSON result per line to ``results``."""
    for line in jobs:
        if not line.strip():
            continue
        job = json.loads(line)
        result = play_game(job["path"], job["opponent"], job["seat"], job["act_timeout"],
                           job["overage"], job.get("seed"))
        result["index"] = job["index"]
        results.write(json.dumps(result) + "\n")
        results.flush()


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: python -I kaggle_load.py PROJECT_ROOT < jobs.jsonl", file=sys.stderr)
        return 2
    isolate_from(argv[1])
    results = os.fdopen(os.dup(sys.stdout.fileno()), "w")  # the protocol channel
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())  # stray prints (fd 1) go to stderr
    sys.stdout = sys.stderr
    serve(sys.stdin, results)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
