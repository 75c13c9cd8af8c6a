# Two commands do everything on a fresh clone; each sets up what it needs.
#   make demo   the main job on the shipped example data, in a small environment of its own
#   make test   every check CI runs: lint, stub drift, the type checkers, the documentation build and the
#               tests on each Python (which also build, check and install the wheel and the sdist, and run
#               the documented install and pre-commit instructions), then a quick run of the benchmarks
#
# The supported Pythons are the ones pyproject.toml's classifiers name. The first gets every tool (extra
# dev) and runs the whole suite; the others get what the suite needs (extra test) and skip the tests
# marked interpreter_independent, whose result does not depend on the Python running them (the type
# checkers are given each supported version by --python-version instead), and run each hypothesis property
# on a quarter of its examples (tests/helpers.py, FEWER_EXAMPLES). A test skipped for a missing
# extra fails here (FAILURE_KINDS_NO_SKIPS, tests/conftest.py), since every extra is installed.
#
# make test uses the supported Pythons this machine has (on PATH or through pyenv) and names the others
# in one line; it stops on CI (CI=true) when any is missing. "First" means the first found. When none is
# found, make demo and make test stop at once with one line naming the versions looked for.
#
# pyenv's shims only run the globally selected version, so ask pyenv for the interpreter's own path;
# without pyenv, use whatever pythonX.Y on PATH runs (a shim of a version pyenv lacks does not).
# Nothing when neither has it.
python_for = $(shell if command -v pyenv >/dev/null 2>&1 && version=$$(pyenv latest $(1) 2>/dev/null) \
	&& [ -x "$$(pyenv root)/versions/$$version/bin/python$(1)" ]; \
	then echo "$$(pyenv root)/versions/$$version/bin/python$(1)"; \
	elif python$(1) -c "" >/dev/null 2>&1; then echo python$(1); fi)
PYTHONS := $(shell sed -n 's/.*"Programming Language :: Python :: \(3\.[0-9]*\)".*/\1/p' pyproject.toml)
FOUND := $(strip $(foreach version,$(PYTHONS),$(if $(call python_for,$(version)),$(version))))
MISSING := $(filter-out $(FOUND),$(PYTHONS))
FIRST := $(firstword $(FOUND))
OTHERS := $(filter-out $(FIRST),$(FOUND))
VENV := .venv
MAIN := $(VENV)/$(FIRST)
DEMO := $(VENV)/demo
UV := $(VENV)/uv/bin/uv
# pip's warnings here are about this machine's package index configuration, not about this project;
# errors still show.
PIP_INSTALL := python -m pip install --quiet --quiet
# Two workers: the suite is mostly subprocesses of the command, and both cores are busy with two.
PYTEST := python -m pytest -n 2 --dist loadgroup

.PHONY: demo test found-python pythons environments lint bench bench-quick clean

demo: $(DEMO)/installed
	$(DEMO)/bin/failure-kinds audit examples/rollout_failures.jsonl --aliases examples/aliases.toml

# Each stage prints its time when it ends; the first that fails stops the run.
test: pythons
	$(call timed,environments,$(MAKE) --no-print-directory environments)
	$(call timed,lint,$(MAKE) --no-print-directory lint)
	@echo "== pytest on Python $(FIRST), every test"
	$(call timed,pytest on Python $(FIRST),FAILURE_KINDS_NO_SKIPS=1 $(MAIN)/bin/$(PYTEST))
	@set -e; for version in $(OTHERS); do \
		start=$$(date +%s); \
		echo "== pytest on Python $$version, all but the interpreter_independent tests, fewer examples"; \
		echo "FAILURE_KINDS_NO_SKIPS=1 FAILURE_KINDS_FEWER_EXAMPLES=1 $(VENV)/$$version/bin/$(PYTEST) ..."; \
		FAILURE_KINDS_NO_SKIPS=1 FAILURE_KINDS_FEWER_EXAMPLES=1 \
			$(VENV)/$$version/bin/$(PYTEST) -m "not interpreter_independent"; \
		echo "== pytest on Python $$version ($$(( $$(date +%s) - start )) s)"; \
	done
	$(call timed,benchmarks smoke run,$(MAKE) --no-print-directory bench-quick)

comma := ,
space := $(subst x, ,x)

# The stage $(1), the command $(2) (shown, then run), then its time in whole seconds.
timed = @start=$$(date +%s); echo '$(2)'; $(2) || exit $$?; echo "== $(1) ($$(( $$(date +%s) - start )) s)"

# Stops make, in make's one line, when no supported Python is found: before any recipe runs a Python that is
# not there. make demo and make test both need one.
found-python:
	$(if $(FOUND),,$(error none of Python $(subst $(space),$(comma) ,$(PYTHONS)) found$(comma) on PATH or through pyenv))

# Which supported Pythons make test runs on: a line naming the missing ones, and a stop when none is found
# or, on CI, when any is missing, since CI must test every supported version.
pythons: found-python
	@if [ -n "$(MISSING)" ]; then \
		echo "make test: Python $(subst $(space),$(comma) ,$(MISSING)) not found, on PATH or through pyenv:" \
			"testing on $(subst $(space),$(comma) ,$(FOUND)) only"; \
		if [ "$$CI" = true ]; then echo "make test: CI=true needs every supported Python" >&2; exit 1; fi; \
	fi

# The environments are built side by side: most of an install is waiting for the package index.
environments:
	$(MAKE) --no-print-directory -j $(words $(FOUND)) $(FOUND:%=$(VENV)/%/installed) $(SARIF_VALIDATOR)

# Measurements against their baselines; see benchmarks/run.py. The quick run only checks they run.
# Generated inputs are cached in build/bench/, which make clean removes.
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
	rm -rf $(VENV) dist build .cache

extras_for = $(if $(filter $(FIRST),$(1)),dev,test)

# The test environments are installed by uv, which fetches in parallel and links every package from one
# cache shared by the three, several times faster than pip here. Each keeps pip, since the
# tests run the documented pip commands with it. Bytecode is compiled as pip compiles it: without it, each
# of Ray's worker processes compiled Ray again, and the Ray tests were much slower.
$(VENV)/%/installed: pyproject.toml $(UV)
	rm -rf $(VENV)/$*
	$(call python_for,$*) -m venv $(VENV)/$*
	$(UV) pip install --quiet --compile-bytecode --python $(VENV)/$*/bin/python \
		--upgrade pip --editable '.[$(call extras_for,$*)]'
	touch $@

# Microsoft's SARIF validator, which tests/test_lint.py runs on `lint --format sarif` output: a .NET
# binary in an npm package, installed into .venv/npm beside the other npm tools the tests use.
SARIF_VALIDATOR := $(VENV)/npm/sarif-multitool-installed
$(SARIF_VALIDATOR):
	npm install --prefix $(VENV)/npm --silent @microsoft/sarif-multitool@5.7.0
	touch $@

# The compilers tests/test_languages.py runs on `export --format typescript|go`, set up before the
# environments. tsc: npm's typescript, pinned (the docs quote its error), in .venv/npm. Go: Debian's,
# installed only where go is missing and this runs as root with apt-get; anywhere else the Go tests
# skip, which FAILURE_KINDS_NO_SKIPS turns into failures that say so.
TYPESCRIPT := $(VENV)/npm/node_modules/.bin/tsc
GO_CHECKED := $(VENV)/go-checked
environments: $(TYPESCRIPT) $(GO_CHECKED)
$(TYPESCRIPT):
	npm install --prefix $(VENV)/npm --silent typescript@7.0.2
$(GO_CHECKED):
	command -v go >/dev/null 2>&1 || { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 \
		&& apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq golang-go >/dev/null; } \
		|| echo "go is not installed here: the Go export tests will fail"
	mkdir -p $(VENV) && touch $@

# uv itself, from the package index, in an environment of its own.
$(UV):
	rm -rf $(VENV)/uv
	$(call python_for,$(FIRST)) -m venv $(VENV)/uv
	$(VENV)/uv/bin/$(PIP_INSTALL) 'uv>=0.9,<1'

# The demo needs the package and its fast decoder only, not the test and benchmark tools.
$(DEMO)/installed: pyproject.toml | found-python
	rm -rf $(DEMO)
	$(call python_for,$(FIRST)) -m venv $(DEMO)
	$(DEMO)/bin/$(PIP_INSTALL) --upgrade pip
	$(DEMO)/bin/$(PIP_INSTALL) --editable '.[fast]'
	touch $@
