"""Tournaments, ratings and SPRT between agents (``cxforge openings``, ``tournament``, ``sprt``).

Games start from an opening suite (``openings``): positions a few plies in,
labelled with their exact scores, kept when neither side is far ahead.  Each
opening is played twice per pairing with colours swapped, each game seeded on
its own (``schedule``, on a local process pool or Dask), and committed to a
SQLite store the moment it ends (``store``, ``run``).  The stored games become
tables (``results``): pentanomial pair counts (``pentanomial``), ratings by
maximum likelihood (``elo``) and sequential tests (``sprt``).  ``tournament``
and ``sprt_run`` drive the runs; ``report`` and ``plots`` present them; the
``*_cmd`` modules (with ``flags``) are their command lines.
"""
