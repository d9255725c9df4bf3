"""Checks of the built site in a real browser (``python -m tests.site.check_site``)."""
