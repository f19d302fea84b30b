import sys

from lint_h2d.cli import main

sys.exit(main())
