# expected: ok (scribbles on obs and config; the referee's board is not touched)
def agent(obs, config):
    move = [c for c in range(config.columns) if obs.board[c] == 0][0]
    obs.board[:] = [9] * len(obs.board)
    obs.mark = 7
    config.columns = 1
    return move
