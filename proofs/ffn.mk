# Feed-forward proof target (included by the top Makefile).  WP with -wp-model real on ref/ffn.c,
# EVA on the activation kernels (proofs/eva_ffn.c, n <= EVA_NMAX = 64).
#   make prove-ffn                   replay the committed cache (proofs/session_ffn)
#   make prove-ffn WP_CACHE=update   ... and store new results (then commit the session)
.PHONY: prove-ffn
prove-ffn:
	WP_CACHE=$(or $(WP_CACHE),replay) EVA_NMAX=$(or $(EVA_NMAX),64) proofs/ffn.sh
