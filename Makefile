# Every target creates .venv and installs what it needs when missing.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: demo test lint bench clean

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	# The CPU build from local disk; an unpinned torch would pull a multi-GB CUDA build.
	$(PY) -m pip install --quiet torch==2.13.0
	$(PY) -m pip install --quiet -e '.[debugger,test,dev,plot]'
	touch $(STAMP)

demo: $(STAMP)
	$(PY) examples/trace_tiny_model.py --output_dir demo_output/debugger
	$(VENV)/bin/model-debugging view demo_output/debugger
	$(PY) utils/scan_skipped_tests.py --repo examples/mini_transformers --output_dir demo_output/scanner --summary

test: $(STAMP)
	$(PY) -m pytest -q -n 2 --dist loadfile

lint: $(STAMP)
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .

bench: $(STAMP)
	for script in benchmarks/bench_*.py; do echo "== $$script =="; $(PY) $$script || exit 1; done

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache
