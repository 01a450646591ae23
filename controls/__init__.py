"""Deliberately broken variants of the minimal implementation; the suite must catch every one."""
