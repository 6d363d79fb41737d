"""lens — replay, diff, why, the TUI and the command line."""

__all__: list[str] = []
