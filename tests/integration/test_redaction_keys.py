"""Redaction markers are keyed: a card number redacted under a key is not found by hashing
guesses (the attack that recovered one from an unsalted sha256 marker), equal values still
match within a store, and old unkeyed markers stay readable and are reported by doctor."""

from __future__ import annotations

import dataclasses
import hashlib
import itertools
import stat
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import why_agents as W
from hypothesis import given
from hypothesis import strategies as st

from footprint._errors import ConfigError
from footprint.events import EventBase, RunStart
from lens.cli import main as footprint
from lens.explain._why import why
from recorder import (
    REDACT_KEY_ENV,
    Marker,
    ParquetSink,
    Recorder,
    Redactor,
    marker_matches,
    open_store,
    parse_marker,
    redaction_key,
)
from recorder.write._redact_key import unkeyed_digest

CARD_PREFIX = "4539 1488 0343 "
"""A Visa number's known part (issuer and most digits): the guessing space is its last four."""
CARD = CARD_PREFIX + "6467"
ASK = "How much is the grinder?"
KEY_A = "tests-redaction-key-A-0123456789"
KEY_B = "tests-redaction-key-B-0123456789"
_TEXT = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=60)


def _luhn_ok(number: str) -> bool:
    digits = [int(d) for d in number if d.isdigit()][::-1]
    total = sum(d if i % 2 == 0 else (d * 2 - 9 if d * 2 > 9 else d * 2)
                for i, d in enumerate(digits))
    return total % 10 == 0


def _candidates() -> list[str]:
    """Every card number with the known prefix and a valid check digit (the attacker's list)."""
    tails = ("".join(t) for t in itertools.product("0123456789", repeat=4))
    return [CARD_PREFIX + t for t in tails if _luhn_ok(CARD_PREFIX + t)]


def test_given_a_card_number_redacted_under_a_key_when_guesses_are_hashed_then_none_matches(
) -> None:
    assert CARD in _candidates()  # the true number is in the attacker's list
    made = Redactor(patterns=[r"\d{4} \d{4} \d{4} \d{4}"], key=KEY_A).marker(CARD)
    found = parse_marker(made)
    assert found is not None and found.scheme == "hmac-sha256"
    # the old attack: sha256 of each guess compared with the marker's digest
    assert [c for c in _candidates() if hashlib.sha256(c.encode()).hexdigest() == found.digest] \
        == []
    # the control: the same search recovers the number from an old, unkeyed marker at once
    old = parse_marker(f"[redacted sha256:{unkeyed_digest(CARD)}]")
    assert old is not None
    assert [c for c in _candidates() if hashlib.sha256(c.encode()).hexdigest() == old.digest] \
        == [CARD]
    # with the key, small spaces fall again (what the README says the key holder can do)
    key = redaction_key(KEY_A)
    assert [c for c in _candidates() if key.marker(c) == made] == [CARD]


@given(text=_TEXT, other=_TEXT)
def test_given_values_when_marked_then_equal_match_and_different_keys_differ(
    text: str, other: str,
) -> None:
    a1, a2, b = redaction_key(KEY_A), redaction_key(KEY_A.encode()), redaction_key(KEY_B)
    assert a1.marker(text) == a2.marker(text)  # equal values, one key: one marker (joins work)
    assert a1.marker(text) != b.marker(text)
    assert a1.key_id != b.key_id
    assert (a1.marker(text) == a1.marker(other)) == (text == other)


@given(text=_TEXT)
def test_given_a_marker_when_parsed_then_it_round_trips_and_checks_its_value(text: str) -> None:
    key = redaction_key(KEY_A)
    made = key.marker(text)
    found = parse_marker(made)
    assert found is not None
    assert made == f"[redacted hmac-sha256:{found.key_id}:{found.digest}]"
    assert found == Marker("hmac-sha256", found.digest, key.key_id)
    assert marker_matches(found, text, key) is True
    assert marker_matches(found, text + "x", key) is False
    assert marker_matches(found, text, redaction_key(KEY_B)) is None  # not its key: unknown
    assert marker_matches(found, text, None) is None
    old = f"[redacted sha256:{hashlib.sha256(text.encode()).hexdigest()}]"
    legacy = parse_marker(old)
    assert legacy == Marker("sha256", hashlib.sha256(text.encode()).hexdigest())
    assert marker_matches(legacy, text, None) is True  # old markers stay readable
    assert key.rekey(old) == made  # re-keyed without the value: the marker it gets now
    assert key.rekey(made) == made and key.rekey(text + "!") is None
    assert parse_marker(f"[sha256:{'ab' * 32}]") == Marker("sha256", "ab" * 32)


def test_given_no_key_when_a_redactor_is_built_then_a_0600_key_file_is_made_and_reused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(REDACT_KEY_ENV, raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    first = Redactor()
    made = tmp_path / "config" / "footprint" / "redact.key"
    assert stat.S_IMODE(made.stat().st_mode) == 0o600
    assert len(made.read_text().strip()) == 64
    again = Redactor()
    assert (again.key_id, again.marker("pw")) == (first.key_id, first.marker("pw"))
    monkeypatch.setenv(REDACT_KEY_ENV, KEY_B)  # the variable comes before the file
    assert Redactor().key_id == redaction_key(KEY_B).key_id != first.key_id
    assert Redactor(key=KEY_A).key_id == redaction_key(KEY_A).key_id  # the argument first


def test_given_many_first_uses_at_once_when_keys_are_made_then_all_get_the_same_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(REDACT_KEY_ENV, raising=False)
    path = tmp_path / "keys" / "redact.key"
    start = threading.Barrier(8)

    def first_use() -> str:
        start.wait()
        return redaction_key(key_file=path).key_id

    with ThreadPoolExecutor(8) as pool:
        ids = list(pool.map(lambda _: first_use(), range(8)))
    assert len(set(ids)) == 1
    assert sorted(p.name for p in path.parent.iterdir()) == ["redact.key"]  # nothing left aside


def test_given_a_bad_key_when_a_redactor_is_built_then_a_config_error_names_the_fix(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(REDACT_KEY_ENV, raising=False)
    with pytest.raises(ConfigError, match=r"at least 16 bytes, got 5 bytes"):
        Redactor(key="short")
    shared = tmp_path / "shared.key"
    shared.write_text("k" * 32 + "\n")
    shared.chmod(0o644)
    with pytest.raises(ConfigError, match=r"readable by others \(mode 644\); run `chmod 600"):
        Redactor(key_file=shared)
    shared.chmod(0o600)
    assert Redactor(key_file=shared).key_id == redaction_key("k" * 32).key_id


def _old_marker(event: EventBase) -> EventBase:
    """What a Redactor wrote before markers were keyed: the bare sha256 of the value."""
    if isinstance(event, RunStart):
        return dataclasses.replace(event, user_message=f"[redacted sha256:{unkeyed_digest('x')}]")
    return event


def test_given_a_store_with_old_and_keyed_markers_when_doctor_runs_then_it_names_both(
    tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    root = tmp_path / "store"
    with Recorder(sinks=[ParquetSink(root)], processors=[_old_marker]) as old:
        W.price_agent(sink=old).run_sync(ASK)
    redactor = Redactor(paths=["run.end:final_content"])
    with Recorder(sinks=[ParquetSink(root)], processors=[redactor]) as new:
        W.price_agent(sink=new).run_sync(ASK)
    assert footprint(["doctor", "--store", str(root)]) == 0
    out = capsys.readouterr().out
    assert f"redaction markers: 1 under key id {redactor.key_id} (yours)" in out
    assert "redaction markers: 1 unkeyed (sha256 of the value" in out


def test_given_a_keyed_redacted_answer_when_explained_then_compared_only_with_its_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    root = tmp_path / "store"
    answer = ["llm.end:content", "run.end:final_content"]  # the answer, wherever it is kept
    with Recorder(sinks=[ParquetSink(root)], processors=[Redactor(paths=answer)]) as recorder:
        W.price_agent(sink=recorder).run_sync(ASK)
    with open_store(root) as store:
        report = why(store, "last", agent=W.price_agent())
        assert any(f.startswith("redacted-answer") for f in report.flags)
        assert "sale-banner" in {s.id for s in report.suspects if s.verdict == "confirmed"}
        monkeypatch.setenv(REDACT_KEY_ENV, KEY_B)  # another key: the answer cannot be told
        with pytest.raises(ConfigError, match=rf"the recorded answer is redacted under key id "
                                              rf"[0-9a-f]{{8}} and the key at hand is "
                                              rf"{redaction_key(KEY_B).key_id}; set "
                                              rf"\${REDACT_KEY_ENV}"):
            why(store, "last", agent=W.price_agent())
