# expected: ok (1.8 s a move: inside Kaggle's 2 s)
import time


def agent(obs, config):
    time.sleep(1.8)
    return [c for c in range(config.columns) if obs.board[c] == 0][0]
