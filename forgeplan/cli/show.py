"""`forgeplan show ASSEMBLY_ID|TASK [PLAN --steps] --out x.png`: draw an assembly, a task, or a plan step by step."""

from __future__ import annotations

from pathlib import Path

from ..io.output import output_path
from . import degrees

PICTURES = (".png",)
ANIMATIONS = (".gif", ".webp")


def register(sub) -> None:
    p = sub.add_parser(
        "show", help="draw an assembly, a task's states, or a plan step by step (PNG, GIF, WebP)",
        description="Draw coloured voxels, touching parts in different colours, each part labelled (a legend says "
                    "what the labels stand for), an axis marker (y up). ASSEMBLY_ID: the assembly; by default from "
                    "the standard camera that shows the most parts, exploded (parts slid apart along their "
                    "removal directions, or along the disassembly with group or partial moves) when no camera sees "
                    "every part of the assembled one. TASK (a task folder): its actual state beside its target, "
                    "the faulty parts outlined and labelled in red (a missing part as a red ghost). TASK PLAN "
                    "--steps: one small picture per step of the plan (an output JSON), the failing step framed "
                    "in red with the engine's reason as its caption; a strip (.png) or an animation (.gif or .webp, "
                    "or --gif). Exit 0 when the picture is written (whatever the plan's verdict), 2 on bad input.")
    p.add_argument("assembly", metavar="ASSEMBLY_ID|TASK", help="built-in id, assembly JSON file, or task folder")
    p.add_argument("plan", metavar="PLAN", nargs="?", help="with --steps: an output JSON whose plan to draw")
    p.add_argument("--out", required=True, type=output_path, help="file to write: .png (.gif or .webp for an animation)")
    p.add_argument("--steps", action="store_true", help="draw PLAN step by step (needs TASK and PLAN)")
    p.add_argument("--gif", action="store_true", help="with --steps: an animation, one frame per step (--out .gif or .webp)")
    view = p.add_mutually_exclusive_group()
    view.add_argument("--exploded", dest="exploded", action="store_const", const=True, default=None,
                      help="always slide the parts apart (default: only when parts hide each other, or a fault is hidden)")
    view.add_argument("--assembled", dest="exploded", action="store_const", const=False,
                      help="never slide the parts apart")
    p.add_argument("--elev", type=degrees, help="camera elevation in degrees (default: the view showing the most parts)")
    p.add_argument("--azim", type=degrees, help="camera azimuth in degrees (default: the view showing the most parts)")
    p.set_defaults(func=run, reads=("assembly", "plan"))


def run(args) -> int:
    from ..model.errors import InputError

    is_task = Path(args.assembly).is_dir()
    animate = args.gif or args.out.suffix.lower() in ANIMATIONS
    if args.out.is_dir() or args.out.suffix.lower() not in (ANIMATIONS if animate else PICTURES):
        want = "a .gif or .webp file (an animation)" if animate else "a .png file (the picture is written exactly there)"
        raise InputError(f"must name {want}", file=str(args.out), field="--out")
    if (args.plan is not None or animate) and not args.steps:
        raise InputError("a PLAN and an animation go with --steps (`show TASK PLAN --steps`)", field="--steps")
    if args.steps and (not is_task or args.plan is None):
        raise InputError("--steps draws a plan: give a task folder and an output JSON (`show TASK PLAN --steps`)",
                         file=args.assembly, field="--steps")
    camera = None if args.elev is None and args.azim is None else (22.0 if args.elev is None else args.elev,
                                                                    55.0 if args.azim is None else args.azim)
    if not args.steps and not is_task:
        return _assembly(args, camera)
    if not args.out.parent.is_dir():
        raise InputError("the folder to write into does not exist", file=str(args.out))
    return _steps(args, camera, animate) if args.steps else _task(args, camera)


def _assembly(args, camera) -> int:
    from ..io.catalog import load_assembly
    from ..model.errors import InputError
    from ..render import render_assembly

    asm = load_assembly(args.assembly, check_disassembly=False)
    if not args.out.parent.is_dir():
        raise InputError("the folder to write into does not exist", file=str(args.out))
    pic = render_assembly(asm, args.out, exploded=args.exploded, elev=camera and camera[0], azim=camera and camera[1])
    print(f"wrote {args.out} ({asm.assembly_id}, {'exploded' if pic.exploded else 'assembled'}, camera elevation "
          f"{pic.elev:g} azimuth {pic.azim:g}; {pic.visible} of {len(asm.parts)} parts in view)")
    return 0


def _task(args, camera) -> int:
    from ..io.quoting import one_line
    from ..io.task_files import load_task
    from ..pictures.task import render_task

    task = load_task(Path(args.assembly))
    pic = render_task(task, args.out, exploded=args.exploded, camera=camera)
    faults = "; ".join(f"{pid}: {what}" for pid, what in pic.faults.items()) or "none"
    print(one_line(f"wrote {args.out} ({task.sample_id}: actual and target states, "
                   f"{'exploded' if pic.exploded else 'assembled'}; faults marked: {faults})"))
    return 0


def _steps(args, camera, animate: bool) -> int:
    from ..io.guarded import read_bytes
    from ..io.quoting import one_line
    from ..io.task_files import load_task
    from ..pictures.steps import render_steps
    from ..trace import trace_plan
    from ..verify import verify

    task = load_task(Path(args.assembly))
    v = verify(task, read_bytes(Path(args.plan), "output", head=True), strict=False)
    if v.output is None:
        from ..model.errors import InputError

        raise InputError(f"the output has no plan to draw ({v.reason})", file=args.plan)
    trace = trace_plan(task.world, task.actual, v.output.actions)
    pic = render_steps(task, trace, v, args.out, exploded=args.exploded, camera=camera, animate=animate)
    verdict = "valid" if v.valid else f"invalid [{v.category}]"
    failing = f", failing step {pic.failing_step}: {trace.steps[-1].reason}" if pic.failing_step else ""
    print(one_line(f"wrote {args.out} ({pic.panels} pictures of {pic.steps} steps; {verdict}{failing})"))
    return 0
