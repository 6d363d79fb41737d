"""Replays a recorded run and checks its decisions.

Written by `footprint snapshot`. When a change of the agent is intended,
update the decision snapshot with `pytest --footprint-update`, and record
and snapshot the run again to refresh the exact replay.
"""

from pathlib import Path

RUN = '019b76da-a8be-75d0-af7e-62eb78349021'
MESSAGE = 'Sorry, I missed it: what did you decide about my …'
RECORDING = Path(__file__).parent / 'support_desk'
AGENT = 'lens._examples.support_desk:make_agent'


def test_support_desk_replays_decision_for_decision(footprint_replay):
    footprint_replay.assert_replays(RECORDING, AGENT)


def test_support_desk_decisions_match_the_snapshot(footprint_replay):
    footprint_replay.assert_decisions(RECORDING, AGENT)
