"""``python -m booktools.coursework.grade``: the grader's command line (:func:`booktools.coursework.grade.main`)."""

import sys

from . import main

sys.exit(main())
