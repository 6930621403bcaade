# Proof targets (included by the top Makefile): WP with -wp-model real on the LayerNorm kernels, EVA on
# the float kernels, Gappa on the float error of the mean's sum.  See proofs/README.md.
#   make prove                    replay the committed cache (proofs/session*), prove what is missing
#   make prove WP_CACHE=update    ... and store new results in the cache (then commit proofs/session*)
#   make prove EVA_NMAX=1024      a quicker EVA run over 1 <= n <= 1024
prove:
	WP_CACHE=$(or $(WP_CACHE),replay) EVA_NMAX=$(or $(EVA_NMAX),4096) proofs/prove.sh

# Proof regression (issue 13): every mutant in proofs/mutants/ (wrong in float, exact over the reals)
# must be REJECTED by the float-model WP run, and the unpatched control must pass.  Its own target,
# not part of `make prove`: five WP runs (mutated goals uncached) take ~10 minutes on 2 cores (more than the 4 minutes
# `make prove` may grow by).
prove-mutants:
	proofs/mutants.sh
