"""``cxforge ladder``: Kaggle's rating process simulated over your candidates and a reference pool, and
``cxforge ladder --fit``: the process's unpublished parameters fitted to real episode histories.

* ``rating``: the TrueSkill model (the ``trueskill`` library) and its named settings;
* ``matchmaking``: who plays whom each simulated day;
* ``simulate``: the ladder, day by day, its games played by the arena's scheduler into its store;
* ``replicates``: cheap replicate ladders from the played games' outcomes: intervals and settling days;
* ``fit``: sigma0, beta, tau and the draw probability fitted to Kaggle episode lists;
* ``ladder_run``: a ladder played (or resumed from its store) and rated into its report;
* ``ladder_report``, ``ladder_cmd``: the report (a frozen ``LadderReport``), its tables, plot and files, and the
  command.
"""
