"""From the leaderboard back home: your submissions' games judged (``review``), other teams replayed
(``ghosts``) and lost games turned into tests (``regress``).  Kaggle's rating simulated is a run:
``arena/ladder``."""
