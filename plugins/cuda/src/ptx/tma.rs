//! Bulk tensor copies (TMA) and phased barriers (mbarrier), sm_90 and up.
//!
//! | thread IR | PTX |
//! | --- | --- |
//! | tensor map `%t` of `%A` | `.param .align 64 .b8 <entry>_t[128]` after the other parameters (the host fills it with `cuTensorMapEncodeTiled`); its generic address (`cvta.param`) is read once in the prologue |
//! | `mbarrier_init b[i], n` | `mbarrier.init.shared::cta.b64`, then `fence.mbarrier_init.release.cluster` so the bulk copy unit sees the initialised object |
//! | `mbarrier_arrive b[i]` / `_expect_tx b[i], n` | `mbarrier.arrive{.expect_tx}.shared::cta.b64` |
//! | `mbarrier_wait b[i], parity p` | a `mbarrier.try_wait.parity.shared::cta.b64` loop |
//! | `tma_load s[j] <- t(c0, .., cr), b[i]` | `cp.async.bulk.tensor.<r>d.shared::cluster.global.tile.mbarrier::complete_tx::bytes` with the coordinates innermost first |
//!
//! The host cannot know a tensor map from the PTX signature alone, so every
//! map is also described by a comment line ahead of its entry, which the
//! runtime reads when it loads the module (`runtime.rs`):
//!
//! `// tilec.tensor_map <entry> <param> global=<i> dtype=<t> dims=<d,..> box=<b,..> swizzle=<w>`
//!
//! `global` is the index of the described buffer among the launch
//! arguments, `dims` its extents outermost first, each `c<N>` (a constant)
//! or `p<i>` (the value of launch argument `i`), `box` the box extents
//! outermost first and `swizzle` the span in bytes (0, 32, 64 or 128).

use std::fmt::Write as _;

use tilec_core::ir::DType;
use tilec_core::thread::{Dim, Expr, MemRef, Param, SharedId, TensorMapId};

use super::PtxError;
use super::kernel::Emitter;
use super::value::Class;

type Result<T> = std::result::Result<T, PtxError>;

/// The CUDA tensor-map element type name the runtime maps `dtype` to.
pub(crate) fn map_dtype(dtype: DType) -> Option<&'static str> {
    Some(match dtype {
        DType::F16 => "f16",
        DType::BF16 => "bf16",
        DType::F32 => "f32",
        DType::F64 => "f64",
        DType::I32 => "i32",
        DType::U32 => "u32",
        DType::I64 => "i64",
        DType::U64 => "u64",
        DType::U8 => "u8",
        DType::U16 => "u16",
        _ => return None,
    })
}

impl Emitter<'_> {
    /// Reads the generic address of every tensor map parameter; answers
    /// the `.param` declarations and the description lines of the maps.
    pub(crate) fn tensor_map_params(
        &mut self,
        names: &mut super::text::Names,
    ) -> Result<(Vec<String>, Vec<String>)> {
        let (mut decls, mut lines) = (Vec::new(), Vec::new());
        if self.k.tensor_maps.is_empty() {
            return Ok((decls, lines));
        }
        if self.target.capability < 90 {
            return Err(self.unsupported("tensor maps need sm_90 or later (TMA)"));
        }
        for m in &self.k.tensor_maps {
            let ptx_name = names.unique(&format!(
                "{}_{}",
                self.k.name,
                super::text::sanitize(&m.name)
            ));
            let r = self.regs.named(Class::B64, &m.name);
            self.emit(format!("mov.b64 {r}, {ptx_name}"));
            self.emit(format!("cvta.param.u64 {r}, {r}"));
            self.tensor_maps.push(r);
            let Some(Param::Global(g)) = self.k.params.get(m.global.index()) else {
                return Err(self.malformed("a tensor map of a missing global buffer"));
            };
            let dtype = map_dtype(g.dtype).ok_or_else(|| {
                self.unsupported(format!("no tensor map element type for {}", g.dtype))
            })?;
            let dims: Vec<String> = g
                .shape
                .iter()
                .map(|d| match d {
                    Dim::Const(c) => Ok(format!("c{c}")),
                    Dim::Param(p) => Ok(format!("p{}", p.0)),
                    // The lowering copies such buffers without a map.
                    Dim::Expr(_) => Err(self.malformed(format!(
                        "a tensor map of `{}`, whose shape has a compound extent",
                        g.name
                    ))),
                })
                .collect::<Result<_>>()?;
            let boxes: Vec<String> = m.box_dims.iter().map(u32::to_string).collect();
            let mut line = String::new();
            let _ = write!(
                line,
                "// tilec.tensor_map {} {ptx_name} global={} dtype={dtype} dims={} box={} swizzle={}",
                self.k.name,
                m.global.0,
                dims.join(","),
                boxes.join(","),
                m.swizzle
            );
            lines.push(line);
            decls.push(format!("\n  .param .align 64 .b8 {ptx_name}[128]"));
        }
        Ok((decls, lines))
    }

    /// The `[addr]` of element `index` of shared buffer `b`.
    pub(super) fn shared_operand(&mut self, b: SharedId, index: &Expr) -> Result<String> {
        Ok(self.address(MemRef::Shared(b), index)?.text())
    }

    /// `v` as a 32-bit register or immediate operand.
    fn b32_operand(&mut self, e: &Expr) -> Result<String> {
        let v = self.expr(e)?;
        let v = if v.class == Class::B64 {
            self.op1(Class::B32, "cvt.u32.u64", &v)
        } else {
            v
        };
        Ok(v.text)
    }

    pub(crate) fn mbarrier_init(
        &mut self,
        bar: SharedId,
        index: &Expr,
        count: &Expr,
    ) -> Result<()> {
        let addr = self.shared_operand(bar, index)?;
        let count = self.b32_operand(count)?;
        if self.target.capability < 90 {
            // Before sm_90 there is no cluster and no init fence: the block
            // barrier that follows every initialisation publishes it.
            self.emit(format!("mbarrier.init.shared.b64 {addr}, {count}"));
            return Ok(());
        }
        self.emit(format!("mbarrier.init.shared::cta.b64 {addr}, {count}"));
        if self.target.version >= (8, 0) {
            self.emit("fence.mbarrier_init.release.cluster");
        }
        Ok(())
    }

    pub(crate) fn mbarrier_arrive(
        &mut self,
        bar: SharedId,
        index: &Expr,
        tx: Option<&Expr>,
    ) -> Result<()> {
        let addr = self.shared_operand(bar, index)?;
        let state = self.tmp(Class::B64);
        match tx {
            Some(tx) => {
                let tx = self.b32_operand(tx)?;
                self.emit(format!(
                    "mbarrier.arrive.expect_tx.shared::cta.b64 {state}, {addr}, {tx}"
                ));
            }
            None if self.target.capability < 90 => {
                self.emit(format!("mbarrier.arrive.shared.b64 {state}, {addr}"));
            }
            None => self.emit(format!("mbarrier.arrive.shared::cta.b64 {state}, {addr}")),
        }
        Ok(())
    }

    pub(crate) fn mbarrier_wait(
        &mut self,
        bar: SharedId,
        index: &Expr,
        parity: &Expr,
    ) -> Result<()> {
        let addr = self.shared_operand(bar, index)?;
        let v = self.expr(parity)?;
        let parity = self.in_reg(&v);
        let parity = if parity.class == Class::B64 {
            self.op1(Class::B32, "cvt.u32.u64", &parity)
        } else {
            parity
        };
        let top = self.body.fresh_label("wait");
        self.body.label(&top);
        let done = self.tmp(Class::Pred);
        if self.target.capability < 90 {
            // No suspending wait before sm_90: poll.
            self.emit(format!(
                "mbarrier.test_wait.parity.shared.b64 {done}, {addr}, {}",
                parity.text
            ));
        } else {
            self.emit(format!(
                "mbarrier.try_wait.parity.shared::cta.b64 {done}, {addr}, {}",
                parity.text
            ));
        }
        self.body
            .inst_if(Some(&format!("!{done}")), format!("bra {top}"));
        Ok(())
    }

    pub(crate) fn tma_load(
        &mut self,
        map: TensorMapId,
        dst: SharedId,
        dst_index: &Expr,
        coords: &[Expr],
        bar: SharedId,
        bar_index: &Expr,
    ) -> Result<()> {
        let tmap = self
            .tensor_maps
            .get(map.index())
            .cloned()
            .ok_or_else(|| self.malformed("a missing tensor map"))?;
        if !(1..=5).contains(&coords.len()) {
            return Err(self.unsupported(format!(
                "a {}-dimensional bulk tensor copy (PTX has 1 to 5)",
                coords.len()
            )));
        }
        let d = self.shared_operand(dst, dst_index)?;
        let b = self.shared_operand(bar, bar_index)?;
        let mut cs = Vec::with_capacity(coords.len());
        for c in coords.iter().rev() {
            let v = self.expr(c)?;
            cs.push(self.in_reg(&v).text);
        }
        self.emit(format!(
            "cp.async.bulk.tensor.{}d.shared::cluster.global.tile.mbarrier::complete_tx::bytes {d}, [{tmap}, {{{}}}], {b}",
            coords.len(),
            cs.join(", ")
        ));
        Ok(())
    }
}
