"""Colours and labels of parts: touching parts never share a colour, every part has a short label.

The colours colour the graph of touching parts (a shared face, edge or corner) greedily (networkx,
DSATUR) over a qualitative palette without reds, which mark faults; the palette's unused colours then
split the colour classes, so that a small assembly shows each part in its own colour. A part keeps its
colour in every picture of an assembly. Labels are the part ids with the prefix they share cut off, or numbers when
those are still long, so that a picture can print them on the parts and a legend can say what they stand for.
"""

from __future__ import annotations

import colorsys
import os
import re

from ..geometry.relations import contact_relation
from ..model.assembly import Assembly

# tab10 without its red, then further hues of high contrast (no reds: red marks faults)
PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf",
           "#f3c300", "#a1caf1", "#008856", "#c2b280", "#604e97", "#f99379", "#0067a5", "#8db600", "#654522",
           "#dcd300", "#2b3d26")
FAULT = "#d62728"          # outlines, labels and frames of faulty parts and failing steps
MAX_LABEL = 6              # a label longer than this is replaced by a number


def neighbour_graph(asm: Assembly):
    """The parts as nodes (catalog order), an edge between two parts that touch: share a face (the
    contact relation), an edge or a corner (any two of their voxels are 26-neighbours)."""
    import networkx as nx

    g = nx.Graph()
    g.add_nodes_from(asm.part_ids)
    g.add_edges_from(contact_relation(asm))
    g.add_edges_from((asm.part_ids[a], asm.part_ids[b]) for a, b in _neighbouring(asm))
    return g


def _neighbouring(asm: Assembly) -> set[tuple[int, int]]:
    """Index pairs of parts with two voxels that are 26-neighbours (numpy: a binary search per voxel and
    direction, as an assembly at the size limit has 100,000 voxels)."""
    import numpy as np

    sizes = [len(p.voxels) for p in asm.parts]
    vox = np.array([v for p in asm.parts for v in sorted(p.voxels)], dtype=np.int64).reshape(-1, 3)
    who = np.repeat(np.arange(len(asm.parts)), sizes)
    keys = _voxel_keys(vox)
    order = np.argsort(keys, kind="stable")
    keys, who_sorted = keys[order], who[order]
    pairs: set[tuple[int, int]] = set()
    for step in [(dx, dy, dz) for dx in (-1, 0, 1) for dy in (-1, 0, 1) for dz in (-1, 0, 1) if (dx, dy, dz) > (0, 0, 0)]:
        near = _voxel_keys(vox + np.array(step))
        at = np.minimum(np.searchsorted(keys, near), len(keys) - 1)
        hit = (keys[at] == near) & (who_sorted[at] != who)
        pairs.update(zip(who[hit].tolist(), who_sorted[at][hit].tolist()))
    return pairs


def _voxel_keys(vox):
    """Integer voxels (within ±2^20 after a step, as the position limit keeps them) as one int64 each."""
    d = vox + (1 << 20)
    return (d[:, 0] << 42) | (d[:, 1] << 21) | d[:, 2]


def extra_colour(k: int) -> str:
    """The k-th colour past the palette: golden-angle hues away from red, lightness alternating."""
    hue = (0.08 + k * 0.381966) % 1.0
    hue = 0.08 + hue * 0.84                   # keep clear of red (hues near 0 and 1)
    light = (0.42, 0.62)[k % 2]
    r, g, b = colorsys.hls_to_rgb(hue, light, 0.65)
    return f"#{round(r * 255):02x}{round(g * 255):02x}{round(b * 255):02x}"


def part_colours(asm: Assembly) -> dict[str, str]:
    """Part id -> colour (#rrggbb); two parts that touch always get two different colours.

    A greedy colouring of the touching graph is proper with few colours; parts that share a colour class
    then take the palette's unused colours, in catalog order, while there are any (a colour nobody uses
    keeps the colouring proper), so that small assemblies show every part in a colour of its own."""
    import networkx as nx

    index = nx.greedy_color(neighbour_graph(asm), strategy="DSATUR")
    unused = iter(range(max(index.values(), default=-1) + 1, len(PALETTE)))
    seen: set[int] = set()
    for pid in asm.part_ids:
        if index[pid] in seen:
            index[pid] = next(unused, index[pid])
        seen.add(index[pid])
    return {pid: PALETTE[k] if k < len(PALETTE) else extra_colour(k - len(PALETTE))
            for pid, k in ((pid, index[pid]) for pid in asm.part_ids)}


def short_labels(ids) -> dict[str, str]:
    """Id -> a short label: the ids without the prefix they share (cut at a separator) when every rest is
    short; else the numbers in their first word ("Part02_Pin" -> "02"); else that word; else 1, 2, 3...
    in the given order. Labels are distinct and at most MAX_LABEL characters."""
    ids = list(ids)
    rest = [pid[_cut(ids):] for pid in ids]
    words = [re.split(r"[_\-. ]", r, maxsplit=1)[0] for r in rest]
    letters = re.match(r"[A-Za-z]*", os.path.commonprefix(words)).group() if len(words) > 1 else ""  # type: ignore[union-attr]  # the pattern matches the empty string
    for labels in (rest, [w[len(letters):] for w in words], words):
        if all(0 < len(x) <= MAX_LABEL for x in labels) and len(set(labels)) == len(labels):
            return dict(zip(ids, labels))
    return {pid: str(k) for k, pid in enumerate(ids, 1)}


def _cut(ids: list[str]) -> int:
    """Where the prefix all ids share ends, at its last separator (0 for fewer than two ids)."""
    if len(ids) < 2:
        return 0
    prefix = os.path.commonprefix(ids)
    return max(prefix.rfind(c) for c in "_-. ") + 1


def legend_entries(asm: Assembly, colours: dict[str, str], labels: dict[str, str],
                   notes: dict[str, str] | None = None, faulty=()) -> list:
    """Legend handles (matplotlib patches), one per part in catalog order: its colour, "label  id" (the id
    alone when it is its own label), a note after it; a lock hatched with a black edge, a faulty part red-edged."""
    from matplotlib.patches import Patch

    notes = notes or {}
    out = []
    for p in asm.parts:
        pid = p.part_id
        text = pid if labels[pid] == pid else f"{labels[pid]}  {pid}"
        if p.lock:
            text += f"  [LOCK {p.lock.kind}" + (f" {p.lock.axis} {p.lock.angle_deg:g} deg]" if p.lock.kind == "rotate" else "]")
        if pid in notes:
            text += f"  {notes[pid]}"
        edge = FAULT if pid in faulty else ("black" if p.lock else "#555555")
        out.append(Patch(facecolor=colours[pid], edgecolor=edge, hatch="//" if p.lock else None,
                         linewidth=2.0 if pid in faulty or p.lock else 0.5, label=text))
    return out
