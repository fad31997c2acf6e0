"""cases_tiles.py - differential cases for the register-tiled products
(lib/gpu/kernels/gemm_tiled.kl: 64 x 64 tiles, 4 x 4 outputs per
invocation, chosen where a target asks for register tiles and both sides
of the product are at least 32): sizes that end mid-tile and mid-step of K,
batches with a broadcast operand, the Gemm's transposes, alpha and a full C,
grouped and strided convolutions with the bias, residual and activation
epilogue, and a pointwise convolution. On a target without register tiles
(spirv) the same cases run the 16 x 16 kernels. Imported by cases.py."""
import numpy as np

F32 = np.float32


def randn(r, *shape):
    return r.standard_normal(shape).astype(F32)


def matmul_tiles_bias_relu(m, r):
    a = m.inp("a", randn(r, 2, 97, 83))
    b = m.weight("b", randn(r, 83, 70))
    c = m.weight("c", randn(r, 70))
    m.node("MatMul", ["a", "b"], "ab")
    m.node("Add", ["ab", "c"], "abc")
    m.out("y", np.maximum(np.matmul(a, b) + c, 0))
    m.node("Relu", ["abc"], "y")


def gemm_tiles_alpha_beta(m, r):
    a = m.inp("a", randn(r, 45, 130))
    b = m.weight("w", randn(r, 45, 66))
    c = m.inp("c", randn(r, 130, 66))
    m.out("y", F32(1.5) * (a.T @ b) + F32(0.5) * c)
    m.node("Gemm", ["a", "w", "c"], "y", transA=1, alpha=1.5, beta=0.5)


def conv_tiles_grouped_residual(m, r):
    x = m.inp("x", randn(r, 2, 8, 13, 13))
    w = m.weight("w", randn(r, 64, 4, 3, 3))
    b = m.weight("b", randn(r, 64))
    s = m.inp("s", randn(r, 2, 64, 7, 7))
    m.node("Conv", ["x", "w", "b"], "cv", strides=[2, 2], pads=[1, 1, 1, 1], group=2)
    m.node("Add", ["cv", "s"], "sum")
    m.out("y", np.zeros((2, 64, 7, 7), F32))   # the shape only: the C target is the reference
    m.node("Relu", ["sum"], "y")


def conv_tiles_pointwise(m, r):
    x = m.inp("x", randn(r, 1, 40, 9, 9))
    w = m.weight("w", randn(r, 72, 40, 1, 1))
    m.out("y", np.zeros((1, 72, 9, 9), F32))
    m.node("Conv", ["x", "w"], "y")


CASES = [matmul_tiles_bias_relu, gemm_tiles_alpha_beta, conv_tiles_grouped_residual, conv_tiles_pointwise]
