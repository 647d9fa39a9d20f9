"""Coursework tools for *Parallel MCMC with JAX*: build tooling, not a chapter helper.

- :mod:`booktools.coursework.student`: the student edition (solutions replaced by stubs, ``make student``),
  made with :mod:`~booktools.coursework.markdown` (the exercise convention read from a chapter's Markdown),
  :mod:`~booktools.coursework.stubs` (the stub cells), :mod:`~booktools.coursework.edition` (one chapter's
  edition, in memory) and :mod:`~booktools.coursework.leaks` (no solution line may survive).
- :mod:`booktools.coursework.grade`: the grader (``make grade``): runs a submission's answers in a sandbox
  and decides each exercise in a separate, trusted process.
- :mod:`booktools.coursework.sandbox`: the sandbox a submission's kernel runs in (no network, an
  unprivileged user, the book hidden, resource limits).
- :mod:`booktools.coursework.codec`: values as plain JSON data, both ways; nothing is executed on reading.
- :mod:`booktools.coursework.harness`: what runs in the learner's kernel to observe the answers.
- :mod:`booktools.coursework.verdict_runner`: the trusted process that runs the checks on the observed values.
- :mod:`booktools.coursework.references`: the reference answers and the unseen inputs the grader uses,
  one twin module per exercise (``references/<part>/<label>.py``).
- :mod:`booktools.coursework.registry`: every exercise of the chapters, by its label, paired with its check
  module and its twin.

Learners' kernels cannot import this package while they are graded; the chapters import
:mod:`parallel_mcmc`, which holds no reference answer.
"""
