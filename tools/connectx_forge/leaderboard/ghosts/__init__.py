"""Ghosts: players that replay what a Kaggle team was seen playing (``ghost:TEAM``), from downloaded replays."""
