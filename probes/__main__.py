import sys

from probes.cli.commands import main

sys.exit(main())
