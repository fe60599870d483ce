"""Hand-authored data: the shape catalog (shapes.json) and per-model curated facts under <model>/."""
