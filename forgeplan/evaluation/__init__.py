"""Scoring model outputs on a benchmark: per-sample records, FORGE/MAGAR metrics, report, baselines."""
