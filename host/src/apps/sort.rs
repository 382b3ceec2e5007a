//! LSD radix sort: stable, 8 bits per pass (4 passes for 32-bit keys, 8 for 64-bit), each pass a
//! stable partition whose digit offsets come from our scan. Keys are ordered by their
//! `order_key` (floats: `-0.0` before `+0.0`, NaNs last); u32 values ride along.

use super::partition::{check_len, pass, Digit, PassBuffers, Values};
use crate::element::{ElemType, Element};
use crate::error::{Error, Result};
use crate::runtime::Gpu;
use cudarc::driver::{CudaSlice, CudaStream};
use rayon::prelude::*;
use scan_abi::partition::RADIX_BITS;
use std::sync::Arc;

/// Key types the sort handles.
pub const KEY_TYPES: [ElemType; 6] =
    [ElemType::U32, ElemType::I32, ElemType::U64, ElemType::I64, ElemType::F32, ElemType::F64];

/// The CPU reference: a stable sort by `order_key`, values alongside.
pub fn reference<T: Element>(keys: &[T], values: Option<&[u32]>) -> (Vec<T>, Option<Vec<u32>>) {
    let mut idx: Vec<usize> = (0..keys.len()).collect();
    idx.par_sort_by_key(|&i| keys[i].order_key());
    (idx.iter().map(|&i| keys[i]).collect(), values.map(|v| idx.iter().map(|&i| v[i]).collect()))
}

impl Gpu {
    /// Sorts `keys` (and `values` with them, when given; as long as `keys`) on `stream`.
    pub fn sort<T: Element>(
        &self,
        stream: &Arc<CudaStream>,
        keys: &mut CudaSlice<T>,
        mut values: Option<&mut CudaSlice<u32>>,
    ) -> Result<()> {
        if !KEY_TYPES.contains(&T::TYPE) {
            return Err(Error::invalid(format!(
                "sort keys of type {} are not supported (u32, i32, u64, i64, f32, f64)",
                T::TYPE.name()
            )));
        }
        let n = keys.len() as u64;
        check_len(n)?;
        if values.as_ref().is_some_and(|v| v.len() != keys.len()) {
            return Err(Error::invalid("the values must be as many as the keys"));
        }
        if n <= 1 {
            return Ok(());
        }
        let mut alt_keys = self.alloc_zeros::<T>(stream, "sort buffer", n as usize)?;
        let mut alt_values = match values {
            Some(_) => Some(self.alloc_zeros::<u32>(stream, "sort value buffer", n as usize)?),
            None => None,
        };
        let mut bufs = PassBuffers::new(self, stream, n, Digit::radix(0))?;
        let passes = 8 * T::TYPE.size() as u32 / RADIX_BITS;
        for p in 0..passes {
            let digit = Digit::radix(p * RADIX_BITS);
            // Even passes go to the spare buffers, odd ones back: an even count ends in `keys`.
            if p % 2 == 0 {
                let from = values.as_deref().map_or(Values::None, Values::From);
                pass(self, stream, keys, from, &mut alt_keys, alt_values.as_mut(), digit, &mut bufs)?;
            } else {
                let from = alt_values.as_ref().map_or(Values::None, Values::From);
                pass(self, stream, &alt_keys, from, keys, values.as_deref_mut(), digit, &mut bufs)?;
            }
        }
        Ok(())
    }
}
