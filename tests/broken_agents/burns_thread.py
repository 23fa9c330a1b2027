# expected: ok (a background thread spins forever; it dies with the game)
import threading


def _spin():
    while True:
        pass


started = []


def agent(obs, config):
    if not started:
        threading.Thread(target=_spin, daemon=True).start()
        started.append(1)
    return [c for c in range(config.columns) if obs.board[c] == 0][0]
