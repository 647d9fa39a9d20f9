"""Figures measured on one GPU, read from the book's stored GPU runs, for a page's "On one GPU" box.

A GPU run (``make gpu-run``, then the command it prints, on a GPU machine) is kept in the repository as
``results/gpu/<date>-<gpu>.json``. :func:`gpu_figures` finds the newest such file above the working directory
and returns one case of it, labelled with the device, driver, JAX version and date it was measured with; where
no run was kept (a fresh clone without one, Colab, Binder), it returns ``None`` and a page shows no box. Nothing
here measures: a page never claims a GPU figure that no run produced.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["GpuFigures", "gpu_figures", "on_one_gpu"]

#: Where the GPU runs are kept, relative to the book's root.
RESULTS = Path("results") / "gpu"


@dataclass(frozen=True)
class GpuFigures:
    """One case of a stored GPU run.

    Parameters
    ----------
    case : str
        The case's name (``"state_machine"``, ``"smc_work"``, ``"vmap_shard_map"``).
    figures : dict
        What the case measured: its ``pairs`` (each with the narrator's ``sentence``), ``numbers`` and ``verdict``.
    device : dict
        The run's device: ``gpu``, ``driver``, ``jax``, ``date``.
    source : pathlib.Path
        The result file.
    """

    case: str
    figures: dict[str, Any]
    device: dict[str, Any]
    source: Path

    @property
    def label(self) -> str:
        """Where and when these figures were measured, for the box's first line."""
        d = self.device
        return (f"Measured on one {d.get('gpu', 'GPU')} (driver {d.get('driver', '?')}, jax {d.get('jax', '?')}) "
                f"on {d.get('date', '?')}, by the book's GPU run ({self.source.name})")

    def sentence(self, pair: str) -> str:
        """The narrator's sentence for ``pair`` of the case, as the GPU run wrote it.

        Parameters
        ----------
        pair : str
            A pair of the case (``"256"`` chains, ``"1024x20000"`` particles x rows, a layout's name).

        Returns
        -------
        str
            The sentence, with its numbers.

        Raises
        ------
        KeyError
            If the case has no such pair.
        """
        pairs = self.figures.get("pairs", {})
        if pair not in pairs:
            raise KeyError(f"the GPU run's {self.case!r} has no pair {pair!r}; it has {sorted(pairs)}.")
        return pairs[pair]["sentence"]

    def box(self, pairs: list[str], intro: str = "") -> str:
        """The "On one GPU" box as Markdown: the label, then each pair's sentence.

        Parameters
        ----------
        pairs : list of str
            The pairs to show, as for :meth:`sentence`.
        intro : str, optional
            A sentence before the label.

        Returns
        -------
        str
            A Markdown block quote (``IPython.display.Markdown(figures.box([...]))`` shows it).
        """
        lines = [f"> **On one GPU.** {intro}".rstrip(), ">", f"> *{self.label}.*", ">"]
        lines += [f"> - {self.sentence(p)}" for p in pairs]
        return "\n".join(lines)

    def _repr_markdown_(self) -> str:
        return self.box(sorted(self.figures.get("pairs", {})))


def _newest(start: Path) -> Path | None:
    for folder in [start, *start.parents]:
        runs = sorted((folder / RESULTS).glob("*.json"))
        if runs:
            return runs[-1]
    return None


def gpu_figures(case: str, start: str | Path | None = None) -> GpuFigures | None:
    """The figures of ``case`` from the newest stored GPU run, or ``None`` where none was kept.

    Parameters
    ----------
    case : str
        A case of the GPU run.
    start : str or pathlib.Path, optional
        Where to look from (the working directory by default): the first ``results/gpu`` with a run, in it or
        above it, is used.

    Returns
    -------
    GpuFigures or None
        ``None`` when no run was kept, or the run did not measure ``case`` (it ran out of time, or failed).
    """
    source = _newest(Path(start or Path.cwd()).resolve())
    if source is None:
        return None
    run = json.loads(source.read_text())
    entry = run.get("cases", {}).get(case, {})
    if entry.get("status") != "ok" or "figures" not in entry:
        return None
    return GpuFigures(case, entry["figures"], run.get("device", {}), source)


def on_one_gpu(case: str, intro: str = "", pairs: list[str] | None = None) -> GpuFigures | None:
    """Show a page's "On one GPU" box for ``case``, where a stored GPU run measured it; show nothing otherwise.

    Parameters
    ----------
    case : str
        A case of the GPU run, as for :func:`gpu_figures`.
    intro : str, optional
        A sentence before the box's label.
    pairs : list of str, optional
        The pairs to show (every pair of the case when ``None``, in the run's order).

    Returns
    -------
    GpuFigures or None
        What was shown, or ``None`` when no run was kept.
    """
    figures = gpu_figures(case)
    if figures is not None:
        from IPython.display import Markdown, display

        display(Markdown(figures.box(list(figures.figures.get("pairs", {})) if pairs is None else pairs, intro)))
    return figures
