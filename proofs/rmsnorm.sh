#!/usr/bin/env bash
# `make prove-rmsnorm`: WP (real model) on the RMSNorm kernels, EVA on the float kernels, Gappa (+SMT)
# on the float error bound of the sum of squares.  Exits non-zero on any unproved goal, failed smoke
# test, EVA alarm, or unsound ACSL literal; writes proofs/results/rmsnorm.json and prints a per-kernel
# table.  Steps and environment: proofs/lib.sh.
source "$(dirname "$0")/lib.sh"
proof_init prove-rmsnorm build/proofs/rmsnorm

proof_soundness_greps specs/rmsnorm.h specs/rmsnorm_model.h ref/rmsnorm.c proofs/eva_rmsnorm.c \
  proofs/gappa_rmsnorm_sumsq.c
proof_eva_start ref/rmsnorm.c proofs/eva_rmsnorm.c
proof_wp_real proofs/session_rmsnorm ref/rmsnorm.c
proof_gappa proofs/gappa_rmsnorm_sumsq.c proofs/session_rmsnorm_gappa \
  sq_err,sq_err_tiny,add_err,nov,res_fin,x2 qed,cvc5,z3nofp -cpp-extra-args=-Ispecs
proof_eva_wait
proof_summary proofs/results/rmsnorm.json proofs/rmsnorm_residual_summary.awk -v family=rmsnorm
proof_finish "all goals proved, 0 EVA alarms"
