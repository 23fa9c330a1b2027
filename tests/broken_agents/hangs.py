# expected: timeout (an endless loop on the first move)
def agent(obs, config):
    while True:
        pass
