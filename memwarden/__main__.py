"""`python -m memwarden` runs the CLI."""

import sys

from memwarden.cli import main

sys.exit(main())
