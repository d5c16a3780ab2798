"""A plan step by step: one small picture per state (`show TASK PLAN --steps`), as a strip or an animation.

The first picture is the task's actual state, then one per action: the state after it, the parts it
moved outlined dark. At the step the engine refuses, the picture shows the state the action was tried
in, the parts it names outlined in red, a red frame and the engine's reason as its caption. A plan the
engine accepts that still fails (the target not reached, a wrong diagnosis) says so, in red, under its
last picture. At most MAX_PANELS pictures: a longer plan keeps its first steps and the steps up to the
one that fails (or its end), and says how many it leaves out.
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass
from pathlib import Path

from ..io.output import write_file
from ..semantics.task import Task
from ..trace import Trace
from ..verify import Verdict
from .colours import FAULT, legend_entries
from .faces import draw_bodies, plot_limits
from .states import Look, choose_look, state_bodies
from .task import fault_notes, save

MAX_PANELS = 24
COLUMNS = 6
PANEL_W, PANEL_H, CAPTION_H = 2.6, 3.2, 0.85   # inches: one cell of the strip, the caption's part of it
FRAME_MS, LAST_FRAME_MS = 900, 2600   # animation: each frame, and the last or failing one


@dataclass(frozen=True)
class Panel:
    """One picture of the strip: its state's bodies, its caption, whether it is the failing one."""

    index: int            # 0 = the actual state, k = after (or, failing, before) step k
    bodies: list
    caption: str
    failing: bool = False


@dataclass(frozen=True)
class StepsPicture:
    """What `render_steps` drew: the file, the steps of the plan, the failing step (or None), the verdict."""

    path: Path
    steps: int
    failing_step: int | None
    category: str | None
    reason: str
    panels: int


def action_text(action, labels: dict) -> str:
    """The action as `str` gives it, each part id replaced by its short label."""
    text = str(action)
    for pid in sorted(labels, key=len, reverse=True):
        text = text.replace(pid, labels[pid])
    return text


def panels(task: Task, trace: Trace, verdict: Verdict, look: Look) -> list[Panel]:
    """The pictures of the plan: the actual state, then one per traced step."""
    world, faults = task.world, fault_notes(task)
    out = [Panel(0, state_bodies(world, task.actual, look, faulty=faults), "0. actual state")]
    for step in trace.steps:
        text = f"{step.step}. {action_text(step.action, look.labels)}"
        if step.legal:
            moved = {c.part_id for c in step.changes}
            out.append(Panel(step.step, state_bodies(world, trace.states[step.step], look, moved=moved), text))
            continue
        named = {pid: "" for pid in step.action.touched}
        why = action_text(step.reason or "", look.labels)
        out.append(Panel(step.step, state_bodies(world, trace.states[step.step - 1], look, faulty=named),
                         f"{text}\nrefused [{step.code}]: {why}", failing=True))
    if not verdict.valid and trace.failing_step is None:
        last = out[-1]
        why = action_text(f"{verdict.category}: {verdict.reason}", look.labels)
        out[-1] = Panel(last.index, last.bodies, f"{last.caption}\n{why}", failing=True)
    return out


def keep(all_panels: list[Panel], cap: int = MAX_PANELS) -> tuple[list[Panel], int]:
    """At most `cap` panels: the first half, then those up to the failing one (or the last); and how many are left out."""
    if len(all_panels) <= cap:
        return all_panels, 0
    end = next((k for k, p in enumerate(all_panels) if p.failing), len(all_panels) - 1)
    head = cap // 2
    tail = list(range(max(head, end - (cap - head) + 1), end + 1))
    chosen = list(range(head)) + tail
    return [all_panels[k] for k in chosen], len(all_panels) - len(chosen)


def _caption(ax, panel: Panel) -> None:
    lines = []
    for part in panel.caption.split("\n"):
        lines += textwrap.wrap(part, 34) or [""]
    if len(lines) > 6:
        lines = lines[:5] + [lines[5][:31] + "..."]
    head, rest = lines[0], "\n".join(lines[1:])
    colour = FAULT if panel.failing else "black"
    ax.text2D(0.5, -0.04, head, transform=ax.transAxes, ha="center", va="top", fontsize=7.5,
              color=colour, fontweight="bold" if panel.failing else "normal")
    if rest:
        ax.text2D(0.5, -0.13, rest, transform=ax.transAxes, ha="center", va="top", fontsize=6.5, color=colour)


def _draw_panel(fig, rect, panel: Panel, look: Look, limits, frame) -> None:
    """One picture in `rect` (figure fraction); a failing one gets a red frame around `frame`."""
    from matplotlib.patches import Rectangle

    ax = fig.add_axes(rect, projection="3d")
    draw_bodies(ax, panel.bodies, look.elev, look.azim, limits, zoom=1.05)
    _caption(ax, panel)
    if panel.failing:
        fig.add_artist(Rectangle(frame[:2], *frame[2:], transform=fig.transFigure, fill=False, edgecolor=FAULT,
                                 linewidth=2.5))


def _limits(chosen: list[Panel]):
    import numpy as np

    lo, hi = zip(*(plot_limits(p.bodies) for p in chosen if p.bodies))
    return np.min(lo, axis=0), np.max(hi, axis=0)


def title(task: Task, trace: Trace, verdict: Verdict) -> str:
    n = len(verdict.output.actions) if verdict.output is not None else 0
    head = f"{task.sample_id}: a plan of {n} action{'' if n == 1 else 's'}, "
    if verdict.valid:
        return head + "valid"
    where = f" at step {trace.failing_step}" if trace.failing_step else ""
    return head + f"invalid [{verdict.category}]{where}"


def strip_figure(task: Task, trace: Trace, verdict: Verdict, look: Look):
    """The strip: panels in rows of COLUMNS, a title with the verdict, a legend of the labels below;
    returns the figure and how many pictures it holds."""
    import matplotlib.pyplot as plt

    chosen, left_out = keep(panels(task, trace, verdict, look))
    cols = min(COLUMNS, len(chosen))
    rows = -(-len(chosen) // cols)
    legend_rows = -(-len(task.assembly.parts) // 3)
    width, height = PANEL_W * cols + 0.4, PANEL_H * rows + 0.5 + 0.17 * legend_rows
    fig = plt.figure(figsize=(width, height), dpi=100)
    limits = _limits(chosen)
    for k, panel in enumerate(chosen):
        r, c = divmod(k, cols)
        x, y = 0.2 + c * PANEL_W, height - 0.45 - (r + 1) * PANEL_H     # the cell's lower left corner, inches
        rect = (x / width, (y + CAPTION_H) / height, (PANEL_W - 0.1) / width, (PANEL_H - CAPTION_H) / height)
        frame = ((x - 0.02) / width, (y + 0.02) / height, (PANEL_W - 0.06) / width, (PANEL_H - 0.04) / height)
        _draw_panel(fig, rect, panel, look, limits, frame)
    more = f"; {left_out} step{'' if left_out == 1 else 's'} not drawn" if left_out else ""
    fig.suptitle(title(task, trace, verdict) + more, fontsize=10, y=1 - 0.15 / height,
                 color="black" if verdict.valid else FAULT)
    fig.legend(handles=legend_entries(task.assembly, look.colours, look.labels), loc="lower center", ncol=3,
               fontsize=6.5, frameon=False, bbox_to_anchor=(0.5, 0.0))
    return fig, len(chosen)


def render_steps(task: Task, trace: Trace, verdict: Verdict, out: Path, *, exploded: bool | None = None,
                 camera: tuple[float, float] | None = None, animate: bool = False) -> StepsPicture:
    """Write the strip (PNG) or, with `animate`, one frame per picture (GIF or WebP by `out`'s suffix)."""
    import matplotlib

    matplotlib.use("Agg")
    look = choose_look(task.assembly, exploded, camera)
    if animate:
        n = _animation(task, trace, verdict, look, out)
    else:
        fig, n = strip_figure(task, trace, verdict, look)
        save(fig, out)
    return StepsPicture(out, len(verdict.output.actions) if verdict.output is not None else 0, trace.failing_step,
                        verdict.category, verdict.reason, n)


def _animation(task: Task, trace: Trace, verdict: Verdict, look: Look, out: Path) -> int:
    """One frame per picture (same camera and scale), saved by Pillow; the last frame lingers."""
    import matplotlib.pyplot as plt
    import numpy as np
    from PIL import Image

    chosen, _ = keep(panels(task, trace, verdict, look))
    limits = _limits(chosen)
    frames = []
    for panel in chosen:
        fig = plt.figure(figsize=(4.2, 4.6), dpi=90)
        fig.suptitle(title(task, trace, verdict), fontsize=8, color="black" if verdict.valid else FAULT)
        _draw_panel(fig, (0.04, 0.22, 0.92, 0.7), panel, look, limits, (0.02, 0.02, 0.96, 0.92))
        fig.canvas.draw()
        frames.append(Image.fromarray(np.asarray(fig.canvas.buffer_rgba())).convert("RGB"))  # type: ignore[attr-defined]  # the Agg canvas
        plt.close(fig)
    durations = [LAST_FRAME_MS if p.failing else FRAME_MS for p in chosen]
    durations[-1] = LAST_FRAME_MS
    with write_file(out, "wb") as fh:
        frames[0].save(fh, format=Path(out).suffix.lstrip(".").upper(), save_all=True, append_images=frames[1:],
                       duration=durations, loop=0)
    return len(frames)
