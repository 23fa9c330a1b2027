# expected: crash (exited with status 3)
import os


def agent(obs, config):
    os._exit(3)
