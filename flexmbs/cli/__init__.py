"""The ``flexmbs`` command line: one module per subcommand (``add_args`` / ``run``)."""
