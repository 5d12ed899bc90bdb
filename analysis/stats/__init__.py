"""The statistics of an analysis (pure Python, no Django): sigmoid families, psychometric and population
fits, intervals, pairwise scales, opinion scores, predictors, the pipeline over a tidy frame, simulation, planning."""
