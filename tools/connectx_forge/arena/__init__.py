"""The runs: matches, tournaments, SPRT and the ladder (``cxforge match``, ``winrates``, ``openings``,
``tournament``, ``sprt``, ``ladder``), each a ``Run`` that ``run.execute`` plays.

Games start from an opening suite (``openings``): positions a few plies in,
labelled with their exact scores, kept when neither side is far ahead.  Each
opening is played twice per pairing with colours swapped, each game seeded on
its own (``schedule``, on a local process pool or Dask), and committed to a
SQLite store the moment it ends (``store``, ``run``; a match without a store
keeps them in memory).  The stored games become tables: pentanomial pair counts
(``pentanomial``), ratings by maximum likelihood (``elo``) and sequential tests
(``sprt``).  ``match_run``, ``tournament``, ``sprt_run`` and ``ladder/`` are the
run kinds; ``match``, ``match_report``, ``tournament_report`` and ``plots`` play
and present them; the ``*_cmd`` modules (with ``flags``) are their command lines.
"""
