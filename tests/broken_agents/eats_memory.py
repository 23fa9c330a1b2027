# expected: memory (asks for 3 GB more each move)
hoard = []


def agent(obs, config):
    hoard.append(bytearray(3 * 1024 ** 3))
    return [c for c in range(config.columns) if obs.board[c] == 0][0]
