//! A writer of NumPy `.npy` files (format version 1.0), for `run --dump`.
//!
//! Layout: the magic `\x93NUMPY`, version bytes `1 0`, a little-endian `u16`
//! header length, then an ASCII Python dict literal
//! `{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }` padded with
//! spaces and ended by `\n` so that the data starts at a multiple of 64
//! bytes, then the elements in C (row-major) order, little-endian.
//!
//! NumPy has no bfloat16 or fp8 types, so those are stored widened to
//! `float32` (exactly: every such value is a float32 value).

use std::io;
use std::path::Path;

use tilec_core::interp::{Tensor, TensorData};
use tilec_core::ir::DType;

const MAGIC: &[u8] = b"\x93NUMPY";
/// The data of a `.npy` file starts at a multiple of this.
pub const ALIGNMENT: usize = 64;

/// The NumPy element type a tensor of `dtype` is stored as: its `descr`
/// code and NumPy's name for it.
pub fn stored_dtype(dtype: DType) -> (&'static str, &'static str) {
    match dtype {
        DType::Bool => ("|b1", "bool"),
        DType::I8 => ("|i1", "int8"),
        DType::I16 => ("<i2", "int16"),
        DType::I32 => ("<i4", "int32"),
        DType::I64 => ("<i8", "int64"),
        DType::U8 => ("|u1", "uint8"),
        DType::U16 => ("<u2", "uint16"),
        DType::U32 => ("<u4", "uint32"),
        DType::U64 => ("<u8", "uint64"),
        DType::F16 => ("<f2", "float16"),
        DType::F32 | DType::BF16 | DType::F8E4M3 | DType::F8E5M2 => ("<f4", "float32"),
        DType::F64 => ("<f8", "float64"),
    }
}

/// Why a tensor could not be encoded.
#[derive(Debug, PartialEq)]
pub enum EncodeError {
    /// The element storage does not fit the dtype (integers for a float
    /// type or the reverse), or its length is not the product of the shape.
    Inconsistent(String),
    /// The header would not fit the 16-bit length of format 1.0.
    HeaderTooLong,
}

impl std::fmt::Display for EncodeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            EncodeError::Inconsistent(why) => write!(f, "inconsistent tensor: {why}"),
            EncodeError::HeaderTooLong => {
                f.write_str("the array has too many dimensions for a .npy 1.0 header")
            }
        }
    }
}

/// The header (magic through padding) for an array of `descr` and `shape`.
pub fn header(descr: &str, shape: &[usize]) -> Result<Vec<u8>, EncodeError> {
    let shape_text = match shape {
        [] => "()".to_string(),
        [only] => format!("({only},)"),
        dims => format!(
            "({})",
            dims.iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    let mut dict =
        format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape_text}, }}");
    // magic (6) + version (2) + length (2) + dict + padding + '\n'
    let unpadded = MAGIC.len() + 2 + 2 + dict.len() + 1;
    let padding = (ALIGNMENT - unpadded % ALIGNMENT) % ALIGNMENT;
    dict.push_str(&" ".repeat(padding));
    dict.push('\n');
    let length = u16::try_from(dict.len()).map_err(|_| EncodeError::HeaderTooLong)?;
    let mut out = Vec::with_capacity(unpadded + padding);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&[1, 0]);
    out.extend_from_slice(&length.to_le_bytes());
    out.extend_from_slice(dict.as_bytes());
    Ok(out)
}

/// Encodes a tensor as the complete bytes of a `.npy` file.
pub fn encode(tensor: &Tensor) -> Result<Vec<u8>, EncodeError> {
    let (descr, _) = stored_dtype(tensor.dtype);
    let Some(count) = tensor
        .shape
        .iter()
        .try_fold(1usize, |n, &d| n.checked_mul(d))
    else {
        return Err(EncodeError::Inconsistent(format!(
            "shape {:?} overflows",
            tensor.shape
        )));
    };
    let len = match &tensor.data {
        TensorData::Float(v) => v.len(),
        TensorData::Int(v) => v.len(),
    };
    if len != count {
        return Err(EncodeError::Inconsistent(format!(
            "{len} elements for shape {:?}",
            tensor.shape
        )));
    }
    let mut out = header(descr, &tensor.shape)?;
    let width = tensor.dtype.bytes() as usize;
    let stored_width = match tensor.dtype {
        DType::BF16 | DType::F8E4M3 | DType::F8E5M2 => 4,
        _ => width,
    };
    out.reserve(count * stored_width);
    match (&tensor.data, tensor.dtype.is_float()) {
        (TensorData::Float(values), true) => {
            for &v in values {
                match tensor.dtype {
                    DType::F16 => out.extend_from_slice(&half::f16::from_f64(v).to_le_bytes()),
                    DType::F64 => out.extend_from_slice(&v.to_le_bytes()),
                    // float32, and bfloat16 / fp8 widened: the values are
                    // already rounded to the dtype, so this is exact.
                    _ => out.extend_from_slice(&(v as f32).to_le_bytes()),
                }
            }
        }
        (TensorData::Int(values), false) => {
            for &v in values {
                // Two's complement truncation writes signed and unsigned
                // values alike (uint64 is carried as its bit pattern).
                out.extend_from_slice(&v.to_le_bytes()[..width]);
            }
        }
        (_, true) => {
            return Err(EncodeError::Inconsistent(format!(
                "integer storage for {}",
                tensor.dtype
            )));
        }
        (_, false) => {
            return Err(EncodeError::Inconsistent(format!(
                "float storage for {}",
                tensor.dtype
            )));
        }
    }
    Ok(out)
}

/// Writes `tensor` to `path` as a `.npy` file.
pub fn write(path: &Path, tensor: &Tensor) -> io::Result<()> {
    let bytes =
        encode(tensor).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e.to_string()))?;
    crate::output::write(path, &bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Splits a `.npy` file into its header dict text and data bytes,
    /// checking the fixed fields on the way.
    fn parse(bytes: &[u8]) -> (String, &[u8]) {
        assert_eq!(&bytes[..6], MAGIC);
        assert_eq!(&bytes[6..8], &[1, 0]);
        let length = u16::from_le_bytes([bytes[8], bytes[9]]) as usize;
        let data_start = 10 + length;
        assert_eq!(data_start % ALIGNMENT, 0, "data must start aligned");
        assert_eq!(bytes[data_start - 1], b'\n');
        let dict = std::str::from_utf8(&bytes[10..data_start]).map(str::to_string);
        (dict.unwrap_or_default(), &bytes[data_start..])
    }

    fn tensor(dtype: DType, shape: &[usize], data: TensorData) -> Tensor {
        Tensor {
            dtype,
            shape: shape.to_vec(),
            data,
        }
    }

    #[test]
    fn float32_matrix() {
        let t = tensor(
            DType::F32,
            &[2, 3],
            TensorData::Float(vec![0.0, 1.0, -2.5, 3.0, f64::NAN, f64::INFINITY]),
        );
        let bytes = encode(&t).unwrap_or_default();
        let (dict, data) = parse(&bytes);
        assert_eq!(
            dict.trim_end(),
            "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }"
        );
        assert_eq!(data.len(), 6 * 4);
        assert_eq!(&data[8..12], &(-2.5f32).to_le_bytes());
        assert!(f32::from_le_bytes([data[16], data[17], data[18], data[19]]).is_nan());
        assert_eq!(&data[20..24], &f32::INFINITY.to_le_bytes());
    }

    #[test]
    fn shapes_are_python_tuples() {
        for (shape, text) in [
            (vec![], "()"),
            (vec![7], "(7,)"),
            (vec![1, 2, 3], "(1, 2, 3)"),
        ] {
            let bytes = header("<f8", &shape).unwrap_or_default();
            let (dict, data) = parse(&bytes);
            assert!(dict.contains(&format!("'shape': {text}, }}")), "{dict}");
            assert!(data.is_empty());
        }
    }

    #[test]
    fn every_dtype_has_its_width_and_alignment() {
        for dtype in DType::ALL {
            let data = if dtype.is_float() {
                TensorData::Float(vec![1.0, -0.5, 0.25])
            } else {
                TensorData::Int(vec![1, 0, 1])
            };
            let t = tensor(dtype, &[3], data);
            let bytes = encode(&t).unwrap_or_default();
            let (dict, data) = parse(&bytes);
            let (descr, _) = stored_dtype(dtype);
            assert!(dict.contains(&format!("'descr': '{descr}'")));
            let width: usize = descr[2..].parse().unwrap_or(0);
            assert_eq!(data.len(), 3 * width, "{dtype}");
        }
    }

    #[test]
    fn integers_and_half_are_little_endian() {
        let t = tensor(DType::I16, &[2], TensorData::Int(vec![-2, 0x0102]));
        let bytes = encode(&t).unwrap_or_default();
        assert_eq!(parse(&bytes).1, &[0xfe, 0xff, 0x02, 0x01]);

        let t = tensor(DType::U64, &[1], TensorData::Int(vec![-1]));
        let bytes = encode(&t).unwrap_or_default();
        assert_eq!(parse(&bytes).1, &[0xff; 8]);

        let t = tensor(DType::F16, &[1], TensorData::Float(vec![1.0]));
        let bytes = encode(&t).unwrap_or_default();
        assert_eq!(parse(&bytes).1, &[0x00, 0x3c]);

        let t = tensor(DType::Bool, &[2], TensorData::Int(vec![1, 0]));
        let bytes = encode(&t).unwrap_or_default();
        assert_eq!(parse(&bytes).1, &[1, 0]);
    }

    #[test]
    fn bfloat16_is_widened_exactly() {
        let t = tensor(DType::BF16, &[1], TensorData::Float(vec![1.5]));
        let bytes = encode(&t).unwrap_or_default();
        let (dict, data) = parse(&bytes);
        assert!(dict.contains("'<f4'"));
        assert_eq!(data, &1.5f32.to_le_bytes());
    }

    #[test]
    fn inconsistent_tensors_are_refused() {
        let t = tensor(DType::F32, &[2, 2], TensorData::Float(vec![1.0]));
        assert!(matches!(encode(&t), Err(EncodeError::Inconsistent(_))));
        let t = tensor(DType::F32, &[1], TensorData::Int(vec![1]));
        assert!(matches!(encode(&t), Err(EncodeError::Inconsistent(_))));
    }
}
