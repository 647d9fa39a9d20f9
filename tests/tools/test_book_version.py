"""The version of the book the grader graded against: read from git (a toy book in a temporary repository: a
commit, a tag, a later commit, an uncommitted edit; a folder that is not a checkout), and written into the JSON,
the CSV gradebook and the feedback files. No sandbox: the version is read and the reports written directly."""

from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from test_student import make_book

from booktools.coursework import grade as grade_module
from booktools.coursework.grade.report import (
    ExerciseResult,
    NotebookReport,
    book_version,
    gradebook,
    version_line,
    write_csv,
    write_feedback,
    write_json,
)

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def toy_book(path: Path) -> Path:
    """The toy book (test_student's) in a new folder ``path``."""
    path.mkdir(parents=True)
    return make_book(path)


UNKNOWN = {"commit": "unknown", "describe": "unknown", "dirty": False}


def git(repo: Path, *args: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_AUTHOR_NAME="Instructor", GIT_AUTHOR_EMAIL="i@example.org", GIT_COMMITTER_NAME="Instructor",
               GIT_COMMITTER_EMAIL="i@example.org", GIT_CONFIG_NOSYSTEM="1", HOME=str(repo.parent))
    done = subprocess.run(["git", "-C", str(repo), "-c", "commit.gpgsign=false", "-c", "tag.gpgsign=false", *args],
                          capture_output=True, text=True, env=env, check=True)
    return done.stdout.strip()


@pytest.fixture
def repo(tmp_path):
    """A toy book in a git repository with one commit."""
    book = toy_book(tmp_path / "book")
    git(book, "init", "-q")
    git(book, "add", ".")
    git(book, "commit", "-q", "-m", "the toy book")
    return book


def reports():
    ada = NotebookReport("subs/ada.ipynb", "chapters/toy/toy.md", [ExerciseResult("ex-toy-chains", "passed"),
                                                                    ExerciseResult("ex-toy-combine", "failed")],
                         1.0, student="ada")
    bob = NotebookReport("subs/bob.ipynb", "chapters/toy/toy.md", [ExerciseResult("ex-toy-chains", "passed")], 1.0,
                         student="bob")
    return [ada, bob]


# --------------------------------------------------------------------------- reading the version


def test_a_commit_a_tag_a_later_commit_and_an_uncommitted_edit(repo):
    head = git(repo, "rev-parse", "HEAD")
    version = book_version(repo)  # no tag yet: the short hash
    assert version["commit"] == head and version["dirty"] is False
    assert head.startswith(version["describe"]) and len(version["describe"]) >= 7

    git(repo, "tag", "course-2027-spring")
    assert book_version(repo) == {"commit": head, "describe": "course-2027-spring", "dirty": False}
    assert book_version(repo / "chapters") == book_version(repo)  # a folder inside the checkout: the same
    (repo / "notes.txt").write_text("an untracked file is not a change to the book\n")
    assert book_version(repo)["dirty"] is False

    chapter = repo / "chapters/toy/toy.md"
    chapter.write_text(chapter.read_text() + "\nAn edit not committed.\n")
    assert book_version(repo) == {"commit": head, "describe": "course-2027-spring-dirty", "dirty": True}
    assert version_line(book_version(repo)) == f"course-2027-spring-dirty (commit {head}, uncommitted changes)"

    git(repo, "commit", "-q", "-am", "after the tag")
    later = git(repo, "rev-parse", "HEAD")
    version = book_version(repo)
    assert version["commit"] == later != head and version["dirty"] is False
    assert version["describe"].startswith("course-2027-spring-1-g")  # the tag, one commit since, the hash
    assert later.startswith(version["describe"].removeprefix("course-2027-spring-1-g"))
    assert version_line(version) == f"{version['describe']} (commit {later})"


def test_a_lightweight_or_annotated_tag_both_count(repo):
    git(repo, "tag", "-a", "course-2027-autumn", "-m", "the autumn term")
    assert book_version(repo)["describe"] == "course-2027-autumn"


def test_not_a_checkout_no_commit_or_no_git_is_unknown(tmp_path, monkeypatch):
    assert book_version(toy_book(tmp_path / "plain")) == UNKNOWN
    assert book_version(tmp_path / "missing") == UNKNOWN
    assert book_version(None) == UNKNOWN
    empty = toy_book(tmp_path / "empty")
    git(empty, "init", "-q")  # a repository with no commit yet
    assert book_version(empty) == UNKNOWN
    assert version_line(UNKNOWN) == "unknown (not a git checkout)"
    monkeypatch.setenv("PATH", str(tmp_path / "no-bin"))  # no git at all
    assert book_version(empty) == UNKNOWN


def test_the_callers_git_environment_does_not_redirect_it(repo, tmp_path, monkeypatch):
    other = toy_book(tmp_path / "other")
    git(other, "init", "-q")
    git(other, "add", ".")
    git(other, "commit", "-q", "-m", "another repository")
    monkeypatch.setenv("GIT_DIR", str(other / ".git"))
    assert book_version(repo)["commit"] == git(repo, "rev-parse", "HEAD") != git(other, "rev-parse", "HEAD")


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root, to hand the checkout to another user")
def test_the_grader_as_root_reads_a_checkout_another_user_owns(repo):
    """The grader runs as root (for its sandbox); git refuses a repository of another user unless told it is safe."""
    head = git(repo, "rev-parse", "HEAD")
    shutil.chown(repo, "nobody")
    for path in repo.rglob("*"):
        shutil.chown(path, "nobody")
    version = book_version(repo)
    assert version["commit"] == head and head.startswith(version["describe"]) and version["dirty"] is False


# --------------------------------------------------------------------------- the reports


def test_the_json_the_gradebook_and_the_feedback_name_the_version(repo, tmp_path):
    git(repo, "tag", "course-2027-spring")
    version = book_version(repo)
    write_json(reports(), tmp_path / "grades.json", version)
    data = json.loads((tmp_path / "grades.json").read_text())
    assert data["book"] == version and list(data)[0] == "book"
    assert (data["score"], data["total"], len(data["submissions"])) == (2, 3, 2)

    write_csv(reports(), tmp_path / "grades.csv", version)
    with open(tmp_path / "grades.csv", newline="") as f:
        rows = list(csv.reader(f))
    header, table = gradebook(reports())
    assert rows[0] == [*header, "book_version"]  # the last column, after total and possible
    assert rows[1:] == [[*map(str, row), "course-2027-spring"] for row in table]
    with open(tmp_path / "grades.csv", newline="") as f:  # as an LMS import reads it: by column name
        assert [row["book_version"] for row in csv.DictReader(f)] == ["course-2027-spring"] * 2

    files = write_feedback(reports(), tmp_path / "feedback", version)
    for path in files:
        lines = [line for line in path.read_text().splitlines() if "course-2027-spring" in line]
        assert lines == [f"- graded against the book: course-2027-spring (commit {version['commit']})"]


def test_without_a_version_the_reports_are_as_before(tmp_path):
    write_json(reports(), tmp_path / "grades.json")
    assert "book" not in json.loads((tmp_path / "grades.json").read_text())
    write_csv(reports(), tmp_path / "grades.csv")
    header = (tmp_path / "grades.csv").read_text().splitlines()[0]
    assert header == "student,ex-toy-chains,ex-toy-combine,total,possible"
    path, _ = write_feedback(reports(), tmp_path / "feedback")
    assert "graded against" not in path.read_text()


def test_the_command_line_records_the_version_it_graded_against(repo, tmp_path, monkeypatch, capsys):
    """``main`` reads the version of ``--book`` once and writes it everywhere (the grading itself stubbed out:
    the sandboxed runs are the business of test_grade_class)."""
    git(repo, "tag", "course-2027-spring")
    (repo / "_toc.yml").write_text("format: jb-book\nroot: intro\n# edited\n")
    subs = [tmp_path / "ada.ipynb", tmp_path / "bob.ipynb"]
    for path in subs:
        path.write_text("{}")
    monkeypatch.setattr(grade_module.sandbox, "available", lambda: None)
    monkeypatch.setattr(grade_module, "grade", lambda paths, *args, **kwargs: reports())
    out = tmp_path / "out"
    rc = grade_module.main([*map(str, subs), "--book", str(repo), "--json", str(out / "grades.json"),
                            "--csv", str(out / "grades.csv"), "--feedback", str(out / "feedback")])
    assert rc == 0
    head = git(repo, "rev-parse", "HEAD")
    printed = capsys.readouterr().out
    line = f"graded against the book at {repo.resolve()}: course-2027-spring-dirty (commit {head}, uncommitted changes)"
    assert line in printed
    assert json.loads((out / "grades.json").read_text())["book"] == {
        "commit": head, "describe": "course-2027-spring-dirty", "dirty": True}
    with open(out / "grades.csv", newline="") as f:
        assert {row["book_version"] for row in csv.DictReader(f)} == {"course-2027-spring-dirty"}
    assert all("- graded against the book: course-2027-spring-dirty" in p.read_text()
               for p in (out / "feedback").iterdir())

