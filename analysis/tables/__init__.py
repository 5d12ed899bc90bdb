"""Tables of an analysis (pure Python, no Django): the tidy trials table, its codebook, exclusions, the exported
files, a researcher's curve CSV and the headline table."""
