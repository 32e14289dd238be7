"""`python -m viewer` is `transcript-view`."""

import sys

from viewer.cli import main

sys.exit(main())
