"""PDDL: the task as a unified-planning problem (lifted and grounded), Fast Downward, file export/import."""
