"""Tournaments, ratings and SPRT between agents (``cxforge openings``, ``tournament``, ``sprt``).

Games start from an opening suite (``openings``): positions a few plies in,
labelled with their exact scores, kept when neither side is far ahead.  Each
opening is played twice per pairing with colours swapped (``schedule``), every
game committed to a SQLite store the moment it ends (``store``), on a local
process pool or Dask (``schedule``).  The results become pentanomial pair counts
(``pentanomial``), ratings by maximum likelihood (``elo``) and sequential tests
(``sprt``); ``tournament`` and ``sprt_run`` drive runs, ``report`` and ``plots``
present them.
"""
