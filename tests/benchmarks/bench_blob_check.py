"""What checking every blob read against its hash costs (``recorder.store._views.BLOB_MATCHES``).

A store of 50,000 blobs of ~2,000 characters (100 MB of text) in one sealed
blob file; the ``blobs`` view (each copy read must hash to its key) against
the same view unchecked (``any_value`` of any copy), on one catalog:
``blobs_lookup_20_*_ms``: 20 texts by hash through the view, as its
subqueries read them; ``blobs_lookup_2000_*_ms``: 2,000 of them;
``blobs_scan_all_*_ms``: every text (a console query over the whole view);
``blobs_read_20_*_ms``: the reader's fetch of 20 texts (``StoreReader``, the
lens), checked in Python (``matching_texts``) or not.
"""

from __future__ import annotations

import hashlib
import random
import sys
import tempfile
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent))

from recorder import open_store  # noqa: E402
from recorder.store._reader import BLOB_TEXTS, matching_texts  # noqa: E402
from recorder.write._marker import marked  # noqa: E402
from recorder.write._schemas import BLOB_SCHEMA  # noqa: E402

BLOBS = 50_000
_UNCHECKED = ("SELECT hash, any_value(chars) AS chars, any_value(text) AS text "
              "FROM _blobs_all GROUP BY hash")


def _store(root: Path) -> list[str]:
    rng = random.Random(7)
    texts = [f"{i} " + "".join(rng.choices("abcdefghij klmnop", k=2000)) for i in range(BLOBS)]
    hashes = [hashlib.sha256(t.encode()).hexdigest() for t in texts]
    (root / "blobs").mkdir(parents=True)
    table = pa.Table.from_pydict(
        {"hash": hashes, "chars": [len(t) for t in texts], "text": texts}, schema=BLOB_SCHEMA)
    pq.write_table(marked(table, "blobs"), root / "blobs" / "bench.parquet")
    return hashes


def _best(run: object, repeats: int) -> float:
    assert callable(run)
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        run()
        times.append(time.perf_counter() - started)
    return min(times) * 1000


def figures(quick: bool) -> dict[str, float]:
    repeats = 2 if quick else 5
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "store"
        hashes = _store(root)
        with open_store(root) as store:
            store.rows("SELECT count(*) FROM blobs")  # the public views exist
            store.con.execute(f"CREATE VIEW blobs_unchecked AS {_UNCHECKED}")
            out: dict[str, float] = {}
            for view, tag in (("blobs", "checked"), ("blobs_unchecked", "unchecked")):
                for n in (20, 2000):
                    query = (f"SELECT count((SELECT b.text FROM {view} b WHERE b.hash = x.h)) "
                             "FROM (SELECT unnest(?) AS h) x")
                    wanted = hashes[:: BLOBS // n][:n]
                    out[f"blobs_lookup_{n}_{tag}_ms"] = round(_best(
                        lambda q=query, w=wanted: store.con.execute(q, [w]).fetchall(),
                        repeats), 1)
                wanted = hashes[:: BLOBS // 20][:20]
                pick = matching_texts if tag == "checked" else dict
                out[f"blobs_read_20_{tag}_ms"] = round(_best(
                    lambda w=wanted, p=pick: p(store.rows(BLOB_TEXTS, [w])), repeats), 1)
                query = f"SELECT sum(length(text)) FROM {view}"
                out[f"blobs_scan_all_{tag}_ms"] = round(_best(
                    lambda q=query: store.con.execute(q).fetchall(), repeats), 1)
    return out


if __name__ == "__main__":
    print(figures(quick="--quick" in sys.argv))
