"""booktools.coursework.grade.schedule: a whole book's chapters start longest first; the reports keep their order."""

from __future__ import annotations

from pathlib import Path

from booktools.coursework.edition import exercise_chapters
from booktools.coursework.grade.schedule import GRADING_SECONDS, expected_seconds, longest_first

ROOT = Path(__file__).resolve().parents[2]


def test_every_exercise_chapter_has_a_grading_time_and_no_other_name_does():
    stems = {chapter.stem for chapter in exercise_chapters(ROOT)}
    assert set(GRADING_SECONDS) == stems, (sorted(stems - set(GRADING_SECONDS)), sorted(set(GRADING_SECONDS) - stems))
    assert all(seconds > 0 for seconds in GRADING_SECONDS.values())


def test_the_longest_chapter_starts_first_and_unknown_names_keep_their_order():
    short, middle, long = sorted(GRADING_SECONDS, key=GRADING_SECONDS.get)[::9][:3]  # three different times
    assert GRADING_SECONDS[short] < GRADING_SECONDS[middle] < GRADING_SECONDS[long]
    paths = [f"ada/{short}.ipynb", f"ada/{long}.ipynb", "ada.ipynb", f"ada/{middle}.ipynb", "bob.ipynb"]
    order = [paths[i] for i in longest_first(paths)]
    assert order == [f"ada/{long}.ipynb", f"ada/{middle}.ipynb", f"ada/{short}.ipynb", "ada.ipynb", "bob.ipynb"]
    assert expected_seconds(f"submissions/ada/{long}.ipynb") == GRADING_SECONDS[long]
    assert expected_seconds("ada.ipynb") == 0


def test_a_class_of_one_chapter_keeps_its_order():
    paths = [f"class/student{k}.ipynb" for k in range(5)]
    assert longest_first(paths) == list(range(5))
