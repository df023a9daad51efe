"""`python -m rextio_torch check|dump-ir|emit|build|doctor ...`: the `rextio-torch` command
line, run by the compiler's extension (same flags, output and exit codes)."""

import sys

from . import main

sys.exit(main())
