"""Agreement statistics between a judge and people, pure numpy (one measure per module)."""
