# Parallel MCMC with JAX: `make book` builds the website, `make test` runs every test.
# `make book EDITION=course` (or `make course`) builds the website without its solutions, in _build/course/.
# `make student` writes the student edition, `make grade SUBMISSIONS=...` grades submissions,
# `make format` rewrites the chapters as JupyterLab saves them.
# `make bench [BENCH_SIZE=smoke|laptop|large]` times the ways of running chains against the cost model.
# `make book` and `make test` create the Python environment (.venv) and the offline web assets (node_modules)
# when they are missing or older than the files that pin them.

# Python 3.12 or newer (jax 0.12 needs it): from PATH first, then from pyenv's installs (tools/find_python.sh says
# what to install when there is none). `make PYTHON=/path/to/python3.12 ...` chooses one.
PYTHON ?= $(shell tools/find_python.sh)
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
LAB    := .venv-lab
ASSETS := node_modules/.installed
JB_FLAGS ?= -W -n --keep-going
PYTEST_ARGS ?= -v

.PHONY: book course test lab clean distclean pins env student grade format bench stack-gpu-machine gpu-run

env: $(STAMP)

$(STAMP): requirements.txt pyproject.toml tools/pyproject.toml
	@test -n "$(PYTHON)" || { tools/find_python.sh; exit 1; }
	@# A venv made by an older Python (the book was on 3.11) is made again.
	@test ! -x $(PY) || $(PY) -c 'import sys; sys.exit(sys.version_info < (3, 12))' || rm -rf $(VENV)
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements.txt
	@# GPU=1 (make book GPU=1, make env GPU=1): JAX's CUDA 13 plugin for the pinned jax; pages then run on the GPU
	@# with PARALLEL_MCMC_PLATFORM=gpu (README, "Platforms").
	$(if $(GPU),$(PY) -m pip install --quiet "jax[cuda13]==$$(sed -n 's/^jax==//p' requirements.txt)")
	@touch $@

$(ASSETS): package.json package-lock.json
	@command -v npm >/dev/null || { echo "npm is missing: install Node.js (apt-get install nodejs npm)"; exit 1; }
	npm ci --no-audit --no-fund --loglevel=error
	@touch $@

# The execution cache only hashes the notebooks: clear it when the helper package changes
# (booktools.execution_cache; `make test` fills it from the notebook tests before it builds the site).
# EDITION=course builds the site without its solutions into _build/course/ (booktools.site.course_edition),
# from the same execution cache: nothing runs again that the full site has run.
EDITION ?= full
BOOK_OUT := $(if $(filter course,$(EDITION)),_build/course,.)
BOOK_HTML := $(if $(filter course,$(EDITION)),_build/course/_build/html,_build/html)
book: $(STAMP) $(ASSETS)
	@$(PY) -m booktools.execution_cache forget-if-src-changed
	@# Sphinx keeps the pages it wrote with warnings as up to date: forget them when the build fails,
	@# so that the next `make book` reads every page again instead of passing without looking.
	BOOK_EDITION=$(EDITION) $(VENV)/bin/jupyter-book build . --path-output $(BOOK_OUT) $(JB_FLAGS) \
		|| { rm -rf $(BOOK_OUT)/_build/.doctrees; exit 1; }
	@echo "Open $(BOOK_HTML)/index.html"

# The course edition of the site: make book EDITION=course.
course:
	$(MAKE) book EDITION=course

# Timing verdicts are strict here (parallel_mcmc.measure): a failure that persists after re-measuring fails the
# test; `make book` and a reader's kernel only report it.
# Three runs (tests/conftest.py): the chapters (each within its 60 s alone; many time something) and the tests that
# time the machine, one at a time, on a machine left to them; then, side by side, the long tests marked `background`,
# one file at a time (their report printed when they end, kept in _build/test-background.log), and everything else,
# marked `parallel`, TEST_JOBS at a time (pytest-xdist): a file's tests on one worker (its module fixtures made once),
# and files that share something on the same one, in order (the site built from the chapters' runs; the SLURM tests).
# Nothing runs beside the chapters, not even at the lowest CPU priority: other work on both cores slowed one device's
# run (XLA's threads) up to five times, even in an idle cgroup, and the site shows the chapters' timings.
# Any run failing fails; a run that selects no test (exit 5) does not. The output ends with a summary
# (booktools.test_report, from each run's JUnit report in _build/test-reports): every failure in one line.
TEST_JOBS ?= 2
BACKGROUND_LOG := _build/test-background.log
REPORTS := _build/test-reports
test: $(STAMP) $(ASSETS)
	@mkdir -p $(dir $(BACKGROUND_LOG)) $(REPORTS)
	@rm -f $(REPORTS)/first.xml $(REPORTS)/parallel.xml $(REPORTS)/background.xml
	@PARALLEL_MCMC_TIMING=strict $(PY) -m pytest $(PYTEST_ARGS) -m "not parallel and not background" \
		--junitxml=$(REPORTS)/first.xml; one=$$?; \
	PARALLEL_MCMC_TIMING=strict $(PY) -m pytest $(PYTEST_ARGS) -m background \
		--junitxml=$(REPORTS)/background.xml >$(BACKGROUND_LOG) 2>&1 & bg=$$!; trap 'kill $$bg 2>/dev/null' INT TERM; \
	echo "the background run started (pid $$bg), its report goes to $(BACKGROUND_LOG)"; \
	PARALLEL_MCMC_TIMING=strict $(PY) -m pytest $(PYTEST_ARGS) -m parallel -n $(TEST_JOBS) --dist loadfile \
		--junitxml=$(REPORTS)/parallel.xml; two=$$?; \
	wait $$bg; three=$$?; echo "== the background run (-m background, $(BACKGROUND_LOG)):"; cat $(BACKGROUND_LOG); \
	echo "== summary"; \
	$(PY) -m booktools.test_report first=$(REPORTS)/first.xml parallel=$(REPORTS)/parallel.xml \
		background=$(REPORTS)/background.xml; \
	echo "exit statuses: first run $$one, parallel run $$two, background run $$three"; \
	for code in $$one $$two $$three; do [ $$code -eq 0 ] || [ $$code -eq 5 ] || exit $$code; done

# The benchmark: every way of running chains at a larger size, measured against the cost model.
# Writes _build/bench/bench.csv, bench.json and bench.png.
BENCH_SIZE ?= laptop
bench: $(STAMP)
	$(PY) -m booktools.bench --size $(BENCH_SIZE) --out _build/bench

# The GPU run, prepared: the wheels the GPU machine lacks and a manifest in _build/gpu-run; it prints the one command
# to run there (booktools.gpu_run). `python -m booktools.gpu_run keep SUMMARY` stores a run in results/gpu/.
gpu-run: $(STAMP)
	$(PY) -m booktools.gpu_run prepare --out _build/gpu-run

# Rewrite every chapter as JupyterLab (through jupytext) saves it, so that opening one changes nothing.
format: $(STAMP)
	$(PY) -m booktools.format chapters

# The student edition: every chapter with exercises, solutions replaced by stubs, in _build/student/.
student: $(STAMP)
	$(PY) -m booktools.coursework.student

# Grade submitted notebooks: make grade SUBMISSIONS="a.ipynb b.ipynb" [GRADE_ARGS="--json grades.json --jobs 2"];
# by default the grades go to _build/grades.json, the gradebook to _build/grades.csv and one feedback file
# per submission to _build/feedback/.
SUBMISSIONS ?=
GRADE_ARGS ?= --json _build/grades.json --csv _build/grades.csv --feedback _build/feedback
grade: $(STAMP)
	@test -n "$(SUBMISSIONS)" || { echo 'usage: make grade SUBMISSIONS="a.ipynb b.ipynb" [GRADE_ARGS="--json grades.json --csv grades.csv --feedback feedback --jobs 2 --cell-timeout 300 --timeout 1800"]'; exit 2; }
	$(PY) -m booktools.coursework.grade $(GRADE_ARGS) $(SUBMISSIONS)

$(LAB)/.installed: requirements-lab.txt requirements.txt
	@test -n "$(PYTHON)" || { tools/find_python.sh; exit 1; }
	@test ! -x $(LAB)/bin/python || $(LAB)/bin/python -c 'import sys; sys.exit(sys.version_info < (3, 12))' || rm -rf $(LAB)
	@test -x $(LAB)/bin/python || $(PYTHON) -m venv $(LAB)
	$(LAB)/bin/python -m pip install --quiet --upgrade pip
	$(LAB)/bin/python -m pip install --quiet -r requirements-lab.txt
	@mkdir -p $(LAB)/share/jupyter/lab/settings
	cp lab-overrides.json $(LAB)/share/jupyter/lab/settings/overrides.json
	@touch $@

lab: $(LAB)/.installed
	$(LAB)/bin/jupyter lab chapters

# Re-pin requirements.txt from requirements.in in a throw-away environment.
pins:
	@test -n "$(PYTHON)" || { tools/find_python.sh; exit 1; }
	rm -rf _build/pins-venv && $(PYTHON) -m venv _build/pins-venv
	_build/pins-venv/bin/pip install --quiet --upgrade pip
	_build/pins-venv/bin/pip install --quiet -r requirements.in
	{ sed -n '1,3p' requirements.txt; _build/pins-venv/bin/pip freeze --exclude-editable; echo "-e ."; echo "-e ./tools"; } > requirements.txt.new
	mv requirements.txt.new requirements.txt && rm -rf _build/pins-venv

# The stack of the GPU machine the book targets (Python 3.12, jax/jaxlib 0.11.2, numpyro 0.21.0), everything else as
# requirements.txt pins it: a fresh environment in _build/stack-gpu-machine, the helper's tests and three pages
# (a sharding page, a NumPyro page, a BlackJAX chains page). Not part of `make test`: it installs a second stack.
GPU_STACK := _build/stack-gpu-machine
GPU_STACK_PAGES := chapters/sharding_lab/explicit_sharding.md chapters/numpyro/chain_methods.md \
	chapters/parallel_chains/vmap_pmap_shard_map.md
stack-gpu-machine: $(ASSETS)
	@test -n "$(PYTHON)" || { tools/find_python.sh; exit 1; }
	rm -rf $(GPU_STACK) && $(PYTHON) -m venv $(GPU_STACK)
	$(GPU_STACK)/bin/pip install --quiet --upgrade pip
	sed -e 's/^jax==.*/jax==0.11.2/' -e 's/^jaxlib==.*/jaxlib==0.11.2/' -e 's/^numpyro==.*/numpyro==0.21.0/' \
		requirements.txt > $(GPU_STACK)/requirements.txt
	$(GPU_STACK)/bin/pip install --quiet -r $(GPU_STACK)/requirements.txt
	@$(GPU_STACK)/bin/python -c 'import sys, jax, jaxlib, numpyro, blackjax, arviz; print("stack:", "Python", sys.version.split()[0], "jax", jax.__version__, "jaxlib", jaxlib.__version__, "numpyro", numpyro.__version__, "blackjax", blackjax.__version__, "arviz", arviz.__version__)'
	@echo "running: tests/helper and $(GPU_STACK_PAGES)"
	PARALLEL_MCMC_TIMING=strict $(GPU_STACK)/bin/python -m pytest -q tests/helper $(GPU_STACK_PAGES)

clean:
	rm -rf _build .pytest_cache
	find . -name '.ipynb_checkpoints' -prune -exec rm -rf {} +

distclean: clean
	rm -rf $(VENV) $(LAB) node_modules
