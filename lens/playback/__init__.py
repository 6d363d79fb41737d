"""Playing a recording back: read it, restore its conversation, re-run it offline, compare.

``_stream`` turns recorded events into comparable decisions; ``_cassette``
serves a run's recorded model responses and tool results to a re-run;
``_conversation`` restores every earlier turn of a follow-up; ``_replay`` and
``_decisions`` re-run a recording and report the first divergence; ``_diff``
aligns two runs on their decisions; ``_snapshot`` writes and loads a recording
folder (``footprint snapshot``); ``_agent_ref`` loads ``--agent MODULE:ATTR``;
``_source`` opens whatever a lens function is handed (a store, a path, events);
``_trends`` draws the trend charts ``footprint stats`` and the lens share;
``_terminal`` escapes the control characters of recorded text before it is printed.

May import: ``footprint`` and ``recorder`` only — it is the bottom layer of the
lens (``explain``, ``tui``, ``cli`` and the public API build on it).
"""
