"""No code from data: a checkpoint, a weight file or a ghost's mark that someone else wrote runs nothing.

A training run folder may be a teammate's or a download.  ``torch.save`` writes a pickle, and unpickling runs
whatever its ``__reduce__`` says, so ``cxforge train --resume`` and ``cxforge bench net`` read only their own
format (tools/connectx_forge/train/checkpoint.py: numpy arrays and JSON in a zip), within bounds.  Each hostile file
here
must end in one error line naming it (exit status 2) and leave its marker unwritten.  A ghost's agent file
names its team on its first line; that name was parsed by ``ast.literal_eval``, which recursed on a megabyte
of nesting: it is now matched by a regex, within a bound.
"""

from __future__ import annotations

import contextlib
import io
import json
import pickle
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from connectx_forge.cli import main
from connectx_forge.errors import UserError
from connectx_forge.players.player import GHOST_MARK, team_of

torch = pytest.importorskip("torch")
from connectx_forge.train import checkpoint  # noqa: E402


class Payload:
    """Unpickled, it writes ``marker``: what a hostile checkpoint would do with the user's rights."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[Any, ...]:
        return exec, (f"open({str(self.marker)!r}, 'w').write('ran')",)


def _torch_zip(path: Path, marker: Path) -> None:
    torch.save({"model": Payload(marker), "optimizer": {}, "history": [], "hidden": [8]}, path)


def _torch_legacy(path: Path, marker: Path) -> None:
    torch.save({"model": Payload(marker)}, path, _use_new_zipfile_serialization=False)


def _raw_pickle(path: Path, marker: Path) -> None:
    path.write_bytes(pickle.dumps(Payload(marker)))


def _object_array(path: Path, marker: Path) -> None:
    """Our own format, with a tensor that is a pickled object array (numpy unpickles one if allowed to)."""
    member = io.BytesIO()
    np.save(member, np.array([Payload(marker)], dtype=object), allow_pickle=True)
    _zip(path, {"state.json": '{"dict": [["model", {"tensor": 0}]]}', "t0.npy": member.getvalue()})


def _zip(path: Path, members: dict[str, str | bytes], compression: int = zipfile.ZIP_STORED) -> None:
    with zipfile.ZipFile(path, "w", compression) as zf:
        for name, data in members.items():
            zf.writestr(name, data)


def _object_npz(path: Path, marker: Path) -> None:
    """A weight file (``--init``) whose meta is a pickled object array."""
    with path.open("wb") as fh:
        np.savez(fh, w0=np.zeros((2, 2)), b0=np.zeros(2), meta=np.array([Payload(marker)], dtype=object))


HOSTILE = {"torch.save (zip)": _torch_zip, "torch.save (legacy)": _torch_legacy, "a raw pickle": _raw_pickle,
           "an object array": _object_array, "an object array in an npz": _object_npz}


def _one_line(code: int, err: str, *words: str) -> None:
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1 and "Traceback" not in err, err
    assert all(w in lines[0] for w in words), lines[0]


@pytest.mark.parametrize("write", HOSTILE.values(), ids=HOSTILE.keys())
def test_a_hostile_checkpoint_runs_nothing_in_train_resume_or_bench_net(tmp_path: Path, write: Any,
                                                                        capsys: pytest.CaptureFixture[str]) -> None:
    marker = tmp_path / "MARKER"
    control = tmp_path / "control.pt"
    write(control, tmp_path / "CONTROL")
    if write not in (_object_array, _object_npz):  # the payload is live: torch.load ran it (then failed, if raw)
        with contextlib.suppress(RuntimeError):
            torch.load(control, weights_only=False)
        assert (tmp_path / "CONTROL").exists()
    ckpt = tmp_path / "runs" / "evil" / "checkpoint.pt"
    ckpt.parent.mkdir(parents=True)
    write(ckpt, marker)
    code = main(["train", "--method", "dqn", "--resume", "--out", str(tmp_path / "runs"), "--name", "evil",
                 "--hidden", "8", "--episodes", "1", "--opponents", "random", "--threads", "1", "--no-progress",
                 "--device", "cpu"])
    _one_line(code, capsys.readouterr().err, str(ckpt), "not a checkpoint")
    pons = tmp_path / "pons"
    pons.mkdir()
    code = main(["bench", "net", "--checkpoint", str(ckpt), "--pons", str(pons)])
    _one_line(code, capsys.readouterr().err, str(ckpt), "not a checkpoint")
    code = main(["train", "--method", "dqn", "--init", str(ckpt), "--out", str(tmp_path / "runs"), "--name", "q",
                 "--episodes", "1", "--no-progress"])
    _one_line(code, capsys.readouterr().err, str(ckpt), "not a usable weight file")
    assert not marker.exists()


def test_a_checkpoint_that_lies_about_its_size_is_refused_before_it_is_unpacked(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "checkpoint.pt"
    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(header, {"descr": "<f4", "fortran_order": False, "shape": (10**12,)})
    _zip(path, {"state.json": '{"tensor": 0}', "t0.npy": header.getvalue() + b"\0" * 16})
    with pytest.raises(UserError, match="header does not describe"):  # never a 4 TB array
        checkpoint.load(path)
    monkeypatch.setattr(checkpoint, "MAX_BYTES", 1 << 20)
    _zip(path, {"state.json": "{}", "t0.npy": b"\0" * (4 << 20)}, zipfile.ZIP_DEFLATED)  # 4 MiB in 4 KB
    with pytest.raises(UserError, match="unpack to more than 1 MiB"):
        checkpoint.load(path)
    _zip(path, {"state.json": "[" * 100_000 + "]" * 100_000})
    with pytest.raises(UserError, match="nested deeper"):
        checkpoint.load(path)
    _zip(path, {"state.json": '{"dict": [["a", {"call": "os.system"}]]}'})
    with pytest.raises(UserError, match="an unknown value"):
        checkpoint.load(path)


@pytest.mark.parametrize("mark", ["-" * 1_000_000 + "1", "(" * 1_000_000, "[" * 4000 + "'x'" + "]" * 4000,
                                  "'a' + 'b'", "'unterminated"])
def test_a_hostile_ghost_mark_is_one_line(tmp_path: Path, mark: str, capsys: pytest.CaptureFixture[str]) -> None:
    ghost = tmp_path / "ghost.py"
    ghost.write_text(GHOST_MARK + mark + ".\ndef agent(obs, config):\n    return 0\n", encoding="utf-8")
    with pytest.raises(UserError, match="without a quoted team name"):  # was a RecursionError at 4,000 levels
        team_of(ghost)
    code = main(["match", str(ghost), "random", "--games", "2", "--no-progress"])
    _one_line(code, capsys.readouterr().err, str(ghost), "ghost's mark")


def test_a_ghost_mark_reads_back_every_team_name(tmp_path: Path) -> None:
    ghost = tmp_path / "ghost.py"
    for team in ("Oracle", "it's", 'say "hi"', "é中😀\n\\x", "$\\frac{a}{b}$", "\x1b[31m\u202e"):
        ghost.write_text(GHOST_MARK + repr(team) + ".\n", encoding="utf-8")
        assert team_of(ghost) == team


_KEYS = st.sampled_from(["dict", "tuple", "tensor", "float"]) | st.text(max_size=6)  # the format's tags, and not
_JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5),
                     lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_KEYS, inner, max_size=2),
                     max_leaves=12)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(state=_JSON, member=st.binary(max_size=200), names=st.sampled_from(["t0.npy", "t1.npy", "x"]))
def test_any_state_and_member_loads_or_is_one_user_error(tmp_path: Path, state: Any, member: bytes,
                                                         names: str) -> None:
    path = tmp_path / "checkpoint.pt"
    _zip(path, {"state.json": json.dumps(state), names: member})
    try:
        checkpoint.load(path)
    except UserError as exc:
        assert "\n" not in str(exc) and str(path) in str(exc)
