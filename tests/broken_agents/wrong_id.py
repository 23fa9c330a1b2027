# expected: protocol (answers on the host's private channel, fd 100, with a reply to a request never made)
import os


def agent(obs, config):
    os.write(100, b'{"id": 999, "kind": "ok", "action": {"int": 0}}\n')
    return [c for c in range(config.columns) if obs.board[c] == 0][0]
