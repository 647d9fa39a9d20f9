"""Run a command while other programs keep cores busy: how the book's timing holds on a shared machine.

``python -m booktools.busy [--cores 1] -- COMMAND ...`` starts ``--cores``
processes that each spin on one core (plain Python arithmetic, no I/O), runs
``COMMAND``, stops them, and exits with the command's status. For example,
``python -m booktools.busy -- make test`` runs the whole test suite with one
of the machine's cores taken: the timed pages must then still pass, their
judge (:mod:`parallel_mcmc.measure`) seeing that the process did not get its
cores and leaving out the lower bounds.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import subprocess
import sys
from typing import Sequence

__all__ = ["spin", "main"]


def spin() -> None:
    """Keep one core busy until killed."""
    x = 0
    while True:
        x = (x * 1103515245 + 12345) % 2147483648


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m booktools.busy", description=__doc__.splitlines()[0])
    parser.add_argument("--cores", type=int, default=1, help="how many cores to keep busy (default 1)")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="the command to run, after --")
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("give the command to run after --, for example: python -m booktools.busy -- make test")
    if args.cores < 1:
        parser.error(f"--cores must be at least 1, got {args.cores}")
    spinners = [mp.get_context("spawn").Process(target=spin, daemon=True) for _ in range(args.cores)]
    for process in spinners:
        process.start()
    print(f"keeping {args.cores} core(s) busy while running: {' '.join(command)}", flush=True)
    try:
        return subprocess.run(command, check=False).returncode
    finally:
        for process in spinners:
            process.kill()
            process.join()


if __name__ == "__main__":
    sys.exit(main())
