"""An exact Connect Four solver in pure Python, and the ``solver`` agent built on it.

The ideas follow Pascal Pons' "Solving Connect 4" tutorial (bitboards, negamax
with alpha-beta, pruning of losing moves, threat-based move ordering, a
transposition table, null-window search, an opening book); the code is our own.

* ``position``      ``Layout``: a board size as the solver sees it (centre-first column order);
                    the threat logic it uses is the game core's, ``agents.board``
* ``transposition`` the bounded transposition table and its bound encoding
* ``move_sorter``   the move order: centre first, then by threats created
* ``search``        ``Solver``: negamax, ``solve`` (exact or weak) and ``analyze``
* ``book``          the opening book read from ``agents/data/opening_book.bin``
* ``heuristic_search`` depth-limited search for boards the exact search cannot finish
* ``native``        ``NativeSolver``: the same search compiled from ``native/solver.c``
* ``engine``        ``Engine``, the one interface of both, and ``Kind``, which one runs
* ``chooser``       ``engine()``, the one place that picks an engine: C where it loads, else Python
* ``policy``        ``Policy``: the ``solver`` agent's time, overage and fallback, one frozen dataclass
* ``practical``     the one-ply tie-breaks among moves of equal value (``TieBreak``)
* ``opponents``     opponent models: uniform slips, the course's minimax, the network's prior, mixtures
* ``expectimax``    the practical search: the best expected result against a model, several plies deep
* ``agent``         the ``solver`` and ``perfect`` agents
"""
