"""``python -m booktools.bench``: run the benchmark (see :mod:`booktools.bench`)."""

import sys

from booktools.bench import main

sys.exit(main())
