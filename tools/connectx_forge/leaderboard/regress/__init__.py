"""Regressions: the first losing move of each lost game, kept in a project as a test its agent must pass."""
