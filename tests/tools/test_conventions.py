"""booktools.conventions: the page figures it reports (lines, plumbing share, glue calls)."""

from booktools.conventions import MAX_LINES, figures, main

PAGE = """---
jupytext:
  text_representation:
    extension: .md
    format_name: myst
kernelspec:
  display_name: Python 3
  language: python
  name: python3
---

# A page

```{code-cell} ipython3
x = 1
assert x == 1

y = x + 1
```

```{code-cell} ipython3
:tags: [remove-cell]

glue("x", x, display=False); glue("y", y, display=False)
print(x)
```
"""


def test_plumbing_is_hidden_cells_plus_visible_glue_and_asserts(tmp_path):
    page = tmp_path / "page.md"
    page.write_text(PAGE)
    got = figures(page)
    assert (got.code, got.plumbing, got.glue) == (5, 3, 2)  # 2 hidden lines + 1 visible assert, of 5 code lines
    assert (got.code_all, got.plumbing_all) == (6, 3)  # the visible cell's blank line counted too
    assert got.share == 3 / 5 and got.over and got.lines == len(PAGE.splitlines()) < MAX_LINES


def test_a_hidden_cell_counts_whole_and_hide_input_is_hidden(tmp_path):
    """A cell whose code starts folded (hide-input) is plumbing, and its blank lines count when all lines do: the
    larger of the two shares is the page's."""
    page = tmp_path / "page.md"
    visible = "\n".join(f"v{i} = {i}" for i in range(6))
    page.write_text(PAGE.split("# A page")[0] + f"""# A page

```{{code-cell}} ipython3
{visible}
```

```{{code-cell}} ipython3
:tags: [hide-input]

a = 1


b = 2
```
""")
    got = figures(page)
    assert (got.code, got.plumbing) == (8, 2) and (got.code_all, got.plumbing_all) == (10, 4)
    assert got.share == 4 / 10 and got.over


def test_every_page_keeps_the_conventions(capsys):
    """At most 600 lines and a quarter of plumbing a page, at most 300 glue calls in the book."""
    status = main(["--over", "--check"])
    out = capsys.readouterr().out
    assert status == 0, out
    assert "0 over 600 lines, 0 over a quarter of plumbing" in out


def test_the_check_fails_on_a_page_over_a_limit(tmp_path, monkeypatch):
    from booktools import conventions

    (tmp_path / "chapters").mkdir()
    (tmp_path / "chapters" / "page.md").write_text(PAGE)  # 3 of its 5 code lines are plumbing
    monkeypatch.setattr(conventions, "ROOT", tmp_path)
    assert main(["--check"]) == 1 and main([]) == 0
