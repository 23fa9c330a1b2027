"""``cxforge ladder --fit``: TrueSkill's sigma0, beta, tau and draw probability fitted to real episode lists.

Kaggle shows each agent's mu before and after every episode (``initialScore``,
``updatedScore``), never sigma.  Under TrueSkill's two-player update a side
moves by +/-(sigma^2 + tau^2) / c * v(t, eps) with c^2 = 2 beta^2 + both
(sigma^2 + tau^2), so the parameters show in the size of the moves.

* A submission is *tracked* when the files hold its whole history (a file that
  is its own episode list: ``episodes_in.complete_of``) and its first rated
  episode starts at mu0 (sigma is sigma0 there), for as long as its episodes
  chain (each one's score before is the last one's after; a gap ends the
  tracking).  A tracked submission's sigma follows the model.  (An opponent
  first seen at mu0 is not enough: a draw between two new submissions leaves
  both at mu0 with a smaller sigma.)
* An untracked opponent's sigma is read off the episode itself: both sides move
  by the same v/c, so its (sigma^2 + tau^2) is the tracked side's times the
  ratio of their moves.
* The loss is the sum of squared differences between each tracked side's
  observed score after and the one the model predicts from its score before;
  it is minimised by Nelder-Mead over log sigma0, log beta, log tau and
  logit(draw probability), from a few starts.

``synthetic.py`` makes episode lists from known parameters with the library's
own ``rate_1vs1``; tests/integration/test_ladder.py checks that the fit recovers them.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from connectx_forge import table
from connectx_forge.arena.ladder.episodes_in import Episode, read_episodes
from connectx_forge.arena.ladder.rating import MU0, RatingSettings, Skill, TrueSkillModel
from connectx_forge.errors import UserError

SAME = 0.01  # two scores this close are the same score (Kaggle's are floats)
NAMES = ("sigma0", "beta", "tau", "draw_probability")


@dataclass(frozen=True)
class FitResult:
    """The fitted settings, the loss's root mean square (points), and how much the data held."""

    settings: RatingSettings
    rmse: float
    episodes: int
    residuals: int
    tracked: int

    def to_json(self) -> dict[str, object]:
        return {"settings": self.settings.to_json(), "rmse": round(self.rmse, 4), "episodes": self.episodes,
                "residuals": self.residuals, "tracked_submissions": self.tracked}


def _settings(theta: Sequence[float] | np.ndarray, mu0: float) -> RatingSettings:
    s0, b, t, p = (float(x) for x in theta)
    return RatingSettings(mu0=mu0, sigma0=math.exp(s0), beta=math.exp(b), tau=math.exp(t),
                          draw_probability=1 / (1 + math.exp(-p)))


def residuals(episodes: Sequence[Episode], settings: RatingSettings,
              complete: set[int] | None = None) -> tuple[list[float], int]:
    """Observed minus predicted score after, for each tracked side; and how many submissions were tracked.
    ``complete``: the submissions whose whole history the episodes hold (None: all of them)."""
    model = TrueSkillModel(settings)
    tau2 = settings.tau ** 2
    sigma: dict[int, float] = {}  # tracked submissions: sigma now
    last: dict[int, float] = {}  # every submission's score after its last episode seen
    ever: set[int] = set()
    out: list[float] = []
    for e in episodes:
        for side in (e.a, e.b):
            s = side.submission
            if s not in last and abs(side.before - settings.mu0) < SAME and (complete is None or s in complete):
                sigma[s] = settings.sigma0
                ever.add(s)
            elif s in sigma and abs(last[s] - side.before) >= SAME:
                del sigma[s]  # a gap in its history: sigma unknown from here
        known = [side.submission in sigma for side in (e.a, e.b)]
        if any(known):
            sa = sigma.get(e.a.submission)
            sb = sigma.get(e.b.submission)
            da, db = e.a.after - e.a.before, e.b.after - e.b.before
            if sa is None or sb is None:  # the untracked side's sigma from the ratio of the moves
                ref, ref_d, other_d = (sa, da, db) if sa is not None else (sb, db, da)
                assert ref is not None
                if abs(ref_d) < 1e-9:
                    known = [False, False]
                else:
                    var = (ref ** 2 + tau2) * abs(other_d) / abs(ref_d) - tau2
                    other = math.sqrt(max(var, 1e-6))
                    sa, sb = (sa, other) if sa is not None else (other, sb)
            if any(known) and sa is not None and sb is not None:
                new_a, new_b = model.update(Skill(e.a.before, sa), Skill(e.b.before, sb), e.score)
                for side, new, is_known in ((e.a, new_a, known[0]), (e.b, new_b, known[1])):
                    if is_known:
                        out.append(side.after - new.mu)
                        sigma[side.submission] = new.sigma
        for side in (e.a, e.b):
            last[side.submission] = side.after
    return out, len(ever)


def nelder_mead(f: Callable[[np.ndarray], float], x0: np.ndarray, step: float = 0.5, iters: int = 400,
                tol: float = 1e-10) -> tuple[np.ndarray, float]:
    """Minimise ``f`` from ``x0`` (the standard reflect/expand/contract/shrink moves); ``(x, f(x))``."""
    n = len(x0)
    pts = [x0.astype(float)] + [x0 + step * np.eye(n)[i] for i in range(n)]
    vals = [f(p) for p in pts]
    for _ in range(iters):
        order = np.argsort(vals)
        pts, vals = [pts[i] for i in order], [vals[i] for i in order]
        if abs(vals[-1] - vals[0]) <= tol * (abs(vals[0]) + tol):
            break
        centre = np.mean(pts[:-1], axis=0)
        worst = pts[-1]
        r = centre + (centre - worst)
        fr = f(r)
        if fr < vals[0]:
            e = centre + 2 * (centre - worst)
            fe = f(e)
            pts[-1], vals[-1] = (e, fe) if fe < fr else (r, fr)
        elif fr < vals[-2]:
            pts[-1], vals[-1] = r, fr
        else:
            c = centre + 0.5 * (worst - centre) if fr >= vals[-1] else centre + 0.5 * (r - centre)
            fc = f(c)
            if fc < min(fr, vals[-1]):
                pts[-1], vals[-1] = c, fc
            else:
                pts = [pts[0]] + [pts[0] + 0.5 * (p - pts[0]) for p in pts[1:]]
                vals = [vals[0]] + [f(p) for p in pts[1:]]
    best = int(np.argmin(vals))
    return pts[best], float(vals[best])


def fit(episodes: Sequence[Episode], mu0: float = MU0, complete: set[int] | None = None) -> FitResult:
    """The settings that best predict the episodes' scores after (see the module docstring)."""
    episodes = sorted(episodes, key=lambda e: e.id)  # Kaggle's ids grow with time: the order of rating
    if not episodes:
        raise UserError("no rated episode with both agents' scores before and after (initialScore, updatedScore) "
                        "in the files")

    def loss(theta: np.ndarray) -> float:
        if np.any(np.abs(theta) > 20):
            return float("inf")
        res, _ = residuals(episodes, _settings(theta, mu0), complete)
        return float(np.mean(np.square(res))) if res else float("inf")

    d = RatingSettings(mu0=mu0)
    starts = [np.array([math.log(d.sigma0), math.log(d.beta), math.log(d.tau),
                        math.log(d.draw_probability / (1 - d.draw_probability))]),
              np.array([math.log(100), math.log(200), math.log(10), 0.0])]
    best: tuple[np.ndarray, float] | None = None
    for x0 in starts:
        x, v = nelder_mead(loss, x0)
        x, v = nelder_mead(loss, x, step=0.1)  # a restart, against a collapsed simplex
        if best is None or v < best[1]:
            best = (x, v)
    assert best is not None
    if not math.isfinite(best[1]):
        raise UserError("no submission's history starts at mu0 in the files (its first rated episode, score "
                        f"before {mu0:g}): nothing to fit sigma0 to; add the episode lists of your own "
                        "submissions from their start")
    settings = _settings(best[0], mu0)
    res, tracked = residuals(episodes, settings, complete)
    return FitResult(settings, math.sqrt(best[1]), len(episodes), len(res), tracked)


def fit_files(paths: Sequence[Path], mu0: float = MU0) -> FitResult:
    """``fit`` of the episodes in the files (``episodes_in.read_episodes``)."""
    episodes, complete = read_episodes(paths)
    return fit(episodes, mu0, complete)


def format_fit(result: FitResult) -> str:
    """The fit as text: a table of the parameters, then what it was fitted on."""
    s = result.settings
    rows = [[name, f"{getattr(s, name):.4g}"] for name in NAMES]
    return "\n".join([
        table.render(["parameter", "fitted"], rows, "rule", align="lr"),
        f"fitted on {result.episodes} rated episodes: {result.residuals} score changes of {result.tracked} "
        f"submissions tracked from mu0 {s.mu0:g}; root mean square error {result.rmse:.3g} points",
        f"use them: cxforge ladder PLAYER --sigma0 {s.sigma0:.4g} --beta {s.beta:.4g} --tau {s.tau:.4g} "
        f"--draw-probability {s.draw_probability:.4g}"])
