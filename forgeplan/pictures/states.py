"""A symbolic state as bodies to draw: where each part is, how it is turned, what is wrong with it.

A present part is drawn at its slot's pose: turned by the slot's rotation about its centroid, moved by
its position's distance from the target, its voxel offset (partial moves) and its remaining insertion
depth (`seated`, along its first removal direction); a disengaged rotate-lock turned by its unlock
angle. A wrong occupant (a spare) is drawn with the slot part's voxels. An absent part is left out, or,
when it is marked (a missing part), drawn as a faint red ghost at its target place. In an exploded
view every part also carries its exploded shift (render.exploded_voxels).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..model.assembly import DIRECTION_VECTORS, Assembly
from ..model.rotations import axis_matrix, euler_to_matrix
from ..model.state import State
from ..semantics.engine import World
from .colours import FAULT, part_colours, short_labels
from .faces import Body

MOVED = "#111111"   # outline of the parts the step just moved


@dataclass(frozen=True)
class Look:
    """How an assembly is drawn in every picture of one figure: colours, labels, camera, exploded shifts."""

    colours: dict
    labels: dict
    elev: float
    azim: float
    exploded: bool
    shifts: dict           # part id -> (dx, dy, dz) of the exploded view (zero when assembled)


def choose_look(asm: Assembly, exploded: bool | None = None, camera: tuple[float, float] | None = None) -> Look:
    """The look of the assembly's pictures: the camera and exploded choice of `show ASSEMBLY` (render.choose_view)."""
    from ..render import choose_view

    shapes, exploded_now, (elev, azim), _ = choose_view(asm, exploded, camera)
    shifts = {p.part_id: tuple(int(a - b) for a, b in zip(min(shapes[p.part_id]), min(p.voxels))) for p in asm.parts}
    return Look(part_colours(asm), short_labels(asm.part_ids), elev, azim, bool(exploded_now), shifts)


def pose(world: World, i: int, slot) -> tuple[np.ndarray, tuple[float, float, float]]:
    """The rotation (about the centroid) and translation that put part i where its slot says."""
    part = world.parts[i]
    rot = np.array(euler_to_matrix(slot.rotation))
    lock = part.lock
    if lock is not None and lock.kind == "rotate" and lock.axis is not None and lock.angle_deg is not None \
            and slot.locked is False:
        rot = np.array(axis_matrix(lock.axis, lock.angle_deg)) @ rot   # a rotate lock, turned open
    axis = DIRECTION_VECTORS[part.removal_dirs[0]] if part.removal_dirs else (0, 0, 0)
    move: tuple[float, float, float] = tuple(slot.position[k] - world.target_position[i][k] + slot.offset[k] + slot.seated * axis[k] for k in range(3))
    return rot, move


def state_bodies(world: World, state: State, look: Look, *, faulty: dict[str, str] | None = None,
                 moved=(), ghosts: bool = True) -> list[Body]:
    """The bodies of `state`: `faulty` (part id -> what is wrong) outlined and labelled in red, missing ones
    as ghosts (when `ghosts`); `moved` parts outlined dark."""
    faulty = faulty or {}
    out = []
    for i, part in enumerate(world.parts):
        pid, slot = part.part_id, state.slots[i]
        shift = look.shifts.get(pid, (0, 0, 0))
        label = look.labels[pid]
        if not slot.present:
            if ghosts and pid in faulty:
                out.append(Body(pid, part.voxels, FAULT, label, translation=(shift[0], shift[1], shift[2]),
                                edge=FAULT, width=1.2, ghost=True, label_colour=FAULT))
            continue
        rot, move = pose(world, i, slot)
        if slot.occupant != pid:
            label += "*"
        edge, width = ((FAULT, 1.8) if pid in faulty else (MOVED, 1.4) if pid in moved
                       else ("black", 1.0) if part.lock else (None, 0.4))
        out.append(Body(pid, part.voxels, look.colours[pid], label, rot,
                        (move[0] + shift[0], move[1] + shift[1], move[2] + shift[2]),
                        edge=edge, width=width, label_colour=FAULT if pid in faulty else "black"))
    return out
