"""`python -m probes ...`: the command line."""

from probes.cli.commands import main

__all__ = ["main"]
