# expected: invalid ('3')
def agent(obs, config):
    return "3"
