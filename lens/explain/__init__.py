"""``why``: backtrack an answer to the context pieces that caused it.

The pipeline, in order: ``_read`` (one scan of a store for the rows the walk
needs), ``_past`` (the explained call's causal past: every landed piece, tool
result, history message and cursor move), ``_custody`` (the answer's chain of
custody, for the correlational tier), ``_candidates`` (what can be removed),
``_rerun`` (counterfactual re-runs on a cassette), ``_search`` (ddmin over sets
of pieces), ``_stats`` (Fisher's exact test, Bonferroni), ``_outcome`` (the
answer comparators: whole answer, ``--expect``, ``--judge``), ``_verdicts`` and
``_report`` (the conclusion, text and JSON), then ``_sentences`` and
``_sentence_search`` (inside a confirmed piece: the sentence or line its value comes
from). ``_why`` runs them.

The re-send tier (``why --resend``) swaps the re-runs for re-sends of one
recorded request: ``_request`` (the request taken apart into pieces),
``_resend`` (the ``Resender``: one re-send per trial, and the plan), and
``_resend_why`` (the tier end to end, and ``lens.why`` with both tiers).
The search and verdicts take either maker through the ``_trial`` protocol.

The package is named ``explain`` rather than ``why`` so the public function
``lens.why`` is never shadowed by a subpackage of the same name.

May import: ``footprint``, ``recorder`` and ``lens.playback``; never ``lens.tui``,
``lens.cli`` or the public API module.
"""
