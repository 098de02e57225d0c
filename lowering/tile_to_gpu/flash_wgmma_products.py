"""The warpgroup products of the flash kernels (flash_attention_wgmma.py, and the backward's,
flash_attention_grad_wgmma.py): s = q kᵀ of a key block with q in registers or shared
memory, p v with p's accumulator fragments as the a operand, p packed to the words those
fragments are, and the wait that leaves the newer of two product groups in flight.
"""

from __future__ import annotations

from xdsl.dialects.builtin import f32
from xdsl.ir import SSAValue

from strata.lowering.tile_to_gpu.flash_blocks import a_fragment_pairs, p_fragments
from strata.lowering.tile_to_gpu.kernel import GpuKernelLowering
from strata.lowering.tile_to_gpu.warpgroup_loop import (
    FRESH_WGMMA,
    K_TILE,
    ROW_BYTES,
    WARPGROUP_ROWS,
    moved_descriptor,
    stepped_descriptor,
    wait_for_products,
    wgmma_instruction,
)


def wait_for_older(k: GpuKernelLowering, older: list[SSAValue], newer: list[SSAValue]) -> tuple[list[SSAValue], list[SSAValue]]:
    """wgmma.wait_group 1 with two groups in flight: the older one's registers done, the
    newer one's still in flight (both tied through the wait, so neither moves)."""
    values = wait_for_products(k, 1, [*older, *newer])
    return values[: len(older)], values[len(older):]


def score_products(k: GpuKernelLowering, element, q: list[list[SSAValue]] | SSAValue, keys_base: SSAValue,
                   depth: int, key_rows: int, q_rows: int = WARPGROUP_ROWS) -> list[SSAValue]:
    """s = q kᵀ of the key block at `keys_base`: the warpgroup's [64 x key_rows] accumulator,
    D / 16 products of q and k from a K-major descriptor (k16 step i: strip i // 4, 32 bytes
    per step in it), left in flight. q is its a fragments (registers), or the shared address
    of the warpgroup's 64 rows in a swizzled [q_rows x D] tile, read through K-major
    descriptors the same way."""
    in_registers = isinstance(q, list)
    k_first, step_bytes = stepped_descriptor(k, keys_base, True, key_rows)
    if not in_registers:
        q_first, _ = stepped_descriptor(k, q, True, WARPGROUP_ROWS)
    sums: list[SSAValue] = []
    instruction = wgmma_instruction(key_rows, element, False, False) + (".a_registers" if in_registers else "")
    k.inline_ptx("wgmma.fence.sync.aligned", [])
    steps_per_strip = K_TILE // 16
    for step in range(depth // 16):
        strip, inside = divmod(step, steps_per_strip)
        k_at = moved_descriptor(k, k_first, strip * key_rows * ROW_BYTES + inside * step_bytes)
        if in_registers:
            a = q[step]
        else:
            a = [moved_descriptor(k, q_first, strip * q_rows * ROW_BYTES + inside * step_bytes)]
        name = instruction if sums else instruction + FRESH_WGMMA  # the first step starts the sums
        sums = k.inline_ptx(name, [*a, k_at, *sums], key_rows // 2, f32)
    k.inline_ptx("wgmma.commit_group.sync.aligned", [])
    return sums


def packed_p(k: GpuKernelLowering, element, p16: bool, p: list[SSAValue]) -> list[SSAValue]:
    """p (f32 fragments of a [64 x keys] tile) as the words of the p v products' a fragments,
    per 16 keys one fragment (four words), or high and low (see flash_blocks.p_fragments):
    what the loop carries to the next block, half or all of p's registers."""
    return [word for step in range(len(p) // 8) for fragment in p_fragments(k, element, p16, a_fragment_pairs(p, step))
            for word in fragment]  # fmt: skip


def value_products(k: GpuKernelLowering, element, p_words: list[SSAValue], values_base: SSAValue, width: int,
                   key_rows: int, acc: list[SSAValue]) -> list[SSAValue]:
    """acc + p v, left in flight: per 16 keys, p's a fragments (packed_p: one or two) times
    v's 16 rows, N-major (strips of 64 columns key_rows rows of 128 bytes apart)."""
    instruction = wgmma_instruction(width, element, False, True) + ".a_registers"
    steps = key_rows // 16
    per_step = len(p_words) // (4 * steps)
    v_first, v_step = stepped_descriptor(k, values_base, False, key_rows)
    # Every a fragment is written before the fence: registers a wgmma reads must not change
    # after it (ptxas would otherwise insert a warpgroup.arrive before each product).
    k.inline_ptx("wgmma.fence.sync.aligned", [])
    for fragment in range(steps * per_step):
        v_descriptor = moved_descriptor(k, v_first, fragment // per_step * v_step)
        acc = k.inline_ptx(instruction, [*p_words[4 * fragment: 4 * fragment + 4], v_descriptor, *acc], len(acc), f32)
    k.inline_ptx("wgmma.commit_group.sync.aligned", [])
    return acc
