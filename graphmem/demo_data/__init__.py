"""Bundled example corpus for ``graphmem demo`` (see README.md in this folder)."""
