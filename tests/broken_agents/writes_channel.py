# expected: protocol (writes a garbage line on the host's private channel, fd 100)
import os


def agent(obs, config):
    os.write(100, b"not json at all\n")
    return [c for c in range(config.columns) if obs.board[c] == 0][0]
