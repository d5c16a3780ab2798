"""PDDL files: export a problem (domain.pddl, problem.pddl, groups.json) and read an external planner's plan back.

`enc` below is an `Encoding` or a `profiles.Export`: anything with the written `problem`, its `groups`
and a `decode` of that problem's action instances.
"""

from __future__ import annotations

from typing import Any

from ...model.actions import Action
from ...model.errors import InputError
from .problem import build_problem


def pddl_writer(enc):
    """A PDDLWriter that has named every item (its renaming is what `get_item_named` reverses) and writes
    its constants in name order."""
    from unified_planning.io import PDDLWriter

    writer = PDDLWriter(enc.problem)
    writer.get_domain()
    # The writer collects the domain's constants in sets, whose order changes from run to run; sorted
    # by name, the exported files are byte-identical for the same task.
    writer.domain_objects = {kind: sorted(objs, key=lambda o: o.name)
                             for kind, objs in writer.domain_objects.items()}
    writer.get_problem()
    return writer


def domain_text() -> str:
    """The lifted rework domain (task-independent; committed as domains/rework.pddl)."""
    from ...semantics.faults import make_task
    from ...library import BUILTIN, build

    return pddl_writer(build_problem(make_task(build(next(iter(BUILTIN))), []))).get_domain()


def write_pddl(enc, out) -> tuple:
    """Write domain.pddl and problem.pddl into folder `out`, costs.json for the `strips-table` profile and
    groups.json for a group-move export.

    groups.json records the candidate groups per move and direction (their counts first); returns
    the paths written.
    """
    from ...io.output import staged

    writer = pddl_writer(enc)
    with staged(out) as folder:   # the files replace an earlier export together
        paths = [folder.write_text("domain.pddl", writer.get_domain()),
                 folder.write_text("problem.pddl", writer.get_problem())]
        if getattr(enc, "costs", None) is not None:
            paths.append(folder.write_json("costs.json", cost_table(enc, writer)))
        if enc.groups is not None:
            paths.append(folder.write_json("groups.json", enc.groups.to_json()))
        return tuple(paths)


def cost_table(export, writer) -> dict:
    """The `strips-table` profile's costs.json: what a plan's cost is, and each action's cost by its PDDL name."""
    return {"objective": export.objective, "weight": export.enc.weight,
            "plan_cost": "the sum of the costs of the plan's actions",
            "costs": {writer.get_pddl_name(a): cost for a, cost in sorted(export.costs.items(), key=lambda x: x[0].name)}}


def requirements(domain: str) -> list[str]:
    """The `:requirements` a domain's text declares, in its order."""
    import re

    found = re.search(r"\(:requirements([^()]*)\)", domain)
    return found.group(1).split() if found else []


def plan_lines(text: str, file: str = "plan") -> list[tuple[int, str, tuple[str, ...]]]:
    """(line number, action name, arguments), lower-cased, of a plan in the common format: one
    `(action arg ...)` per line, `;` comments (as Fast Downward's sas_plan)."""
    import re

    out = []
    for lineno, line in enumerate(text.splitlines(), start=1):
        line = line.split(";", 1)[0].strip()
        if not line:
            continue
        m = re.fullmatch(r"\(\s*([^()\s]+)((?:\s+[^()\s]+)*)\s*\)", line)
        if m is None:
            raise InputError(f"expected '(action arg ...)', got {line!r}", file=file, field=f"line {lineno}")
        out.append((lineno, m.group(1).lower(), tuple(m.group(2).lower().split())))
    return out


def plan_instances(writer, text: str, file: str = "plan") -> list[tuple[str, Any]]:
    """(the step as written, its UP ActionInstance) for each line of a plan of `writer`'s export.

    Names go back through the PDDLWriter's renaming, so sanitised part ids come back as they were; a name
    that is not in the export, or an action with the wrong number of arguments, is bad input.
    """
    from unified_planning.model import Action as UPAction
    from unified_planning.plans import ActionInstance

    out = []
    for lineno, name, args in plan_lines(text, file):
        line = f"({' '.join((name, *args))})"
        try:
            items = [writer.get_item_named(w) for w in (name, *args)]
        except Exception:  # noqa: BLE001 - UP raises its own UPException for unknown names
            raise InputError(f"{line!r} names something that is not in this export "
                             "(check --grounded and --objective)", file=file, field=f"line {lineno}") from None
        act = items[0]
        if not isinstance(act, UPAction) or len(items) - 1 != len(act.parameters):
            raise InputError(f"{name!r} is not an action of this export with {len(items) - 1} arguments",
                             file=file, field=f"line {lineno}")
        out.append((line, ActionInstance(act, items[1:])))
    return out


def read_plan(enc, text: str, file: str = "plan") -> tuple[Action, ...]:
    """An external planner's plan for the export of `enc` -> forgeplan actions, mapped without replaying
    it in the PDDL task (`replay.Replay.read` replays it first, as `import-plan` does).

    Reads the common format (one `(action arg ...)` per line, `;` comments, as Fast Downward's sas_plan).
    """
    return enc.decode([ai for _, ai in plan_instances(pddl_writer(enc), text, file)])
