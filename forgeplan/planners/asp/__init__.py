"""clingo: the task rendered as ASP facts, and the solve control that proves plans minimal."""
