"""Every module of the helper package has its entry in the API reference page."""

import pkgutil
from pathlib import Path

import parallel_mcmc

API_PAGE = Path(__file__).resolve().parents[2] / "chapters" / "reference" / "api.md"


def all_modules() -> list[str]:
    return ["parallel_mcmc"] + [
        m.name for m in pkgutil.walk_packages(parallel_mcmc.__path__, prefix="parallel_mcmc.")
    ]


def test_every_module_is_documented():
    page = API_PAGE.read_text()
    missing = [m for m in all_modules() if m != "parallel_mcmc" and f"{{automodule}} {m}\n" not in page]
    assert not missing, f"add these modules to {API_PAGE.name}: {missing}"
