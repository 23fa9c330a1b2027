"""Progress for long work, on stderr: a bar on a terminal, and a first line saying what will be done and how long.

A redirected log (``cxforge match ... 2> log``, CI) must not fill with carriage
returns, so a bar shows itself only on a terminal, and never with ``--no-progress``.
A command that can run for long also names its work in one first line (``plan``):
the games, the pool, the workers, and the time it expects, measured on its first
``MEASURE_S`` seconds of work ("about 3 min at 12 games/s").  That line is one
line, not a bar, so it is printed wherever progress is on, terminal or not (a
pipe's log then says what the run was); ``--no-progress`` silences it too.  A run
that ends before the measure prints the line as it ends, with its time.
"""

from __future__ import annotations

import sys
import time
from types import TracebackType

MEASURE_S = 2.0  # seconds of work the first line's estimate waits for (the first games carry the start-up)


def wanted(enabled: bool = True) -> bool:
    """Whether a bar should be drawn: asked for, and stderr is a terminal."""
    return enabled and sys.stderr.isatty()


def about(seconds: float) -> str:
    """A duration as a person says it: ``about 40 s``, ``about 3 min``, ``about 1.5 h``."""
    if seconds < 1:
        return "under a second"
    if seconds < 90:
        return f"about {seconds:.0f} s"
    if seconds < 90 * 60:
        return f"about {seconds / 60:.0f} min"
    return f"about {seconds / 3600:.1f} h"


def rate_text(done: float, seconds: float, unit: str) -> str:
    """How fast: ``12 games/s``, or ``4.2 s a game`` when slower than one a second."""
    if done <= 0 or seconds <= 0:
        return f"no {unit} finished yet"
    rate = done / seconds
    if rate >= 1:
        return f"{rate:,.0f} {plural(2, unit)}/s" if rate >= 10 else f"{rate:.1f} {plural(2, unit)}/s"
    return f"{seconds / done:.1f} s a {unit}"


def first_line(plan: str, done: int, left: int | None, seconds: float, unit: str, finished: bool,
               spent: float = 0.0) -> str:
    """The first line: ``plan``, then the expected time of the whole run: ``spent`` seconds so far, and
    ``left`` units more at the rate of ``done`` units in ``seconds``; for a run that ended before it was
    measured (``finished``), its ``done`` units and ``seconds``."""
    if finished:
        return f"{plan}: {count(done, unit)} in {seconds:.1f} s"
    if done <= 0:
        return f"{plan}: timing the first {plural(2, unit)}"
    rate = rate_text(done, seconds, unit)
    if left is None:
        return f"{plan}: {rate}"
    return f"{plan}: {about(spent + seconds * left / done)} at {rate}"


def plural(n: int, unit: str, units: str | None = None) -> str:
    """``unit`` for one, ``units`` (default ``unit`` + s, or + es after s, x, z, ch and sh) otherwise."""
    if n == 1:
        return unit
    return units or unit + ("es" if unit.endswith(("s", "x", "z", "ch", "sh")) else "s")


def count(n: int, unit: str, units: str | None = None) -> str:
    """``1 game``, ``1,234 games``."""
    return f"{n:,} {plural(n, unit, units)}"


def workers_text(workers: int, dask: object | None = None) -> str:
    """Where the work runs, for a first line: ``-w 2``, or ``on Dask``."""
    return "on Dask" if dask is not None else f"-w {workers}"


class Bar:
    """A tqdm bar (drawn on a terminal only) with the command's first line (``plan``, where given).

    Used as tqdm is: ``update``, ``set_postfix``, ``total``, a context manager.
    ``already(n)`` counts units done before this run (a resumed store) on the
    bar but not in the measured rate.
    """

    def __init__(self, total: int | None, desc: str, unit: str, enabled: bool, plan: str | None,
                 sample: int = 1) -> None:
        from tqdm import tqdm

        self._bar = tqdm(total=total, desc=desc, unit=unit, file=sys.stderr, disable=not wanted(enabled),
                         leave=False)
        self.unit, self.sample = unit, max(1, sample)
        self.plan = plan if enabled else None
        self.done = self.before = 0
        self.start = time.monotonic()
        self.first: tuple[int, float] | None = None  # units done and the time at the first update: the rate's start

    @property
    def total(self) -> int | None:
        total: int | None = self._bar.total  # tqdm's, untyped
        return total

    @total.setter
    def total(self, value: int | None) -> None:
        self._bar.total = value
        self._bar.refresh()

    def __enter__(self) -> Bar:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        if kind is not None:
            self.plan = None  # an error or Ctrl-C says what happened; no line about the time
        self.close()

    def already(self, n: int) -> None:
        """``n`` units done before this run: on the bar, not in the rate."""
        self.before += n
        self._bar.update(n)

    def update(self, n: int = 1) -> None:
        """``n`` more units done; the first line once the rate is measured (``_measured``): from the first
        update on, so that the start-up (loading the agents) counts once, not per unit."""
        self.done += n
        self._bar.update(n)
        now = time.monotonic()
        if self.first is None:
            self.first = (self.done, now)
        elif self.plan is not None and self._measured(now):
            self._announce(finished=False)

    def _measured(self, now: float) -> bool:
        """Whether the rate is known: ``sample`` units done since the first, over half of ``MEASURE_S`` at
        least (units that come back in batches arrive together), ``MEASURE_S`` into the run."""
        assert self.first is not None
        done, at = self.first
        return self.done - done >= self.sample and now - at >= MEASURE_S / 2 and now - self.start >= MEASURE_S

    def _announce(self, finished: bool) -> None:
        """Print the first line: the run's time when it has ``finished``, else the time it expects, from the
        rate since the first update (from the start where nothing came after it)."""
        assert self.plan is not None
        plan, now = self.plan, time.monotonic()
        self.plan = None
        if finished:
            self._print(first_line(plan, self.done, None, now - self.start, self.unit, True))
            return
        done, at = self.first if self.first is not None and self.done > self.first[0] else (0, self.start)
        left = None if self.total is None else max(0, self.total - self.before - self.done)
        self._print(first_line(plan, self.done - done, left, now - at, self.unit, False, now - self.start))

    def write(self, line: str) -> None:
        """A line on stderr, above the bar where one is drawn; the first line before it, if still to come."""
        if self.plan is not None:
            self._announce(finished=False)
        self._print(line)

    def _print(self, line: str) -> None:
        if self._bar.disable:
            print(line, file=sys.stderr, flush=True)
        else:
            self._bar.write(line, file=sys.stderr)

    def set_postfix(self, **values: object) -> None:
        self._bar.set_postfix(**values)

    def set_postfix_str(self, text: str, refresh: bool = True) -> None:
        self._bar.set_postfix_str(text, refresh=refresh)

    def close(self) -> None:
        """The first line, if the run ended before it was measured; then the bar goes."""
        if self.plan is not None:
            self._announce(finished=True)
        self._bar.close()


def bar(total: int | None, desc: str, unit: str = "game", enabled: bool = True, plan: str | None = None,
        sample: int = 1) -> Bar:
    """A bar on stderr (a silent one when ``wanted`` says no) and, with ``plan``, the first line, measured once
    ``sample`` units are done (see the module); use it as a context manager."""
    return Bar(total, desc, unit, enabled, plan, sample)
