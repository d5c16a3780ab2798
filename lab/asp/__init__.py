"""clingo's minimal rework with partial moves (partial.lp), compared with the moved-set search; measured by
`python -m lab partial --asp`, not a registered planner."""
