"""The moved-set search of partial moves (SEMANTICS.md §9) and the exact arguments that prove its optimum:
`search` (the search over moved sets), `reach` (which moved sets have a plan), `bounds` (lower bounds),
`mirror` (the mirror argument), `engine_search` (no engine plan shorter), `actions` (the fewest actions),
`solve` (the registered planner)."""
