"""Size limits of the assembly model (how large an assembly or an imported puzzle may be, and its numbers) and
the memory budget of the partial-move cross-check.

Untrusted files are refused beyond them (forgeplan.io.guarded reads the files; the schemas and the
importers check these bounds); docs/limits.md lists the same numbers.
"""

MAX_VOXELS = 100_000             # voxels of one assembly or imported puzzle (and filled grid cells)
MAX_GRID_CELLS = 1_000_000       # cells of one BurrTools shape grid
MAX_PARTS = 200                  # parts of one assembly / pieces of one puzzle problem
MAX_COORD = 1_000_000            # |position|, |voxel coordinate|, |seated| in scene units
MAX_ANGLE = 1_000_000            # |angle| in degrees
MAX_LOCK_ANGLE = 360            # |a rotate lock's unlock turn| and |a coupled lock's unlock rotation| per axis, in degrees
MIN_LOCK_ANGLE = 1e-6           # a lock's unlock turn is not zero
MAX_POS_TOL = 0.5               # pos_tol < half a voxel edge: a part one voxel off is always misplaced
MAX_ROT_TOL = 45                # rot_tol_deg < half the smallest cube turn: a quarter turn is always a mistake
CHECK_MEMORY_MB = 1_000          # resident megabytes of the partial-move cross-check's clingo (grounding and search)
