"""Studies: study files, the participant journey, recruitment, answers, bots and the dashboard."""
