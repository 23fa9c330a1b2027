# expected: ok (prints 10 MB each move; the host keeps 10,000 characters and plays on)
import sys


def agent(obs, config):
    print("x" * 10_000_000)
    sys.stderr.write("y" * 1000 + "\n")
    return [c for c in range(config.columns) if obs.board[c] == 0][0]
