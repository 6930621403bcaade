# Proof targets (included by the top Makefile): WP with -wp-model real on the LayerNorm kernels, EVA on
# the float kernels, Gappa on the float error of the mean's sum.  See proofs/README.md.
#   make prove-layernorm                    replay the committed cache (proofs/session*), prove what is missing
#   make prove-layernorm WP_CACHE=update    ... and store new results in the cache (then commit proofs/session*)
#   make prove-layernorm EVA_NMAX=1024      a quicker EVA run over 1 <= n <= 1024
# (the same variables apply to `make prove`, which runs this target among the others).
.PHONY: prove-layernorm
prove-layernorm:
	WP_CACHE=$(or $(WP_CACHE),replay) EVA_NMAX=$(or $(EVA_NMAX),$(NORM_EVA_NMAX)) proofs/prove.sh

# Proof regression (issue 13), fast: run by `make prove` (~3 min on 2 idle cores).  Each mutant in
# proofs/mutants/ declares the goal(s) it must break (`expect:` lines); WP runs that selection,
# uncached, on the unpatched control (must prove it) and on the mutant (must leave a goal unproved).
# MUT_TIMEOUT (default 3 s, doubled up to twice for a control that misses it) is the per-goal prover timeout.  See proofs/mutants/README.md.
.PHONY: prove-mutants prove-mutants-fast prove-mutants-full
prove-mutants-fast:
	MUT_TIMEOUT=$(or $(MUT_TIMEOUT),3) proofs/mutants_fast.sh
prove-mutants: prove-mutants-fast

# The full regression (opt-in, 30-60 min on the shared machine): every mutant through the whole
# float-model (and rows) runs of make prove, replaying copies of their sessions; the RMSNorm/residual
# part is proofs/mutants_rmsnorm.sh (proofs/rmsnorm.mk, prove-mutants-rmsnorm).
prove-mutants-full:
	proofs/mutants.sh
