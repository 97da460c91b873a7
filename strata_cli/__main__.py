"""``python -m strata_cli``: the same command as the installed ``strata-lab`` script."""

import sys

from strata_cli.main import main

sys.exit(main())
