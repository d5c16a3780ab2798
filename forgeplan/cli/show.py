"""`forgeplan show ASSEMBLY_ID --out x.png`: draw an assembly so that a person can see it."""

from __future__ import annotations

from ..io.output import output_path


def register(sub) -> None:
    p = sub.add_parser(
        "show", help="draw an assembly as coloured voxels (PNG)",
        description="Draw an assembly as coloured voxels, one colour per part with a legend and an axis "
                    "marker (y up), and save a PNG. By default the camera is the standard view that shows the most "
                    "parts, and the parts are slid apart along their removal directions (exploded view) when no "
                    "camera sees every part of the assembled one. Interlocked puzzles are drawn too (exploded as "
                    "far as straight moves take them).")
    p.add_argument("assembly", metavar="ASSEMBLY_ID", help="built-in id or assembly JSON file")
    p.add_argument("--out", required=True, type=output_path, help="PNG file to write")
    view = p.add_mutually_exclusive_group()
    view.add_argument("--exploded", dest="exploded", action="store_const", const=True, default=None,
                      help="always slide the parts apart (default: only when parts hide each other)")
    view.add_argument("--assembled", dest="exploded", action="store_const", const=False,
                      help="never slide the parts apart")
    p.add_argument("--elev", type=float, help="camera elevation in degrees (default: the view showing the most parts)")
    p.add_argument("--azim", type=float, help="camera azimuth in degrees (default: the view showing the most parts)")
    p.set_defaults(func=run)


def run(args) -> int:
    from ..io.catalog import load_assembly
    from ..model.errors import InputError
    from ..render import render_assembly

    if args.out.suffix.lower() != ".png" or args.out.is_dir():
        raise InputError("must name a .png file (the plot is written exactly there)", file=str(args.out), field="--out")
    asm = load_assembly(args.assembly, check_disassembly=False)
    if not args.out.parent.is_dir():
        raise InputError("the folder to write into does not exist", file=str(args.out))
    pic = render_assembly(asm, args.out, exploded=args.exploded, elev=args.elev, azim=args.azim)
    print(f"wrote {args.out} ({asm.assembly_id}, {'exploded' if pic.exploded else 'assembled'}, camera elevation "
          f"{pic.elev:g} azimuth {pic.azim:g}; {pic.visible} of {len(asm.parts)} parts in view)")
    return 0
