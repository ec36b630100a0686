# The two commands of the README: `make demo` and `make test`. Each creates .venv when missing and
# (re)installs when pyproject.toml or the set of files in the package folders changed: the strict editable
# install that mypy can follow links each module, so a new module needs a re-install.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
PKG_DIRS := sdk collector checks sandbox
# The extras installed: `all` for `make demo`; `make test` adds `ray` (TEST_EXTRAS), a large wheel the demo does
# not need, so that the distributed-replay tests run rather than skip.
EXTRAS ?= all
TEST_EXTRAS ?= all,ray
# File names (an editable install follows edits of .py files), plus the contents of what gets compiled.
SOURCES_HASH := $(shell (find $(PKG_DIRS) -type f -not -path '*/__pycache__/*' -not -name '*.so' 2>/dev/null | sort; cat pyproject.toml setup.py $(wildcard collector/*/*.c); echo '$(EXTRAS)') | md5sum | cut -c1-12)
STAMP := $(VENV)/.installed-$(SOURCES_HASH)

.PHONY: demo test lint typecheck pytest install bench clean

install: $(STAMP)

$(STAMP):
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade 'pip>=25.1'
	$(BIN)/python -m pip install --quiet --config-settings editable_mode=strict -e '.[$(EXTRAS)]' --group dev
	rm -f $(VENV)/.installed-*
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/passhat demo

test:
	$(MAKE) lint typecheck pytest EXTRAS=$(TEST_EXTRAS)

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: $(STAMP)
	$(BIN)/mypy -p passhat

pytest: $(STAMP)
	$(BIN)/python -m pytest

bench: $(STAMP)
	for b in benchmarks/bench_*.py; do echo "== $$b"; $(BIN)/python $$b || exit 1; done

clean:
	rm -rf $(VENV) build dist *.egg-info passhat-demo
