"""The one-thread XLA device of :class:`parallel_mcmc.measure.xla_threads.OneThreadDevice`: ``python -m parallel_mcmc.programs.xla_threads_worker``.

Started by ``OneThreadDevice`` with ``NPROC=1`` and one CPU device, it prints
how many operations of the large-data workload its compiler cut into pieces,
then reads workload labels from its standard input, one a line, runs each once
and answers with one JSON line: its CPU and wall seconds and its output (or the
error).
"""

from __future__ import annotations

import json
import sys
import time
from typing import Any

import numpy as np

from parallel_mcmc.measure.xla_threads import workloads

__all__ = ["serve"]


def _flat(out: Any) -> dict[str, list]:
    import jax

    leaves = jax.tree_util.tree_leaves_with_path(out)
    return {jax.tree_util.keystr(path) or "out": np.asarray(leaf).tolist() for path, leaf in leaves}


def serve() -> None:
    """Answer workload labels from standard input, one JSON line each, until the input closes."""
    import jax

    jax.config.update("jax_platforms", "cpu")
    jax.config.update("jax_num_cpu_devices", 1)
    from parallel_mcmc.measure import hlo

    calls = workloads()
    fn, *args = calls["large data"]
    print(json.dumps({"partitions": len(hlo.partitions(fn.lower(*args).compile().as_text()))}), flush=True)
    for line in sys.stdin:
        label = line.strip()
        try:
            fn, *args = calls[label]
            wall, cpu = time.perf_counter(), time.process_time()
            out = jax.block_until_ready(fn(*args))
            reply = {"cpu": time.process_time() - cpu, "wall": time.perf_counter() - wall, "out": _flat(out)}
        except Exception as e:  # the parent shows it
            reply = {"error": f"{type(e).__name__}: {e}"}
        print(json.dumps(reply), flush=True)


if __name__ == "__main__":
    serve()
