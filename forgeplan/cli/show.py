"""`forgeplan show ASSEMBLY_ID --out x.png`: draw an assembly so that a person can see it."""

from __future__ import annotations

from pathlib import Path


def register(sub) -> None:
    p = sub.add_parser(
        "show", help="draw an assembly as coloured voxels (PNG)",
        description="Draw an assembly as coloured voxels, one colour per part with a legend, and save a PNG. "
                    "--exploded slides the parts apart along their removal directions so that inner parts show.")
    p.add_argument("assembly", metavar="ASSEMBLY_ID", help="built-in id or assembly JSON file")
    p.add_argument("--out", required=True, type=Path, help="PNG file to write")
    p.add_argument("--exploded", action="store_true", help="slide the parts apart along their removal directions")
    p.add_argument("--elev", type=float, default=22.0, help="camera elevation in degrees")
    p.add_argument("--azim", type=float, default=55.0, help="camera azimuth in degrees")
    p.set_defaults(func=run)


def run(args) -> int:
    from ..assembly import load_assembly
    from ..errors import InputError
    from ..render import render_assembly

    asm = load_assembly(args.assembly)
    if not args.out.parent.is_dir():
        raise InputError("the folder to write into does not exist", file=str(args.out))
    render_assembly(asm, args.out, exploded=args.exploded, elev=args.elev, azim=args.azim)
    print(f"wrote {args.out} ({asm.assembly_id}, {len(asm.parts)} parts)")
    return 0
