"""Agent hosts: untrusted agents play in child processes that cannot take the referee down.

* ``host.py``: the child that loads one agent (a file exactly as Kaggle does) and answers moves;
* ``warden.py``: the fork server that starts hosts and kills them all, even after ``kill -9`` of the referee;
* ``seat.py``: the referee's side: one host per game, Kaggle's clock enforced from outside;
* ``protocol.py``: the private channel (JSON lines with ids; no random state crosses it: each host's
  generators are its own, ``tools/connectx_forge/play/seat_random.py``);
* ``limits.py``: rlimits, the clean environment, parent-death signals;
* ``scrub.py``: credentials out of whatever an agent says.
* ``escape.py``: control characters (terminal escapes, bidi overrides) out of whatever an agent says.
"""
