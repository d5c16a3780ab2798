"""A task as a picture: its actual state beside its target, the faulty parts marked (`show TASK`).

Both states are drawn from one camera at one scale. In the actual state each part the diagnosis names
is outlined in red with a red label, a missing one drawn as a faint red ghost where it belongs; the
legend says, per part, its label, its id and what is wrong with it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..io.output import write_file
from ..model.errors import InputError
from ..semantics.diagnosis import diagnose
from ..semantics.task import Task
from .colours import FAULT, legend_entries
from .faces import draw_bodies, plot_limits
from .states import choose_look, state_bodies


@dataclass(frozen=True)
class TaskPicture:
    """What `render_task` drew: the file, the faults it marked (part id -> fault type), the view."""

    path: Path
    faults: dict
    exploded: bool


def fault_notes(task: Task) -> dict[str, str]:
    """Part id -> the fault the diagnosis names for it (and whether it is hidden)."""
    out = {}
    for m in diagnose(task.world, task.actual, task.target):
        out[m["part_id"]] = m["type"] + ("" if m.get("visible", True) else " (hidden)")
    return out


def save(fig, out: Path, **kwargs) -> None:
    """Write the figure whole (io.output), in the format `out`'s suffix names."""
    import matplotlib.pyplot as plt

    try:
        with write_file(out, "wb") as fh:
            fig.savefig(fh, format=Path(out).suffix.lstrip(".").lower() or "png", **kwargs)
    finally:
        plt.close(fig)


def render_task(task: Task, out: Path, *, exploded: bool | None = None, camera: tuple[float, float] | None = None,
                dpi: int = 110) -> TaskPicture:
    """Write a PNG of the task: actual state (faults marked) left, target state right, and a legend.
    `exploded=None`: exploded when a fault is hidden or, as for `show ASSEMBLY`, when parts hide each other."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    world, asm = task.world, task.assembly
    faults = fault_notes(task)
    if exploded is None and any(note.endswith("(hidden)") for note in faults.values()):
        exploded = True   # a hidden fault shows only when the parts are apart
    look = choose_look(asm, exploded, camera)
    actual = state_bodies(world, task.actual, look, faulty=faults)
    target = state_bodies(world, task.target, look, faulty=faults, ghosts=False)
    lo, hi = zip(*(plot_limits(bs) for bs in (actual, target)))
    limits = (np.min(lo, axis=0), np.max(hi, axis=0))
    fig = plt.figure(figsize=(13, 6.2), dpi=dpi)
    n = len(faults)
    for k, (bodies, title) in enumerate(((actual, f"actual state: {n} fault{'' if n == 1 else 's'} (red)"),
                                         (target, "target state"))):
        ax = fig.add_axes((0.01 + 0.34 * k, 0.02, 0.34, 0.84), projection="3d")
        draw_bodies(ax, bodies, look.elev, look.azim, limits)
        ax.set_title(title, fontsize=10, color=FAULT if k == 0 and n else "black")
    fig.suptitle(f"{task.sample_id} ({asm.assembly_id}): {'exploded' if look.exploded else 'assembled'}, "
                 f"camera elevation {look.elev:g} azimuth {look.azim:g}", fontsize=11)
    fig.legend(handles=legend_entries(asm, look.colours, look.labels, faults, faults), loc="center left",
               bbox_to_anchor=(0.69, 0.5), fontsize=7, frameon=False, title_fontsize=8,
               title="parts: label, id, fault (red); * = wrong part in the slot")
    save(fig, out)
    return TaskPicture(out, faults, look.exploded)
