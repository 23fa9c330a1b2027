# expected: load (ModuleNotFoundError)
import no_such_module_cxforge  # noqa: F401


def agent(obs, config):
    return 0
