"""What an analysis run shows a reader (pure Python, no Django): figures, the report's text and its shared wording."""
