"""`python -m mutation`: see mutation/cli.py."""

import sys

from mutation.cli import main

sys.exit(main())
