# Two commands: `make run` opens the TUI on the offline demo, `make test` runs the whole suite.
# Both create .venv from requirements.lock (exact versions, hashes) on first use.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run test lint bench lock clean sandbox

$(STAMP): requirements.lock requirements-pip.lock pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --require-hashes -r requirements-pip.lock
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --require-hashes -r requirements.lock
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --no-deps -e .
	touch $(STAMP)

# Commands the model runs are sandboxed with bubblewrap (README, "Commands and their sandbox"):
# installed with apt when missing and we are root (or sudo needs no password), said otherwise.
sandbox:
	@command -v bwrap >/dev/null 2>&1 || ! command -v apt-get >/dev/null 2>&1 || \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq bubblewrap >/dev/null; \
	  elif sudo -n true 2>/dev/null; then sudo -n apt-get update -qq && sudo -n apt-get install -y -qq bubblewrap >/dev/null; \
	  fi || true
	@command -v bwrap >/dev/null 2>&1 || echo "bubblewrap (bwrap) is not installed: the commands the model runs will run unsandboxed (README: Commands and their sandbox)"

run: $(STAMP) sandbox
	@$(BIN)/python -m compileall -q shell widgets themes  # bytecode, even where PYTHONDONTWRITEBYTECODE is set
	$(BIN)/cairn --demo $(ARGS)

test: $(STAMP) sandbox lint
	$(BIN)/python -m pytest -q $(ARGS)

lint: $(STAMP)
	$(BIN)/ruff check shell widgets themes tests bench
	$(BIN)/ruff format --check --quiet shell widgets themes tests bench
	$(BIN)/lint-imports --no-cache
	$(BIN)/mypy

bench: $(STAMP)
	$(BIN)/python -m bench.search $(ARGS)

# Regenerate requirements.lock after changing dependencies in pyproject.toml.
lock: $(STAMP)
	$(BIN)/python -m pip install --quiet pip-tools
	$(BIN)/pip-compile --quiet --generate-hashes --extra test --strip-extras --allow-unsafe -o requirements.lock pyproject.toml

clean:
	rm -rf $(VENV)
