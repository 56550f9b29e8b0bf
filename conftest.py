"""Root conftest: the harness plugin (options, claim marker, records) and the data fixtures."""
pytest_plugins = ["theory.harness.plugin", "fixtures.pytest_fixtures"]
