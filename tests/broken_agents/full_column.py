# expected: invalid (column 3 until it is full, then still column 3)
def agent(obs, config):
    return 3
