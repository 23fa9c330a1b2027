"""Everything around the agents: checking, matches, solving, books, training, upload."""
