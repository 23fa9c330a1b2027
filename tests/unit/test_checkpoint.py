"""A training checkpoint holds data and no code, and still restores a run whole (connectx_forge.train.checkpoint)."""

from __future__ import annotations

import math
import random
from pathlib import Path
from typing import Any

import pytest

torch = pytest.importorskip("torch")

from connectx_forge.errors import UserError  # noqa: E402
from connectx_forge.train import checkpoint  # noqa: E402
from connectx_forge.train.netlib import build_mlp, hidden_of, load_checkpoint  # noqa: E402


def _trained(seed: int) -> tuple[Any, Any]:
    """A small MLP after two AdamW steps: its optimizer holds per-parameter state keyed by ints."""
    torch.manual_seed(seed)
    model = build_mlp(6, [5, 4], 3)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2)
    for _ in range(2):
        loss = model(torch.randn(8, 6)).square().mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    return model, opt


def test_a_checkpoint_round_trips_a_model_its_optimizer_and_generators(tmp_path: Path) -> None:
    model, opt = _trained(1)
    rng = random.Random(7)
    path = tmp_path / "checkpoint.pt"
    history = [{"epoch": 1, "loss": 0.5, "eval": None, "nan": math.nan}]
    torch_rng = torch.get_rng_state()
    checkpoint.save(path, {"model": model.state_dict(), "optimizer": opt.state_dict(), "history": history,
                           "epoch": 3, "rng": rng.getstate(), "torch_rng": torch_rng,
                           "best": (0.25, 500), "hidden": [5, 4]})
    fresh, fresh_opt = _trained(2)
    ckpt = load_checkpoint(path, fresh, fresh_opt, {"epoch": int, "rng": tuple, "best": tuple})
    for a, b in zip(model.state_dict().values(), fresh.state_dict().values(), strict=True):
        assert torch.equal(a, b)
    saved, loaded = opt.state_dict(), fresh_opt.state_dict()
    assert saved["param_groups"] == loaded["param_groups"]
    for key, state in saved["state"].items():
        assert all(torch.equal(v, loaded["state"][key][k]) for k, v in state.items())
    restored = random.Random()
    restored.setstate(ckpt["rng"])
    assert restored.random() == rng.random()
    assert torch.equal(ckpt["torch_rng"], torch_rng) and ckpt["best"] == (0.25, 500)
    assert ckpt["history"][0]["eval"] is None and math.isnan(ckpt["history"][0]["nan"])
    assert hidden_of(ckpt, 6, 3, path) == [5, 4]


def test_a_checkpoint_that_does_not_fit_the_run_is_one_line(tmp_path: Path) -> None:
    model, opt = _trained(1)
    path = tmp_path / "checkpoint.pt"
    checkpoint.save(path, {"model": model.state_dict(), "optimizer": opt.state_dict(), "history": [],
                           "epoch": "three", "hidden": [500, 4]})
    other, other_opt = _trained(1)
    with pytest.raises(UserError, match="'epoch' is not a int"):
        load_checkpoint(path, other, other_opt, {"epoch": int})
    with pytest.raises(UserError, match=r"not an MLP of 6 inputs, hidden layers \[500, 4\]"):
        hidden_of(checkpoint.load(path), 6, 3, path)  # so no network of the claimed size is ever built
    wider = build_mlp(6, [7, 4], 3)
    with pytest.raises(UserError, match="does not fit"):
        load_checkpoint(path, wider, torch.optim.AdamW(wider.parameters()), {})


def test_dqn_training_resumes_from_its_checkpoint(tmp_path: Path) -> None:
    from connectx_forge.cli import main

    argv = ["train", "--method", "dqn", "--out", str(tmp_path), "--name", "q", "--hidden", "16", "--threads", "1",
            "--no-progress", "--opponents", "random", "--device", "cpu"]
    assert main([*argv, "--episodes", "2"]) == 0
    assert checkpoint.load(tmp_path / "q" / "checkpoint.pt")["episode"] == 2
    assert main([*argv, "--episodes", "3", "--resume"]) == 0
    assert checkpoint.load(tmp_path / "q" / "checkpoint.pt")["episode"] == 3
