"""The profiling page's trace is published with the site and opens offline: a gzip'd Chrome trace-event file.

Reads the site as ``make book`` builds it (the ``built_site`` fixture of tests/book/conftest.py builds it once
per session); the page writes the trace when it runs and links it with ``{download}``, so Sphinx copies it under
``_downloads/``.
"""

import gzip
import json
from pathlib import Path


ROOT = Path(__file__).resolve().parents[2]
HTML = ROOT / "_build" / "html"
PAGE = HTML / "chapters" / "getting_started" / "profiling.html"


def test_the_trace_is_published_and_parses(built_site):
    assert PAGE.is_file(), f"make book wrote no {PAGE.relative_to(ROOT)}"
    published = list((HTML / "_downloads").rglob("parallel_run.trace.json.gz"))
    assert len(published) == 1, f"expected the page's trace under _build/html/_downloads, found {published}"
    link = published[0].relative_to(HTML).as_posix()
    assert link in PAGE.read_text(), "the page links the published trace"
    with gzip.open(published[0]) as f:
        trace = json.load(f)
    events = trace["traceEvents"]
    threads = {e["args"]["name"] for e in events if e.get("ph") == "M" and e.get("name") == "thread_name"}
    # jax 0.12 names a CPU device's own thread tf_XLAExecute/... (jax 0.10: tf_XLAPjRtCpuClient/...)
    assert sum("XLAExecute" in t for t in threads) >= 2, "the trace shows the two devices' threads"
    assert any(e.get("ph") == "X" for e in events)
