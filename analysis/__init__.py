"""Analysis: psychometric fits, opinion scores, pairwise scales and fidelity reports (pure cores + tasks)."""
