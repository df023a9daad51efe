//! Value types of the IR: exact tensor types (dtype, device, rank) and scalars.
//!
//! Concrete sizes are never part of a type: annotations prove dtype, device and rank only,
//! so sizes are checked by the runtime on every call.

use std::fmt;

use serde::Serialize;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub enum DType {
    F32,
    I64,
    /// float64 (extended surface only: the `TensorF64Cpu*` markers).
    F64,
    /// bfloat16 (extended surface only: the `TensorBF16Cpu*` markers).
    BF16,
}

impl DType {
    /// A floating dtype: the ones the float ops take (f32, and f64 and bf16 where the
    /// extended surface's dtype lane admits them).
    pub fn is_float(self) -> bool {
        matches!(self, DType::F32 | DType::F64 | DType::BF16)
    }

    /// The dtype as torch names it (`float32`, `float64`, `bfloat16`, `int64`).
    pub fn torch_name(self) -> &'static str {
        match self {
            DType::F32 => "float32",
            DType::I64 => "int64",
            DType::F64 => "float64",
            DType::BF16 => "bfloat16",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub enum Device {
    Cpu,
    /// Exactly `cuda:0`; the build-only CUDA slice of the seed.
    Cuda0,
}

/// Ranks the surface can express. Rank 4+ have no marker type; ranks 0 and 3 only under the
/// extended surface ([`Marker::reference`]: `TensorF32Cpu0D`, `TensorF32Cpu3D`, their float64
/// and bfloat16 forms and `TensorI64Cpu2D` are ours).
pub const SUPPORTED_RANKS: [u8; 4] = [0, 1, 2, 3];

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct TensorType {
    pub dtype: DType,
    pub device: Device,
    pub rank: u8,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub enum Type {
    Tensor(TensorType),
    Int,
    Bool,
    /// A Python `float` (f64).
    Float,
}

/// The annotation markers of `rextio_torch.types`, with their plugin type keys. Declared
/// once, here: the claim rules' keys and the Rextio plugin's types
/// (`rextio_torch.rextio_plugin`, through `_native.plugin_surface()`, the five with
/// [`Marker::reference`] only) are read from this list; `python/rextio_torch/types.py` (which
/// imports nothing) is checked against it by a test.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Marker {
    pub name: &'static str,
    pub key: &'static str,
    pub ty: TensorType,
    /// One of the reference plugin's five types. The others (float32 ranks 0 and 3, rank 2
    /// int64, float64 and bfloat16 of ranks 0 to 3) are the extended surface's: under the reference surface their annotation is not a known
    /// type (the function stays on Python), and the Rextio plugin never lists them.
    pub reference: bool,
}

pub const MARKERS: [Marker; 16] = [
    Marker {
        name: "TensorF32Cpu2D",
        key: "rextio-torch/tensor-f32-cpu-2d",
        ty: TensorType::F32_CPU_2D,
        reference: true,
    },
    Marker {
        name: "TensorF32Cpu1D",
        key: "rextio-torch/tensor-f32-cpu-1d",
        ty: TensorType::F32_CPU_1D,
        reference: true,
    },
    Marker {
        name: "TensorI64Cpu1D",
        key: "rextio-torch/tensor-i64-cpu-1d",
        ty: TensorType::I64_CPU_1D,
        reference: true,
    },
    Marker {
        name: "TensorF32Cuda0_2D",
        key: "rextio-torch/tensor-f32-cuda0-2d",
        ty: TensorType::F32_CUDA0_2D,
        reference: true,
    },
    Marker {
        name: "TensorF32Cuda0_1D",
        key: "rextio-torch/tensor-f32-cuda0-1d",
        ty: TensorType::F32_CUDA0_1D,
        reference: true,
    },
    Marker {
        name: "TensorF32Cpu3D",
        key: "rextio-torch/tensor-f32-cpu-3d",
        ty: TensorType::F32_CPU_3D,
        reference: false,
    },
    Marker {
        name: "TensorI64Cpu2D",
        key: "rextio-torch/tensor-i64-cpu-2d",
        ty: TensorType::I64_CPU_2D,
        reference: false,
    },
    Marker {
        name: "TensorF64Cpu2D",
        key: "rextio-torch/tensor-f64-cpu-2d",
        ty: TensorType::F64_CPU_2D,
        reference: false,
    },
    Marker {
        name: "TensorF64Cpu1D",
        key: "rextio-torch/tensor-f64-cpu-1d",
        ty: TensorType::F64_CPU_1D,
        reference: false,
    },
    Marker {
        name: "TensorBF16Cpu2D",
        key: "rextio-torch/tensor-bf16-cpu-2d",
        ty: TensorType::BF16_CPU_2D,
        reference: false,
    },
    Marker {
        name: "TensorBF16Cpu1D",
        key: "rextio-torch/tensor-bf16-cpu-1d",
        ty: TensorType::BF16_CPU_1D,
        reference: false,
    },
    Marker {
        name: "TensorF32Cpu0D",
        key: "rextio-torch/tensor-f32-cpu-0d",
        ty: TensorType::F32_CPU_0D,
        reference: false,
    },
    Marker {
        name: "TensorF64Cpu0D",
        key: "rextio-torch/tensor-f64-cpu-0d",
        ty: TensorType::F64_CPU_0D,
        reference: false,
    },
    Marker {
        name: "TensorF64Cpu3D",
        key: "rextio-torch/tensor-f64-cpu-3d",
        ty: TensorType::F64_CPU_3D,
        reference: false,
    },
    Marker {
        name: "TensorBF16Cpu0D",
        key: "rextio-torch/tensor-bf16-cpu-0d",
        ty: TensorType::BF16_CPU_0D,
        reference: false,
    },
    Marker {
        name: "TensorBF16Cpu3D",
        key: "rextio-torch/tensor-bf16-cpu-3d",
        ty: TensorType::BF16_CPU_3D,
        reference: false,
    },
];

impl Type {
    /// `int`, `bool` or `float`.
    pub fn is_scalar(self) -> bool {
        matches!(self, Type::Int | Type::Bool | Type::Float)
    }
}

impl TensorType {
    pub const F32_CPU_2D: TensorType = TensorType {
        dtype: DType::F32,
        device: Device::Cpu,
        rank: 2,
    };
    pub const F32_CPU_1D: TensorType = TensorType {
        dtype: DType::F32,
        device: Device::Cpu,
        rank: 1,
    };
    pub const I64_CPU_1D: TensorType = TensorType {
        dtype: DType::I64,
        device: Device::Cpu,
        rank: 1,
    };
    /// A float32 scalar tensor (`x.sum()`; the extended surface's `TensorF32Cpu0D`).
    pub const F32_CPU_0D: TensorType = TensorType {
        dtype: DType::F32,
        device: Device::Cpu,
        rank: 0,
    };
    pub const F32_CPU_3D: TensorType = TensorType {
        dtype: DType::F32,
        device: Device::Cpu,
        rank: 3,
    };
    pub const I64_CPU_2D: TensorType = TensorType {
        dtype: DType::I64,
        device: Device::Cpu,
        rank: 2,
    };
    pub const F32_CUDA0_2D: TensorType = TensorType {
        dtype: DType::F32,
        device: Device::Cuda0,
        rank: 2,
    };
    pub const F32_CUDA0_1D: TensorType = TensorType {
        dtype: DType::F32,
        device: Device::Cuda0,
        rank: 1,
    };
    pub const F64_CPU_2D: TensorType = TensorType {
        dtype: DType::F64,
        device: Device::Cpu,
        rank: 2,
    };
    pub const F64_CPU_1D: TensorType = TensorType {
        dtype: DType::F64,
        device: Device::Cpu,
        rank: 1,
    };
    pub const BF16_CPU_2D: TensorType = TensorType {
        dtype: DType::BF16,
        device: Device::Cpu,
        rank: 2,
    };
    pub const BF16_CPU_1D: TensorType = TensorType {
        dtype: DType::BF16,
        device: Device::Cpu,
        rank: 1,
    };
    /// A float64 scalar tensor (`x.sum()` of a float64 tensor; `TensorF64Cpu0D`).
    pub const F64_CPU_0D: TensorType = TensorType {
        dtype: DType::F64,
        device: Device::Cpu,
        rank: 0,
    };
    pub const F64_CPU_3D: TensorType = TensorType {
        dtype: DType::F64,
        device: Device::Cpu,
        rank: 3,
    };
    /// A bfloat16 scalar tensor (`x.sum()` of a bfloat16 tensor; `TensorBF16Cpu0D`).
    pub const BF16_CPU_0D: TensorType = TensorType {
        dtype: DType::BF16,
        device: Device::Cpu,
        rank: 0,
    };
    pub const BF16_CPU_3D: TensorType = TensorType {
        dtype: DType::BF16,
        device: Device::Cpu,
        rank: 3,
    };

    pub fn with_rank(self, rank: u8) -> TensorType {
        TensorType { rank, ..self }
    }

    pub fn with_dtype(self, dtype: DType) -> TensorType {
        TensorType { dtype, ..self }
    }

    /// The marker that annotates this type, if the surface has one.
    pub fn marker(self) -> Option<&'static Marker> {
        MARKERS.iter().find(|m| m.ty == self)
    }
}

impl Marker {
    /// The marker of `ty`, at compile time (a type without one fails the build).
    pub const fn of(ty: TensorType) -> Marker {
        let mut i = 0;
        while i < MARKERS.len() {
            let m = MARKERS[i];
            if m.ty.dtype as u8 == ty.dtype as u8
                && m.ty.device as u8 == ty.device as u8
                && m.ty.rank == ty.rank
            {
                return m;
            }
            i += 1;
        }
        panic!("no marker for this tensor type")
    }

    pub fn by_name(name: &str) -> Option<&'static Marker> {
        MARKERS.iter().find(|m| m.name == name)
    }

    pub fn by_key(key: &str) -> Option<&'static Marker> {
        MARKERS.iter().find(|m| m.key == key)
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            DType::F32 => "f32",
            DType::I64 => "i64",
            DType::F64 => "f64",
            DType::BF16 => "bf16",
        })
    }
}

impl fmt::Display for Device {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Device::Cpu => "cpu",
            Device::Cuda0 => "cuda0",
        })
    }
}

/// Text form used by the printer, the parser and diagnostics: `tensor<f32, cpu, 2>`.
impl fmt::Display for TensorType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "tensor<{}, {}, {}>", self.dtype, self.device, self.rank)
    }
}

impl fmt::Display for Type {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Type::Tensor(t) => t.fmt(f),
            Type::Int => f.write_str("int"),
            Type::Bool => f.write_str("bool"),
            Type::Float => f.write_str("float"),
        }
    }
}
