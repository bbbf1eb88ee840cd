# mjtable: every target creates .venv and installs the project on first use.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: sim test bench bundle lint clean config-check diagrams install-pi screenshots

$(STAMP): setup.cfg setup.py
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test,lint]'
	touch $(STAMP)

$(VENV)/.bench: $(STAMP)
	$(BIN)/python -m pip install --quiet -e '.[test,lint,bench]' || \
	  echo "note: some benchmark peers did not install; the benchmark skips them"
	touch $(VENV)/.bench

sim: $(STAMP)
	$(BIN)/mjtable sim

test: $(STAMP)
	$(BIN)/python -m pytest -q

bench: $(VENV)/.bench
	$(BIN)/python -m bench

lint: $(STAMP)
	$(BIN)/ruff check firmware hal sim tests bench
	@! grep -rnE 'time\.sleep\(|time\.time\(|time\.monotonic\(|threading\.Timer|datetime\.now\(' firmware --include='*.py' \
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
	MJTABLE_SCREENSHOTS=docs/web $(BIN)/python -m pytest -q tests/test_web_browser.py

config-check: $(STAMP)
	$(BIN)/mjtable config check

clean:
	rm -rf $(VENV) build dist *.egg-info .pytest_cache .hypothesis .ruff_cache
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
