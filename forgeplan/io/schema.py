"""Pydantic models of every JSON file forgeplan reads; errors name the file, the field and the reason."""

from __future__ import annotations

import math
from typing import Annotated, Any, Literal, Optional, Union

from pydantic import (AfterValidator, BaseModel, ConfigDict, Field, StrictBool, StrictStr, ValidationError,
                      field_validator, model_validator)

from ..model.errors import InputError
from ..model.limits import (MAX_ANGLE, MAX_COORD, MAX_LOCK_ANGLE, MAX_PARTS, MAX_POS_TOL, MAX_ROT_TOL, MAX_VOXELS,
                            MIN_LOCK_ANGLE)
from ..model.rotations import cube_rotation_problem
from ..model.names import name_problem, sample_id_problem

TASK_SCHEMA_VERSION = "1.0"
Direction = Literal["+x", "-x", "+y", "-y", "+z", "-z"]
Axis = Literal["x", "y", "z"]
# every number is bounded, so that nothing downstream overflows (distances, angle sums, voxel sets)
# strict: a number is a JSON number ("30" is not 30), as the grammar and the JSON Schema say
Coord = Annotated[float, Field(strict=True, allow_inf_nan=False, ge=-MAX_COORD, le=MAX_COORD)]
Angle = Annotated[float, Field(strict=True, allow_inf_nan=False, ge=-MAX_ANGLE, le=MAX_ANGLE)]
Vec3 = Annotated[list[Coord], Field(min_length=3, max_length=3)]
AngleVec3 = Annotated[list[Angle], Field(min_length=3, max_length=3)]
IntVec3 = Annotated[list[Annotated[int, Field(strict=True, ge=-MAX_COORD, le=MAX_COORD)]], Field(min_length=3, max_length=3)]
Voxels = Annotated[list[IntVec3], Field(min_length=1, max_length=MAX_VOXELS)]


def _lock_turn(angle: float) -> float:
    if abs(angle) < MIN_LOCK_ANGLE:
        raise ValueError(f"a lock's turn must not be zero (|angle_deg| >= {MIN_LOCK_ANGLE:g}), got {angle:g}")
    return angle


# a rotate lock's unlock turn: non-zero, at most one full turn either way
LockAngle = Annotated[float, Field(strict=True, allow_inf_nan=False, ge=-MAX_LOCK_ANGLE, le=MAX_LOCK_ANGLE),
                      AfterValidator(_lock_turn)]
TurnVec3 = Annotated[list[Annotated[float, Field(strict=True, allow_inf_nan=False, ge=-MAX_LOCK_ANGLE,
                                                 le=MAX_LOCK_ANGLE)]], Field(min_length=3, max_length=3)]


def _cube_rotation(m: list[list[int]]) -> list[list[int]]:
    why = cube_rotation_problem(m)
    if why is not None:
        raise ValueError(why)
    return m


# a symmetry of a part: one of the 24 rotations of the cube, as an integer 3x3 matrix
CubeRotation = Annotated[list[Annotated[list[Annotated[int, Field(strict=True, ge=-1, le=1)]],
                                        Field(min_length=3, max_length=3)]],
                         Field(min_length=3, max_length=3), AfterValidator(_cube_rotation)]


def _checked(problem):
    def check(text: str) -> str:
        why = problem(text)
        if why is not None:
            raise ValueError(why)
        return text
    return check


# ids and names from files: printable (model.names), so that they echo and quote safely
Name = Annotated[str, Field(strict=True), AfterValidator(_checked(name_problem))]


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Open(BaseModel):
    """For files that may carry extra, documented-elsewhere fields."""

    model_config = ConfigDict(extra="allow", frozen=True)


def parse_model(model: type[BaseModel], data: Any, file: str):
    """Validate `data`; raise InputError naming the file, the first failing field and why."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = ".".join(str(x) for x in err["loc"]) or "(top level)"
        more = f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
        raise InputError(f"{err['msg'].removeprefix('Value error, ')}{more}", file=file, field=loc) from None


# ----------------------------------------------------------------------------- assembly files

class PoseModel(Strict):
    position: Vec3
    rotation: AngleVec3 = [0.0, 0.0, 0.0]


class TurnPoseModel(Strict):
    """A coupled lock's pose after unlocking: a position, and a turn of at most one full turn per axis."""

    position: Vec3
    rotation: TurnVec3 = [0.0, 0.0, 0.0]


class _LockKind(Strict):
    kind: Literal["rotate", "coupled"]
    holds: Annotated[list[Name], Field(min_length=1, max_length=MAX_PARTS)]
    axis: Optional[Axis] = None
    angle_deg: Optional[LockAngle] = None

    def _fields(self, coupled: str) -> None:
        rotate = self.axis is not None and self.angle_deg is not None
        has_pose = getattr(self, coupled) is not None
        if self.kind == "rotate" and (not rotate or has_pose):
            raise ValueError(f"a rotate lock takes axis and angle_deg, and no {coupled}")
        if self.kind == "coupled" and (not has_pose or self.axis is not None or self.angle_deg is not None):
            raise ValueError(f"a coupled lock takes {coupled}, and no axis or angle_deg")


class LockModel(_LockKind):
    """A lock in an assembly file: a coupled lock's pose after unlocking is an offset from its target pose."""

    unlocked_offset: Optional[TurnPoseModel] = None

    @model_validator(mode="after")
    def _kind_fields(self):
        self._fields("unlocked_offset")
        return self


class CatalogLock(_LockKind):
    """A lock in part_catalog.json: a coupled lock's pose after unlocking is absolute (scene units)."""

    unlocked_pose: Optional[TurnPoseModel] = None

    @model_validator(mode="after")
    def _kind_fields(self):
        self._fields("unlocked_pose")
        return self


class AssemblyPartModel(Strict):
    part_id: Name
    kind: Name
    voxels: Voxels
    removal_dirs: list[Direction] = ["+x", "-x", "+y", "-y", "+z", "-z"]
    supports: list[str] = []
    lock: Optional[LockModel] = None


class SpareModel(Strict):
    part_id: Name
    kind: Name
    variant_of: Name
    difference: str = ""


def _major_version(v: str) -> str:
    if v.split(".")[0] != TASK_SCHEMA_VERSION.split(".")[0]:
        raise ValueError(f"schema_version {v!r} is not compatible with {TASK_SCHEMA_VERSION}")
    return v


class Versioned(Open):
    """A file with a `schema_version` whose major number must be forgeplan's."""

    schema_version: str

    @field_validator("schema_version")
    @classmethod
    def _version(cls, v: str) -> str:
        return _major_version(v)


class AssemblyFileModel(Versioned):
    assembly_id: Name
    family: Name
    description: str = ""
    source: str = "imported"
    parts: list[AssemblyPartModel] = Field(min_length=1, max_length=MAX_PARTS)
    spares: list[SpareModel] = Field(default=[], max_length=MAX_PARTS)


# ----------------------------------------------------------------------------- task files

class TaskFile(Strict):
    """A task file: every key one forgeplan writes (a misspelt one is refused, not ignored)."""

    schema_version: str
    assembly_id: Name

    @field_validator("schema_version")
    @classmethod
    def _version(cls, v: str) -> str:
        return _major_version(v)


class CatalogPart(Strict):
    part_id: Name
    kind: Name
    voxels: Voxels
    symmetry: Annotated[list[CubeRotation], Field(min_length=1, max_length=24)]
    lock: Optional[CatalogLock] = None


class CatalogSpare(Strict):
    part_id: Name
    kind: Name
    variant_of: Name
    difference: str = ""


class PartCatalog(TaskFile):
    family: Name
    description: str = ""
    source: str = "task"
    units: Literal["voxel edge = 1 scene unit"] = "voxel edge = 1 scene unit"
    parts: list[CatalogPart] = Field(min_length=1, max_length=MAX_PARTS)
    spare_parts: list[CatalogSpare] = Field(default=[], max_length=MAX_PARTS)


class AssemblyGraphFile(TaskFile):
    supports: list[Annotated[list[Name], Field(min_length=2, max_length=2)]]
    sequence: Annotated[list[Name], Field(max_length=MAX_PARTS)]


class BlockingGraphFile(TaskFile):
    edges: dict[Direction, list[Annotated[list[Name], Field(min_length=2, max_length=2)]]]
    removal_dirs: dict[Name, Annotated[list[Direction], Field(min_length=1, max_length=6)]]


class ContactGraphFile(TaskFile):
    edges: list[tuple[Name, Name, Annotated[int, Field(strict=True, ge=0, le=MAX_VOXELS * 6)]]]


class ActionKindModel(Strict):
    action: Name
    params: Annotated[list[Name], Field(max_length=16)]


class ActionSpaceFile(TaskFile):
    actions: Annotated[list[ActionKindModel], Field(max_length=64)]
    applicable: dict[Name, Annotated[list[Name], Field(max_length=64)]]


class SlotModel(Strict):
    present: StrictBool
    occupant: Optional[Name]
    position: Vec3
    rotation: AngleVec3
    seated: Coord
    locked: Optional[StrictBool] = None
    offset: Optional[IntVec3] = None


class TolerancesModel(Strict):
    """Below half a voxel and half the smallest cube turn, so that a part one voxel or a quarter turn off is
    always a mistake."""

    pos_tol: Annotated[float, Field(strict=True, allow_inf_nan=False, gt=0, lt=MAX_POS_TOL)]
    rot_tol_deg: Annotated[float, Field(strict=True, allow_inf_nan=False, gt=0, lt=MAX_ROT_TOL)]


class StateFile(TaskFile):
    rotation_convention: Literal["euler_xyz_deg"] = "euler_xyz_deg"
    tolerances: Optional[TolerancesModel] = None
    slots: dict[Name, SlotModel]
    sample_id: Optional[Name] = None   # actual_state.json names its sample


# ----------------------------------------------------------------------------- output contract

MistakeType = Literal["missing_part", "wrong_orientation", "misplacement", "under_insertion", "wrong_part",
                      "interference_lock"]


class MistakeModel(Strict):
    type: MistakeType
    part_id: str
    visible: StrictBool
    # observable fields (optional; scored by SAPF): a misplacement's offset is [dx, dy, dz], an
    # under-insertion's the remaining depth
    observed_part_id: Optional[str] = None
    axis: Optional[Axis] = None
    angle_deg: Optional[Angle] = None
    offset: Optional[Union[Coord, Vec3]] = None
    locked: Optional[StrictBool] = None


class AnnotationModel(Strict):
    sample_id: str
    assembly_id: str
    pass_: StrictBool = Field(alias="pass")
    mistakes: list[MistakeModel]

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


class ActionModel(Strict):
    action: Literal["remove", "insert", "reset_pose", "rotate", "rotate_to_unlock", "rotate_translate_to_unlock",
                    "rotate_to_lock", "translate_rotate_to_lock", "replace", "separate", "join", "slide"]
    part_id: Optional[str] = None
    part_ids: Optional[Annotated[list[str], Field(min_length=1, max_length=1000)]] = None   # 2+ for separate/join
    direction: Optional[Direction] = None
    wrong_part_id: Optional[str] = None
    target_part_id: Optional[str] = None
    axis: Optional[Axis] = None
    angle_deg: Optional[Angle] = None
    after_pose: Optional[PoseModel] = None
    distance: Optional[Annotated[int, Field(strict=True, ge=-MAX_COORD, le=MAX_COORD)]] = None   # slide (SEMANTICS §9)
    offset: Optional[IntVec3] = None                                                      # insert at an offset
    offsets: Optional[Annotated[list[IntVec3], Field(min_length=1, max_length=1000)]] = None  # join at offsets


class ReworkPlanModel(Strict):
    objective: Literal["restore_to_target_state"]
    actions: list[ActionModel]


class MinimalReworkModel(Strict):
    """MAGAR's minimal-rework fields (C.3.3): the predicted moved-part set, count and recovery route id."""

    moved_parts: Annotated[list[StrictStr], Field(max_length=10_000)]
    moved_part_count: Annotated[int, Field(strict=True, ge=0, le=10_000)]
    route_id: Annotated[str, Field(strict=True, max_length=10_000)]


class OutputModel(Strict):
    annotation: AnnotationModel
    rework_plan: ReworkPlanModel
    minimal_rework: Optional[MinimalReworkModel] = None  # the MAGAR profile; absent in FORGE-shaped outputs


def finite(x: float) -> bool:
    return math.isfinite(x)


# ----------------------------------------------------------------------------- benchmark files

# a sample id names a folder under tasks/: one path component, never '.', '..' or hidden
SampleId = Annotated[str, Field(strict=True), AfterValidator(_checked(sample_id_problem))]
FaultConditions = ("single", "multi")


class _SampleLabels(Open):
    sample_id: SampleId
    assembly_id: Name
    family: Name
    # assembly / recovery: the episode of an Assembly Decision sample (bench build --profile magar)
    condition: Literal["nofault", "boundary", "single", "multi", "assembly", "recovery"]
    fault_types: Annotated[list[Name], Field(max_length=MAX_PARTS)]
    difficulty: Name

    @model_validator(mode="after")
    def _fault_types(self):
        if self.condition in FaultConditions and not self.fault_types:
            raise ValueError(f"a {self.condition!r} sample needs at least one fault type in fault_types")
        return self


class ManifestRecord(_SampleLabels):
    split: Literal["train", "test"]
    hidden: StrictBool


class DigestsEntry(Strict):
    """manifest.json's `digests`: the file holding every file's SHA-256 (bench.digests), its own digest and
    how many files it lists."""

    file: Literal["SHA256SUMS"]
    sha256: Annotated[str, Field(strict=True, pattern="^[0-9a-f]{64}$")]
    files: Annotated[int, Field(strict=True, ge=0)]


class SplitsFile(Open):
    """What every reader needs of manifest.json: the sample ids of each split and the digests of the files."""

    splits: dict[Name, list[SampleId]]
    digests: DigestsEntry
    records: list[ManifestRecord] = []


class ManifestFile(SplitsFile, Versioned):
    records: list[ManifestRecord]
    composition: dict[str, Any] = {}
    sources: dict[str, Any] = {}


class MetaFile(_SampleLabels):
    pass


class MinimalReworkFile(Open):
    moved_parts: Annotated[list[Name], Field(max_length=MAX_PARTS)]
    moved_part_count: Annotated[int, Field(strict=True, ge=0, le=MAX_PARTS)]
    route_id: Name
    action_ids: list[Name]


class ProofModel(Open):
    """reference.json's proof object: how the plan was obtained; `optimal` says whether it is proven minimal
    (over every plan), `grounded_optimal` whether over the grounded universe only (SEMANTICS §9), `proved_by`
    "engine-search" where the plan is the engine search's, proved shortest over every engine plan."""

    optimal: StrictBool
    method: Optional[Name] = None
    grounded_optimal: Optional[StrictBool] = None
    proved_by: Optional[Literal["engine-search"]] = None
    objective: Optional[Literal["moved-parts,actions", "actions", "moved-parts"]] = None
    moved_parts: Optional[Annotated[int, Field(strict=True, ge=0)]] = None
    actions: Optional[Annotated[int, Field(strict=True, ge=0)]] = None


class ReferenceFile(Open):
    """reference.json: the output contract plus how the plan was obtained (sample_id, proof)."""

    annotation: AnnotationModel
    rework_plan: ReworkPlanModel
    proof: Optional[ProofModel] = None


class DecisionModel(Strict):
    """A structured intent (o, P, g) as decision.json holds it (SEMANTICS §8)."""

    operation: Literal["Place", "Align", "Lock", "Recover", "Inspect", "Execute Subtask"]
    involved_parts: Annotated[list[Name], Field(max_length=MAX_PARTS)]
    next_subgoal: Annotated[str, Field(strict=True, max_length=100_000)]


class OptimumModel(Strict):
    moved_parts: Annotated[int, Field(strict=True, ge=0, le=2 * MAX_PARTS)]
    actions: Annotated[int, Field(strict=True, ge=0)]


class DecisionFile(Strict):
    """decision.json of an Assembly Decision sample: the reference decision, every valid one (the decisions
    of the first steps of every optimal plan), those first steps, the optimum and its canonical plan."""

    sample_id: SampleId
    reference: DecisionModel
    valid: Annotated[list[DecisionModel], Field(min_length=1)]
    first_steps: list[ActionModel]
    optimum: OptimumModel
    reference_plan: list[ActionModel]
    episode: dict[str, Any]


BENCH_FILE_MODELS: dict[str, type[BaseModel]] = {
    "manifest.json": ManifestFile, "meta.json": MetaFile, "minimal_rework.json": MinimalReworkFile,
    "reference.json": ReferenceFile, "decision.json": DecisionFile}
