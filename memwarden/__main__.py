"""`python -m memwarden` runs the CLI; `memwarden-check` is `memwarden check`."""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    from memwarden.cli.main import main as cli_main

    return cli_main(argv)


def check_main() -> int:
    """`memwarden-check ARGS` = `memwarden check ARGS`: kept so pre-commit configs and
    scripts that name it keep working."""
    return main(["check", *sys.argv[1:]])


if __name__ == "__main__":
    sys.exit(main())
