"""``python -m skshapley``."""

from skshapley.cli import console_main

if __name__ == "__main__":
    raise SystemExit(console_main())
