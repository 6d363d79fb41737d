"""The read side: a store's files found, queried in SQL, read by need, verified, repaired.

``_discover`` finds sealed files and live segments (``_livespill`` reads big
live streams in bounded memory) and refuses damaged ones (``_damage``);
``_catalog`` builds the DuckDB views (``_views``, the public schema) and runs
user SQL in a sandbox (``_sandbox``); ``_outline`` caches a per-file outline,
from which ``_summary`` (one run's table of contents) and ``_runlist`` (the
runs list, filtered and paged) read; ``_reader`` pages a run's rows with
pushed-down filters (``_query``) and rebuilds typed events (``_upcast`` reads
older records); ``_verify`` checks a run's audit chain (``_derived`` re-derives
the lifted columns), ``_doctor`` finds and quarantines damaged files;
``_record_files`` writes and checks the chained dataset and experiment files
(``_records`` holds their views); ``_remote`` mirrors a store held on object
storage; ``_owned`` tunes the collector of a process that reads at scale. The parts
take the store as a ``_base.StoreView`` and never import the ``Store`` class back.

May import: ``footprint`` and ``recorder.write`` (the row format, the layout,
the chain); never ``recorder.otel`` or ``recorder.ingest``.
"""
