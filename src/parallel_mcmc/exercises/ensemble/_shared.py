"""Helpers that two or more checks of the part share; public names, private module."""

from __future__ import annotations

from typing import Sequence

__all__ = ["EMCEE_MAPS", "maps_text"]


# (round_overhead, tasks_per_map, ranks, cores): emcee's maps (all walkers, then half of them twice a step) over
# the sharing pool, with more ranks than cores, uneven chunks, and one rank (no crossover).
EMCEE_MAPS = [32] + [16] * 8


def maps_text(maps: Sequence[int]) -> str:
    return f"[{maps[0]}] + [{maps[1]}] * {len(maps) - 1}" if len(maps) > 2 and len(set(maps[1:])) == 1 else str(list(maps))
