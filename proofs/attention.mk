# Attention proof target (included by the top Makefile; part of `make prove`: a replay of the committed
# session costs ~5 min of one core, WP regenerating and simplifying 1218 goals, which make check's
# proof lane absorbs beside the tests).  WP with
# -wp-model real on ref/attention.c; see proofs/README-sublayers.md and proofs/results/attention.json.
#   make prove-attention                   replay the committed cache (proofs/session_attention)
#   make prove-attention WP_CACHE=update   ... and store new results (then commit the session)
.PHONY: prove-attention
prove-attention:
	WP_CACHE=$(or $(WP_CACHE),replay) PROVE_LANE=$(PROVE_LANE) proofs/attention.sh
