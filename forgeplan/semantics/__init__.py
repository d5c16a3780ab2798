"""The symbolic semantics (encodings/SEMANTICS.md): the engine, the task, grounding, diagnosis, closure, faults."""
