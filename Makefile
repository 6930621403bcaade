# resnorm: a verified numerical reference for LayerNorm and friends.  See README.md.
#   make          install missing Debian packages, build, regenerate golden/ and fail if it differs
#   make check    the tests: unit + CLI (Criterion), proofs (WP, EVA, Gappa), ASan+UBSan, fuzz smoke
#   make prove | golden | bench | fuzz | clean
.DEFAULT_GOAL := all
SHELL := /bin/bash

DEB_PACKAGES := gcc make libmpfr-dev libgmp-dev libjansson-dev libssl-dev libcriterion-dev \
                frama-c-base why3 z3 cvc5 gappa clang libclang-rt-14-dev python3-torch python3-numpy \
                python3-jsonschema libflint-arb-dev

CC      := gcc
# IEEE semantics: each operation rounds once, in the order written (the proofs and the error analysis
# assume it).  No fast-math of any kind, no FMA contraction.
IEEE    := -O2 -ffp-contract=off -fno-fast-math
CFLAGS  := $(IEEE) -std=c11 -D_POSIX_C_SOURCE=200809L -g -Wall -Wextra -Iref -Ispecs -Icli $(EXTRA_CFLAGS)
LDFLAGS := $(EXTRA_LDFLAGS)
LDLIBS  := -ljansson -lcrypto -lflint-arb -lflint -lmpfr -lgmp -lm

B       := build
LIB_SRC := $(wildcard ref/*.c) $(filter-out cli/main.c,$(wildcard cli/*.c))
LIB_OBJ := $(patsubst %.c,$(B)/%.o,$(LIB_SRC))
TESTS   := $(patsubst tests/%.c,$(B)/tests/%,$(wildcard tests/test_*.c))
RESNORM := $(B)/resnorm

.PHONY: all deps build check unit pytorch-check asan fuzz-smoke fuzz prove golden golden-check bench clean

all: deps
	$(MAKE) build
	$(MAKE) golden-check

# Install whatever Debian package is missing (root; apt-get update first).  Safe to re-run.
deps:
	@missing=""; for p in $(DEB_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "deps: installing$$missing"; \
	  apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $$missing; \
	fi

build: $(RESNORM)

$(B)/%.o: %.c $(wildcard ref/*.h specs/*.h cli/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c $< -o $@

$(B)/libresnorm.a: $(LIB_OBJ)
	ar rcs $@ $^

$(RESNORM): $(B)/cli/main.o $(B)/libresnorm.a
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(B)/tests/%: tests/%.c $(B)/libresnorm.a $(RESNORM) $(wildcard tests/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Itests $(LDFLAGS) -o $@ $< $(B)/libresnorm.a -lcriterion $(LDLIBS)

# ---- tests ----
check: deps
	$(MAKE) unit
	$(MAKE) pytorch-check
	$(MAKE) golden-check
	$(MAKE) prove
	$(MAKE) asan
	$(MAKE) fuzz-smoke
	@echo "make check: all passed"

# Each Criterion binary prints its own synthesis line; RESNORM tells the CLI tests which binary to run.
unit: $(TESTS)
	@set -e; for t in $(TESTS); do echo "== $$t"; RESNORM=$(RESNORM) $$t --jobs 2; done

# PyTorch (Debian's python3-torch) as a real client of 'resnorm check' and, over the whole suite, of
# 'resnorm golden run-check' (f32 and bf16); prints SKIPPED if absent.
pytorch-check: build
	RESNORM=$(RESNORM) /usr/bin/python3 tests/pytorch_check.py
	RESNORM=$(RESNORM) /usr/bin/python3 tests/pytorch_suite.py
	RESNORM=$(RESNORM) /usr/bin/python3 tests/pytorch_sublayers.py

# ZOO_QUICK: the bug zoo runs its correct kernels only under the sanitizers (the mutants run in unit).
asan:
	ZOO_QUICK=1 $(MAKE) B=build/asan CC=gcc \
	  EXTRA_CFLAGS="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer" \
	  EXTRA_LDFLAGS="-fsanitize=address,undefined" unit

FUZZ := $(B)/fuzz/fuzz_npy
$(FUZZ): tests/fuzz_npy.c cli/npy.c ref/dtype.c cli/npy.h ref/dtype.h
	@mkdir -p $(dir $@)
	clang -g -O1 -ffp-contract=off -Iref -Icli -fsanitize=fuzzer,address,undefined \
	  -o $@ tests/fuzz_npy.c cli/npy.c ref/dtype.c -lmpfr -lgmp -lm

fuzz-smoke: $(FUZZ)
	@mkdir -p $(B)/fuzz/corpus
	$(FUZZ) -max_total_time=20 -print_final_stats=1 $(B)/fuzz/corpus tests/fuzz-seeds

fuzz: $(FUZZ)
	@mkdir -p $(B)/fuzz/corpus
	$(FUZZ) -max_total_time=$${FUZZ_SECONDS:-600} $(B)/fuzz/corpus tests/fuzz-seeds

# ---- golden vectors: generated, never edited; bit-identical on every rebuild ----
golden: build
	rm -rf $(B)/golden.new
	$(RESNORM) golden gen --out $(B)/golden.new
	rm -rf golden && mv $(B)/golden.new golden

golden-check: build
	rm -rf $(B)/golden.regen
	$(RESNORM) golden gen --out $(B)/golden.regen
	@diff -r golden $(B)/golden.regen >/dev/null || \
	  { echo "golden/ differs from a fresh generation (run 'make golden' and review):"; \
	    diff -rq golden $(B)/golden.regen | head -20; exit 1; }
	@echo "golden: regenerated bit-identical to the committed files"
	set -o pipefail; $(RESNORM) golden verify --root . | tail -1
	/usr/bin/python3 tests/manifest_schema_check.py

# ---- proofs (WP, EVA, Gappa): proofs/prove.mk ----
include proofs/prove.mk
include proofs/rmsnorm.mk proofs/residual.mk proofs/skip.mk
include proofs/linear.mk proofs/dropout.mk proofs/softmax.mk
# `make prove` proves every op family: LayerNorm (proofs/prove.sh) after RMSNorm, the residual add,
# the fused skip + norm kernels and the block's sublayers (dropout, softmax; linear once green).
prove: prove-rmsnorm prove-residual prove-skip prove-dropout prove-softmax

# ---- benchmark: timing lives here, never in tests ----
bench: build $(B)/tests/bench_layernorm
	$(B)/tests/bench_layernorm
	RESNORM=$(RESNORM) /usr/bin/python3 tests/bench_sublayers.py

$(B)/tests/bench_layernorm: tests/bench_layernorm.c $(B)/libresnorm.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $< $(B)/libresnorm.a $(LDLIBS)

clean:
	rm -rf $(B)
