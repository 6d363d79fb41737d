"""Re-send tier figures (``why --resend``).

``why_resend_call_us``: median microseconds of one re-send's own work — rebuild
the recorded request without a random set of pieces, send it to a
``FunctionModel`` that answers at once, compare the answer — on a large
request (60 system parts, 40 messages, 8 tool calls with their results, 8 tool
definitions: 116 pieces). ``why_resend_pieces_ms``: milliseconds to take that
request apart (parse its JSON, split the system text, group the pieces).
``why_resend_planted_calls``: the median number of re-sends ``lens.why(...,
resend=...)`` makes on the planted examples whose cause sits in the explained
request; ``why_resend_planted_confirmed``: how many of them confirmed their
culprit as the root. The model's own latency is not in any figure.
"""

from __future__ import annotations

import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
if str(TESTS) not in sys.path:
    sys.path.insert(0, str(TESTS))

from planted_support import load, record  # noqa: E402

from footprint import FunctionModel  # noqa: E402
from footprint.agent._wire import request_json  # noqa: E402
from footprint.events import LLMStart  # noqa: E402
from footprint.providers import LLMRequest, Message, ToolCall, ToolSpec  # noqa: E402
from lens.explain._candidates import Removal  # noqa: E402
from lens.explain._outcome import make_comparator  # noqa: E402
from lens.explain._past import Call, Past  # noqa: E402
from lens.explain._request import Part, pieces_of, request_of  # noqa: E402
from lens.explain._resend import Resender  # noqa: E402

PLANTED = ("wrong_fact", "wrong_rag_chunk", "steering_over_fact", "seed_wording",
           "wording_innocents", "crash", "conjunction", "redundant_pair")


def _large() -> tuple[str, list[Part], str]:
    parts = [Part(id=f"fact-{i}", text=f"Fact {i}: item {i} costs {i + 10} EUR.")
             for i in range(60)]
    messages: list[Message] = []
    for i in range(20):
        messages += [Message(role="user", content=f"Earlier question {i}?"),
                     Message(role="assistant", content=f"Earlier answer {i}.")]
    for i in range(8):
        call = ToolCall(id=f"call_{i}", name=f"tool_{i}", arguments={"n": i})
        messages += [Message(role="assistant", content="", tool_calls=(call,)),
                     Message(role="tool", content=f"result {i}", tool_call_id=call.id)]
    question = "What does item 7 cost?"
    req = LLMRequest(model="m", system="\n\n".join(p.text for p in parts),
                     messages=(*messages, Message(role="user", content=question)),
                     tools=tuple(ToolSpec(name=f"tool_{i}", description=f"Tool {i}.")
                                 for i in range(8)))
    return request_json(req), parts, question


def _answer(request: LLMRequest) -> str:
    return "Item 7 costs 17 EUR." if "item 7 costs 17" in request.system else "Unknown."


def request_figures(calls: int) -> dict[str, float]:
    text, parts, question = _large()
    started = time.perf_counter()
    rec, _ = pieces_of(request_of(text, "llm#9"), parts, question, "llm#9")
    split_ms = (time.perf_counter() - started) * 1e3
    llm = LLMStart(run_id="r", seq=1, ts=0, step_id="llm#9", iteration=9, provider="p", model="m",
                   request_hash="h", request_ref=text)
    past = Past(run_id="r", turn=0, user_message=question, conversation_id=None,
                explained=Call(start=llm, reads=(), reads_known=True),
                answer="Item 7 costs 17 EUR.", status="answered", final=True,
                calls=(Call(start=llm, reads=(), reads_known=True),))
    rr = Resender(rec, FunctionModel(_answer, name="bench"), past, make_comparator())
    rng = random.Random(7)
    ids = [p.id for p in rec.pieces]
    took: list[float] = []
    for seed in range(calls):
        removed = [Removal("piece", i) for i in rng.sample(ids, rng.randint(0, 8))]
        t0 = time.perf_counter()
        rr.rerun(removed, seed)
        took.append((time.perf_counter() - t0) * 1e6)
    rr.close()
    return {"why_resend_call_us": round(statistics.median(took), 1),
            "why_resend_pieces_ms": round(split_ms, 3),
            "why_resend_request_pieces": float(len(rec.pieces))}


def planted_figures() -> dict[str, float]:
    from lens import why

    calls: list[int] = []
    confirmed = 0
    with tempfile.TemporaryDirectory() as tmp:
        for name in PLANTED:
            store = Path(tmp) / name
            record(name, store)
            model = load(name).model
            report = why(str(store), "last",
                         resend=lambda m=model: FunctionModel(m, name="planted"))
            calls.append(report.reruns)
            culprit = load(name).CULPRIT
            want = {culprit} if isinstance(culprit, str) else set(culprit)
            roots = {i for s in report.suspects if s.role == "root"
                     for i in (s.ids or (s.id,))}
            confirmed += roots == want
    return {"why_resend_planted_calls": float(statistics.median(calls)),
            "why_resend_planted_confirmed": float(confirmed)}


def figures(quick: bool) -> dict[str, float]:
    out = request_figures(200 if quick else 1000)
    out.update(planted_figures())
    return out


if __name__ == "__main__":
    print(figures(quick="--quick" in sys.argv))
