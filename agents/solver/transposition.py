"""The transposition table: position key -> a bound on its score, bounded in memory.

Negamax with a window returns either an exact value, an upper bound (no move
reached alpha) or a lower bound (a move reached beta).  One int per entry
records which: an upper bound ``v`` is stored as ``v``, a lower bound as
``v + LOWER``.  Scores lie within +-64 on any board of up to 128 cells, so the
two ranges never meet, and the stored values stay in CPython's small-int cache.

The table is a plain dict (the fastest map in CPython).  When it reaches its
capacity it is cleared, which keeps memory bounded (about 100 bytes an entry)
while a table can persist from move to move inside an agent.
"""

from __future__ import annotations

LOWER = 128  # offset that marks a lower bound
LOWER_MIN = LOWER // 2  # stored values at or above this are lower bounds


class TranspositionTable:
    """A bounded key -> encoded-bound map.  The search reads ``entries`` directly."""

    __slots__ = ("entries", "capacity", "clears")

    def __init__(self, capacity: int = 1 << 22) -> None:
        if capacity < 1:
            raise ValueError(f"capacity must be positive, got {capacity}")
        self.entries: dict[int, int] = {}
        self.capacity = capacity
        self.clears = 0

    def __len__(self) -> int:
        return len(self.entries)

    def get(self, key: int) -> int | None:
        return self.entries.get(key)

    def put(self, key: int, entry: int) -> None:
        if len(self.entries) >= self.capacity:
            self.make_room()
        self.entries[key] = entry

    def make_room(self) -> None:
        """Forget every entry (called when the table is full)."""
        self.entries.clear()
        self.clears += 1

    def reset(self) -> None:
        self.entries.clear()
