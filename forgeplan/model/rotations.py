"""Rotation arithmetic on plain 3x3 tuples (fast enough for the engine, no numpy on the hot path).

Convention (see encodings/SEMANTICS.md): rotations are Euler angles in degrees, extrinsic x then y then
z, so R = Rz @ Ry @ Rx. Angles are measured about the part's own centroid.
"""

from __future__ import annotations

import itertools
import math
from typing import Callable, TypeVar

Matrix = tuple[tuple[float, float, float], tuple[float, float, float], tuple[float, float, float]]
T = TypeVar("T")


def triple(f: Callable[[int], T]) -> tuple[T, T, T]:
    """(f(0), f(1), f(2)): a vector or matrix row built by index, with the length its type states."""
    return f(0), f(1), f(2)
AXES = ("x", "y", "z")


def axis_matrix(axis: str, angle_deg: float) -> Matrix:
    """Right-handed rotation by `angle_deg` about a principal axis."""
    a = math.radians(angle_deg)
    c, s = _clean(math.cos(a)), _clean(math.sin(a))
    if axis == "x":
        return ((1.0, 0.0, 0.0), (0.0, c, -s), (0.0, s, c))
    if axis == "y":
        return ((c, 0.0, s), (0.0, 1.0, 0.0), (-s, 0.0, c))
    return ((c, -s, 0.0), (s, c, 0.0), (0.0, 0.0, 1.0))


def _clean(v: float) -> float:
    r = round(v)
    return float(r) if abs(v - r) < 1e-12 else v


def matmul(a: Matrix, b: Matrix) -> Matrix:
    return triple(lambda i: triple(lambda j: a[i][0] * b[0][j] + a[i][1] * b[1][j] + a[i][2] * b[2][j]))


def transpose(a: Matrix) -> Matrix:
    return triple(lambda i: triple(lambda j: a[j][i]))


def euler_to_matrix(euler: tuple[float, float, float]) -> Matrix:
    rx, ry, rz = euler
    return matmul(axis_matrix("z", rz), matmul(axis_matrix("y", ry), axis_matrix("x", rx)))


def matrix_to_euler(m: Matrix) -> tuple[float, float, float]:
    """Inverse of `euler_to_matrix`, angles in (-180, 180], rounded to 1e-6 degrees."""
    sy = -m[2][0]
    sy = max(-1.0, min(1.0, sy))
    ry = math.asin(sy)
    if abs(math.cos(ry)) > 1e-9:
        rx = math.atan2(m[2][1], m[2][2])
        rz = math.atan2(m[1][0], m[0][0])
    else:  # gimbal lock: put everything into rx
        rz = 0.0
        rx = math.atan2(-m[1][2], m[1][1])
    return triple(lambda k: _norm_deg(math.degrees((rx, ry, rz)[k])))


def _norm_deg(d: float) -> float:
    d = round(d, 6)
    d = (d + 180.0) % 360.0 - 180.0
    return 180.0 if d == -180.0 else (0.0 if d == 0.0 else d)


def angle_diff(a: float, b: float) -> float:
    """Smallest absolute difference of two angles in degrees."""
    return abs((a - b + 180.0) % 360.0 - 180.0)


def angle_of(m: Matrix) -> float:
    """Rotation angle (degrees, in [0, 180]) of a rotation matrix."""
    c = (m[0][0] + m[1][1] + m[2][2] - 1.0) / 2.0
    return math.degrees(math.acos(max(-1.0, min(1.0, c))))


def axis_angle_of(m: Matrix) -> tuple[str, float] | None:
    """The single principal axis and signed angle of `m`, or None when it is not about one axis."""
    ang = angle_of(m)
    if ang < 1e-9:
        return None
    for axis in AXES:
        for sign in (1.0, -1.0):
            cand = axis_matrix(axis, sign * ang)
            if angle_of(matmul(transpose(cand), m)) < 1e-6:
                return axis, _norm_deg(sign * ang)
    return None


def cube_rotations() -> tuple[tuple[tuple[int, int, int], ...], ...]:
    """The 24 proper rotations of the cube as signed permutation matrices (integers), identity first."""
    mats = []
    for perm in itertools.permutations(range(3)):
        for signs in itertools.product((1, -1), repeat=3):
            m = [[0, 0, 0] for _ in range(3)]
            for row, col in enumerate(perm):
                m[row][col] = signs[row]
            det = (
                m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1])
                - m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0])
                + m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0])
            )
            if det == 1:
                mats.append(triple(lambda r: triple(lambda c: m[r][c])))
    ident = ((1, 0, 0), (0, 1, 0), (0, 0, 1))
    mats.sort(key=lambda m: (m != ident, m))
    return tuple(mats)


def cube_rotation_problem(m) -> str | None:
    """Why `m` (a 3x3 list of integers) is not one of the 24 rotations of the cube, or None when it is."""
    if tuple(tuple(row) for row in m) not in _CUBE:
        return f"{m} is not a rotation of the cube (an integer matrix, orthonormal, determinant +1)"
    return None


def as_float(m) -> Matrix:
    return triple(lambda i: triple(lambda j: float(m[i][j])))


_CUBE = frozenset(cube_rotations())
