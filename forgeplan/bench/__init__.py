"""FORGE-Bench-shaped benchmark: composition plan, generation with proven references, storage, stats."""
