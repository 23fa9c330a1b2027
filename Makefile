# connectx-forge: every target sets up its own virtualenv (.venv) on first use, in two layers.
#   runtime layer (make submission, make upload): build, check, upload
#   test layer    (make test, make bench): + pytest, Hypothesis, ruff, mypy, torch (CPU), gymnasium, matplotlib
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
PIP    := $(BIN)/python -m pip install -q --disable-pip-version-check --no-warn-conflicts
RUNTIME_STAMP := $(VENV)/.runtime-installed
TEST_STAMP    := $(VENV)/.test-installed
AGENT  ?=
OUT    ?= submissions/submission.py
MSG    ?=
GAMES  ?=

.PHONY: setup setup-test submission test test-slow lint upload bench clean

setup: $(RUNTIME_STAMP)
setup-test: $(TEST_STAMP)

# kaggle-environments declares the dependencies of every Kaggle game (jax, transformers, open_spiel...);
# ConnectX needs none of them, so it goes in with --no-deps and the project declares what ConnectX uses.
$(RUNTIME_STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(PIP) --no-deps kaggle-environments==1.33.2
	$(PIP) -e .
	@touch $(RUNTIME_STAMP)

# torch first, pinned, so that nothing pulls the CUDA build
$(TEST_STAMP): $(RUNTIME_STAMP)
	$(PIP) torch==2.13.0
	$(PIP) -e '.[dev,train]'
	@touch $(TEST_STAMP)

submission: $(RUNTIME_STAMP)
	$(BIN)/cxforge build $(AGENT) -o $(OUT)
	$(BIN)/cxforge check $(OUT) $(if $(GAMES),--games $(GAMES))

test: $(TEST_STAMP)
	$(BIN)/python -m pytest

# ruff and mypy alone (make test runs them too, in tests/test_static.py)
lint: $(TEST_STAMP)
	$(BIN)/ruff check agents build tools tests
	$(BIN)/python -m tests.typecheck

test-slow: $(TEST_STAMP)
	$(BIN)/python -m pytest -m slow

upload: $(RUNTIME_STAMP)
	@test -n "$(MSG)" || { echo "make upload: give a message, e.g. make upload MSG='solver v2'" >&2; exit 2; }
	$(BIN)/cxforge upload $(OUT) -m "$(MSG)"

bench: $(TEST_STAMP)
	$(BIN)/cxforge bench

clean:
	rm -rf $(VENV) submissions/*.py submissions/*.json submissions/*.tar.gz
