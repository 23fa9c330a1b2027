# expected: ok (raises unless its world is clean: no credentials, an empty HOME, a folder holding only itself)
import os


def agent(obs, config):
    bad = [k for k in os.environ if k.startswith("KAGGLE") or "KEY" in k or "TOKEN" in k or "SECRET" in k]
    if bad:
        raise RuntimeError(f"credential variables visible: {bad}")
    if os.listdir(os.environ["HOME"]):
        raise RuntimeError("HOME is not empty")
    if os.listdir(".") != ["checks_its_world.py"]:
        raise RuntimeError(f"the game folder holds {os.listdir('.')}")
    return [c for c in range(config.columns) if obs.board[c] == 0][0]
