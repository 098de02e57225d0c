"""The CPU runtime: JIT-compile a program lowered by cpu-pipeline, bind once, execute.

    exe = CpuExecutable(lowered)                 # JIT, allocate every buffer once
    outs = exe(x, w)                             # launches kernels; allocates nothing

(`strata.compile(module, target="cpu")` lowers the module and builds one: targets/cpu.py.)

Binding allocates each arena of the memory plan (plan-memory) once, 64-byte aligned, and
views every `tile.buffer` at its planned offset. Executing walks the program's
launch list and calls each kernel's JIT-compiled function on buffer pointers. A launch
whose grid has several points and enough bytes runs on all cores: the runtime calls the
kernel's OpenMP entry (`<kernel>.parallel`, lowering/llvm/parallel.py), which splits the
grid range [0, G) into one chunk per thread of an OpenMP team; without libgomp, it calls
the kernel per chunk from a Python thread pool (ctypes releases the GIL during the call).
Kernels stay plain loops that LLVM vectorizes.

Inputs are used in place when already contiguous with the right dtype. Results are
written straight into fresh arrays: each call allocates the plan's `external` arena (the
results' arena) anew and points the result buffers at it, so the kernels write the
returned arrays themselves (no copy out) and a later call never changes arrays the
caller holds. (Only a result that is an input, a constant, or the same buffer as an
earlier result is copied.)

Threads: the pool has `STRATA_NUM_THREADS` workers (read at import; default all cores),
changed at run time with `set_num_threads(n)`. Launches split their grid when they run,
from the count at that moment, so a change applies to existing executables too.

Caching: `compile_cached` keys a compile by everything that decides its code (runtime/
compile_cache.py) and stores the executable's plain-data description (`CpuProgram`) with
the kernels' object code; a hit in a new process builds the executable from those,
skipping the xDSL pipeline and LLVM, and lowers the graph again only if `module` or
`lowered` is read.
"""

from __future__ import annotations

import ctypes
import functools
import hashlib
import io
import math
import os
import threading
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from importlib.metadata import version

import numpy as np
from xdsl.dialects.builtin import ModuleOp
from xdsl.printer import Printer

from strata.runtime import compile_cache
from strata.support.dtypes import NUMPY_DTYPES
from strata.support.errors import ExecutionError, InputError, StrataError
from strata.support.timing import timed
from strata.lowering.llvm.translate import translate_module
from strata.lowering.tile_to_loops.kernel import kernel_functions
from strata.lowering.llvm.jit import JitModule, host_fingerprint
from strata.lowering.llvm.parallel import openmp_library, parallel_name
from strata.runtime.program import BufferSpec, LoweredProgram, check_kernel_abi
from strata.runtime.reference.interpreter import InputSpecs
from strata.transforms.plan_memory import buffer_bytes

ALIGNMENT = 64
PARALLEL_MIN_BYTES = 1 << 18
"""Launches touching fewer bytes run on one thread: a pool round trip costs more."""


def checked_thread_count(n: object, name: str) -> int:
    """`n` as a worker count (a positive int, or its decimal text); StrataError naming
    `name` otherwise."""
    try:
        count = int(n) if isinstance(n, (int, str)) and not isinstance(n, bool) else None
    except ValueError:
        count = None
    if count is None or count < 1:
        raise StrataError(f"{name} must be a positive integer (a thread count), got {n!r}")
    return count


WORKER_COUNT = checked_thread_count(os.environ.get("STRATA_NUM_THREADS") or os.cpu_count() or 1, "STRATA_NUM_THREADS")
_WORKERS = ThreadPoolExecutor(max_workers=WORKER_COUNT)
"""Shared by every executable (a call blocks until its chunks finish)."""


def set_num_threads(n: int) -> None:
    """Run large launches on `n` threads from now on (executables already compiled
    included). The old pool's threads exit once its queued chunks finish."""
    global WORKER_COUNT, _WORKERS
    count = checked_thread_count(n, "strata.set_num_threads: n")
    old, _WORKERS, WORKER_COUNT = _WORKERS, ThreadPoolExecutor(max_workers=count), count
    old.shutdown(wait=False)


def get_num_threads() -> int:
    return WORKER_COUNT


@functools.lru_cache(maxsize=1024)
def grid_chunks(grid_size: int, workers: int) -> tuple[tuple[int, int], ...]:
    """[0, grid_size) as `workers` (at most one per grid point) contiguous ranges."""
    workers = min(workers, grid_size) if grid_size > 1 else 1
    bounds = [grid_size * w // workers for w in range(workers + 1)]
    return tuple(zip(bounds, bounds[1:]))


JIT_CACHE_SIZE = 64
_JIT_CACHE: OrderedDict[str, JitModule] = OrderedDict()
"""Compiled kernel modules by the hash of their LLVM IR (in-process), least
recently used first; at most JIT_CACHE_SIZE are kept (an executable holds its own
JitModule, so evicting one never invalidates a live executable)."""
_JIT_CACHE_LOCK = threading.Lock()


def aligned_empty(count: int, dtype: np.dtype) -> np.ndarray:
    raw = np.empty(count * dtype.itemsize + ALIGNMENT, dtype=np.uint8)
    start = -raw.ctypes.data % ALIGNMENT
    return raw[start : start + count * dtype.itemsize].view(dtype)


class KernelFunctions:
    """Kernel functions of a lowered module, as `translate_module` reads a module (its
    `ops`): translated where they are, without copying them into a module of their own."""

    def __init__(self, functions: list):
        self.ops = functions


OPT_LEVEL = 2
"""LLVM's optimization level for the kernels. O3's more aggressive unrolling made some
row and elementwise kernels of the transformer block's training step 10-60x larger
(3.9 MB of optimized IR instead of 0.8 MB) for no measured run-time gain (the step,
softmax, layernorm, a fused exp, a row sum: within noise, same results); the matmul
micro-kernels, whose loops are already unrolled by construction, run the same at O2
(single-threaded x.T @ y and x @ y at 1024x512x256: 106 / 162 GFLOP/s at O2 against
98 / 151 at O3). O2 everywhere takes the block's training step from 4.3 to 3.6 s."""


def kernels_ir_and_key(module: ModuleOp) -> tuple[list[tuple[str, int]], str]:
    """The LLVM IR of the module's kernels as (text, LLVM opt level) parts, and their hash
    (the in-process JIT key: the IR is exactly what LLVM compiles, and is needed on a miss
    anyway)."""
    parts = translated(module)
    with timed("JIT cache key (LLVM IR hashed)"):
        digest = hashlib.sha256()
        for text, level in parts:
            digest.update(f"O{level} {len(text)}\n".encode())
            digest.update(text.encode())
        return parts, digest.hexdigest()


def jit_kernels(module: ModuleOp) -> JitModule:
    parts, key = kernels_ir_and_key(module)
    return cached_jit(key, lambda: JitModule(parts, OPT_LEVEL))


def translated(module: ModuleOp) -> list[tuple[str, int]]:
    """The LLVM IR of the module's kernel functions (the program function is not code), as
    one part at OPT_LEVEL."""
    with timed("translate to LLVM IR"):
        functions = kernel_functions(module)
        if not functions:
            return []
        llvm_module = translate_module(KernelFunctions(functions), openmp_library() is not None)  # type: ignore[arg-type]
        return [(str(llvm_module), OPT_LEVEL)]


def cached_jit(key: str, make: Callable[[], JitModule]) -> JitModule:
    """The in-process JitModule for kernels hashing to `key`, made by `make` if none."""
    with _JIT_CACHE_LOCK:
        cached = _JIT_CACHE.get(key)
        if cached is not None:
            _JIT_CACHE.move_to_end(key)
            return cached
    jit = make()
    with _JIT_CACHE_LOCK:
        jit = _JIT_CACHE.setdefault(key, jit)  # another thread may have compiled it too
        _JIT_CACHE.move_to_end(key)
        while len(_JIT_CACHE) > JIT_CACHE_SIZE:
            _JIT_CACHE.popitem(last=False)
    return jit


@functools.cache
def kernel_prototype(buffer_count: int) -> type:
    """i32 kernel(ptr * buffer_count, i64 begin, i64 end)."""
    return ctypes.CFUNCTYPE(ctypes.c_int32, *([ctypes.c_void_p] * buffer_count), ctypes.c_int64, ctypes.c_int64)


@dataclass(frozen=True)
class LaunchSpec:
    kernel: str
    slots: tuple[int, ...]
    """Indices into the executable's slot table (inputs first, then bound buffers)."""
    grid_size: int
    touched: int
    """Bytes of the launch's arguments: small launches stay on the caller's thread."""
    error: str
    """What a nonzero status means (the kernel's tile.check messages)."""

    @property
    def splits(self) -> bool:
        """Whether the launch is worth splitting across threads."""
        return self.grid_size > 1 and self.touched >= PARALLEL_MIN_BYTES


@dataclass(frozen=True)
class CpuProgram:
    """Everything a CpuExecutable runs, as plain data (no xDSL objects): what the compile
    cache stores beside the object code. `of` checks the lowered program (the launches
    write no input; each kernel has the runtime's calling convention)."""

    inputs: InputSpecs
    buffers: tuple[BufferSpec, ...]
    launches: tuple[LaunchSpec, ...]
    results: tuple[int, ...]
    result_shapes: tuple[tuple[int, ...], ...]
    plan: dict

    @staticmethod
    def of(lowered: LoweredProgram) -> CpuProgram:
        buffers, launches, results = lowered.bind(BufferSpec.of)
        kernels = {f.sym_name.data: f for f in kernel_functions(lowered.module)}
        specs = []
        for op, slots in launches:
            kernel = kernels[op.kernel.string_value()]
            name = kernel.sym_name.data
            check_kernel_abi(kernel, len(slots), status=False, result=True)
            error = kernel.attributes.get("tile.error")
            specs.append(LaunchSpec(
                name, tuple(slots), math.prod(kernel.attributes["tile.grid"].get_values()),
                sum(buffer_bytes(a) for a in op.args), error.data if error is not None else f"kernel @{name} failed",
            ))  # fmt: skip
        return CpuProgram(lowered.inputs, tuple(buffers), tuple(specs), tuple(results), lowered.result_shapes, lowered.plan)

    def pack(self, kernels_key: str, object_code: bytes) -> bytes:
        """A cache payload: this description, the kernels' in-process key, their object
        code; the buffers' constants as raw blobs after it."""
        names = {dtype: name for name, dtype in NUMPY_DTYPES.items()}
        inits = [b.init for b in self.buffers if b.init is not None]
        inputs = self.inputs
        header = {
            "inputs": [inputs.function, [str(t) for t in inputs.types], inputs.shapes, [names[d] for d in inputs.dtypes], inputs.labels],
            "buffers": [[b.arena, b.offset, b.count, names[b.dtype], None if b.init is None else len(b.init)] for b in self.buffers],
            "launches": [[l.kernel, l.slots, l.grid_size, l.touched, l.error] for l in self.launches],
            "results": self.results, "result_shapes": self.result_shapes, "plan": self.plan, "kernels_key": kernels_key,
        }  # fmt: skip
        return compile_cache.pack(header, [object_code, *(i.tobytes() for i in inits)])

    @staticmethod
    def unpack(payload: bytes) -> tuple[CpuProgram, str, bytes]:
        """`pack`'s (program, kernels key, object code). Input types come back as their
        text (InputSpecs only prints them)."""
        header, (object_code, *inits) = compile_cache.unpack(payload)
        function, types, shapes, dtypes, labels = header["inputs"]
        inputs = InputSpecs(function, tuple(types), tuple(map(tuple, shapes)), tuple(NUMPY_DTYPES[d] for d in dtypes), tuple(labels))
        constants = iter(inits)
        buffers = []
        for arena, offset, count, dtype, init in header["buffers"]:
            dtype = NUMPY_DTYPES[dtype]
            constant = np.frombuffer(next(constants), dtype).copy() if init is not None else None
            if constant is not None and len(constant) != init:
                raise ValueError("a buffer's constant has the wrong size")
            buffers.append(BufferSpec(arena, offset, count, dtype, constant))
        launches = tuple(LaunchSpec(k, tuple(s), g, t, e) for k, s, g, t, e in header["launches"])
        shapes = tuple(map(tuple, header["result_shapes"]))
        program = CpuProgram(inputs, tuple(buffers), launches, tuple(header["results"]), shapes, header["plan"])
        return program, header["kernels_key"], bytes(object_code)


PARALLEL_PROTOTYPE = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int32)
"""i32 kernel.parallel(ptr *buffers, i64 grid, i32 threads) (lowering/llvm/parallel.py)."""


@dataclass
class Launch:
    function: ctypes._CFuncPtr
    spec: LaunchSpec
    parallel: ctypes._CFuncPtr | None = None
    """The kernel's OpenMP entry, where the kernels have one."""
    buffers: ctypes.Array | None = None
    """The pointer array `parallel` reads (refreshed each call)."""


RESULTS_ARENA = "external"
"""The plan's arena of returned buffers (plan-memory): allocated fresh by each call."""


def allocate_arenas(sizes: dict[str, int]) -> dict[str, np.ndarray]:
    """One 64-byte-aligned byte array per non-empty arena."""
    return {name: aligned_empty(size, np.dtype(np.uint8)) for name, size in sizes.items() if size}


class CpuExecutable:
    """A program lowered through cpu-pipeline and JIT-compiled; `bind` (done at
    construction unless `bind=False`) gives it arenas, after which a call allocates only
    the arrays it returns (a fresh results arena), and the generated code nothing.

    Built from a LoweredProgram, each `bind` derives (and checks) its CpuProgram from the
    lowered module as it is then; built by `from_program` (the compile cache), it binds
    the given one, and `lowered`/`module` are computed on first access (on a cache hit,
    by lowering the graph again: a second of work for a large program)."""

    def __init__(self, lowered: LoweredProgram, bind: bool = True):
        self._lowered: LoweredProgram | Callable[[], LoweredProgram] = lowered
        self._program: CpuProgram | None = None
        self.inputs, self.plan, self.result_shapes = lowered.inputs, lowered.plan, lowered.result_shapes
        self.jit = jit_kernels(lowered.module)
        self.lock = threading.Lock()
        """Held by a call from binding the inputs to returning its results (see bind)."""
        if bind:
            self.bind(allocate_arenas(self.plan["arenas"]))

    @classmethod
    def from_program(
        cls, program: CpuProgram, jit: JitModule, lowered: LoweredProgram | Callable[[], LoweredProgram], bind: bool = True
    ) -> CpuExecutable:
        """An executable of `program` whose kernels `jit` holds; `lowered` is the lowered
        program or a function computing it when first asked for."""
        exe = cls.__new__(cls)
        exe._lowered, exe._program, exe.jit, exe.lock = lowered, program, jit, threading.Lock()
        exe.inputs, exe.plan, exe.result_shapes = program.inputs, program.plan, program.result_shapes
        if bind:
            exe.bind(allocate_arenas(exe.plan["arenas"]))
        return exe

    @property
    def lowered(self) -> LoweredProgram:
        if callable(self._lowered):
            self._lowered = self._lowered()
        return self._lowered

    @property
    def module(self) -> ModuleOp:
        """The lowered module: the program function and its kernels."""
        return self.lowered.module

    @property
    def signature(self):
        """The graph entry as given (a copy): argument and result types."""
        return self.lowered.signature

    def bind(self, arenas: dict[str, np.ndarray], lock: threading.Lock | None = None) -> None:
        """View every buffer at its planned offset in `arenas` (each at least the plan's
        size) and resolve every launch to a function pointer. Executables sharing arenas
        must share `lock` too, so that they never run at the same time."""
        if lock is not None:
            self.lock = lock
        self.arenas = arenas
        program = self._program or CpuProgram.of(self.lowered)
        buffers = []
        for spec in program.buffers:
            view, init = spec.view(arenas)
            if init is not None:
                view[...] = init
            buffers.append(view)
        self.results = program.results
        first = len(self.inputs.types)
        external = [(first + i, spec) for i, spec in enumerate(program.buffers) if spec.arena == RESULTS_ARENA]
        # A constant result would have to be written again into each fresh arena.
        self.fresh_results = external if all(spec.init is None for _, spec in external) else []
        fresh_slots = {slot for slot, _ in self.fresh_results}
        self.fresh_flags = tuple(
            slot in fresh_slots and slot not in program.results[:i] for i, slot in enumerate(program.results)
        )
        """Per result: returned as it is (a fresh buffer), or copied (an input, a constant,
        a buffer already returned as an earlier result)."""
        self.storage: list[np.ndarray | None] = [None] * len(self.inputs.types) + buffers
        self.launches = [self._launch(spec) for spec in program.launches]
        self.pointers = [0] * len(self.inputs.types) + [a.ctypes.data for a in buffers]

    def _launch(self, spec: LaunchSpec) -> Launch:
        function = kernel_prototype(len(spec.slots))(self.jit.function_address(spec.kernel))
        if openmp_library() is None or not spec.splits:
            return Launch(function, spec)
        parallel = PARALLEL_PROTOTYPE(self.jit.function_address(parallel_name(spec.kernel)))
        return Launch(function, spec, parallel, (ctypes.c_void_p * len(spec.slots))())

    def __call__(self, *args: object) -> tuple[np.ndarray, ...]:
        inputs = self.inputs.check(args)
        # One call at a time: the input slots and the arenas belong to the executable
        # (and to every executable bound to the same arenas, which shares this lock).
        with self.lock:
            storage, pointers = self.storage, self.pointers
            for i, array in enumerate(inputs):
                array = np.ascontiguousarray(array)
                # An array keeps its data pointer for life: the same array, the same
                # pointer (reading `.ctypes.data` costs most of a microsecond).
                if storage[i] is not array:
                    storage[i], pointers[i] = array, array.ctypes.data
            if self.fresh_results:
                self._fresh_results_arena()
            for launch in self.launches:
                self._run(launch, [pointers[b] for b in launch.spec.slots])
            return tuple(
                self._result(slot, shape, fresh) for slot, shape, fresh in zip(self.results, self.result_shapes, self.fresh_flags)
            )

    def _fresh_results_arena(self) -> None:
        # aligned_empty's arithmetic, reading the address once (`.ctypes.data` costs most
        # of a microsecond on this per-call path).
        size = self.plan["arenas"][RESULTS_ARENA]
        raw = np.empty(size + ALIGNMENT, dtype=np.uint8)
        base = raw.ctypes.data
        start = -base % ALIGNMENT
        for slot, spec in self.fresh_results:
            offset = start + spec.offset
            self.storage[slot] = raw[offset : offset + spec.count * spec.dtype.itemsize].view(spec.dtype)
            self.pointers[slot] = base + offset

    def _result(self, slot: int, shape: tuple[int, ...], fresh: bool) -> np.ndarray:
        # A zero-size result has a (never written) one-element buffer: keep none of it.
        array = self.storage[slot].reshape(-1)[: math.prod(shape)].reshape(shape)
        return array if fresh else array.copy()

    @staticmethod
    def _run(launch: Launch, pointers: list[int]) -> None:
        spec, pool = launch.spec, _WORKERS
        if not spec.splits:
            if launch.function(*pointers, 0, spec.grid_size):
                raise ExecutionError(spec.error)
            return
        if launch.parallel is not None and WORKER_COUNT > 1:
            launch.buffers[:] = pointers
            if launch.parallel(launch.buffers, spec.grid_size, min(WORKER_COUNT, spec.grid_size)):
                raise ExecutionError(spec.error)
            return
        chunks = grid_chunks(spec.grid_size, WORKER_COUNT)
        if len(chunks) == 1:
            statuses = [launch.function(*pointers, *chunks[0])]
        else:
            # The caller runs the first chunk itself: one thread handoff fewer per launch
            # (a pool round trip costs tens of microseconds; a block has ~10 launches).
            futures = [pool.submit(launch.function, *pointers, lo, hi) for lo, hi in chunks[1:]]
            statuses = [launch.function(*pointers, *chunks[0])] + [f.result() for f in futures]
        if any(statuses):
            raise ExecutionError(spec.error)


@functools.cache
def _toolchain() -> str:
    """xDSL's version and the LLVM/host fingerprint (once per process)."""
    return f"xdsl {version('xdsl')} | {host_fingerprint()}"


def program_text(module: ModuleOp) -> str:
    """The module as the cache keys it: printed with every op's location (kernels'
    error messages quote them)."""
    stream = io.StringIO()
    Printer(stream=stream, print_debuginfo=True).print_op(module)
    return stream.getvalue()


def compile_cached(
    module: ModuleOp, options: str, lower: Callable[[ModuleOp], LoweredProgram], bind: bool = True
) -> CpuExecutable:
    """`CpuExecutable(lower(module))`, through the on-disk compile cache: the key covers
    `module` (with locations), `options` (the target's: entry, fusion, ...), Strata's
    source, xDSL, LLVM and the host CPU."""
    if not compile_cache.enabled():
        return CpuExecutable(lower(module), bind=bind)
    with timed("compile cache lookup"):
        key = compile_cache.key("cpu", options, _toolchain(), program_text(module))
        hit = compile_cache.load(key, _loaded)
    if hit is not None:
        graph = module.clone()  # lowered again only if asked for (`module`, `lowered`)
        return CpuExecutable.from_program(*hit, lambda: lower(graph), bind=bind)
    lowered = lower(module)
    program = CpuProgram.of(lowered)
    parts, kernels_key = kernels_ir_and_key(lowered.module)
    jit = cached_jit(kernels_key, lambda: JitModule(parts, OPT_LEVEL))
    with timed("compile cache store"):
        compile_cache.store(key, program.pack(kernels_key, jit.object_code))
    return CpuExecutable.from_program(program, jit, lowered, bind=bind)


def _loaded(payload: bytes) -> tuple[CpuProgram, JitModule]:
    """The entry's program and kernels: the in-process JitModule of the same kernels if
    there is one, else its object code loaded (and not shared: `jit_kernels` callers may
    ask for the LLVM IR, which object code does not keep)."""
    program, kernels_key, object_code = CpuProgram.unpack(payload)
    with _JIT_CACHE_LOCK:
        shared = _JIT_CACHE.get(kernels_key)
    return program, shared or JitModule.from_object(object_code, OPT_LEVEL)


OWN_ARENAS = ("params",)
"""Arenas each bucket keeps to itself: its constants are written once, at bind time."""


class CpuProfiles:
    """One program compiled for several shape buckets (e.g. sequence lengths), sharing one
    set of arenas sized for the largest: a call goes to the bucket matching its input
    shapes, with no re-planning and no allocation when buckets switch.
    Constants (the params arena) stay per bucket."""

    def __init__(self, executables: list[CpuExecutable]):
        sizes: dict[str, int] = {}
        for exe in executables:
            for name, size in exe.plan["arenas"].items():
                if name not in OWN_ARENAS:
                    sizes[name] = max(sizes.get(name, 0), size)
        self.arenas = allocate_arenas(sizes)
        self.lock = threading.Lock()  # the buckets share arenas: one call at a time
        self.buckets = {}
        for exe in executables:
            own = allocate_arenas({name: exe.plan["arenas"][name] for name in OWN_ARENAS})
            exe.bind({**self.arenas, **own}, self.lock)
            self.buckets[exe.inputs.shapes] = exe

    def __call__(self, *args: object) -> tuple[np.ndarray, ...]:
        shapes = tuple(np.shape(a) for a in args)
        bucket = self.buckets.get(shapes)
        if bucket is None:
            known = "; ".join(str(list(map(list, k))) for k in self.buckets)
            raise InputError(f"no profile for input shapes {[list(s) for s in shapes]} (profiles: {known})")
        return bucket(*args)
