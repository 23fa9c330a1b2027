# expected: invalid (3.0)
def agent(obs, config):
    return 3.0
