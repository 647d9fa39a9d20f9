"""``python -m booktools.gpu_run``: see :mod:`booktools.gpu_run`."""

import sys

from booktools.gpu_run import main

sys.exit(main())
