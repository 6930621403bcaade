# Transformer block proof target (included by the top Makefile).  WP with -wp-model real on
# ref/block.c (proofs/block.sh).
#   make prove-block                   replay the committed cache (proofs/session_block/: f32, f64, rows_f32,
#                                      rows_f64, rows_backward_f32/_f64,
#                                      rows_bwd_ffn_f32/_f64, rows_bwd_post_f32/_f64,
#                                      rows_lemmas_f32/_f64)
#   make prove-block WP_CACHE=update   ... and store new results (then commit the session)
.PHONY: prove-block
prove-block:
	WP_CACHE=$(or $(WP_CACHE),replay) PROVE_LANE=$(PROVE_LANE) proofs/block.sh
