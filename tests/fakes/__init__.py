"""Test doubles that run for real on the loopback interface (no network)."""

from __future__ import annotations
