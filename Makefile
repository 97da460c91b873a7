# Quick start: `make run` launches the app on the demo data; `make test` runs every test.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PORT ?= 8501

.PHONY: run test lint unit browser bench clean

UV := $(VENV)/bin/uv

# make lets Python cache the bytecode of what it imports in __pycache__ (git ignores it), even
# where PYTHONDONTWRITEBYTECODE is set, as on CI: without the cache every test process, Streamlit
# server and script run compiles numpy, pandas, streamlit and this project anew. Compiling on
# first import rather than at install (uv's --compile-bytecode) compiles only what runs: the
# install takes 18 CPU-s less, and a clean-clone `make test` about 100 of its 500 CPU-s less.
unexport PYTHONDONTWRITEBYTECODE

# uv resolves and installs the same packages as pip in a fraction of the time.
$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet uv

# Stamps re-run the install when pyproject.toml changes.
$(VENV)/.installed: pyproject.toml | $(PY)
	$(UV) pip install --quiet --python $(PY) -e .
	touch $@

$(VENV)/.installed-dev: pyproject.toml | $(PY)
	$(UV) pip install --quiet --python $(PY) -e ".[dev]"
	touch $(VENV)/.installed $@

/usr/bin/chromium:
	DEBIAN_FRONTEND=noninteractive apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium

# Spark (the engine for cluster data, and its tests) runs on Java 17.
/usr/bin/java:
	DEBIAN_FRONTEND=noninteractive apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq openjdk-17-jre-headless

run: $(VENV)/.installed
	$(VENV)/bin/streamlit run app.py --server.address 127.0.0.1 --server.port $(PORT) \
		--server.headless true --browser.gatherUsageStats false

lint: $(VENV)/.installed-dev
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

test: $(VENV)/.installed-dev /usr/bin/chromium /usr/bin/java lint
	# Three workers on two cores: browser tests spend part of their time waiting on the page.
	$(PY) -m pytest -n 3 --dist worksteal

bench: $(VENV)/.installed
	@for f in benchmarks/[!_]*.py; do echo "== $$f"; PYTHONPATH=. $(PY) $$f || exit 1; done

clean:
	rm -rf $(VENV) tests/artifacts .pytest_cache .ruff_cache
