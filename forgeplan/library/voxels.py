"""Small voxel-shape vocabulary for the library builders.

Every built-in part is composed from these boxes, frames and shells, so that a shape reads as its
physical description ("a 5x5 frame one voxel tall") and the blocking and contact graphs follow from
the shapes instead of being typed.
"""

from __future__ import annotations

from ..model.assembly import DIRECTIONS, LockMechanism, Part, Pose

Voxels = frozenset[tuple[int, int, int]]
AXIS = {"x": 0, "y": 1, "z": 2}
UP = ("+y",)                                   # lifted off whatever it rests on
NOT_DOWN = ("+x", "-x", "+y", "+z", "-z")     # standing on a table or the floor


def box(x0: int, y0: int, z0: int, x1: int, y1: int, z1: int) -> Voxels:
    """Unit voxels filling [x0,x1) x [y0,y1) x [z0,z1)."""
    return frozenset((x, y, z) for x in range(x0, x1) for y in range(y0, y1) for z in range(z0, z1))


def ring(x0: int, y0: int, z0: int, size: int, height: int = 1) -> Voxels:
    """A square ring in the xz-plane: a size x size frame with the inner (size-2)^2 removed."""
    return box(x0, y0, z0, x0 + size, y0 + height, z0 + size) - box(x0 + 1, y0, z0 + 1, x0 + size - 1, y0 + height, z0 + size - 1)


def frame(lo: tuple[int, int, int], hi: tuple[int, int, int], axis: str, width: int = 1) -> Voxels:
    """The box [lo, hi) with a through hole along `axis`, leaving walls `width` thick around it."""
    a = AXIS[axis]
    hole_lo = [c + (0 if k == a else width) for k, c in enumerate(lo)]
    hole_hi = [c - (0 if k == a else width) for k, c in enumerate(hi)]
    return box(*lo, *hi) - box(*hole_lo, *hole_hi)


def shell(lo: tuple[int, int, int], hi: tuple[int, int, int], open_side: str = "+y") -> Voxels:
    """An open box: the box [lo, hi) hollowed out, one wall thick, open on `open_side` (e.g. a drawer)."""
    a = AXIS[open_side[1]]
    inner_lo = [c + 1 for c in lo]
    inner_hi = [c - 1 for c in hi]
    if open_side[0] == "+":
        inner_hi[a] = hi[a]
    else:
        inner_lo[a] = lo[a]
    return box(*lo, *hi) - box(*inner_lo, *inner_hi)


def union(*shapes: Voxels) -> Voxels:
    return frozenset().union(*shapes)


def carve(shape: Voxels, *holes: Voxels) -> Voxels:
    """`shape` with every voxel of `holes` removed (notches, mortises, grooves, bores)."""
    return shape.difference(*holes)


def shift(shape: Voxels, dx: int = 0, dy: int = 0, dz: int = 0) -> Voxels:
    return frozenset((x + dx, y + dy, z + dz) for x, y, z in shape)


def part(part_id: str, kind: str, voxels: Voxels, *, dirs: tuple[str, ...] = DIRECTIONS,
         supports: tuple[str, ...] = (), lock: LockMechanism | None = None) -> Part:
    return Part(part_id, kind, frozenset(voxels), lock, tuple(dirs), tuple(supports))


def rotate_lock(holds: tuple[str, ...], axis: str, angle_deg: float) -> LockMechanism:
    return LockMechanism("rotate", tuple(holds), axis=axis, angle_deg=float(angle_deg))


def coupled_lock(holds: tuple[str, ...], offset: tuple[float, float, float], rotation: tuple[float, float, float]) -> LockMechanism:
    return LockMechanism("coupled", tuple(holds), unlocked_offset=Pose(tuple(map(float, offset)), tuple(map(float, rotation))))  # type: ignore[arg-type]  # map over three coordinates gives a Vec


def part_id(assembly: str, number: int, kind: str) -> str:
    """FORGE-style part id: `<CamelAssembly>_PartNN_<Kind>`."""
    return f"{assembly}_Part{number:02d}_{kind}"
