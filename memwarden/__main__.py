"""`python -m memwarden` runs the CLI.

`check` with ordinary arguments (what pre-commit passes) runs without importing the click
CLI at all: the published hooks call `python -m memwarden check`, and click with the
command table costs ~20-50 ms of a hook that should take well under 0.1 s.
"""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args[:1] == ["check"]:
        from memwarden.cli.check import lean_main, quick_exit

        code = lean_main(args[1:], program=argv is None)
        if code is not None:
            if argv is None:
                quick_exit(code)  # nothing to tear down that matters: ~5 ms saved
            return code
    from memwarden.cli.main import main as cli_main

    return cli_main(argv)


def check_main() -> int:
    """`memwarden check` with this program's arguments: the `memwarden-check` script
    (hooks/memwarden-check) that the published pre-commit hooks run."""
    sys.argv[1:1] = ["check"]
    return main()


if __name__ == "__main__":
    sys.exit(main())
