"""The fast envelope spelling (C JSON encoder) against the hand-written reference."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from recorder.write._chain import ENVELOPE_ORDER, envelope_canonical, envelope_values_canonical

VALUE = st.one_of(
    st.none(),
    st.integers(min_value=-(2**63), max_value=2**63 - 1),
    st.text(),  # any code point, control characters, quotes, backslashes, lone surrogates
    st.sampled_from(["\x00", "\x1f", "\x7f", '"', "\\", "\b\f\n\r\t", "é😀", "\u2028"]),
)


@settings(max_examples=400)
@given(st.lists(VALUE, min_size=len(ENVELOPE_ORDER), max_size=len(ENVELOPE_ORDER)))
def test_given_any_envelope_values_when_spelled_fast_then_they_equal_the_reference(
    values: list[object],
) -> None:
    reference = envelope_canonical(dict(zip(ENVELOPE_ORDER, values, strict=True)))
    assert envelope_values_canonical(values) == reference  # type: ignore[arg-type]


@pytest.mark.parametrize("bad", [1.5, True, b"x", ["a"]])
def test_given_a_value_that_is_not_str_int_or_none_when_spelled_then_type_error(
    bad: object,
) -> None:
    values: list[object] = [None] * len(ENVELOPE_ORDER)
    values[3] = bad
    with pytest.raises(TypeError, match="neither str, int nor None"):
        envelope_values_canonical(values)  # type: ignore[arg-type]
