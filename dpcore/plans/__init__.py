"""Release plans for the analyses besides the mean (see dpcore.release.ReleasePlan)."""
