"""`python -m probes ...`: the command line. `report` is parsed and run with only what a report
needs loaded (probes/cli/report_command.py `main`: half a second less at each start, the whole
of a small report's time); every other command through probes/cli/commands.py."""

from __future__ import annotations

import sys
from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    words = sys.argv[1:] if argv is None else list(argv)
    if words[:1] == ["report"]:
        from probes.cli.report_command import main as report

        return report(argv)
    from probes.cli.commands import main as every_command

    return every_command(argv)


__all__ = ["main"]
