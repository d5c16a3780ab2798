"""Draw an assembly as coloured voxels (matplotlib, Agg) so that a person can see what it is.

Touching parts in different colours (pictures.colours), a short label on every part and a legend with
the part ids, lock parts outlined in black and labelled with their mechanism. The exploded view slides every part out along the direction it leaves the
assembly, beyond everything removed after it, which shows the parts hidden inside (burr cores,
nested boxes, bearings under a hub); burrs that come apart only in groups explode group by group,
and an interlocked puzzle along its disassembly with partial moves (slides, then the separations).

Unless a camera is given, the picture uses the camera (of a few standard views) that shows the most
parts, and switches to the exploded view when no camera shows every part of the assembled one.
Faces are lit from above the camera, so the tops of the parts show their legend colour.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .geometry.graphs import blocking_depth, disassembly_layers
from .geometry.relations import blocking_relation
from .geometry.separation import disassemble
from .model.assembly import DIRECTION_VECTORS, Assembly, Part
from .io.output import write_file
from .model.errors import AssemblyError

Voxel = tuple[int, int, int]


def exploded_voxels(asm: Assembly) -> dict[str, frozenset[Voxel]]:
    """Each part's voxels moved out along its removal direction, clear of the parts removed later.

    Assemblies that come apart only with group moves are exploded along their two-handed
    disassembly instead (`_exploded_by_groups`), and those that straight moves do not take apart along
    their disassembly with partial moves (`_exploded_by_partial_moves`).
    """
    try:
        layers = disassembly_layers(asm)
    except AssemblyError:
        if not disassemble(asm).complete:
            return _exploded_by_partial_moves(asm)
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
            shapes[pid] = frozenset(tuple(v[i] + shift[i] for i in range(3)) for v in shapes[pid])  # type: ignore[misc]  # a tuple over range(3) is a Voxel
        components.remove(comp)
        components += [comp - moved, moved]
    return shapes


def _exploded_by_partial_moves(asm: Assembly) -> dict[str, frozenset[Voxel]]:
    """Replay the disassembly with partial moves (geometry.partial, within the budget a task load has):
    slides move their parts, and a group that leaves slides on until a one-voxel gap opens between it and
    every other part; each half then comes apart the same way. Sets the search leaves stuck stay together."""
    from .geometry.partial import LOAD_POSITIONS, Budget, budgeted_tree

    shapes = {p.part_id: p.voxels for p in asm.parts}

    def shift(pids, vec) -> None:
        for pid in pids:
            shapes[pid] = frozenset((x + vec[0], y + vec[1], z + vec[2]) for x, y, z in shapes[pid])

    def explode(node) -> None:
        if node is None or not node.moves:
            return
        for m in node.moves:
            step = DIRECTION_VECTORS[m.direction]
            if m.distance is not None:
                shift(m.parts, tuple(c * m.distance for c in step))
                continue
            group = Part("group", "group", frozenset(v for pid in m.parts for v in shapes[pid]))
            rest = {v for pid, vox in shapes.items() if pid not in m.parts for v in vox}
            slid = _slide_clear(group, m.direction, rest)
            shift(m.parts, tuple(a - b for a, b in zip(min(slid), min(group.voxels))))
        explode(node.left)
        explode(node.removed)

    explode(budgeted_tree(asm, Budget(LOAD_POSITIONS)))
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
    return frozenset(tuple(v[i] + step[i] * dist for i in range(3)) for v in part.voxels)  # type: ignore[misc]  # a tuple over range(3) is a Voxel


CAMERAS = [(22.0, 55.0)] + [(e, a) for e in (25.0, 60.0, -25.0) for a in (45.0, 135.0, 225.0, 315.0)]
MIN_VISIBLE_CELLS = 9   # a part counts as visible when it owns this many depth-buffer cells (about one voxel face)


def _plot_voxels(shapes: dict[str, frozenset[Voxel]]) -> tuple[dict[str, list[Voxel]], tuple[int, int, int]]:
    """Voxels in plot axes (x, -z, y), which put the scene's y axis up, shifted to start at 0; and the grid size."""
    every = [v for vox in shapes.values() for v in vox]
    lo = [min(v[i] for v in every) for i in range(3)]
    hi = [max(v[i] for v in every) for i in range(3)]
    out = {pid: [(x - lo[0], hi[2] - z, y - lo[1]) for x, y, z in vox] for pid, vox in shapes.items()}
    return out, (hi[0] - lo[0] + 1, hi[2] - lo[2] + 1, hi[1] - lo[1] + 1)


def _eye(elev: float, azim: float):
    import numpy as np

    e, a = np.radians(elev), np.radians(azim)
    return np.array([np.cos(e) * np.cos(a), np.cos(e) * np.sin(a), np.sin(e)])


def visible_parts(plot: dict[str, list[Voxel]], elev: float, azim: float) -> set[str]:
    """The parts a camera at (elev, azim) sees: an orthographic depth buffer over sample points of the
    exposed faces that turn towards the camera (numpy throughout: an assembly at the size limit has
    100,000 voxels). Of two samples at one depth in a cell, the earlier part in `plot` wins."""
    import numpy as np

    eye = _eye(elev, azim)
    u = np.cross(eye, [0.0, 0.0, 1.0]) if abs(eye[2]) < 0.99 else np.array([1.0, 0.0, 0.0])
    u /= np.linalg.norm(u)
    w = np.cross(eye, u)
    names = list(plot)
    vox = np.array([v for pid in names for v in plot[pid]], dtype=np.int64).reshape(-1, 3)
    who = np.repeat(np.arange(len(names)), [len(plot[pid]) for pid in names])
    keys = _lattice_keys(vox)
    taken = np.sort(keys)
    cells, depths, owners = [], [], []
    for axis in range(3):
        for sign in (1, -1):
            if eye[axis] * sign <= 0:
                continue
            step = np.zeros(3, dtype=np.int64)
            step[axis] = sign
            near = _lattice_keys(vox + step)
            at = np.minimum(np.searchsorted(taken, near), len(taken) - 1)
            open_ = taken[at] != near
            centre = vox[open_] + 0.5 + 0.5 * step
            t1, t2 = [np.eye(3)[i] for i in range(3) if i != axis]
            for a, b in [(a, b) for a in (-0.3, 0.0, 0.3) for b in (-0.3, 0.0, 0.3)]:
                pt = centre + a * t1 + b * t2
                cells.append(np.stack([np.floor(pt @ u / 0.25), np.floor(pt @ w / 0.25)], axis=1).astype(np.int64))
                depths.append(pt @ eye)
                owners.append(who[open_])
    if not cells:
        return set()
    cell, depth, owner = np.concatenate(cells), np.concatenate(depths), np.concatenate(owners)
    order = np.lexsort((owner, -depth, cell[:, 1], cell[:, 0]))   # per cell: deepest towards the camera first
    cell, owner = cell[order], owner[order]
    first = np.ones(len(cell), dtype=bool)
    first[1:] = np.any(cell[1:] != cell[:-1], axis=1)
    counts = np.bincount(owner[first], minlength=len(names))
    return {names[k] for k in np.flatnonzero(counts >= MIN_VISIBLE_CELLS)}


def _lattice_keys(vox):
    """Integer voxels (within ±2^20 after a step, as the position limit keeps them) as one int64 each."""
    d = vox + (1 << 20)
    return (d[:, 0] << 42) | (d[:, 1] << 21) | d[:, 2]


def best_camera(plot: dict[str, list[Voxel]]) -> tuple[tuple[float, float], int]:
    """The camera of CAMERAS that shows the most parts (the first on a tie) and how many it shows."""
    scored = [(len(visible_parts(plot, *cam)), -k, cam) for k, cam in enumerate(CAMERAS)]
    n, _, cam = max(scored)
    return cam, n


def choose_view(asm: Assembly, exploded: bool | None, camera: tuple[float, float] | None):
    """(shapes, exploded, camera, parts seen): `exploded=None` explodes only when no camera sees every part."""
    modes = [exploded] if exploded is not None else [False, True]
    for mode in modes:
        shapes = exploded_voxels(asm) if mode else {p.part_id: p.voxels for p in asm.parts}
        plot, _ = _plot_voxels(shapes)
        cam, seen = (camera, len(visible_parts(plot, *camera))) if camera else best_camera(plot)
        if seen == len(asm.parts) or mode is modes[-1]:
            return shapes, mode, cam, seen
    raise AssertionError("unreachable")


@dataclass(frozen=True)
class Picture:
    """What `render_assembly` drew: the file, the view and how many parts the camera sees."""

    path: Path
    exploded: bool
    elev: float
    azim: float
    visible: int


def render_assembly(asm: Assembly, out: Path, *, exploded: bool | None = None, elev: float | None = None,
                    azim: float | None = None, dpi: int = 110) -> Picture:
    """Write a PNG of `asm` to `out` (y is drawn up). `exploded=None` and no camera: chosen automatically."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    camera = None if elev is None and azim is None else (22.0 if elev is None else elev, 55.0 if azim is None else azim)
    shapes, exploded, (elev, azim), seen = choose_view(asm, exploded, camera)
    fig = plt.figure(figsize=(10, 6.5), dpi=dpi)
    ax = fig.add_axes((0.0, 0.0, 0.6, 0.9), projection="3d")
    handles = _draw(ax, asm, shapes, elev, azim)
    _axis_marker(fig, elev, azim)
    n_locks = len(asm.locks)
    family = "" if asm.family == asm.assembly_id else f" ({asm.family})"
    try:
        depth = f", blocking depth {blocking_depth(asm)}"
    except AssemblyError:
        depth = ", interlocked"
    fig.suptitle(f"{asm.assembly_id}{family}: {len(asm.parts)} parts, {n_locks} lock{'' if n_locks == 1 else 's'}"
                 f"{depth}; {'exploded' if exploded else 'assembled'}, {seen} of {len(asm.parts)} parts in view",
                 fontsize=11)
    fig.legend(handles=handles, loc="center left", bbox_to_anchor=(0.6, 0.5), fontsize=7.5, frameon=False,
               title="parts: label, id (black outline = lock)" if n_locks else "parts: label, id", title_fontsize=8)
    try:
        with write_file(out, "wb") as fh:
            fig.savefig(fh, format="png")
    finally:
        plt.close(fig)
    return Picture(out, exploded, elev, azim, seen)


def assembly_bodies(asm: Assembly, shapes: dict[str, frozenset[Voxel]]) -> list:
    """The parts as bodies of the face renderer: touching parts in different colours, short labels, locks
    outlined in black."""
    from .pictures.colours import part_colours, short_labels
    from .pictures.faces import Body

    colours, labels = part_colours(asm), short_labels(asm.part_ids)
    return [Body(p.part_id, shapes[p.part_id], colours[p.part_id], labels[p.part_id],
                 edge="black" if p.lock else None, width=1.0 if p.lock else 0.4) for p in asm.parts]


def _draw(ax, asm: Assembly, shapes: dict[str, frozenset[Voxel]], elev: float, azim: float) -> list:
    """The parts, lit from above the camera and labelled; returns the legend handles."""
    from .pictures.colours import legend_entries, part_colours, short_labels
    from .pictures.faces import draw_bodies

    draw_bodies(ax, assembly_bodies(asm, shapes), elev, azim)
    return legend_entries(asm, part_colours(asm), short_labels(asm.part_ids))


def _axis_marker(fig, elev: float, azim: float) -> None:
    """A small x/y/z triad in the lower left corner, seen from the same camera (plot axes are x, -z, y)."""
    ax = fig.add_axes((0.01, 0.01, 0.13, 0.18), projection="3d")
    ax.set_facecolor((1, 1, 1, 0))   # see-through: a part drawn behind the triad stays visible
    for label, (dx, dy, dz), colour in (("x", (1, 0, 0), "#c00000"), ("y", (0, 0, 1), "#008000"),
                                        ("z", (0, -1, 0), "#0000c0")):
        ax.quiver(0, 0, 0, dx, dy, dz, color=colour, linewidth=1.5, arrow_length_ratio=0.25)
        ax.text(1.3 * dx, 1.3 * dy, 1.3 * dz, label, color=colour, fontsize=10, ha="center", va="center")
    ax.set_xlim(-1, 1)
    ax.set_ylim(-1, 1)
    ax.set_zlim(-1, 1)
    ax.set_box_aspect((1, 1, 1))
    ax.view_init(elev=elev, azim=azim)
    ax.set_axis_off()
