"""Hugging Face interop of a model with `hf_config:` and `hf_mapping:` sections.

- `constructor_arguments(decl, config)`: the model's constructor parameters read from a
  `transformers` config object (or dict) through `param_mapping`.
- `import_weights(decl, root, state)`: a `transformers` state dict (names -> arrays or
  torch tensors) -> Strata params (dotted names -> numpy arrays), through the mapping:
  a direct name, `{i}` per-layer placeholders, `fuse(a, b, ..., dim=)` (concatenation),
  `transform(name, fn: transpose|negate_exp)` and optional entries (`target?`).
- `export_weights(decl, root, params)`: the inverse (fused tensors split again, by the
  entry's `sizes=[...]` or into equal parts; transforms inverted).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

import numpy as np

from strata.frontends.dsl import syntax as s
from strata.frontends.dsl.consts import evaluate, evaluate_int
from strata.frontends.dsl.errors import DslError
from strata.frontends.dsl.resolve import Instance

TRANSFORMS: dict[str, tuple[Callable[[np.ndarray], np.ndarray], Callable[[np.ndarray], np.ndarray]]] = {
    "transpose": (lambda a: np.ascontiguousarray(a.T), lambda a: np.ascontiguousarray(a.T)),
    "negate_exp": (lambda a: -np.exp(a), lambda a: np.log(-a)),
    "negate": (np.negative, np.negative),
}
"""transform(fn: name) -> (on import, on export)."""

_PLACEHOLDER = re.compile(r"\{(\w+)\}")


def constructor_arguments(decl: s.ModuleDecl, config: object) -> dict[str, object]:
    """The constructor parameters `param_mapping` names, read from `config`."""
    if decl.hf_config is None:
        raise DslError("E010", f"{decl.name} has no hf_config: section", decl.loc)
    values = config if isinstance(config, Mapping) else config.to_dict() if hasattr(config, "to_dict") else vars(config)
    arguments = {}
    for parameter, field in decl.hf_config.param_mapping:
        value = _field(values, field)
        if value is None:
            raise DslError("E010", f"the Hugging Face config has no field '{field}' (for parameter {parameter})", decl.hf_config.loc)
        arguments[parameter] = value
    return arguments


def _field(values: Mapping, field: str) -> object:
    """`field` at the top of the config, or inside one of its dict-valued fields (newer
    `transformers` keep `rope_theta` under `rope_parameters`)."""
    if values.get(field) is not None:
        return values[field]
    for nested in values.values():
        if isinstance(nested, Mapping) and nested.get(field) is not None:
            return nested[field]
    return None


def _numpy(value: object) -> np.ndarray:
    if hasattr(value, "detach"):
        value = value.detach().cpu().float().numpy() if str(getattr(value, "dtype", "")) == "torch.bfloat16" \
            else value.detach().cpu().numpy()
    return np.asarray(value)


def _targets(entry: s.HfWeight, leaves: Mapping[str, tuple[int, ...]]) -> list[tuple[str, dict[str, str]]]:
    """The params an entry's target names, with the placeholder values of each."""
    parts = _PLACEHOLDER.split(entry.target.replace("[", ".").replace("]", ""))
    pattern = re.compile("".join(re.escape(p) if i % 2 == 0 else f"(?P<{p}>\\d+)" for i, p in enumerate(parts)) + "$")
    return [(name, m.groupdict()) for name in leaves if (m := pattern.match(name))]


def _substitute(template: str, values: Mapping[str, str]) -> str:
    return _PLACEHOLDER.sub(lambda m: values.get(m.group(1), m.group(0)), template)


def import_weights(decl: s.ModuleDecl, root: Instance, state: Mapping[str, object]) -> dict[str, np.ndarray]:
    leaves = {leaf.name: leaf.shape for leaf in root.all_leaves()}
    params: dict[str, np.ndarray] = {}
    for entry in decl.hf_mapping:
        for name, values in _targets(entry, leaves):
            sources = [_substitute(source, values) for source in entry.sources]
            missing = [n for n in sources if n not in state]
            if missing:
                if entry.optional:
                    continue
                raise DslError("E010", f"{name}: the state dict has no '{missing[0]}'", entry.loc)
            arrays = [_numpy(state[n]) for n in sources]
            if entry.kind == "fuse":
                dim = evaluate_int(entry.dim, root.constants, "fuse's dim") if entry.dim is not None else 0
                value = np.concatenate(arrays, axis=dim)
            elif entry.kind == "transform":
                value = _transform(entry)[0](arrays[0])
            else:
                value = arrays[0]
            if value.shape != leaves[name]:
                raise DslError("E010", f"{name} is {list(leaves[name])}, the mapped weight is {list(value.shape)}", entry.loc)
            params[name] = value
    unmapped = sorted(set(leaves) - set(params))
    if unmapped:
        raise DslError("E010", f"no hf_mapping entry (or checkpoint tensor) for {', '.join(unmapped[:4])}"
                       f"{' and more' if len(unmapped) > 4 else ''}", decl.loc)
    return {name: params[name] for name in leaves}  # in argument order


def export_weights(decl: s.ModuleDecl, root: Instance, params: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    leaves = {leaf.name: leaf.shape for leaf in root.all_leaves()}
    state: dict[str, np.ndarray] = {}
    for entry in decl.hf_mapping:
        for name, values in _targets(entry, leaves):
            sources = [_substitute(source, values) for source in entry.sources]
            value = np.asarray(params[name])
            if entry.kind == "fuse":
                dim = evaluate_int(entry.dim, root.constants, "fuse's dim") if entry.dim is not None else 0
                for source, piece in zip(sources, _split(value, dim, len(sources), entry, root)):
                    state[source] = piece
            elif entry.kind == "transform":
                state[sources[0]] = _transform(entry)[1](value)
            else:
                state[sources[0]] = value
    return state


def _split(value: np.ndarray, dim: int, count: int, entry: s.HfWeight, root: Instance) -> list[np.ndarray]:
    if entry.sizes is not None:
        sizes = evaluate(entry.sizes, root.constants)
        if not isinstance(sizes, list) or len(sizes) != count or sum(sizes) != value.shape[dim]:
            raise DslError("E010", f"fuse sizes {sizes!r} must be {count} sizes adding up to {value.shape[dim]}", entry.loc)
    elif value.shape[dim] % count:
        raise DslError("E010", f"cannot split {value.shape[dim]} into {count} equal parts: give sizes=[...]", entry.loc)
    else:
        sizes = [value.shape[dim] // count] * count
    return np.split(value, np.cumsum(sizes)[:-1], axis=dim)


def _transform(entry: s.HfWeight):
    if entry.function not in TRANSFORMS:
        raise DslError("E010", f"unknown transform fn '{entry.function}' (known: {', '.join(TRANSFORMS)})", entry.loc)
    return TRANSFORMS[entry.function]
