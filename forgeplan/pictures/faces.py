"""A face renderer for voxel bodies (matplotlib, one polygon collection): fast, and free to turn and shift parts.

A body is a part's voxels under a rigid motion (a rotation about its centroid, then a translation, in
scene units: one voxel edge). Only the faces a body shows are drawn: faces between two of its own voxels
never, faces against a voxel of another body at the same place neither, faces turned away from the
camera neither. The faces are lit from above the camera and depth-sorted in one collection, which is
much cheaper than a collection per voxel. Scene axes (x, y, z) are drawn as plot axes (x, -z, y): y up.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

LIGHT_ALTITUDE = 65.0   # degrees above the horizon, at the camera's azimuth
NORMALS = np.array([(1, 0, 0), (-1, 0, 0), (0, 1, 0), (0, -1, 0), (0, 0, 1), (0, 0, -1)])
# the four corners of each face of the unit cube [0,1]^3, in the order of NORMALS
CORNERS = np.array([
    [(1, 0, 0), (1, 1, 0), (1, 1, 1), (1, 0, 1)], [(0, 0, 0), (0, 0, 1), (0, 1, 1), (0, 1, 0)],
    [(0, 1, 0), (0, 1, 1), (1, 1, 1), (1, 1, 0)], [(0, 0, 0), (1, 0, 0), (1, 0, 1), (0, 0, 1)],
    [(0, 0, 1), (1, 0, 1), (1, 1, 1), (0, 1, 1)], [(0, 0, 0), (0, 1, 0), (1, 1, 0), (1, 0, 0)],
], dtype=float)
TO_PLOT = np.array([[1, 0, 0], [0, 0, -1], [0, 1, 0]], dtype=float)   # scene (x, y, z) -> plot (x, -z, y)


@dataclass
class Body:
    """One part as drawn: its voxels, colour, label and motion; `edge` and `width` its outline (a faulty
    part is outlined in red), `ghost` a part drawn as a faint outline only (missing from the state)."""

    part_id: str
    voxels: frozenset
    colour: str
    label: str
    rotation: np.ndarray = field(default_factory=lambda: np.eye(3))
    translation: tuple[float, float, float] = (0.0, 0.0, 0.0)
    edge: str | None = None
    width: float = 0.4
    ghost: bool = False
    label_colour: str = "black"

    def centres(self) -> np.ndarray:
        """The scene coordinates of the voxel centres after the motion."""
        v = np.array(sorted(self.voxels), dtype=float) + 0.5
        c = v.mean(axis=0)
        return (v - c) @ self.rotation.T + c + np.array(self.translation)


def eye(elev: float, azim: float) -> np.ndarray:
    """Unit vector towards a camera at (elev, azim), in plot axes."""
    e, a = np.radians(elev), np.radians(azim)
    return np.array([np.cos(e) * np.cos(a), np.cos(e) * np.sin(a), np.sin(e)])


def light(azim: float) -> np.ndarray:
    alt, a = np.radians(LIGHT_ALTITUDE), np.radians(azim)
    return np.array([np.cos(alt) * np.cos(a), np.cos(alt) * np.sin(a), np.sin(alt)])


def _keys(points: np.ndarray) -> np.ndarray:
    """Points on the half-voxel lattice as integers (doubled, rounded), for set lookups."""
    d = np.round(points * 2).astype(np.int64) + (1 << 20)
    return (d[:, 0] << 42) | (d[:, 1] << 21) | d[:, 2]


def _exposed(vox: np.ndarray) -> list[np.ndarray]:
    """Per face direction, the mask of voxels whose neighbour that way is not one of the body's own."""
    own = _keys(vox.astype(float))
    return [~np.isin(_keys((vox + n).astype(float)), own) for n in NORMALS]


def contains(sorted_keys: np.ndarray, keys: np.ndarray) -> np.ndarray:
    """Which of `keys` are in `sorted_keys` (ascending): a binary search each, so that a large assembly's
    occupied cells are sorted once instead of hashed again for every face direction of every part."""
    if not len(sorted_keys):
        return np.zeros(len(keys), dtype=bool)
    at = np.minimum(np.searchsorted(sorted_keys, keys), len(sorted_keys) - 1)
    return sorted_keys[at] == keys


def body_faces(body: Body, occupied: np.ndarray, view: np.ndarray):
    """The body's visible faces in plot axes: (corners (m, 4, 3), unit normals (m, 3)); `occupied`: the
    keys of every voxel centre, sorted."""
    vox = np.array(sorted(body.voxels), dtype=np.int64)
    centre = vox.mean(axis=0) + 0.5
    move = np.array(body.translation)
    quads, normals = [], []
    for k, mask in enumerate(_exposed(vox)):
        if not mask.any():
            continue
        n_scene = body.rotation @ NORMALS[k]
        n_plot = TO_PLOT @ n_scene
        if n_plot @ view <= 1e-9:
            continue
        corners = (vox[mask][:, None, :] + CORNERS[k][None, :, :] - centre) @ body.rotation.T + centre + move
        if not body.ghost and len(occupied):
            outside = corners.mean(axis=1) + 0.5 * n_scene
            keep = ~contains(occupied, _keys(outside))
            corners = corners[keep]
        quads.append(corners @ TO_PLOT.T)
        normals.append(np.repeat(n_plot[None, :], len(corners), axis=0))
    if not quads:
        return np.zeros((0, 4, 3)), np.zeros((0, 3))
    return np.concatenate(quads), np.concatenate(normals)


def draw_bodies(ax, bodies: list[Body], elev: float, azim: float, limits=None, zoom: float = 1.0) -> None:
    """Draw the bodies into a 3D axes from (elev, azim), with their labels; `limits` ((lo, hi) in plot
    axes) fixes the box, so that pictures of one assembly share a scale; `zoom` enlarges the box in its axes."""
    from matplotlib.colors import to_rgba
    from mpl_toolkits.mplot3d.art3d import Poly3DCollection

    view, sun = eye(elev, azim), light(azim)
    occupied = np.sort(np.concatenate([_keys(b.centres()) for b in bodies if not b.ghost] or [np.zeros(0, np.int64)]))
    polys, faces, edges, widths, owner = [], [], [], [], []
    for k, b in enumerate(bodies):
        quads, normals = body_faces(b, occupied, view)
        base = np.array(to_rgba(b.colour))
        shade = 0.45 + 0.55 * np.clip(normals @ sun, 0.0, 1.0)
        rgba = np.repeat(base[None, :], len(quads), axis=0)
        rgba[:, :3] *= shade[:, None]
        if b.ghost:
            rgba[:, 3] = 0.12
        edge = to_rgba(b.edge) if b.edge else tuple(base[:3] * 0.5) + (0.7,)
        polys.append(quads)
        faces.append(rgba)
        edges += [edge] * len(quads)
        widths += [b.width] * len(quads)
        owner += [k] * len(quads)
    verts = np.concatenate(polys) if polys else np.zeros((0, 4, 3))
    if len(verts):
        ax.add_collection3d(Poly3DCollection(list(verts), facecolors=np.concatenate(faces), edgecolors=edges,
                                             linewidths=widths))
    lo, hi = limits if limits is not None else plot_limits(bodies)
    ax.set_xlim(lo[0], hi[0])
    ax.set_ylim(lo[1], hi[1])
    ax.set_zlim(lo[2], hi[2])
    ax.set_box_aspect(tuple(np.maximum(hi - lo, 1e-3)), zoom=zoom)
    ax.view_init(elev=elev, azim=azim)
    ax.set_axis_off()
    _labels(ax, bodies, view, verts, np.array(owner, dtype=int))


def plot_limits(bodies: list[Body]) -> tuple[np.ndarray, np.ndarray]:
    """The plot-axes box around every body (a voxel's half width around its centre)."""
    pts = np.concatenate([b.centres() @ TO_PLOT.T for b in bodies]) if bodies else np.zeros((1, 3))
    return pts.min(axis=0) - 0.5, pts.max(axis=0) + 0.5


def face_samples(verts: np.ndarray) -> np.ndarray:
    """Five points of each face (its centre and four points towards its corners), (m, 5, 3)."""
    centre = verts.mean(axis=1, keepdims=True)
    return np.concatenate([centre, centre + 0.6 * (verts - centre)], axis=1)


def front_points(centres: np.ndarray, view: np.ndarray, cell: float = 0.25) -> np.ndarray:
    """Which points are seen: a depth buffer over screen cells of `cell` units, the nearest point wins."""
    if not len(centres):
        return np.zeros(0, dtype=bool)
    u = np.cross(view, [0.0, 0.0, 1.0]) if abs(view[2]) < 0.99 else np.array([1.0, 0.0, 0.0])
    u /= np.linalg.norm(u)
    w = np.cross(view, u)
    cells = np.floor(np.stack([centres @ u, centres @ w], axis=1) / cell).astype(np.int64)
    order = np.lexsort((-(centres @ view), cells[:, 1], cells[:, 0]))   # per cell, nearest first
    c = cells[order]
    first = np.ones(len(order), dtype=bool)
    first[1:] = np.any(c[1:] != c[:-1], axis=1)
    seen = np.zeros(len(centres), dtype=bool)
    seen[order[first]] = True
    return seen


def _labels(ax, bodies: list[Body], view: np.ndarray, verts: np.ndarray, face_owner: np.ndarray) -> None:
    """Each body's label in a small white box on its seen point nearest the middle of its seen points (on
    its voxel nearest the camera when none of it is seen)."""
    centres = face_samples(verts).reshape(-1, 3) if len(verts) else np.zeros((0, 3))
    owner = np.repeat(face_owner, 5)
    seen = front_points(centres, view)
    for k, b in enumerate(bodies):
        if not b.label:
            continue
        mine = centres[(owner == k) & seen]
        if len(mine):
            p = mine[np.argmin(np.linalg.norm(mine - mine.mean(axis=0), axis=1))] + 0.2 * view
        else:
            pts = b.centres() @ TO_PLOT.T
            p = pts[np.argmax(pts @ view)] + 0.6 * view
        ax.text(p[0], p[1], p[2], b.label, fontsize=7, color=b.label_colour, ha="center", va="center", zorder=100,
                bbox={"boxstyle": "round,pad=0.15", "facecolor": "white", "edgecolor": b.edge or "none",
                      "alpha": 0.85, "linewidth": 0.8})
