# Softmax proof target (included by the top Makefile; `make prove` depends on it).  WP with
# -wp-model real on ref/softmax.c under the libm assumption of specs/libm.h, EVA on the float
# kernels.  See proofs/README-sublayers.md and proofs/libm-assumptions.md.
#   make prove-softmax                   replay the committed cache (proofs/session_softmax)
#   make prove-softmax WP_CACHE=update   ... and store new results (then commit the session)
.PHONY: prove-softmax
prove-softmax:
	WP_CACHE=$(or $(WP_CACHE),replay) EVA_NMAX=$(or $(EVA_NMAX),1024) proofs/softmax.sh
