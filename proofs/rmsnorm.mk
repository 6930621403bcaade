# RMSNorm proof target (to be included by the top Makefile next to proofs/prove.mk; `make prove` can
# depend on it).  WP with -wp-model real on ref/rmsnorm.c, EVA on the float kernels, Gappa (+SMT) on
# the float error of the sum of squares.  See proofs/README-rmsnorm-residual.md.
#   make prove-rmsnorm                    replay the committed cache (proofs/session_rmsnorm*)
#   make prove-rmsnorm WP_CACHE=update    ... and store new results (then commit the sessions)
#   make prove-rmsnorm EVA_NMAX=1024      a quicker EVA run over 1 <= n <= 1024
.PHONY: prove-rmsnorm
prove-rmsnorm:
	WP_CACHE=$(or $(WP_CACHE),replay) EVA_NMAX=$(or $(EVA_NMAX),$(NORM_EVA_NMAX)) proofs/rmsnorm.sh

# Proof regression of RMSNorm and the residual add (issue 13): every proofs/mutants/rmsnorm_*.patch and
# residual_*.patch (wrong in float, exact over the reals) must be REJECTED by the float-model WP run
# of proofs/rmsnorm_float.sh, and the unpatched controls must pass.  Run by `make prove-mutants-full`
# (a prerequisite of it: the LayerNorm runner proofs/mutants.sh is left as it is).
.PHONY: prove-mutants-rmsnorm
prove-mutants-rmsnorm:
	proofs/mutants_rmsnorm.sh
prove-mutants-full: prove-mutants-rmsnorm
