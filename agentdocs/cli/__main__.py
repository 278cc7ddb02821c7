"""`python -m agentdocs.cli`."""

import sys

from agentdocs.cli.main import main

sys.exit(main())
