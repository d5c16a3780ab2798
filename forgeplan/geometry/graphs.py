"""networkx views of an assembly: directional blocking, contact, supports, and a validated sequence."""

from __future__ import annotations

from functools import lru_cache

import networkx as nx

from ..model.assembly import DIRECTIONS, Assembly
from ..model.errors import AssemblyError
from .relations import blocking_relation


def support_graph(asm: Assembly) -> nx.DiGraph:
    """Edge support -> supported: the supported part needs the support present to be inserted."""
    g = nx.DiGraph()
    g.add_nodes_from(asm.part_ids)
    g.add_edges_from((s, p.part_id) for p in asm.parts for s in p.supports)
    return g


@lru_cache(maxsize=256)
def disassembly_layers(asm: Assembly) -> tuple[tuple[str, ...], ...]:
    """Peel the target assembly: layer k holds the parts removable once layers < k are gone.

    A part is removable when some allowed direction is free of present parts and no present part
    rests on it (so the reverse order respects supports). Removability only grows as parts leave,
    so this greedy peeling finds a full disassembly whenever one exists.
    """
    blockers: dict[tuple[str, str], set[str]] = {(p.part_id, d): set() for p in asm.parts for d in DIRECTIONS}
    for d, edges in blocking_relation(asm).items():
        for b, p in edges:
            blockers[(p, d)].add(b)
    if not nx.is_directed_acyclic_graph(support_graph(asm)):
        cyc = nx.find_cycle(support_graph(asm))
        raise AssemblyError(f"supports form a cycle: {[e[0] for e in cyc]}", file=f"assembly {asm.assembly_id}")
    present = set(asm.part_ids)
    layers = []
    while present:
        layer = tuple(
            p.part_id for p in asm.parts if p.part_id in present
            and not any(p.part_id in q.supports for q in asm.parts if q.part_id in present)
            and any(not (blockers[(p.part_id, d)] & present) for d in p.removal_dirs)
        )
        if not layer:
            stuck = sorted(present, key=asm.part_ids.index)
            raise AssemblyError(
                f"cannot be taken apart one part at a time with straight moves: parts {stuck} interlock",
                file=f"assembly {asm.assembly_id}")
        layers.append(layer)
        present -= set(layer)
    return tuple(layers)


def assembly_sequence(asm: Assembly) -> tuple[str, ...]:
    """One validated insertion order: the reverse of the layered disassembly; for assemblies that need
    group moves, the main body's growth (core part, then each pre-assembled group; groups.main_body);
    for assemblies that need partial moves, the reverse of the level search's main chain.

    The single-part peeling is tried first: it is linear in the layers, while the group search is
    only needed when peeling gets stuck.
    """
    try:
        layers = disassembly_layers(asm)
    except AssemblyError:
        from .partial import insertion_order
        from .separation import is_level1, main_body

        return main_body(asm).insertion_order if is_level1(asm) else insertion_order(asm)
    return tuple(p for layer in reversed(layers) for p in reversed(layer))


def blocking_depth(asm: Assembly) -> int:
    """Number of disassembly layers (single-part assemblies), or of group joins building the main body, or
    of separations in the level search's main chain (assemblies that need partial moves)."""
    try:
        return len(disassembly_layers(asm))
    except AssemblyError:
        from .partial import main_chain
        from .separation import is_level1, main_body

        if is_level1(asm):
            return len(main_body(asm).joins)
        return sum(m.distance is None for m in main_chain(asm)[0])
