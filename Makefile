# connectx-forge: every target sets up its own virtualenv (.venv) on first use.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
AGENT  ?=
OUT    ?= submissions/submission.py
MSG    ?=
GAMES  ?=

.PHONY: setup submission test test-slow upload bench clean

setup: $(STAMP)

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q torch==2.13.0
	$(BIN)/python -m pip install -q -e '.[dev,train]'
	@touch $(STAMP)

submission: $(STAMP)
	$(BIN)/cxforge build $(AGENT) -o $(OUT)
	$(BIN)/cxforge check $(OUT) $(if $(GAMES),--games $(GAMES))

test: $(STAMP)
	$(BIN)/python -m pytest

test-slow: $(STAMP)
	$(BIN)/python -m pytest -m slow

upload: $(STAMP)
	@test -n "$(MSG)" || { echo "make upload: give a message, e.g. make upload MSG='solver v2'" >&2; exit 2; }
	$(BIN)/cxforge upload $(OUT) -m "$(MSG)"

bench: $(STAMP)
	$(BIN)/python -m tools.bench

clean:
	rm -rf $(VENV) submissions/*.py submissions/*.json submissions/*.tar.gz
