# Two commands do everything on a fresh clone; each sets up what it needs.
#   make demo   the main job on the shipped example data, in a small environment of its own
#   make test   every check CI runs: lint, stub drift, the type checkers, and the tests on each Python
#               (which also build, check and install the wheel and the sdist, and run the README's
#               install and pre-commit instructions), then a quick run of the benchmarks
PYTHONS := 3.11 3.12 3.13
VENV := .venv
MAIN := $(VENV)/3.11
DEMO := $(VENV)/demo
# pip's warnings here are about this machine's package index configuration, not about this project;
# errors still show.
PIP_INSTALL := python -m pip install --quiet --quiet

.PHONY: demo test lint bench bench-quick clean

demo: $(DEMO)/installed
	$(DEMO)/bin/failure-kinds audit examples/rollout_failures.jsonl --aliases examples/aliases.toml

test: lint $(PYTHONS:%=$(VENV)/%/installed)
	set -e; for version in $(PYTHONS); do \
		echo "== pytest on Python $$version"; \
		$(VENV)/$$version/bin/python -m pytest; \
	done
	$(MAKE) --no-print-directory bench-quick

# Measurements against their baselines; see benchmarks/run.py. The quick run only checks they run.
bench: $(MAIN)/installed
	$(MAIN)/bin/python benchmarks/run.py

bench-quick: $(MAIN)/installed
	$(MAIN)/bin/python benchmarks/run.py --quick

# `mypy src` checks the other modules against the stub (see mypy.ini); __init__.py is checked by name.
lint: $(MAIN)/installed
	$(MAIN)/bin/ruff check .
	$(MAIN)/bin/ruff format --check .
	$(MAIN)/bin/python stubs/generate.py --check
	$(MAIN)/bin/mypy --strict src
	$(MAIN)/bin/mypy --strict src/failure_kinds/__init__.py stubs/generate.py benchmarks
	$(MAIN)/bin/pyright --pythonpath $(MAIN)/bin/python

clean:
	rm -rf $(VENV) dist build

# pyenv's shims only run the globally selected version, so ask pyenv for the interpreter's own path;
# without pyenv, use whatever pythonX.Y is on PATH.
python_for = $(shell if command -v pyenv >/dev/null 2>&1 && pyenv latest $(1) >/dev/null 2>&1; \
	then echo "$$(pyenv root)/versions/$$(pyenv latest $(1))/bin/python$(1)"; \
	else echo python$(1); fi)

$(VENV)/%/installed: pyproject.toml
	rm -rf $(VENV)/$*
	$(call python_for,$*) -m venv $(VENV)/$*
	$(VENV)/$*/bin/$(PIP_INSTALL) --upgrade pip
	$(VENV)/$*/bin/$(PIP_INSTALL) --editable '.[dev,bench]'
	touch $@

# The demo needs the package and its fast decoder only, not the test and benchmark tools.
$(DEMO)/installed: pyproject.toml
	rm -rf $(DEMO)
	$(call python_for,3.11) -m venv $(DEMO)
	$(DEMO)/bin/$(PIP_INSTALL) --upgrade pip
	$(DEMO)/bin/$(PIP_INSTALL) --editable '.[fast]'
	touch $@
