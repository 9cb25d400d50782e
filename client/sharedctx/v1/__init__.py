"""Generated protocol code (scripts/gen_protos.py)."""
