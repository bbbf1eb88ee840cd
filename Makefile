# mjtable: every target creates .venv and installs the project on first use.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: sim test bench bundle lint clean config-check diagrams install-pi screenshots i18n

$(STAMP): setup.cfg setup.py
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test,lint,parlour]'
	touch $(STAMP)

$(VENV)/.bench: $(STAMP)
	$(BIN)/python -m pip install --quiet -e '.[test,lint,parlour,bench]' || \
	  echo "note: some benchmark peers did not install; the benchmark skips them"
	touch $(VENV)/.bench

sim: $(STAMP)
	$(BIN)/mjtable sim

# The tests' scratch databases in memory-backed files where there are some: a test's commits then cost no disk
# sync (no test measures durability on disk; the power-cut campaigns kill processes, which a sync does not change)
TEST_TMPDIR := $(shell [ -d /dev/shm ] && [ -w /dev/shm ] && echo /dev/shm || echo $${TMPDIR:-/tmp})

# Two workers (pytest-xdist): half the run's time is tests waiting on real time, brokers and subprocesses; a test
# marked ``alone`` (real-time bounds a busy neighbour could break) runs with no other beside it (tests/conftest.py)
test: $(STAMP)
	TMPDIR=$(TEST_TMPDIR) $(BIN)/python -m pytest -q -n 2

bench: $(VENV)/.bench
	$(BIN)/python -m bench

lint: $(STAMP)
	$(BIN)/ruff check firmware hal sim parlour tests bench
	$(BIN)/lint-imports --no-cache
	$(BIN)/mypy
	@! grep -rnE 'time\.sleep\(|time\.time\(|time\.monotonic\(|threading\.Timer|datetime\.now\(|datetime\.utcnow\(|time\.perf_counter\(' firmware --include='*.py' \
	  || (echo "firmware/ must take time from the injected loop" && false)
	@! grep -rlnE '^\s*(import|from)\s+(gpiozero|serial)\b' firmware --include='*.py' \
	  || (echo "firmware/ must not import gpiozero or pyserial" && false)

bundle: $(STAMP)
	$(BIN)/mjtable bundle --out dist

install-pi: bundle
	sudo $(BIN)/mjtable install --bundle dist/mjtable-$$($(BIN)/mjtable --version | cut -d' ' -f2).bundle.tar --root /

diagrams: $(STAMP)
	$(BIN)/python -m firmware.controller.diagram

screenshots: $(STAMP)
	MJTABLE_SCREENSHOTS=docs/web $(BIN)/python -m pytest -q tests/end_to_end/test_web_browser.py tests/end_to_end/test_web_service_browser.py

# The message catalogues: the web page's (domain messages, babel.cfg) and the command line's (domain cli,
# babel-cli.cfg).  Extract the messages, merge them into each language's .po (then translate what is new there),
# compile the .mo the wheel ships (a test checks the .po and the .mo agree)
LOCALE := firmware/web/locale
CLI_LOCALE := firmware/cli/locale
i18n: $(STAMP)
	PYTHONPATH=. $(BIN)/pybabel extract -F babel.cfg -k N_ -k _g:2 -k g -k worded_answer --no-location --sort-output \
	  --project mjtable --copyright-holder mjtable -o $(LOCALE)/messages.pot .
	$(BIN)/pybabel update -i $(LOCALE)/messages.pot -d $(LOCALE) --width 120 --ignore-obsolete --no-fuzzy-matching
	$(BIN)/pybabel compile -d $(LOCALE) --statistics
	$(BIN)/pybabel extract -F babel-cli.cfg -k N_ -k Nn_:1,2 -k worded:2 -k worded_text -k worded_answer --no-location --sort-output \
	  --project mjtable --copyright-holder mjtable -o $(CLI_LOCALE)/cli.pot .
	$(BIN)/pybabel update -D cli -i $(CLI_LOCALE)/cli.pot -d $(CLI_LOCALE) --width 120 --ignore-obsolete \
	  --no-fuzzy-matching
	$(BIN)/pybabel compile -D cli -d $(CLI_LOCALE) --statistics

config-check: $(STAMP)
	$(BIN)/mjtable config check

clean:
	rm -rf $(VENV) build dist *.egg-info .pytest_cache .hypothesis .ruff_cache .mypy_cache
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
