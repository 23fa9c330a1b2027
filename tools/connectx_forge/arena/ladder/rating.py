"""The rating model of the simulated ladder: TrueSkill (the ``trueskill`` library), with named settings.

Kaggle's text (docs/ladder.md) describes a Gaussian skill N(mu, sigma^2) per
submission that starts at mu0 = 600 and moves after each episode by how
surprising the result was and by each sigma; a draw pulls both together.  That
is TrueSkill's two-player update, the common reading.  Kaggle does not publish
sigma0, beta, tau or the draw probability: ``RatingSettings`` names them, with
defaults that are TrueSkill's own scaled from its mu0 = 25 to Kaggle's 600
(x24): sigma0 = 200, beta = 100, tau = 2, draw probability 0.10.

``update`` is the closed form of TrueSkill's two-player update (exact for one
player a side), computed with the library's own v/w functions: the fit
(``fit.py``) calls it hundreds of thousands of times, faster than the factor
graph of ``TrueSkill.rate_1vs1``, which it equals (tests/integration/test_ladder.py checks).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Protocol

from connectx_forge.errors import UserError

MU0 = 600.0


class Rating(Protocol):
    """The library's ``Rating``: a Gaussian skill."""

    @property
    def mu(self) -> float:
        ...

    @property
    def sigma(self) -> float:
        ...


class RatingEnv(Protocol):
    """What the ladder uses of the library's ``TrueSkill`` environment: its v/w functions (``diff``: the gap
    in means over the performance spread, ``draw_margin`` likewise), its normal CDF and a new rating."""

    def v_win(self, diff: float, draw_margin: float) -> float:
        ...

    def w_win(self, diff: float, draw_margin: float) -> float:
        ...

    def v_draw(self, diff: float, draw_margin: float) -> float:
        ...

    def w_draw(self, diff: float, draw_margin: float) -> float:
        ...

    def cdf(self, x: float) -> float:
        ...

    def create_rating(self) -> Rating:
        ...


@dataclass(frozen=True)
class RatingSettings:
    """TrueSkill's parameters on Kaggle's scale: the start (mu0, sigma0), the performance spread (beta), the
    drift added before each episode (tau) and the probability of a draw between equals (draw_probability)."""

    mu0: float = MU0
    sigma0: float = 200.0
    beta: float = 100.0
    tau: float = 2.0
    draw_probability: float = 0.10

    def __post_init__(self) -> None:
        for name in ("sigma0", "beta"):
            if not getattr(self, name) > 0:
                raise UserError(f"--{name} must be positive, got {getattr(self, name):g}")
        if self.tau < 0:
            raise UserError(f"--tau must be at least 0, got {self.tau:g}")
        if not 0 <= self.draw_probability < 1:
            raise UserError(f"--draw-probability must be in [0, 1), got {self.draw_probability:g}")

    def env(self) -> RatingEnv:
        """The library's ``TrueSkill`` environment of these settings."""
        import trueskill

        env: RatingEnv = trueskill.TrueSkill(mu=self.mu0, sigma=self.sigma0, beta=self.beta, tau=self.tau,
                                             draw_probability=self.draw_probability)
        return env

    def to_json(self) -> dict[str, float]:
        return asdict(self)


@dataclass(frozen=True)
class Skill:
    """One submission's rating: mean and standard deviation."""

    mu: float
    sigma: float


class TrueSkillModel:
    """TrueSkill's two-player update under ``settings`` (closed form, the library's v/w functions)."""

    def __init__(self, settings: RatingSettings) -> None:
        self.settings = settings
        self.env = settings.env()
        import trueskill

        # the draw margin of two one-player teams, as the library computes it
        self.margin = trueskill.calc_draw_margin(settings.draw_probability, 2, self.env)

    def update(self, a: Skill, b: Skill, score: float) -> tuple[Skill, Skill]:
        """Both ratings after an episode in which A scored ``score`` (1 win, 0.5 draw, 0 loss)."""
        tau2 = self.settings.tau ** 2
        va, vb = a.sigma ** 2 + tau2, b.sigma ** 2 + tau2
        c = math.sqrt(2 * self.settings.beta ** 2 + va + vb)
        eps = self.margin / c
        if score == 0.5:
            t = (a.mu - b.mu) / c
            v, w = self.env.v_draw(t, eps), self.env.w_draw(t, eps)
            sign = 1.0
        else:
            win, lose = (a, b) if score > 0.5 else (b, a)
            t = (win.mu - lose.mu) / c
            v, w = self.env.v_win(t, eps), self.env.w_win(t, eps)
            sign = 1.0 if score > 0.5 else -1.0
        new_a = Skill(a.mu + sign * va / c * v, math.sqrt(va * max(1 - va / c ** 2 * w, 1e-12)))
        new_b = Skill(b.mu - sign * vb / c * v, math.sqrt(vb * max(1 - vb / c ** 2 * w, 1e-12)))
        return new_a, new_b

    def expected(self, a: Skill, b: Skill) -> tuple[float, float]:
        """``(P(A wins), P(draw))`` under the model (the draw margin, each performance N(mu, sigma^2 + beta^2))."""
        c = math.sqrt(2 * self.settings.beta ** 2 + a.sigma ** 2 + b.sigma ** 2)
        cdf = self.env.cdf
        win = 1 - cdf((self.margin - (a.mu - b.mu)) / c)
        lose = cdf((-self.margin - (a.mu - b.mu)) / c)
        return win, max(0.0, 1 - win - lose)
