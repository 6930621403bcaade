#!/usr/bin/env bash
# `make prove-residual`: WP (real model) on the residual kernels, EVA on the float kernels, Gappa (+SMT)
# on the rounding of the residual addition (finite, relative error <= u).  Exits non-zero on any
# unproved goal, failed smoke test, EVA alarm, or unsound ACSL literal; writes
# proofs/results/residual.json and prints a per-kernel table.  Steps and environment: proofs/lib.sh.
source "$(dirname "$0")/lib.sh"
proof_init prove-residual build/proofs/residual

proof_soundness_greps specs/residual.h ref/residual.c proofs/eva_residual.c proofs/gappa_residual.c
proof_eva_start ref/residual.c proofs/eva_residual.c
proof_wp_real proofs/session_residual ref/residual.c
proof_gappa proofs/gappa_residual.c proofs/session_residual_gappa rel_err,nov,res_fin qed,z3nofp,cvc5,z3
proof_eva_wait
proof_summary proofs/results/residual.json proofs/rmsnorm_residual_summary.awk -v family=residual
proof_finish "all goals proved, 0 EVA alarms"
