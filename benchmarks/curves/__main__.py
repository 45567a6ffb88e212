"""Entry point: ``python -m benchmarks.curves``."""

from benchmarks.curves.run import main

raise SystemExit(main())
