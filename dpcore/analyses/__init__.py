"""Strata Lab's analyses, one package each: mean, ratio, gvdp, synth (and the samplers)."""
