"""``cxforge bench solver --reference bitbully``: optional (its absence is one line) and, where installed in the
bench layer, run beside the compiled solver on the same positions."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from connectx_forge import tool_engines
from connectx_forge.bench import reference_bitbully
from connectx_forge.cli import main
from connectx_forge.errors import UserError


def test_absent_reference_is_one_line_naming_the_install(tmp_path: Path, pons_dir: Path,
                                                         monkeypatch: pytest.MonkeyPatch,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(UserError) as err:
        reference_bitbully.load(tmp_path / "empty")
    assert "\n" not in str(err.value) and "make bench-reference" in str(err.value)
    monkeypatch.setattr(reference_bitbully, "LAYER", tmp_path / "empty")
    assert main(["bench", "solver", str(pons_dir / "Test_L3_R1"), "--reference", "bitbully", "--limit", "3"]) != 0
    out, err_text = capsys.readouterr()
    assert out == ""
    lines = err_text.strip().splitlines()
    assert len(lines) == 1 and "make bench-reference" in lines[0] and "bitbully" in lines[0]


def test_side_by_side_with_bitbully_on_three_positions(pons_dir: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    if not (reference_bitbully.LAYER / "bitbully").is_dir():
        pytest.skip(f"bitbully is not in the bench layer {reference_bitbully.LAYER}: {reference_bitbully.INSTALL}")
    if not tool_engines.available():
        pytest.skip(f"the compiled solver: {tool_engines.why_not()}")
    assert main(["bench", "solver", str(pons_dir / "Test_L2_R2"), "--reference", "bitbully", "--limit", "3",
                 "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "process_time" in out
    rows = [line for line in out.splitlines() if line.startswith("| Middle-Medium")]
    assert len(rows) == 2 and "bitbully" in rows[1]
    assert all(re.search(r"\|\s*3/3\s*\|", row) for row in rows)  # both right on all three
