# expected: invalid (a column past the board)
def agent(obs, config):
    return config.columns + 2
