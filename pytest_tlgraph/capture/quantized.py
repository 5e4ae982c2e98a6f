"""The scheme of a quantized op's packed weight, written as a call argument.

Quantized linear and convolution ops take their weight packed in a TorchScript object
(``LinearPackedParamsBase``, ``Conv2dPackedParamsBase``), which a call skeleton would
otherwise keep by type name alone: per-tensor and per-channel quantization, or int8 and
float16 weights, would draw the same. :func:`packed_scheme` reads what the packing
decided (the weight's dtype, its quantization scheme and, per channel, the axis), never
a learned value (scales and zero points change with every retrain).
"""

from __future__ import annotations

from typing import Any, Final

import torch

__all__ = ["QUANTIZED_MATMULS", "packed_scheme", "quantized_matmul_work"]

#: Dynamically quantized linear calls: the activation is quantized on the fly and
#: multiplied by the packed int8 (or float16) weight, so they cost what ``linear`` costs.
QUANTIZED_MATMULS: Final = frozenset({"linear_dynamic", "linear_dynamic_fp16"})


def packed_scheme(value: Any) -> dict[str, Any] | None:
    """``{"dtype": ..., "qscheme": ..., "axis": ...}`` of a packed weight object, or
    ``None`` for anything else (or a packing that cannot be read back)."""
    if not isinstance(value, torch.ScriptObject) or not hasattr(value, "unpack"):
        return None
    try:
        with torch._C.DisableTorchFunction():
            unpacked = value.unpack()
            weight = unpacked[0] if isinstance(unpacked, tuple) else unpacked
            if not isinstance(weight, torch.Tensor):
                return None
            out: dict[str, Any] = {"dtype": weight.dtype}
            if weight.is_quantized:
                scheme = weight.qscheme()
                out["qscheme"] = str(scheme).removeprefix("torch.")
                if scheme in (torch.per_channel_affine, torch.per_channel_symmetric,
                              torch.per_channel_affine_float_qparams):  # fmt: skip
                    out["axis"] = int(weight.q_per_channel_axis())
    except (RuntimeError, AttributeError, TypeError):
        return None
    return out


def quantized_matmul_work(first: torch.Tensor, args: tuple[Any, ...]) -> int | None:
    """The forward FLOPs of a :data:`QUANTIZED_MATMULS` call ``(input, packed, ...)``:
    two per multiply-accumulate, ``2 * rows * in_features * out_features``, as torch's
    counter reads ``linear``. ``None`` when the packed weight cannot be read back."""
    packed = args[1] if len(args) > 1 else None
    unpack = getattr(packed, "unpack", None)
    if not isinstance(packed, torch.ScriptObject) or not callable(unpack):
        return None
    try:
        with torch._C.DisableTorchFunction():
            unpacked = unpack()
    except (RuntimeError, AttributeError, TypeError):
        return None
    weight = unpacked[0] if isinstance(unpacked, tuple) else unpacked
    if not isinstance(weight, torch.Tensor) or weight.dim() != 2 or not first.dim():
        return None
    out_features, in_features = weight.shape
    if first.shape[-1] != in_features:
        return None
    return 2 * (first.numel() // in_features) * in_features * out_features
