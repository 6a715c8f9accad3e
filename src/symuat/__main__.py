"""``python -m symuat …``: the same command as the ``symuat`` console script (handy under
``python -m cProfile -m symuat report --fresh``)."""

import sys

from symuat.cli import main

sys.exit(main())
