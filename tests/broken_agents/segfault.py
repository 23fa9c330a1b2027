# expected: crash (killed by SIGSEGV)
import ctypes


def agent(obs, config):
    ctypes.string_at(0)
    return 0
