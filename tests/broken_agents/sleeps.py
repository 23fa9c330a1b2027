# expected: timeout (sleeps 200 s)
import time


def agent(obs, config):
    time.sleep(200)
    return 0
