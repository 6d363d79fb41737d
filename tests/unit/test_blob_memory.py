"""The blob texts a store writer remembers as written: a repeated text is written once, and
the memory of them is bounded (a long-running receiver met a new blob with every turn)."""

from __future__ import annotations

from footprint.events import ToolEnd
from recorder.write._rows import RowBuilder

_PROMPT = "You are the support desk of Kettle & Co. Refunds inside 30 days. " * 8


def _result(n: int, text: str) -> ToolEnd:
    return ToolEnd(run_id=f"r{n}", seq=0, ts=1, tool_call_id="c", tool_name="t", result=text)


def _written(builder: RowBuilder, texts: list[str]) -> list[str]:
    """The blob texts one batch of ``texts`` wrote."""
    builder.add_all([_result(n, t) for n, t in enumerate(texts)])
    _, blobs = builder.take()
    return [] if blobs is None else blobs.column("text").to_pylist()


def test_given_a_prompt_in_every_batch_among_many_new_texts_when_taken_then_it_is_written_once(
) -> None:
    builder = RowBuilder(seen_blob_limit=8)
    written = [t for b in range(50)
               for t in _written(builder, [_PROMPT, *(f"{b}-{k} " * 80 for k in range(3))])]
    assert written.count(_PROMPT) == 1
    assert len(written) == 1 + 50 * 3


def test_given_more_texts_than_the_default_bound_when_the_first_returns_then_it_is_written_again(
) -> None:
    builder = RowBuilder()
    first = "first " * 60
    _written(builder, [first])
    for b in range(40):
        _written(builder, [f"{b}-{k} " * 60 for k in range(1000)])
    assert _written(builder, [first]) == [first]  # forgotten: at most 32,768 are held


def test_given_a_text_met_again_within_the_bound_when_taken_then_it_is_not_written_again(
) -> None:
    builder = RowBuilder(seen_blob_limit=64)
    first = "first " * 60
    _written(builder, [first])
    for b in range(10):
        _written(builder, [f"{b}-{k} " * 60 for k in range(3)])
    assert _written(builder, [first]) == []
