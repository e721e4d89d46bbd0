"""Hardening suite: fuzzing, crash safety, abuse, auth, faults, a short load run."""
