"""The grading plugin (being built)."""
