"""Fixtures of the tools' tests."""

import pytest
from toy_grading import TOY, toy_edition


@pytest.fixture(scope="module")
def toy(tmp_path_factory):
    """(book folder, student notebook) of the grader's toy chapter."""
    return toy_edition(tmp_path_factory.mktemp("book"), TOY)
