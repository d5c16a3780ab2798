"""Plan producers: the repair search, clingo (asp/), Fast Downward (pddl/) and their cross-check."""
