# Dropout proof target (included by the top Makefile; `make prove` depends on it).  WP with
# -wp-model real on ref/dropout.c, EVA on the float kernels.  See proofs/README-sublayers.md.
#   make prove-dropout                   replay the committed cache (proofs/session_dropout)
#   make prove-dropout WP_CACHE=update   ... and store new results (then commit the session)
.PHONY: prove-dropout
prove-dropout:
	WP_CACHE=$(or $(WP_CACHE),replay) EVA_NMAX=$(or $(EVA_NMAX),1024) proofs/dropout.sh
