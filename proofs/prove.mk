# Proof targets; filled in by the proof work (WP with -wp-model real, EVA, Gappa).
prove:
	@echo "prove: no proofs yet"; exit 1
