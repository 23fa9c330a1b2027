# expected: invalid (True)
def agent(obs, config):
    return True
