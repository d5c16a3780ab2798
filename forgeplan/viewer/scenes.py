"""What the page's own renderer draws: an assembly once (faces, colours, labels), then states as poses.

An assembly: per part its id, short label, colour (pictures.colours: touching parts differ), centroid and
the faces it shows of its own voxels, as flat integer lists [x, y, z, direction, ...]. A state: per part
null (absent) or [tx, ty, tz] plus a 3x3 rotation when it is turned (pictures.states.pose, the exploded
shift of the assembly's look included), rounded to 3 decimals. The page's script turns, moves, lights
and depth-sorts the faces on a canvas when a sample is opened.
"""

from __future__ import annotations

from ..model.assembly import Assembly
from ..model.state import State
from ..pictures.faces import NORMALS
from ..pictures.states import Look, choose_look, pose
from ..semantics.engine import World


def assembly_scene(asm: Assembly) -> tuple[dict, Look]:
    """The page's data of an assembly, and the look (colours, labels, camera, exploded shifts) it uses."""
    look = choose_look(asm)
    parts = []
    for p in asm.parts:
        vox = p.voxels
        faces = [c for v in sorted(vox) for k, n in enumerate(NORMALS)
                 if (v[0] + n[0], v[1] + n[1], v[2] + n[2]) not in vox for c in (*v, k)]
        parts.append({"id": p.part_id, "label": look.labels[p.part_id], "colour": look.colours[p.part_id],
                      "centroid": list(p.centroid), "faces": faces, "lock": p.lock is not None,
                      "shift": list(look.shifts.get(p.part_id, (0, 0, 0)))})
    return {"id": asm.assembly_id, "elev": look.elev, "azim": look.azim, "exploded": look.exploded,
            "parts": parts}, look


def state_poses(world: World, state: State, look: Look) -> list:
    """Per part: null when absent, else [tx, ty, tz] or [tx, ty, tz, r00, r01, ..., r22] when turned."""
    out: list = []
    for i, slot in enumerate(state.slots):
        if not slot.present:
            out.append(None)
            continue
        rot, move = pose(world, i, slot)
        shift = look.shifts.get(world.ids[i], (0, 0, 0))
        pos = [round(move[k] + shift[k], 3) for k in range(3)]
        turned = any(abs(rot[r][c] - (r == c)) > 1e-6 for r in range(3) for c in range(3))
        out.append(pos + ([round(float(x), 4) for x in rot.flatten()] if turned else []))
    return out
