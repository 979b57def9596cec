//! The order blocks run in (`T.use_swizzle`, Tile IR's `order(...)`).
//!
//! Every block still runs exactly once, so the order never changes what a
//! kernel computes; it decides which tiles blocks running at the same time
//! share in L2. With `order(panels P rows)` on a grid of `gx × gy` blocks
//! (x the column, y the row), the `k`-th block the hardware starts,
//! `k = y·gx + x`, computes the block at
//! - panel `p = ⌊k / (P·gx)⌋`, offset `o = k mod (P·gx)`, panel height
//!   `h = min(P, gy − p·P)` (the last panel may be shorter);
//! - row `p·P + o mod h`, column `c = ⌊o / h⌋`, or `gx − 1 − c` in odd
//!   panels.
//!
//! So consecutive blocks walk down a column of the panel (sharing a B
//! tile) and then across (sharing the panel's A tiles), and each panel
//! starts where the previous one ended. `order(panels P columns)` is the
//! same with rows and columns exchanged. Extra grid dimensions (z) keep
//! their index. The mapping is a bijection of the grid onto itself for
//! every `gx`, `gy` and `P ≥ 1`.
//!
//! Without an order in the IR, kernels with a `gemm` and at least two grid
//! dimensions, neither known to be 1, take panels of [`DEFAULT_PANEL`]
//! rows; others keep the hardware's order. On the H200, an 8192³ GEMM in 128 × 256 tiles ran
//! 8% faster with panels of 8 rows (`bench/RESULTS.md`).

use super::{BinaryOp, DType, Expr, Lower, Result, Stmt, ir, lit_i32, reg_expr};
use crate::ir::{BlockOrder, Handle};
use crate::thread::{ExprKind, Special};

/// Rows per panel when the kernel does not say.
pub(super) const DEFAULT_PANEL: u32 = 8;

/// Whether `block` (at any depth) holds a `gemm`.
fn has_gemm(block: &ir::Block) -> bool {
    block.stmts.iter().any(|s| match s {
        ir::Stmt::Gemm { .. } => true,
        ir::Stmt::Kernel { body, .. }
        | ir::Stmt::Parallel { body, .. }
        | ir::Stmt::For { body, .. }
        | ir::Stmt::Role { body, .. } => has_gemm(body),
        ir::Stmt::If {
            then, otherwise, ..
        } => has_gemm(then) || has_gemm(otherwise),
        _ => false,
    })
}

impl Lower<'_> {
    /// The order the kernel's blocks run in (module documentation).
    pub(super) fn block_order(
        &self,
        order: Option<BlockOrder>,
        dims: usize,
        grid: &[Expr; 3],
        body: &ir::Block,
    ) -> BlockOrder {
        // A grid one block wide or high gains nothing.
        let one_wide = grid[..2].iter().any(|g| g.as_const_int() == Some(1));
        match order {
            Some(o) => o,
            None if dims >= 2 && has_gemm(body) && !one_wide => BlockOrder::Panels {
                size: DEFAULT_PANEL,
                column: false,
            },
            None => BlockOrder::Linear,
        }
    }

    /// Binds the first two block variables to the panel order's indices,
    /// computed into registers at the top of the kernel (`out`).
    pub(super) fn rasterize(
        &mut self,
        (size, column): (u32, bool),
        grid: &[Expr; 3],
        block_vars: &[Handle<ir::Var>],
        out: &mut Vec<Stmt>,
    ) -> Result<()> {
        let (Some(&vx), Some(&vy)) = (block_vars.first(), block_vars.get(1)) else {
            return Ok(());
        };
        let size = lit_i32(i64::from(size));
        // `across` is the dimension a panel spans whole, `along` the one
        // it cuts into `size`-long pieces.
        let (bx, by) = (
            Expr::special(Special::BlockIdxX),
            Expr::special(Special::BlockIdxY),
        );
        let (gx, gy) = (grid[0].clone(), grid[1].clone());
        let linear = self.bin(BinaryOp::Mul, by, gx.clone())?;
        let linear = self.bin(BinaryOp::Add, linear, bx)?;
        let linear = self.kept_reg(linear, out);
        let (across, along) = if column { (gy, gx) } else { (gx, gy) };
        let per = self.bin(BinaryOp::Mul, size.clone(), across.clone())?;
        let panel = self.bin(BinaryOp::FloorDiv, linear.clone(), per.clone())?;
        let panel = self.kept_reg(panel, out);
        let offset = self.bin(BinaryOp::FloorMod, linear, per)?;
        let offset = self.kept_reg(offset, out);
        let first = self.bin(BinaryOp::Mul, panel.clone(), size.clone())?;
        let first = self.kept_reg(first, out);
        let left = self.bin(BinaryOp::Sub, along, first.clone())?;
        let height = self.bin(BinaryOp::Min, size, left)?;
        let height = self.kept_reg(height, out);
        let step = self.bin(BinaryOp::FloorDiv, offset.clone(), height.clone())?;
        let step = self.kept_reg(step, out);
        let odd = self.bin(BinaryOp::FloorMod, panel, lit_i32(2))?;
        let odd = self.bin(BinaryOp::Eq, odd, lit_i32(1))?;
        let back = self.bin(BinaryOp::Sub, across, lit_i32(1))?;
        let back = self.bin(BinaryOp::Sub, back, step.clone())?;
        let cross = Expr::select(odd, back, step).map_err(|e| self.malformed(e.to_string()))?;
        let cross = self.kept_reg(cross, out);
        let inner = self.bin(BinaryOp::FloorMod, offset, height)?;
        let within = self.bin(BinaryOp::Add, first, inner)?;
        let within = self.kept_reg(within, out);
        let (x, y) = if column {
            (within, cross)
        } else {
            (cross, within)
        };
        for (v, e) in [(vx, x), (vy, y)] {
            let dtype = self.f.vars[v].dtype;
            self.vars.insert(
                v,
                if dtype == DType::I32 {
                    e
                } else {
                    Expr::cast(dtype, e)
                },
            );
        }
        Ok(())
    }

    /// `e` in a fresh register assigned in `out`.
    fn kept_reg(&mut self, e: Expr, out: &mut Vec<Stmt>) -> Expr {
        if let ExprKind::Literal(_) = e.kind {
            return e;
        }
        let dtype = e.dtype;
        reg_expr(self.in_register(e, out).reg(), dtype)
    }
}
