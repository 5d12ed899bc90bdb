"""A participant's journey (pure Python, no Django): its steps, the study's texts as HTML, checking submissions."""
