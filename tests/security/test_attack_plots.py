"""Names in plots are text: no mathtext, no TeX, and no ``matplotlibrc`` of the working folder changes a plot.

A player's name comes from files anyone may write (a file's name, a ``cxforge.toml``, a Kaggle team in a replay
or ghost), and matplotlib parses ``$...$`` in any text as mathtext: a broken expression failed the plot, a
deeply nested one recursed until Python gave up.  matplotlib also reads ``./matplotlibrc`` before any other
settings file: one in the working folder turned on ``text.usetex`` (so LaTeX ran on the names) or changed every
plot.  Each plot is drawn here in a fresh interpreter whose working folder holds a hostile ``matplotlibrc`` (and
a backend module it names), with hostile names, and must come out byte for byte as it does from a clean folder,
with every name as written.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("matplotlib")

NAMES = ["$\\frac{a}{b}$", "$\\mathdefault{x}$", "$\\invalid{$", "$" + "x^{" * 3000 + "$", "a$b$c", "_hidden"]
HOSTILE_RC = """\
text.usetex: True
text.latex.preamble: \\usepackage{{evil}}
backend: module://evil_backend
font.size: 40
lines.linewidth: 12
axes.facecolor: red
savefig.directory: {home}
"""
# draws the toolkit's plots with NAMES (argv[2]) into argv[1] (the training curves too where argv[3] is "every":
# they import torch); prints each figure's texts and usetex flags as JSON
DRAW = """\
import json, sys, types
from pathlib import Path
from connectx_forge.arena import plots
from connectx_forge.arena.ladder import ladder_report
out, names, every = Path(sys.argv[1]), json.loads(sys.argv[2]), sys.argv[3] == "every"
seen = []
real = plots._save
def spy(fig, path):
    import matplotlib.text
    fig.canvas.draw()
    seen.extend([t.get_text(), t.get_usetex()] for t in fig.findobj(matplotlib.text.Text))
    real(fig, path)
plots._save = ladder_report._save = spy
rows = [types.SimpleNamespace(player=n, elo=10.0 * i, elo_lo=10.0 * i - 5, elo_hi=10.0 * i + 5)
        for i, n in enumerate(names)]
plots.ratings_png(types.SimpleNamespace(ratings=rows, run=names[0], games=10, openings=2), out / "ratings.png")
if every:
    from connectx_forge.train.netlib import DQN_PANELS, plot_curves
    plot_curves([{"epoch": 1, "train_loss": 1.0, "win_rate": 0.5, "epsilon": 1.0}], out / "curves.png", DQN_PANELS)
plots.llr_png({"llr_history": [0.1, 0.5], "upper": 2.9, "lower": -2.9, "new": names[0], "base": names[2],
               "elo0": 0, "elo1": 5, "model": "normalized", "result": "H1"}, out / "llr.png")
day = types.SimpleNamespace(day=1, mu=25.0, sigma=2.0)
subs = [types.SimpleNamespace(rated=True, player=n, by_day=[day]) for n in names]
ladder_report.ladder_png(types.SimpleNamespace(submissions=subs, run=names[1], days=1), out / "ladder.png")
import matplotlib
print(json.dumps({"texts": seen, "usetex": matplotlib.rcParams["text.usetex"]}))
"""
PLOTS = ("ratings.png", "llr.png", "ladder.png", "curves.png")


def _draw(cwd: Path, out: Path, config: Path, every: bool = True) -> dict[str, object]:
    out.mkdir()
    env = {**os.environ, "MPLCONFIGDIR": str(config)}
    argv = [sys.executable, "-c", DRAW, str(out), json.dumps(NAMES), "every" if every else "some"]
    proc = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    result: dict[str, object] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


def test_hostile_names_and_a_hostile_matplotlibrc_change_no_plot(tmp_path: Path) -> None:
    clean, hostile, config = tmp_path / "clean", tmp_path / "hostile", tmp_path / "mplconfig"
    clean.mkdir()
    hostile.mkdir()
    (hostile / "matplotlibrc").write_text(HOSTILE_RC.format(home=Path.home()))
    (hostile / "evil_backend.py").write_text(f"open({str(tmp_path / 'MARKER')!r}, 'w').write('ran')\n")
    drawn = _draw(hostile, tmp_path / "hostile-out", config)
    reference = _draw(clean, tmp_path / "clean-out", config)
    for name in PLOTS:
        assert (tmp_path / "hostile-out" / name).read_bytes() == (tmp_path / "clean-out" / name).read_bytes(), name
    texts = drawn["texts"]
    assert isinstance(texts, list) and texts == reference["texts"]
    shown = {text for text, _ in texts}
    for name in NAMES[:3] + NAMES[4:5]:
        assert name in shown  # as written: no mathtext parsed (the third would not parse)
    assert " _hidden" in shown  # in the legend, not left out as matplotlib's "_" labels are
    assert not any(usetex for _, usetex in texts) and drawn["usetex"] is False
    assert not (tmp_path / "MARKER").exists()


def test_a_fifo_named_matplotlibrc_in_the_working_folder_does_not_hang_a_plot(tmp_path: Path) -> None:
    folder = tmp_path / "cwd"
    folder.mkdir()
    os.mkfifo(folder / "matplotlibrc")
    drawn = _draw(folder, tmp_path / "out", tmp_path / "mplconfig", every=False)  # the old import blocked on it
    assert drawn["usetex"] is False and (tmp_path / "out" / "ratings.png").stat().st_size > 1000
