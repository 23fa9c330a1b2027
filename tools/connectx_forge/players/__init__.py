"""The one `Player`: what a player argument is, by kind, and how each kind plays (below the bundler, the hosts
and the game loop, which take it)."""
