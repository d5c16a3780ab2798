"""Plain data: assemblies, symbolic states, actions, rotations and the errors; imports nothing else of forgeplan."""
