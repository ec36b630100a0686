# The two commands of the README: `make demo` and `make test`. Each creates .venv when missing and
# (re)installs when pyproject.toml or the set of files in the package folders changed: the strict editable
# install that mypy can follow links each module, so a new module needs a re-install.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
PKG_DIRS := sdk collector checks sandbox
# What gets installed. `make test` (and `make install`, `lint`, `typecheck`, `pytest`) installs every extra
# (TEST_EXTRAS: the agent frameworks, ClickHouse and Ray too) and the development tools; `make demo` installs only
# what the offline demo needs (DEMO_EXTRAS, no development tools) so that it stays quick on a fresh machine, and
# uses the full install instead when one is already there.
DEMO_EXTRAS ?= collector,sandbox
TEST_EXTRAS ?= all,ray
EXTRAS ?= $(TEST_EXTRAS)
GROUP ?= --group dev
# File names (an editable install follows edits of .py files), the contents of what gets compiled, and what is
# installed.
sources_hash = $(shell (find $(PKG_DIRS) -type f -not -path '*/__pycache__/*' -not -name '*.so' 2>/dev/null | sort; cat pyproject.toml setup.py $(wildcard collector/*/*.c); echo '$(1)') | md5sum | cut -c1-12)
STAMP := $(VENV)/.installed-$(call sources_hash,$(EXTRAS) $(GROUP))
FULL_STAMP := $(VENV)/.installed-$(call sources_hash,$(TEST_EXTRAS) --group dev)
# The JavaScript agent example's one dependency (its MCP client), from the npm registry, for its test.
JS_EXAMPLE := examples/js_agent/node_modules/.package-lock.json
# The web UI's accessibility checker (axe-core), a test dependency only (never in the package), from npm.
AXE := tests/collector/ui/a11y/node_modules/.package-lock.json

.PHONY: demo demo-run test lint typecheck pytest install bench clean

install: $(STAMP)

$(STAMP):
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade 'pip>=25.1'
	$(BIN)/python -m pip install --quiet --config-settings editable_mode=strict -e '.[$(EXTRAS)]' $(GROUP)
	rm -f $(VENV)/.installed-*
	touch $(STAMP)

$(JS_EXAMPLE): examples/js_agent/package-lock.json
	cd examples/js_agent && npm ci --no-audit --no-fund >/dev/null

$(AXE): tests/collector/ui/a11y/package-lock.json
	cd tests/collector/ui/a11y && npm ci --no-audit --no-fund >/dev/null

demo:
	@if [ -f $(FULL_STAMP) ]; then $(BIN)/passhat demo; else $(MAKE) --no-print-directory demo-run EXTRAS=$(DEMO_EXTRAS) GROUP=; fi

demo-run: $(STAMP)
	$(BIN)/passhat demo

test: lint typecheck pytest

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: $(STAMP)
	$(BIN)/mypy -p passhat

# The suite runs on PYTEST_WORKERS processes (pytest-xdist), a test file's tests together on one of them;
# PYTEST_WORKERS=0 runs it in this process, one test after another.
PYTEST_WORKERS ?= 2
pytest: $(STAMP) $(JS_EXAMPLE) $(AXE)
	$(BIN)/python -m pytest $(if $(filter 0,$(PYTEST_WORKERS)),,-n $(PYTEST_WORKERS) --dist loadfile)

bench: $(STAMP)
	for b in benchmarks/bench_*.py; do echo "== $$b"; $(BIN)/python $$b || exit 1; done

clean:
	rm -rf $(VENV) build dist *.egg-info passhat-demo examples/js_agent/node_modules tests/collector/ui/a11y/node_modules
