"""The game loop: one game between two resolved players (``game``: ConnectX's referee, ``episode``: any other
game's), its settings and record, the worker pool that plays many, and the resolver that turns a player
argument into what it plays (``resolve``); ``logs`` and ``compare`` read games played."""
