"""The pytest plugin's own tests run pytest in a sandbox (pytester)."""

pytest_plugins = ["pytester"]
