"""``cxforge train --method dqn``: the DQN notebook's agent, trained properly in torch.

Double DQN with a target network, a replay buffer and Huber loss, on the
gymnasium environment of tools/connectx_forge/train/rl_env.py (course rewards: +1 win, -1 loss,
1/42 a move).  Full columns are masked when the agent acts (epsilon-greedy
over legal columns only) and in the bootstrap target's max, so the agent never
learns to value an illegal move and never plays one.

Opponents (``--opponents``, one drawn per episode; repeat a spec to weight it):
any player spec (``random``, ``lookahead``, ``negamax-fast`` (Kaggle's negamax,
5x faster or more), ``kaggle:negamax``...), ``tactical`` (wins in one,
blocks a loss in one, else random) and ``self`` (the learner's current network,
10% random moves).  The learner takes both seats.

``--init FILE`` starts the Q-network from another network of this project (the
supervised ``net``): its hidden layers, and its move logits times
``--init-scale`` as the first action values.  Without it the network starts
from random weights, as the notebook's did.
"""

from __future__ import annotations

import json
import random
import time
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from agents.board import Board
from agents.net.features import VERSION, encode, feature_size
from agents.net.mlp import MLP, checked, load_mlp
from agents.registry import Agent
from connectx_forge import progress as progress_bars
from connectx_forge.arena.match import run_match
from connectx_forge.boundedread import MAX_DOCUMENT, one_line, read_bytes
from connectx_forge.errors import UserError
from connectx_forge.paths import agent_data
from connectx_forge.play.resolve import resolve
from connectx_forge.players.fast_negamax import make_agent
from connectx_forge.players.player import FAST_NEGAMAX
from connectx_forge.safe_write import write_bytes, write_text
from connectx_forge.train.arrays import read_npz
from connectx_forge.train.labels import tactical_random
from connectx_forge.train.training_settings import TrainSettings

if TYPE_CHECKING:
    from torch import nn

INIT_MEMBERS = 256  # arrays in an --init weight file (a weight, scale and bias per layer, and its meta: a dozen)


def greedy_move(q_of: Callable[[np.ndarray], np.ndarray], board: Board) -> int:
    """The legal column the learner's current Q-network values most."""
    q = q_of(encode(board))
    return max(board.legal_moves(), key=lambda c: q[c])


def _opponent(spec: str, q_of: Callable[[np.ndarray], np.ndarray], rng: random.Random) -> str | Agent:
    if spec == "tactical":
        return lambda obs, config: tactical_random(Board.from_obs(obs, config), rng)
    if spec == FAST_NEGAMAX:  # seeded coin flips, so that a run is reproducible
        return make_agent(rng)
    if spec == "self":
        def self_play(obs: object, config: object) -> int:
            board = Board.from_obs(obs, config)
            if rng.random() < 0.1:
                return rng.choice(board.legal_moves())
            return greedy_move(q_of, board)
        return self_play
    return spec  # a player spec: the environment resolves it


def load_init(path: Path) -> MLP:
    """The weight file to start from (a network of this project, e.g. the supervised ``net``), read within
    ``MAX_DOCUMENT`` (numpy arrays, never pickles), every array's header checked against its bytes before numpy
    sizes anything by it (``arrays.read_npz``, as a checkpoint's); one line naming it when it is not one."""
    data = read_bytes(path, MAX_DOCUMENT, f"--init {path}")
    if not data.startswith(b"PK\x03\x04"):  # what numpy would say of it suggests unpickling it
        raise UserError(f"--init {path} is not a usable weight file: not an .npz archive of numpy arrays")
    try:
        read_npz(data, f"--init {path}", INIT_MEMBERS, MAX_DOCUMENT)
        return checked(load_mlp(data), str(path), VERSION)
    except (ValueError, KeyError, TypeError, EOFError, MemoryError, zipfile.BadZipFile) as exc:
        raise UserError(f"--init {path} is not a usable weight file: {one_line(exc)}") from None


def warm_start(q_net: nn.Sequential, init: MLP, scale: float) -> None:
    """Copy ``init``'s hidden layers; its first 7 outputs (move logits), times ``scale``, start the Q head."""
    import torch  # torch and netlib (torch at its top) load when training runs, not with the module

    from connectx_forge.train.netlib import linear_layers

    layers = linear_layers(q_net)
    with torch.no_grad():
        for i, layer in enumerate(layers):
            w, b = init.weights[i], init.biases[i]
            if i == len(layers) - 1:
                w, b = scale * w[:, :7], scale * b[:7]
            layer.weight.copy_(torch.from_numpy(w.T.copy()))
            layer.bias.copy_(torch.from_numpy(b.copy()))


def _best(best: tuple[object, ...]) -> tuple[float, int]:
    """A checkpoint's best evaluation so far: (greedy win rate, its episode); ``ValueError`` for any other."""
    rate, episode = best
    if not (isinstance(rate, int | float) and isinstance(episode, int) and not isinstance(episode, bool)):
        raise ValueError(f"its best evaluation is not (win rate, episode): {str(best)[:40]}")
    return float(rate), episode


def greedy_win_rate(q_of: Callable[[np.ndarray], np.ndarray], opponent: str, games: int, seed: int) -> float:
    """The learner's win rate, playing greedily, over ``games`` seeded games (seats swapped)."""
    def greedy(obs: object, config: object) -> int:
        return greedy_move(q_of, Board.from_obs(obs, config))

    result = run_match(greedy, opponent, games, workers=1, seed=seed + 7_919, progress=False)
    return result.tally().win_rate


def run_dqn(settings: TrainSettings) -> int:
    import torch  # torch, netlib and rl_env (torch, gymnasium at their tops) load when training runs
    from torch.nn import functional as F

    from connectx_forge.train import checkpoint
    from connectx_forge.train.netlib import (
        DQN_PANELS,
        RESUME_HINT,
        build_mlp,
        load_checkpoint,
        pick_device,
        plot_curves,
        prepare_run_dir,
        restoring,
        seed_everything,
        write_export,
    )
    from connectx_forge.train.rl_env import ConnectXEnv

    if settings.eval_every < 0 or settings.eval_every % 500:
        raise UserError(f"--eval-every must be a multiple of 500 (the logging interval), got {settings.eval_every}")
    specs = [s.strip() for s in settings.opponents.split(",") if s.strip()]
    evaluated = [settings.eval_opponent] if settings.eval_every else []
    for spec in [s for s in specs if s not in ("tactical", "self")] + evaluated:
        resolve(spec)  # a bad spec fails now, before the run folder and the first evaluation
    if settings.init and settings.hidden:
        raise UserError("--hidden and --init both set the layers: --init takes them from its weight file")
    init = load_init(settings.init) if settings.init else None  # before the run folder: a bad file leaves nothing
    run_dir, ckpt_path = prepare_run_dir(settings.out, settings.name or "dqn", settings.resume, settings.force)

    seed_everything(settings.seed)
    rng = random.Random(settings.seed)
    device = pick_device(settings.device)
    n_in = feature_size(6, 7)
    hidden = tuple(w.shape[1] for w in init.weights[:-1]) if init else (settings.hidden or (128, 64))
    q_net = build_mlp(n_in, hidden, 7).to(device)
    target = build_mlp(n_in, hidden, 7).to(device)
    if init and not settings.resume:
        warm_start(q_net, init, settings.init_scale)
    opt = torch.optim.Adam(q_net.parameters(), lr=min(settings.lr, 1e-3))

    def q_of(x: np.ndarray) -> np.ndarray:
        with torch.no_grad():
            q: np.ndarray = q_net(torch.from_numpy(x[None, :]).to(device))[0].cpu().numpy()
            return q

    env = ConnectXEnv(opponent=[_opponent(s, q_of, rng) for s in specs], seat="random")

    cap, batch, gamma = 50_000, 128, 0.99
    buf_s = np.zeros((cap, n_in), np.float32)
    buf_a = np.zeros(cap, np.int64)
    buf_r = np.zeros(cap, np.float32)
    buf_s2 = np.zeros((cap, n_in), np.float32)
    buf_m2 = np.zeros((cap, 7), bool)
    buf_d = np.zeros(cap, np.float32)
    size = ptr = steps = 0
    history: list[dict[str, float]] = []
    start_ep = 0
    best = (-1.0, 0)  # greedy evaluation win rate, episode
    if settings.resume:
        ckpt = load_checkpoint(ckpt_path, q_net, opt, {"episode": int, "steps": int, "rng": tuple, "best": tuple})
        history, start_ep, steps = ckpt["history"], ckpt["episode"], ckpt["steps"]
        with restoring(ckpt_path, RESUME_HINT):
            rng.setstate(ckpt["rng"])
            best = _best(ckpt["best"])
    target.load_state_dict(q_net.state_dict())

    extra = {"hidden": list(hidden), "seed": settings.seed, "opponents": specs,
             "init": str(settings.init) if settings.init else None}
    best_path = run_dir / "best_dqn_weights.npz"
    episodes = settings.episodes
    explore = max(1, int(settings.explore * episodes))
    outcomes: list[str] = []
    losses: list[float] = []
    t0 = time.time()
    plan = (f"cxforge dqn: {progress_bars.count(episodes - start_ep, 'episode')} of double DQN against "
            f"{', '.join(specs)}")
    bar = progress_bars.bar(episodes, "dqn episodes", unit="episode", enabled=not settings.no_progress, plan=plan)
    bar.update(start_ep)
    for ep in range(start_ep, episodes):
        eps = max(0.05, 1.0 - 0.95 * ep / explore)
        obs, info = env.reset(seed=settings.seed * 1_000_003 + ep)
        done = False
        while not done:
            legal = np.flatnonzero(info["action_mask"])
            if rng.random() < eps:
                action = int(rng.choice(list(legal)))
            else:
                q = q_of(obs)
                action = int(legal[np.argmax(q[legal])])
            obs2, reward, done, _, info = env.step(action)
            buf_s[ptr], buf_a[ptr], buf_r[ptr], buf_s2[ptr] = obs, action, reward, obs2
            buf_m2[ptr], buf_d[ptr] = info["action_mask"], float(done)
            ptr, size = (ptr + 1) % cap, min(size + 1, cap)
            obs = obs2
            steps += 1
            if size >= 1000 and steps % 4 == 0:
                idx = np.random.randint(0, size, batch)
                s = torch.from_numpy(buf_s[idx]).to(device)
                s2 = torch.from_numpy(buf_s2[idx]).to(device)
                m2 = torch.from_numpy(buf_m2[idx]).to(device)
                with torch.no_grad():  # double DQN, next-state max over legal columns only
                    online = q_net(s2).masked_fill(~m2, -1e9).argmax(1, keepdim=True)
                    nxt = target(s2).gather(1, online).squeeze(1)
                    nxt = torch.where(m2.any(1), nxt, torch.zeros_like(nxt))
                    not_done = 1 - torch.from_numpy(buf_d[idx]).to(device)
                    y = torch.from_numpy(buf_r[idx]).to(device) + gamma * not_done * nxt
                q = q_net(s).gather(1, torch.from_numpy(buf_a[idx]).to(device)[:, None]).squeeze(1)
                loss = F.smooth_l1_loss(q, y)
                opt.zero_grad()
                loss.backward()
                opt.step()
                losses.append(loss.item())
            if steps % 1000 == 0:
                target.load_state_dict(q_net.state_dict())
        outcomes.append(info.get("outcome", "invalid" if info.get("invalid") else "?"))
        bar.update()
        if (ep + 1) % 500 == 0 or ep + 1 == episodes:
            recent = outcomes[-500:]
            row = {"epoch": ep + 1, "train_loss": float(np.mean(losses[-2000:])) if losses else 0.0,
                   "win_rate": recent.count("win") / len(recent),
                   "invalid_rate": recent.count("invalid") / len(recent), "epsilon": eps,
                   "wall_s": time.time() - t0}
            if settings.eval_every and ((ep + 1) % settings.eval_every == 0 or ep + 1 == episodes):
                row["eval_win_rate"] = greedy_win_rate(q_of, settings.eval_opponent, settings.eval_games, settings.seed)
                if row["eval_win_rate"] > best[0]:
                    best = (row["eval_win_rate"], ep + 1)
                    write_export(q_net, best_path, "q", settings.dtype, extra={**extra, "episode": ep + 1})
            history.append(row)
            bar.set_postfix(win=f"{row['win_rate']:.2f}", eps=f"{eps:.2f}", best=f"{best[0]:.2f}@{best[1]}")
            checkpoint.save(ckpt_path, {"model": q_net.state_dict(), "optimizer": opt.state_dict(),
                                        "history": history, "episode": ep + 1, "steps": steps, "rng": rng.getstate(),
                                        "hidden": list(hidden), "best": best})
            write_text(run_dir / "history.json", json.dumps(history, indent=1), replace=True)
            plot_curves(history, run_dir / "curves.png", DQN_PANELS, xlabel="episode")
    bar.close()
    out = run_dir / "dqn_weights.npz"
    if best[1]:
        write_bytes(out, best_path.read_bytes(), replace=True)
        print(f"best greedy win rate vs {settings.eval_opponent}: {best[0]:.1%} at episode {best[1]} (exported)")
    else:
        write_export(q_net.cpu(), out, "q", settings.dtype, extra={**extra, "episode": episodes})
    print(f"weights: {out}")
    if settings.export:
        write_bytes(agent_data("dqn_weights.npz"), out.read_bytes(), replace=True)
        print(f"exported to {agent_data('dqn_weights.npz')}")
    return 0


