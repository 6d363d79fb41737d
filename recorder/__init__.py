"""recorder — every decision as a typed event, durable in Parquet and queryable in SQL."""

__all__: list[str] = []
