"""Analysis of stored results: scoring, reports, paired comparisons, psychometric fits."""
