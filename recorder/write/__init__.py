"""The write side: events become chained rows in crash-safe segments, sealed into Parquet.

``_recorder`` (the ``Recorder`` sink the engine emits into) runs the
processors (``_process``: capture levels, redaction) and fans batches out to
sinks (``_sink``); ``_parquet_sink`` converts them (``_rows``, ``_columns``,
``_extract``, ``_hot``, ``_safe``) and appends them to live segments
(``_segment``) on a file thread (``_writer``), with the audit chain's heads
(``_chain`` spells the format, ``_link`` computes it); a segment is sealed into
Parquet when its writer closes, or adopted when its writer died (``_adopt``,
reading it back through ``_live``). ``_layout`` names the store's folders and
files; ``_upload`` sends sealed files to object storage. ``_compact`` merges
small sealed files; ``_merged`` keeps the record a compaction leaves
(``effective_files``: what readers read in a folder; ``finish``: complete an
interrupted compaction) and knows the store's own files from strays.

May import: ``footprint`` only (and pyarrow); nothing in ``recorder.store``,
``recorder.otel`` or ``recorder.ingest``.
"""
