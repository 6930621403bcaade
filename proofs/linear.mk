# Linear-layer proof target (included by the top Makefile; `make prove` depends on it).  WP with
# -wp-model real on ref/linear.c, EVA on the float kernels, WP in the IEEE float model on the dot
# helpers (proofs/linear_float.sh, session proofs/session_linear_float).  See proofs/README-sublayers.md.
#   make prove-linear                   replay the committed cache (proofs/session_linear)
#   make prove-linear WP_CACHE=update   ... and store new results (then commit the session)
#   EVA: the drivers for 1 <= in <= 64 (EVA_NMAX), the dot helpers for n <= 4096 (proofs/eva_linear.c)
.PHONY: prove-linear
prove-linear:
	WP_CACHE=$(or $(WP_CACHE),replay) EVA_NMAX=64 proofs/linear.sh
