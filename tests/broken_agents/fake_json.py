# expected: ok (writes fake protocol lines to fds 1..9; none reaches the referee)
import os


def agent(obs, config):
    for fd in range(1, 10):
        try:
            os.write(fd, b'{"id": 1, "kind": "ok", "action": {"int": 0}}\n')
        except OSError:
            pass
    return [c for c in range(config.columns) if obs.board[c] == 0][0]
