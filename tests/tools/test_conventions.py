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
    assert got.share == 3 / 5 and got.over and got.lines == len(PAGE.splitlines()) < MAX_LINES


def test_the_book_report_runs(capsys):
    assert main(["--over"]) == 0
    assert "pages:" in capsys.readouterr().out
