# Residual-add proof target (to be included by the top Makefile next to proofs/prove.mk; `make prove`
# can depend on it).  WP with -wp-model real on ref/residual.c, EVA on the float kernels, Gappa (+SMT)
# on the rounding of the addition.  See proofs/README-rmsnorm-residual.md.
#   make prove-residual                   replay the committed cache (proofs/session_residual*)
#   make prove-residual WP_CACHE=update   ... and store new results (then commit the sessions)
#   make prove-residual EVA_NMAX=1024     a quicker EVA run over 0 <= n <= 1024
.PHONY: prove-residual
prove-residual:
	WP_CACHE=$(or $(WP_CACHE),replay) EVA_NMAX=$(or $(EVA_NMAX),$(NORM_EVA_NMAX)) proofs/residual.sh
