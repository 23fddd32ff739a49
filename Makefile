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
	@echo
	@echo "demo done:"
	@echo "  demo_output/debugger/   the trace of one forward; open trace.html in a browser (docs/debugger.md, docs/explorer.md)"
	@echo "  demo_output/scanner/    which mini models skip which common test (docs/scanner.md);"
	@echo "                          tiny_broken's syntax error is there on purpose: one bad file is reported, the scan goes on"
	@echo "next: trace your own model: README.md, 'Trace one forward pass'"

test: $(STAMP)
	$(PY) -m pytest -q -n 2 --dist loadfile

lint: $(STAMP)
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .

bench: $(STAMP)
	for script in benchmarks/bench_*.py; do echo "== $$script =="; $(PY) $$script || exit 1; done

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache
