"""From the leaderboard back home: your submissions' games judged (``review``), Kaggle's rating simulated
(``ladder``), other teams replayed (``ghosts``) and lost games turned into tests (``regress``)."""
