"""A submission's Kaggle episodes, seen from our side: opponent, our seat, result, reward, agent states.

Kaggle's ``ListSubmissionEpisodes`` gives each episode's agents with their
submission id, seat index (0 moves first), reward and final state
(``EPISODE_AGENT_STATE_*``).  Ours is the agent with our submission id; in a
validation episode our submission plays both seats (Kaggle's self-play check).
An agent state other than COMPLETE (an error, an invalid action, a timeout) is
what this view is for, so it is named in the row (``our_error``).  Team names
are anyone's choice: they, and the states, are read with their control
characters escaped (``sandbox/escape.py``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any, TypedDict

from connectx_forge import table
from connectx_forge.sandbox.escape import escape

AGENT_STATE = "EPISODE_AGENT_STATE_"
ERRORS = {"ERROR_EVALUATION": "error (evaluation)", "ERROR_INVALID_ACTION": "invalid action",
          "ERROR_TIMEOUT": "timeout", "ERROR_ON_EPISODE": "error (episode)"}
VALIDATION = "EPISODE_TYPE_VALIDATION"


def short_state(state: object) -> str:
    """``EPISODE_AGENT_STATE_ERROR_TIMEOUT`` -> ``ERROR_TIMEOUT``; ``EPISODE_TYPE_PUBLIC`` -> ``PUBLIC``."""
    text = escape(str(state or "UNSPECIFIED"), False)
    for prefix in (AGENT_STATE, "EPISODE_TYPE_", "EPISODE_STATE_"):
        if text.startswith(prefix):
            return text[len(prefix):]
    return text


class AgentRow(TypedDict):
    """One agent of an episode's row: its seat (0 moves first), team, submission, reward and state, and its rating
    before and after under Kaggle's names (``initialScore``, ``updatedScore``; the ids and scores as Kaggle sent
    them)."""

    index: int
    team: str | None
    submission_id: object
    reward: float | None
    state: str
    initialScore: object
    updatedScore: object


@dataclass(frozen=True)
class EpisodeRow:
    """One episode from our submission's side (``index``: Kaggle's seat, 0 moves first)."""

    id: int
    type: str
    validation: bool
    state: str
    end_time: str | None
    our_index: int | None  # None: our submission is not among the agents (or plays both: validation)
    opponent: str | None
    result: str | None  # win, loss, draw, or error (ours broke), None while not finished
    reward: float | None
    opponent_reward: float | None
    our_state: str | None
    our_error: str | None  # how our agent broke, None when it did not
    agents: list[AgentRow] = field(default_factory=list)

    @property
    def our_seat(self) -> str | None:
        """``first`` or ``second`` (``both`` in a validation episode)."""
        if self.validation:
            return "both"
        return None if self.our_index is None else ("first" if self.our_index == 0 else "second")

    def to_json(self) -> dict[str, object]:
        out = asdict(self)
        out["our_seat"] = self.our_seat
        return out


def team(agent: Mapping[str, object]) -> str | None:
    """An agent's team name, its control characters escaped (None when it has none)."""
    name = agent.get("teamName")
    return None if name is None else escape(str(name), False)


def _reward(agent: dict[str, Any] | None) -> float | None:
    value = None if agent is None else agent.get("reward")
    return None if value is None else float(value)


def episode_row(episode: dict[str, Any], submission_id: int) -> EpisodeRow:
    """The row of one ``ApiEpisode`` (camelCase JSON) for our submission ``submission_id``."""
    agents = sorted(episode.get("agents") or [], key=lambda a: int(a.get("index") or 0))
    ours = [a for a in agents if int(a.get("submissionId") or 0) == submission_id]
    others = [a for a in agents if a not in ours]
    kind = short_state(episode.get("type"))
    validation = str(episode.get("type")) == VALIDATION or (len(ours) > 1 and not others)
    us = ours[0] if ours else None
    them = others[0] if others else (ours[1] if len(ours) > 1 else None)
    states = [short_state(a.get("state")) for a in ours]
    broke = [s for s in states if s.startswith("ERROR")]
    our_error = ERRORS.get(broke[0], broke[0].lower()) if broke else None
    mine, theirs = _reward(us), _reward(them)
    result: str | None = None
    if our_error is not None:
        result = "error"
    elif validation:
        result = "played" if short_state(episode.get("state")) == "COMPLETED" else None
    elif mine is not None and theirs is not None:
        result = "win" if mine > theirs else "loss" if mine < theirs else "draw"
    elif mine is not None and them is not None and short_state(them.get("state")).startswith("ERROR"):
        result = "win"  # the opponent broke a rule
    rows_agents: list[AgentRow] = [{"index": int(a.get("index") or 0), "team": team(a),
                                    "submission_id": a.get("submissionId"), "reward": _reward(a),
                                    "state": short_state(a.get("state")),
                                    # the rating before and after, in Kaggle's names (cxforge ladder --fit reads them)
                                    "initialScore": a.get("initialScore"), "updatedScore": a.get("updatedScore")}
                                   for a in agents]
    return EpisodeRow(
        id=int(episode.get("id") or 0), type=kind, validation=validation,
        state=short_state(episode.get("state")), end_time=episode.get("endTime"),
        our_index=None if us is None or validation else int(us.get("index") or 0),
        opponent=None if them is None else ("(itself)" if validation else team(them)),
        result=result, reward=mine, opponent_reward=theirs, our_state=states[0] if states else None,
        our_error=our_error, agents=rows_agents)


def format_rows(rows: list[EpisodeRow]) -> str:
    """The episodes as a table; an episode our agent broke in is flagged ``!!``."""
    if not rows:
        return "no episodes yet for this submission"
    cells = []
    for r in rows:
        reward = "-" if r.reward is None else f"{r.reward:g}"
        ours = [a["state"] for a in r.agents if r.validation or a["index"] == r.our_index]
        theirs = [a["state"] for a in r.agents if not r.validation and a["index"] != r.our_index]
        result = r.result or r.state.lower()
        if r.our_error:
            result = f"{result}: {r.our_error}"
        cells.append(["!!" if r.our_error else "", r.id, "VALIDATION" if r.validation else r.type,
                      r.our_seat or "?", (r.opponent or "?")[:24], result, reward, " / ".join(ours + theirs)])
    lines = [table.render(["", "episode", "type", "seat", table.OPPONENT, "result", "reward",
                           "agent states (ours first)"], cells, "rule", align="lrllllrl")]
    broke = sum(1 for r in rows if r.our_error)
    lines.append(f"{len(rows)} episodes; ours broke in {broke}" + (" (marked !!)" if broke else ""))
    return "\n".join(lines)
