# Skip + norm proof target (to be included by the top Makefile next to proofs/prove.mk; `make prove`
# can depend on it).  WP with -wp-model real on ref/skip_layernorm.c and ref/skip_rmsnorm.c, from the
# callees' contracts.  See proofs/README-skip.md.
#   make prove-skip                   replay the committed cache (proofs/session_skip)
#   make prove-skip WP_CACHE=update   ... and store new results (then commit proofs/session_skip)
.PHONY: prove-skip
prove-skip:
	WP_CACHE=$(or $(WP_CACHE),replay) proofs/skip.sh
