# expected: load (no callable in the file)
ANSWER = 3
