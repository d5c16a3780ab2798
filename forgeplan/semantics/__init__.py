"""The symbolic semantics (encodings/SEMANTICS.md): the engine, the task, the grounded task, legal actions, diagnosis, closure, faults."""
