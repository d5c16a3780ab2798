"""Voxel geometry: blocking/contact/symmetry relations, straight-move separation, graphs, geometry checks."""
