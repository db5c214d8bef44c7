# kubex — the two commands a user needs:  make demo   and   make test
# Every target installs its own dependencies (scripts/install-deps.sh is idempotent).

BUILD_DIR ?= build
CMAKE_FLAGS ?=
PYTHON := /usr/bin/python3
JOBS ?= $(shell nproc)

.PHONY: all setup configure build test unit e2e demo bench fuzz clean format layers

all: build

setup:
	@scripts/install-deps.sh

$(BUILD_DIR)/build.ninja:
	cmake -S . -B $(BUILD_DIR) -G Ninja $(CMAKE_FLAGS)

configure: setup $(BUILD_DIR)/build.ninja

build: configure
	cmake --build $(BUILD_DIR) -j $(JOBS)

# Unit tests (GoogleTest via CTest), then end-to-end tests (pytest + real kubectl/Python client/Prometheus).
test: build
	$(MAKE) --no-print-directory unit e2e

unit:
	ctest --test-dir $(BUILD_DIR) --output-on-failure -j $(JOBS)

e2e:
	KUBEX_BUILD_DIR=$(abspath $(BUILD_DIR)) $(PYTHON) -m pytest -q -p no:cacheprovider tests/e2e

demo: build
	scripts/demo.sh $(BUILD_DIR) $(DEMO_ARGS)

bench: build
	scripts/run-benchmarks.sh $(BUILD_DIR)

# libFuzzer targets (clang, ASan + UBSan) in build-fuzz/, FUZZ_SECONDS each (default 20).
fuzz: setup
	scripts/fuzz-smoke.sh $(FUZZ_SECONDS)

# DESIGN §3: every #include under src/ points down the house's arrows.
layers:
	@scripts/check-layers

format:
	find src tests bench -name '*.h' -o -name '*.cpp' | xargs clang-format -i

clean:
	rm -rf $(BUILD_DIR)
