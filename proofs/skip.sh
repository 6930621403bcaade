#!/usr/bin/env bash
# `make prove-skip`: WP (real model) on the fused residual + norm kernels of ref/skip_layernorm.c and
# ref/skip_rmsnorm.c, from the contracts of their callees (specs/residual.h, specs/layernorm.h,
# specs/rmsnorm.h; those are proved by `make prove`, `make prove-residual`, `make prove-rmsnorm`).
# Exits non-zero on any unproved goal, failed smoke test, or unsound ACSL literal / admit / axiom;
# writes proofs/results/skip.json and prints a per-kernel table.  No EVA here: the skip kernels do no
# float arithmetic of their own except the dbias column sums (see proofs/README-skip.md).
# Steps and environment: proofs/lib.sh.
source "$(dirname "$0")/lib.sh"
proof_init prove-skip build/proofs/skip

proof_soundness_greps specs/skip_layernorm.h specs/skip_rmsnorm.h ref/skip_layernorm.c ref/skip_rmsnorm.c
# Only ref/skip_*.c are parsed: the callees (residual_forward_*, layernorm_*, rmsnorm_*) have no body
# here, so WP uses their contracts (from specs/*.h) and proves nothing about them; the skip kernels
# are the only functions with a body.  No -wp-fct: with it WP would skip the ACSL lemmas of the two
# files (index facts of the rows x n layout), which must be proved too.  The smoke tests
# `<callee>_wp_smoke_dead_call_sN` check that each call of a skip kernel is reachable.
proof_wp_real proofs/session_skip ref/skip_layernorm.c ref/skip_rmsnorm.c
proof_summary proofs/results/skip.json proofs/summary_skip.awk
proof_finish "all goals proved"
