# Gappa proofs of the fast path's primitives (specs/fast-path.md §8): each proofs/fast_dd/*.g must
# be proved (gappa exits non-zero on any unproved goal).  Included by the top Makefile; part of
# `make prove`.  About a minute in all.
.PHONY: prove-fast
FAST_GAPPA := $(sort $(wildcard proofs/fast_dd/*.g))
prove-fast:
	@set -e; for g in $(FAST_GAPPA); do \
	  mkdir -p $(B); if gappa $$g >$(B)/gappa.log 2>&1; then \
	    echo "prove-fast: $$g proved"; \
	  else echo "prove-fast: $$g NOT PROVED:"; grep -v 'maximum number' $(B)/gappa.log; exit 1; fi; \
	done; echo "prove-fast: $(words $(FAST_GAPPA)) Gappa scripts proved"
