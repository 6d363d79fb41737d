"""The store is plain Hive-partitioned Parquet: readable with no project code at all."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

from recorder import open_store

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent

_FOREIGN_READER = textwrap.dedent("""
    import json, sys
    import duckdb, pyarrow.dataset as ds
    root = sys.argv[1]
    cols = ["run_id", "seq", "type", "payload", "date"]
    t = ds.dataset(root + "/events", format="parquet", partitioning="hive").to_table(columns=cols)
    a = sorted((r["run_id"], r["seq"], r["type"], r["payload"], str(r["date"]))
               for r in t.to_pylist())
    b = duckdb.connect().execute(
        f"SELECT run_id, seq, type, payload, CAST(date AS VARCHAR) FROM read_parquet("
        f"'{root}/events/**/*.parquet', hive_partitioning = true) ORDER BY 1, 2").fetchall()
    print(json.dumps({"pyarrow": a, "duckdb": [list(r) for r in b],
                      "modules": sorted(m for m in sys.modules
                                        if m.split(".")[0] in ("recorder", "footprint", "lens"))}))
""")


def test_given_a_sealed_store_when_read_without_project_code_then_rows_match_store_sql(
    tmp_path: Path,
) -> None:
    root = tmp_path / "store"
    subprocess.run(
        [sys.executable, str(HERE / "store_writer.py"), str(root), "open", "3", "400", "100",
         "150"],
        check=True, cwd=ROOT, env={"PYTHONPATH": str(ROOT)}, capture_output=True,
    )
    out = subprocess.run(
        [sys.executable, "-I", "-c", _FOREIGN_READER, str(root)],
        check=True, capture_output=True, text=True, cwd=tmp_path,
    )
    foreign = json.loads(out.stdout)
    assert foreign["modules"] == []
    ours = [
        list(r) for r in open_store(root).rows(
            "SELECT run_id, seq, type, payload, CAST(date AS VARCHAR) FROM events ORDER BY 1, 2")
    ]
    assert len(ours) == 1200
    assert foreign["duckdb"] == ours
    assert [list(r) for r in foreign["pyarrow"]] == ours
