"""Draw an assembly as coloured voxels (matplotlib, Agg) so that a person can see what it is.

One colour per part, a legend with the part ids, lock parts outlined in black and labelled with
their mechanism. The exploded view slides every part out along the direction it leaves the
assembly, beyond everything removed after it, which shows the parts hidden inside (burr cores,
nested boxes, bearings under a hub); burrs that come apart only in groups explode group by group.
"""

from __future__ import annotations

from pathlib import Path

from .assembly import DIRECTION_VECTORS, Assembly, Part
from .errors import AssemblyError, InputError
from .geometry import blocking_relation
from .graphs import blocking_depth, disassembly_layers
from .groups import disassemble

Voxel = tuple[int, int, int]


def exploded_voxels(asm: Assembly) -> dict[str, frozenset[Voxel]]:
    """Each part's voxels moved out along its removal direction, clear of the parts removed later.

    Assemblies that come apart only with group moves are exploded along their two-handed
    disassembly instead (`_exploded_by_groups`).
    """
    try:
        layers = disassembly_layers(asm)
    except AssemblyError:
        return _exploded_by_groups(asm)
    blocked: dict[tuple[str, str], set[str]] = {}
    for d, edges in blocking_relation(asm).items():
        for b, p in edges:
            blocked.setdefault((p, d), set()).add(b)
    placed: set[Voxel] = set()
    out: dict[str, frozenset[Voxel]] = {}
    present: set[str] = set()
    for layer in reversed(layers):  # innermost first; it stays where it is
        present |= set(layer)
        for pid in layer:
            part = asm.part(pid)
            d = next(d for d in part.removal_dirs if not blocked.get((pid, d), set()) & present)
            out[pid] = _slide_clear(part, d, placed) if placed else part.voxels
        placed.update(v for pid in layer for v in out[pid])
    return out


def _exploded_by_groups(asm: Assembly) -> dict[str, frozenset[Voxel]]:
    """Replay `groups.disassemble`: each separated group slides along its direction until a one-voxel
    gap opens between it and the rest of its subassembly, carrying its members' later moves along."""
    shapes = {p.part_id: p.voxels for p in asm.parts}
    components = [frozenset(asm.part_ids)]
    for step in disassemble(asm).steps:
        moved = frozenset(step.move)
        comp = next(c for c in components if moved <= c)
        rest = {v for pid in comp - moved for v in shapes[pid]}
        group = Part("group", "group", frozenset(v for pid in moved for v in shapes[pid]))
        slid = _slide_clear(group, step.direction, rest)
        shift = tuple(a - b for a, b in zip(min(slid), min(group.voxels)))
        for pid in moved:
            shapes[pid] = frozenset(tuple(v[i] + shift[i] for i in range(3)) for v in shapes[pid])  # type: ignore[misc]
        components.remove(comp)
        components += [comp - moved, moved]
    return shapes


def _slide_clear(part: Part, direction: str, placed: set[Voxel]) -> frozenset[Voxel]:
    """The part translated along `direction` until a one-voxel gap separates it from `placed`."""
    step = DIRECTION_VECTORS[direction]
    axis = next(i for i in range(3) if step[i])
    sign = step[axis]
    if sign > 0:
        dist = max(v[axis] for v in placed) - min(v[axis] for v in part.voxels) + 2
    else:
        dist = max(v[axis] for v in part.voxels) - min(v[axis] for v in placed) + 2
    dist = max(dist, 0)
    return frozenset(tuple(v[i] + step[i] * dist for i in range(3)) for v in part.voxels)  # type: ignore[misc]


def _lock_label(part: Part) -> str:
    lk = part.lock
    if lk is None:
        return part.part_id
    if lk.kind == "rotate":
        return f"{part.part_id}  [LOCK rotate {lk.axis} {lk.angle_deg:g} deg]"
    return f"{part.part_id}  [LOCK coupled]"


def render_assembly(asm: Assembly, out: Path, *, exploded: bool = False, elev: float = 22.0,
                    azim: float = 55.0, dpi: int = 110) -> Path:
    """Write a PNG of `asm` to `out` (y is drawn up) and return the path."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np
    from matplotlib.patches import Patch

    shapes = exploded_voxels(asm) if exploded else {p.part_id: p.voxels for p in asm.parts}
    every = [v for vox in shapes.values() for v in vox]
    lo = [min(v[i] for v in every) for i in range(3)]
    hi = [max(v[i] for v in every) for i in range(3)]
    nx, ny, nz = (hi[i] - lo[i] + 1 for i in range(3))
    # plot axes (x, -z, y): a proper rotation that puts the scene's y axis up
    filled = np.zeros((nx, nz, ny), dtype=bool)
    faces = np.zeros((nx, nz, ny, 4))
    edges = np.zeros((nx, nz, ny, 4))
    cmap = plt.get_cmap("tab20")
    handles = []
    for k, part in enumerate(asm.parts):
        colour = np.array(cmap(k % 20))
        if k >= 20:
            colour[:3] = 1 - 0.6 * (1 - colour[:3])  # lighter shades once tab20 wraps
        edge = np.array([0, 0, 0, 1.0]) if part.lock else np.append(colour[:3] * 0.55, 0.6)
        for x, y, z in shapes[part.part_id]:
            idx = (x - lo[0], hi[2] - z, y - lo[1])
            filled[idx] = True
            faces[idx] = colour
            edges[idx] = edge
        handles.append(Patch(facecolor=colour, edgecolor="black" if part.lock else edge,
                             linewidth=2.0 if part.lock else 0.5, hatch="//" if part.lock else None,
                             label=_lock_label(part)))
    fig = plt.figure(figsize=(10, 6.5), dpi=dpi)
    ax = fig.add_axes((0.0, 0.0, 0.6, 0.92), projection="3d")
    ax.voxels(filled, facecolors=faces, edgecolors=edges, linewidth=0.4)
    ax.set_box_aspect((nx, nz, ny))
    ax.view_init(elev=elev, azim=azim)
    ax.set_axis_off()
    view = "exploded" if exploded else "assembled"
    n_locks = len(asm.locks)
    fig.suptitle(f"{asm.assembly_id} ({asm.family}) - {len(asm.parts)} parts, {n_locks} lock{'' if n_locks == 1 else 's'}, "
                 f"blocking depth {blocking_depth(asm)}, {view}", fontsize=11)
    fig.legend(handles=handles, loc="center left", bbox_to_anchor=(0.6, 0.5), fontsize=7.5, frameon=False,
               title="parts (black outline = lock)", title_fontsize=8)
    try:
        fig.savefig(out)
    except OSError as exc:
        raise InputError(f"cannot write the picture: {exc.strerror}", file=str(out)) from None
    finally:
        plt.close(fig)
    return out
