# Attention proof target (included by the top Makefile; NOT part of `make prove` yet: see
# proofs/results/attention.json).  WP with -wp-model real on ref/attention.c.
#   make prove-attention                   replay the committed cache (proofs/session_attention)
#   make prove-attention WP_CACHE=update   ... and store new results (then commit the session)
.PHONY: prove-attention
prove-attention:
	WP_CACHE=$(or $(WP_CACHE),replay) proofs/attention.sh
