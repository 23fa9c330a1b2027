# expected: ok (starts 20 `sleep 300` children; all die with the game)
import subprocess

children = []


def agent(obs, config):
    if not children:
        children.extend(subprocess.Popen(["sleep", "300"]) for _ in range(20))
    return [c for c in range(config.columns) if obs.board[c] == 0][0]
