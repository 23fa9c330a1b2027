"""The shipped data sets (``connectx_forge.datasets``: package data): held-out positions, opening suites, example
replays; in a checkout also the training labels, which no wheel holds."""
