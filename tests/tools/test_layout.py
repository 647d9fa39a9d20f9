"""booktools.layout: the README's layout table follows the tree."""

from booktools import layout


def test_the_readme_layout_is_the_trees():
    block = layout.ROOT.joinpath("README.md").read_text().split("<!-- layout:start -->\n```\n")[1].split("\n```")[0]
    assert block == layout.table(), "README.md's layout is stale: run `.venv/bin/python -m booktools.layout`."


def test_every_module_has_its_line_and_the_exercises_one_line_for_all():
    table = layout.table()
    for name in ("judging.py", "emcee_tasks.py", "api_page.py", "layout.py", "exercises/<part>/<label>.py"):
        assert name in table
    assert "ex_" not in table and "__init__" not in table


def test_a_readme_without_markers_is_refused(tmp_path):
    readme = tmp_path / "README.md"
    readme.write_text("# a book\n")
    try:
        layout.write(readme)
    except ValueError as e:
        assert "layout:start" in str(e)
    else:
        raise AssertionError("write() accepted a README without markers")
