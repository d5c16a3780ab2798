"""Small voxel-shape vocabulary for the library builders."""

from __future__ import annotations

from ..assembly import DIRECTIONS, LockMechanism, Part, Pose

Voxels = frozenset[tuple[int, int, int]]


def box(x0: int, y0: int, z0: int, x1: int, y1: int, z1: int) -> Voxels:
    """Unit voxels filling [x0,x1) x [y0,y1) x [z0,z1)."""
    return frozenset((x, y, z) for x in range(x0, x1) for y in range(y0, y1) for z in range(z0, z1))


def ring(x0: int, y0: int, z0: int, size: int, height: int = 1) -> Voxels:
    """A square ring in the xz-plane: a size x size frame with the inner (size-2)^2 removed."""
    return box(x0, y0, z0, x0 + size, y0 + height, z0 + size) - box(x0 + 1, y0, z0 + 1, x0 + size - 1, y0 + height, z0 + size - 1)


def part(part_id: str, kind: str, voxels: Voxels, *, dirs: tuple[str, ...] = DIRECTIONS,
         supports: tuple[str, ...] = (), lock: LockMechanism | None = None) -> Part:
    return Part(part_id, kind, frozenset(voxels), lock, tuple(dirs), tuple(supports))


def rotate_lock(holds: tuple[str, ...], axis: str, angle_deg: float) -> LockMechanism:
    return LockMechanism("rotate", tuple(holds), axis=axis, angle_deg=float(angle_deg))


def coupled_lock(holds: tuple[str, ...], offset: tuple[float, float, float], rotation: tuple[float, float, float]) -> LockMechanism:
    return LockMechanism("coupled", tuple(holds), unlocked_offset=Pose(tuple(map(float, offset)), tuple(map(float, rotation))))  # type: ignore[arg-type]
