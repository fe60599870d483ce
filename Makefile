# One place for every install step: a fresh clone needs only python3 (>= 3.11), make and gcc.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
HOST ?= 127.0.0.1
PORT ?= 8800

.PHONY: all setup sysdeps sources run test bench lint format clean

all: setup

setup: $(STAMP) sysdeps

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev,cuda]'
	touch $(STAMP)

# System libraries the judge links and the tests start: OpenBLAS for `startup.load: [openblas]`,
# PostgreSQL for the database tests. Installed from Debian's registry when missing and we are root.
sysdeps:
	@bash scripts/sysdeps.sh

# The small pinned sources of the usis corpora (a few MB), so that the tests can check the shipped
# corpora against a rebuild; NCCL's and NVSHMEM's wheels (hundreds of MB) are fetched only by hand
# (`.venv/bin/usis fetch`). Without network the rebuild checks skip and say why.
sources: $(STAMP)
	-@$(BIN)/usis fetch --model mpi --model openmp --model shmem --model cuda >/dev/null \
		|| echo "sources: could not fetch the usis sources; their rebuild checks will skip" >&2

run: setup
	$(BIN)/hb serve --host $(HOST) --port $(PORT)

test: setup sources
	$(BIN)/python -m pytest -q

bench: setup
	HB_BENCH_FULL=1 $(BIN)/python -m bench

lint: setup
	$(BIN)/ruff check src tests bench
	$(BIN)/ruff format --check src tests bench
	$(BIN)/mypy

format: setup
	$(BIN)/ruff check --fix src tests bench
	$(BIN)/ruff format src tests bench

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .hypothesis
