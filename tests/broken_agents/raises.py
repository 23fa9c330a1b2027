# expected: error (ValueError)
def agent(obs, config):
    raise ValueError("this agent always fails")
