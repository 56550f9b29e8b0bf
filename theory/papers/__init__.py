"""Encoded claims, one subpackage per paper (statements, not training loops)."""
