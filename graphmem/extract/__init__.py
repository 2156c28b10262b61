"""Extraction: spaCy pipeline loading, entity normalisation and resolution, relation extraction."""
