"""Helpers shared by every test area: the CLI as a real process, and where the reference data lives.

Area-specific fakes and builders stay beside their tests; anything two areas need lives here, once.
"""
