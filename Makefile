# connectx-forge: every target sets up its own virtualenv (.venv) on first use, in two layers.
#   runtime layer (make submission, make upload): build, check, upload
#   test layer    (make test, make bench): + pytest, Hypothesis, ruff, mypy, torch (CPU), gymnasium, matplotlib,
#                 distributed (Dask), ziglang (the pinned C toolchain for native code in submissions),
#                 playwright with Debian's chromium-headless-shell, and bubblewrap (apt-get, as root)
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
MAX_GAMES ?=
TEST_WORKERS ?= auto

.PHONY: setup setup-test submission test test-long test-slow lint upload bench bench-reference native clean

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
	$(PIP) -e '.[dev,train,dask,native]'
	@$(SYSTEM_SETUP)
	@touch $(TEST_STAMP)

# the HTML replays' browser test (tests/integration/test_review_browser.py) drives Debian's Chromium headless shell through
# playwright (dev layer), and the agent hosts' jail is bubblewrap with libseccomp's syscall filter
# (tools/connectx_forge/sandbox/jail.py, syscalls.py; tests/security/test_jail.py): installed with apt-get where we are root, else those
# tests skip and say why.  As root, the attack suite runs again as an unprivileged user (cxforge-test, made here
# and let through to the interpreter and the checkout by an ACL naming it alone: tests/grant_test_user.sh).
SYSTEM_SETUP = missing=""; \
	command -v chromium-headless-shell >/dev/null 2>&1 || command -v chromium >/dev/null 2>&1 || \
	  missing="$$missing chromium-headless-shell"; \
	command -v bwrap >/dev/null 2>&1 || missing="$$missing bubblewrap"; \
	command -v setfacl >/dev/null 2>&1 || missing="$$missing acl"; \
	ldconfig -p 2>/dev/null | grep -q libseccomp.so.2 || missing="$$missing libseccomp2"; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
	      $$missing >/dev/null; \
	  else echo "no$$missing, and no apt-get as root to install it: the tests that need it will skip" >&2; fi; fi; \
	if [ "$$(id -u)" = 0 ]; then sh tests/grant_test_user.sh "$$(readlink -f $(BIN)/python)" $(BIN)/python . || true; fi

submission: $(RUNTIME_STAMP)
	$(BIN)/cxforge build $(AGENT) -o $(OUT) --force
	$(BIN)/cxforge check $(OUT) $(if $(GAMES),--games $(GAMES)) $(if $(MAX_GAMES),--max-games $(MAX_GAMES))

# the suite on every core (pytest-xdist); tests/conftest.py keeps the tests that share the machine on one worker
# (the sources are compiled first: where PYTHONDONTWRITEBYTECODE is set, each of the suite's cxforge processes and
# agent hosts would otherwise compile them again)
test: $(TEST_STAMP)
	$(BIN)/python -m compileall -q agents build tools >/dev/null
	$(BIN)/python -m pytest -n $(TEST_WORKERS) --dist loadgroup

# ruff, mypy and the layers' import contracts alone (make test runs ruff and the contracts, make test-long mypy:
# tests/unit/test_static.py, tests/unit/test_layers.py)
lint: $(TEST_STAMP)
	$(BIN)/ruff check agents build tools tests
	$(BIN)/python -m tests.typecheck
	$(BIN)/python -m tests.importlayers

# mypy, the longest end-to-end runs and the unprivileged re-run of the attack files, which CI (.ci/run) runs after
# make test
test-long: $(TEST_STAMP)
	$(BIN)/python -m compileall -q agents build tools >/dev/null
	$(BIN)/python -m pytest -n $(TEST_WORKERS) --dist loadgroup -m long

test-slow: $(TEST_STAMP)
	$(BIN)/python -m pytest -m slow

upload: $(RUNTIME_STAMP)
	@test -n "$(MSG)" || { echo "make upload: give a message, e.g. make upload MSG='solver v2'" >&2; exit 2; }
	$(BIN)/cxforge upload $(OUT) -m "$(MSG)" $(if $(GAMES),--games $(GAMES)) $(if $(MAX_GAMES),--max-games $(MAX_GAMES))

bench: $(TEST_STAMP)
	$(BIN)/cxforge bench

# bitbully (AGPL), the reference of cxforge bench solver --reference bitbully, into a bench-only layer of the user's
# cache: never a dependency of the package, never embedded or shipped (tools/connectx_forge/bench/reference_bitbully.py)
bench-reference: $(TEST_STAMP)
	$(PIP) --no-deps --target "$$($(BIN)/python -c 'from connectx_forge.bench import reference_bitbully as r; print(r.LAYER)')" \
		"bitbully==$$($(BIN)/python -c 'from connectx_forge.bench import reference_bitbully as r; print(r.PIN)')"

# the shipped agents' C libraries, compiled with the pinned toolchain and committed beside their sources
# (agents/solver/native/solver.so and .key), so that make submission needs no toolchain; run after editing solver.c
native: $(TEST_STAMP)
	$(BIN)/python -m connectx_bundler.native_libs

clean:
	rm -rf $(VENV) submissions/*.py submissions/*.json submissions/*.tar.gz
