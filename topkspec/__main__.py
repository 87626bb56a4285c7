"""`python -m topkspec` runs the command line."""
from topkspec.cli import main

raise SystemExit(main())
