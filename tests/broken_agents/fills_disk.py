# expected: error (OSError: File too large, at the file-size limit)
def agent(obs, config):
    chunk = b"0" * (1 << 20)
    with open("filler.bin", "wb") as fh:
        while True:
            fh.write(chunk)
            fh.flush()
