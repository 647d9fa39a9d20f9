"""Every chapter under chapters/ is a test: the notebook collector lives in the tools package."""
pytest_plugins = ["booktools.nbtest"]
