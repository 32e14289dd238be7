"""`python -m transcript_view` is `transcript-view`."""

import sys

from transcript_view.cli import main

sys.exit(main())
