"""Routing by trace id (``recorder.ingest._route``): a body split into one body per worker
holds every span of the original exactly once, each with the worker its trace id picks
(the same for protobuf and OTLP/JSON); a body nothing leaves comes back unchanged."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from otlp_build import to_json, trace_request

from footprint._errors import ConfigError
from recorder.ingest._intake import decode_body
from recorder.ingest._route import slot_of, split_body

_ids = st.binary(min_size=16, max_size=16).filter(any)
_spans = st.lists(st.tuples(_ids, st.integers(1, 2**63)), min_size=1, max_size=30,
                  unique_by=lambda t: t[1])


def _body(spans: list[tuple[bytes, int]], fmt: str) -> bytes:
    request = trace_request([{"trace_id": t.hex(), "span_id": f"{s:016x}", "name": "s"}
                             for t, s in spans])
    return request.SerializeToString() if fmt == "pb" else to_json(request)


@settings(max_examples=60, deadline=None)
@given(spans=_spans, workers=st.integers(1, 4), data=st.data(),
       fmt=st.sampled_from(["pb", "json"]))
def test_given_any_body_when_split_then_every_span_is_in_the_body_of_its_worker_once(
        spans: list[tuple[bytes, int]], workers: int, data: st.DataObject, fmt: str) -> None:
    home = data.draw(st.integers(0, workers - 1))
    body = _body(spans, fmt)
    shares = split_body(body, "traces", fmt, workers=workers, home=home)  # type: ignore[arg-type]
    got = []
    for slot, share in enumerate(shares):
        if share is None:
            continue
        for span in decode_body(share, "traces", fmt).spans:  # type: ignore[arg-type]
            assert slot_of(bytes.fromhex(span.trace_id), workers) == slot
            got.append((span.trace_id, span.span_id))
    assert sorted(got) == sorted((t.hex(), f"{s:016x}") for t, s in spans)
    if all(slot_of(t, workers) == home for t, _ in spans):
        assert shares[home] == body


def test_given_a_body_that_does_not_parse_when_split_then_it_stays_whole_at_home() -> None:
    assert split_body(b"\xff not otlp", "traces", "pb", workers=3, home=2) == \
        [None, None, b"\xff not otlp"]


def test_given_a_home_outside_the_workers_when_split_then_a_config_error_names_it() -> None:
    with pytest.raises(ConfigError, match="home=2"):
        split_body(b"", "traces", "pb", workers=2, home=2)
