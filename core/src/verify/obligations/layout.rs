//! Obligations about layouts: which holder writes which element.
//!
//! Tile IR's layout annotations (`layout ...` on a buffer, written by
//! `infer-layouts`, or by the front end for the shared layouts of
//! `T.annotate_layout`) say where the lowering keeps a buffer, not which
//! thread computes which element (the front end does not follow a
//! `T.Fragment`); so the layouts stated here are the two a kernel's
//! writes go through whatever the lowering chooses:
//!
//! - **The grid.** Every block runs the kernel body; a write to a global
//!   buffer (a scalar store, or the destination region of a `copy` or
//!   `fill`) puts elements at places that depend on the block indices.
//!   `layout-injective` (grid) states, for every two writes of one kernel
//!   to one buffer (a write paired with itself included), that two
//!   different blocks never write one element: over a primed copy of
//!   every variable bound in the kernel (`bx'`, `k'`, ...). Elements
//!   outside the buffer are not written (the out-of-bounds rule), so they
//!   do not count. A write of one value that nothing in the kernel changes
//!   (`T.fill(C[0:1], 0)` from every block) is replicated with equal values
//!   and has no obligation; `atomic_add` has none either.
//! - **Matrix-atom fragments.** A `gemm` the lowering issues on a matrix
//!   atom of the target (`lower/gemm.rs`: the largest-`k` atom whose
//!   lowering is `fragments`, whose types match, whose shape divides the
//!   gemm, with register fragments for A, B and the accumulator and an
//!   unreplicated accumulator) reads A and B and writes C through the
//!   atom's fragment layouts, C tiled over the issuing groups: group `g`
//!   of a `gm × gn` grid sits at `(g % gm, g // gm)` and owns `tm × tn`
//!   atom tiles. `fragment-coverage` states that A's and B's fragments
//!   give every element of their atom tile to exactly `replication`
//!   (lane, slot) pairs and nothing outside it, and that the tiled
//!   accumulator fragments land inside C's region with as many holders as
//!   elements; `layout-injective` (accumulator) that two different
//!   (group, tile, lane, slot) holders never write one element of C. The
//!   split the lowering picks depends on the warp policy; the obligations
//!   hold for *every* split its rule allows (`gm | M/m`, `gn | N/n`, `gm ·
//!   gn <= groups`), stated as a conjunction over them.
//!
//! Element-wise writes (`T.Parallel` stores) go through the lowering's
//! cyclic or vector layouts; that two threads never store one element
//! there is `no-race`, which holds for every mapping of iterations onto
//! threads.

use std::collections::HashSet;

use super::{Generator, Role, SymVar};
use crate::ir::{Buffer, DType, Expr, Handle, Region, Scope, Span};
use crate::layout::FragmentLayout;
use crate::target::{
    AtomLowering, AtomTypes, ElementType, IssueGranularity, MatrixAtom, OperandRole, OperandSource,
};
use crate::verify::{Cmp, Formula, LayoutSource, ObligationKind, Term};

/// A write to a global buffer in the current kernel, kept until the
/// kernel's end, when every two are compared.
pub(super) struct GlobalWrite {
    buffer: Handle<Buffer>,
    span: Span,
    /// What writes (`copy dst C[...]`, `store C[i, j]`).
    text: String,
    /// Facts where it runs, the range of its region coordinates, and that
    /// the element lies inside the buffer.
    hypotheses: Vec<Formula>,
    /// The element written, one term per dimension.
    element: Vec<Term>,
    /// Whether every block writes the same value (a replicated write).
    invariant: bool,
}

/// The element type a matrix atom names for a Tile IR type (floating
/// point only: integer gemms stay on the lowering's scalar path).
fn element_type(dtype: DType) -> Option<ElementType> {
    Some(match dtype {
        DType::F16 => ElementType::F16,
        DType::BF16 => ElementType::Bf16,
        DType::F32 => ElementType::F32,
        DType::F64 => ElementType::F64,
        DType::F8E4M3 => ElementType::F8e4m3,
        DType::F8E5M2 => ElementType::F8e5m2,
        _ => return None,
    })
}

/// The atom the lowering issues a `gemm` of these element types (A, B, C),
/// sizes and thread count on, by its documented rule (`lower/gemm.rs`,
/// "Choosing an atom"): the usable atom with the largest `k`, the first
/// listed among equals. The lowering also needs every fragment to
/// decompose into lane and slot parts (true of every shipped fragment); a
/// gemm that falls back to the scalar path has no fragment layouts, and
/// the obligations stated for the atom then hold of a plan not taken.
fn chosen_atom(
    atoms: &[MatrixAtom],
    dtypes: [DType; 3],
    mnk: (i128, i128, i128),
    threads: i128,
) -> Option<&MatrixAtom> {
    let types = atom_types(dtypes)?;
    let mut best: Option<&MatrixAtom> = None;
    for atom in atoms {
        let group = i128::from(atom.issue.threads);
        let registers = [OperandRole::A, OperandRole::B, OperandRole::Accumulator]
            .into_iter()
            .all(|role| {
                atom.operand(role)
                    .sources
                    .contains(&OperandSource::Registers)
                    && matches!(atom.fragment(role), Ok(Some(f)) if i128::from(f.threads()) == group)
            });
        let usable = atom.lowering == AtomLowering::Fragments
            && fits(atom, &types, mnk, threads)
            && registers;
        if usable && best.is_none_or(|b| atom.shape.k > b.shape.k) {
            best = Some(atom);
        }
    }
    best
}

/// The shared-operand atom (one with a descriptor, `wgmma`) the lowering
/// may issue a gemm of these types and sizes on (`lower/swizzle.rs`: the
/// types, `m | M`, `k | K`, `n | N` for the described N, whole issuing
/// groups); whether it does depends on the whole kernel.
fn descriptor_atom(
    atoms: &[MatrixAtom],
    dtypes: [DType; 3],
    mnk: (i128, i128, i128),
    threads: i128,
) -> Option<&MatrixAtom> {
    let types = atom_types(dtypes)?;
    atoms
        .iter()
        .find(|atom| atom.descriptor.is_some() && fits(atom, &types, mnk, threads))
}

/// The atom's type combination for (A, B, C) element types.
fn atom_types([a, b, c]: [DType; 3]) -> Option<AtomTypes> {
    Some(AtomTypes {
        a: element_type(a)?,
        b: element_type(b)?,
        accumulator: element_type(c)?,
    })
}

/// Whether an atom takes these types and tiles an `M × N × K` gemm issued
/// by whole groups of `threads`, with an unreplicated accumulator.
fn fits(
    atom: &MatrixAtom,
    types: &AtomTypes,
    (mm, nn, kk): (i128, i128, i128),
    threads: i128,
) -> bool {
    let (m, n, k) = (
        i128::from(atom.shape.m),
        i128::from(atom.shape.n),
        i128::from(atom.shape.k),
    );
    let group = i128::from(atom.issue.threads);
    atom.types.contains(types)
        && m > 0
        && n > 0
        && k > 0
        && group > 0
        && threads % group == 0
        && mm > 0
        && nn > 0
        && kk > 0
        && mm % m == 0
        && nn % n == 0
        && kk % k == 0
        && atom.accumulator.replication == 1
}

/// The constant extents of a matrix operand's region (its last two
/// dimensions; every other one must be 1).
fn matrix_extents(f: &crate::ir::Function, region: &Region) -> Option<(i128, i128)> {
    let extents: Vec<i128> = region
        .ranges
        .iter()
        .map(|r| f.as_const_int(r.extent).map(i128::from))
        .collect::<Option<_>>()?;
    let [lead @ .., rows, cols] = extents.as_slice() else {
        return None;
    };
    lead.iter().all(|&e| e == 1).then_some((*rows, *cols))
}

/// The leaves `(extent, stride)` of a fragment's thread and slot modes.
fn fragment_leaves(frag: &FragmentLayout) -> Option<[Vec<(i128, i128)>; 2]> {
    let leaves = |mode: usize| -> Option<Vec<(i128, i128)>> {
        Some(
            frag.map()
                .mode(mode)
                .ok()?
                .leaves()
                .into_iter()
                .map(|(e, s)| (i128::from(e), i128::from(s)))
                .collect(),
        )
    };
    Some([leaves(0)?, leaves(1)?])
}

/// One holder of a fragment, by the digits of its lane and slot (one per
/// leaf of each mode, first leaf fastest): every term over them is linear.
struct Digits {
    /// The digit variables, lane's then slot's.
    vars: Vec<Term>,
    /// `0 <= digit < extent` for each.
    ranges: Vec<Formula>,
    lane: Term,
    slot: Term,
    /// `Σ digit · stride`: the element index the fragment gives.
    index: Term,
    /// `(Σ digit · (stride mod rows), Σ digit · (stride div rows))`: the
    /// element's row and column as the lowering addresses it (it uses
    /// only fragments that decompose so, `lower/gemm.rs`).
    row: Term,
    col: Term,
}

fn ne(a: Term, b: Term) -> Formula {
    Formula::cmp(Cmp::Ne, a, b)
}

fn range(v: &Term, lo: i128, hi_exclusive: i128) -> Formula {
    Formula::and(vec![
        v.clone().ge(Term::Const(lo)),
        v.clone().lt(Term::Const(hi_exclusive)),
    ])
}

impl Generator<'_> {
    /// A coordinate variable (an element offset, a lane, a slot, a group,
    /// an atom tile) named `base` unless an IR variable has that name; it
    /// is not put in scope (obligations list their own).
    pub(super) fn coordinate(&mut self, base: &str) -> (Term, usize) {
        let mut name = base.to_string();
        while self.ir_names.contains(&name) {
            name.push('_');
        }
        let index = match self.names.get(&name) {
            Some(&i) => i,
            None => {
                let (lo, hi) = super::int_range(DType::I64);
                self.vars.push(SymVar {
                    name: name.clone(),
                    role: Role::Coordinate,
                    lo,
                    hi,
                    boolean: false,
                });
                self.names.insert(name.clone(), self.vars.len() - 1);
                self.vars.len() - 1
            }
        };
        if self.in_kernel {
            self.kernel_names.insert(name.clone());
        }
        (Term::Var(name), index)
    }

    /// Whether `e` has the same value in every block and thread: no
    /// variable bound in the kernel and no load.
    fn kernel_invariant(&self, e: Handle<Expr>) -> bool {
        let mut stack = vec![e];
        let mut seen = HashSet::new();
        while let Some(e) = stack.pop() {
            if !seen.insert(e) {
                continue;
            }
            match &self.f.exprs[e] {
                Expr::Load { .. } => return false,
                Expr::Var(v) if self.kernel_names.contains(&self.f.vars[*v].name) => return false,
                other => stack.extend(other.operands()),
            }
        }
        true
    }

    /// Records a scalar store to a global buffer (see the module
    /// documentation).
    pub(super) fn global_store(
        &mut self,
        buffer: Handle<Buffer>,
        indices: &[Handle<Expr>],
        value: Handle<Expr>,
        span: Span,
    ) {
        if !self.in_kernel || self.f.buffers[buffer].scope != Scope::Global {
            return;
        }
        let element: Vec<Term> = indices.iter().map(|&i| self.term(i)).collect();
        let shape = self.shape(buffer);
        if shape.len() != element.len() {
            return;
        }
        let mut hypotheses = self.hypotheses.clone();
        hypotheses.extend(self.arithmetic_facts(indices));
        for (index, extent) in element.iter().zip(&shape) {
            hypotheses.push(index.clone().ge(Term::Const(0)));
            hypotheses.push(index.clone().lt(extent.clone()));
        }
        let name = &self.f.buffers[buffer].name;
        let text = format!(
            "store {name}[{}]",
            element
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        );
        let invariant = self.kernel_invariant(value);
        self.writes.push(GlobalWrite {
            buffer,
            span,
            text,
            hypotheses,
            element,
            invariant,
        });
    }

    /// Records the destination region of a `copy` (`value: None`) or a
    /// `fill` of a global buffer.
    pub(super) fn global_region_write(
        &mut self,
        region: &Region,
        value: Option<Handle<Expr>>,
        span: Span,
    ) {
        let buffer = region.buffer;
        if !self.in_kernel || self.f.buffers[buffer].scope != Scope::Global {
            return;
        }
        let shape = self.shape(buffer);
        if shape.len() != region.ranges.len() {
            return;
        }
        let exprs: Vec<Handle<Expr>> = region
            .ranges
            .iter()
            .flat_map(|r| [r.start, r.extent])
            .collect();
        let mut hypotheses = self.hypotheses.clone();
        hypotheses.extend(self.arithmetic_facts(&exprs));
        let mut element = Vec::new();
        let mut text = Vec::new();
        for (d, (range, extent)) in region.ranges.iter().zip(&shape).enumerate() {
            let start = self.term(range.start);
            let len = self.term(range.extent);
            let (offset, _) = self.coordinate(&format!("e{d}"));
            hypotheses.push(offset.clone().ge(Term::Const(0)));
            hypotheses.push(offset.clone().lt(len.clone()));
            let index = start.clone().plus(offset);
            hypotheses.push(index.clone().ge(Term::Const(0)));
            hypotheses.push(index.clone().lt(extent.clone()));
            text.push(format!("{start}:{}", start.clone().plus(len)));
            element.push(index);
        }
        let name = &self.f.buffers[buffer].name;
        let (op, operand) = if value.is_some() {
            ("fill", "dst")
        } else {
            ("copy", "dst")
        };
        let text = format!("{op} {operand} {name}[{}]", text.join(", "));
        let invariant = value.is_some_and(|v| self.kernel_invariant(v));
        self.writes.push(GlobalWrite {
            buffer,
            span,
            text,
            hypotheses,
            element,
            invariant,
        });
    }

    /// The grid's `layout-injective` obligations of the kernel that ends:
    /// two different blocks never write one element (module
    /// documentation).
    pub(super) fn grid_writes(&mut self, block_vars: &[Handle<crate::ir::Var>]) {
        let writes = std::mem::take(&mut self.writes);
        let blocks: Vec<String> = block_vars
            .iter()
            .map(|&v| self.f.vars[v].name.clone())
            .collect();
        // One block: no two blocks to compare.
        if blocks
            .iter()
            .all(|b| self.bounds.get(b).is_some_and(|&(lo, hi)| lo == hi))
        {
            return;
        }
        for (i, first) in writes.iter().enumerate() {
            for second in &writes[i..] {
                if first.buffer != second.buffer || (std::ptr::eq(first, second) && first.invariant)
                {
                    continue;
                }
                self.grid_pair(first, second, &blocks);
            }
        }
    }

    fn grid_pair(&mut self, first: &GlobalWrite, second: &GlobalWrite, blocks: &[String]) {
        // Everything bound in the kernel differs between the two writes;
        // sizes are the launch's and stay.
        let mut names: Vec<String> = Vec::new();
        let mut collect = |name: &str| {
            if self.kernel_names.contains(name) && !names.iter().any(|n| n == name) {
                names.push(name.to_string());
            }
        };
        for h in &second.hypotheses {
            h.visit_vars(&mut collect);
        }
        for t in &second.element {
            t.visit_vars(&mut collect);
        }
        for b in blocks {
            collect(b);
        }
        // Declaration order, so that the solver's input is the same on
        // every run.
        names.sort_by_key(|n| self.names.get(n).copied().unwrap_or(usize::MAX));
        let primed: std::collections::HashMap<String, String> =
            names.iter().map(|n| (n.clone(), format!("{n}'"))).collect();
        for n in &names {
            self.copy_var(n, &format!("{n}'"));
        }
        let rename = |n: &str| primed.get(n).cloned();
        let mut hypotheses = first.hypotheses.clone();
        hypotheses.extend(second.hypotheses.iter().map(|h| h.rename(&rename)));
        hypotheses.push(Formula::or(
            blocks
                .iter()
                .map(|b| ne(Term::var(b.clone()), Term::var(format!("{b}'"))))
                .collect(),
        ));
        let other: Vec<Term> = second.element.iter().map(|t| t.rename(&rename)).collect();
        let goal = Formula::or(
            first
                .element
                .iter()
                .zip(&other)
                .map(|(a, b)| ne(a.clone(), b.clone()))
                .collect(),
        );
        let mut shown = Vec::new();
        for (d, (a, b)) in first.element.iter().zip(&other).enumerate() {
            shown.push((format!("index {d} ({a})"), a.clone()));
            shown.push((format!("index {d} ({b})"), b.clone()));
        }
        // In scope: the block indices and what the elements depend on,
        // unprimed and primed.
        let mut scope = Vec::new();
        let mut in_scope = |name: &str| {
            if let Some(&i) = self.names.get(name)
                && self.vars[i].role != Role::Opaque
                && (self.kernel_names.contains(name) || primed.values().any(|p| p == name))
            {
                scope.push(i);
            }
        };
        for b in blocks {
            in_scope(b);
            in_scope(&format!("{b}'"));
        }
        goal.visit_vars(&mut in_scope);
        let name = self.f.buffers[first.buffer].name.clone();
        let subject = if std::ptr::eq(first, second) {
            format!(
                "two blocks write distinct elements of {name}: {}",
                first.text
            )
        } else {
            format!(
                "two blocks write distinct elements of {name}: {} and {}",
                first.text, second.text
            )
        };
        let span = if second.span.start >= first.span.start {
            second.span
        } else {
            first.span
        };
        self.push_raw(
            ObligationKind::LayoutInjective {
                buffer: name,
                source: LayoutSource::Grid,
            },
            span,
            subject,
            hypotheses,
            goal,
            shown,
            scope,
        );
    }

    /// The fragment obligations of a `gemm` issued on a matrix atom
    /// (module documentation).
    pub(super) fn gemm_layouts(
        &mut self,
        [a, b, c]: [&Region; 3],
        (transpose_a, transpose_b): (bool, bool),
        span: Span,
    ) {
        let f = self.f;
        let (Some((ar, ac)), Some((br, bc)), Some((mm, nn))) = (
            matrix_extents(f, a),
            matrix_extents(f, b),
            matrix_extents(f, c),
        ) else {
            return;
        };
        let kk = if transpose_a { ar } else { ac };
        let (bk, bn) = if transpose_b { (bc, br) } else { (br, bc) };
        let am = if transpose_a { ac } else { ar };
        if am != mm || bk != kk || bn != nn {
            return;
        }
        let dtypes = [
            f.buffers[a.buffer].dtype,
            f.buffers[b.buffer].dtype,
            f.buffers[c.buffer].dtype,
        ];
        let threads = i128::from(self.threads);
        let options = self.options;
        // A shared-operand atom (wgmma) the lowering may take instead
        // (`lower/swizzle.rs`): its accumulator, tiled over warpgroups in
        // 64×8 slabs (each group's N is a run of them), must cover C once
        // too. Its A and B come through descriptors: no fragments.
        if let Some(atom) = descriptor_atom(&options.matrix_atoms, dtypes, (mm, nn, kk), threads)
            && let Ok(Some(fc)) = atom.fragment(OperandRole::Accumulator)
        {
            let saved = (self.hypotheses.len(), self.scope.len());
            self.accumulator(atom, &fc, c, (mm, nn), span);
            self.hypotheses.truncate(saved.0);
            self.scope.truncate(saved.1);
        }
        let Some(atom) = chosen_atom(&options.matrix_atoms, dtypes, (mm, nn, kk), threads) else {
            return;
        };
        let (Ok(Some(fa)), Ok(Some(fb)), Ok(Some(fc))) = (
            atom.fragment(OperandRole::A),
            atom.fragment(OperandRole::B),
            atom.fragment(OperandRole::Accumulator),
        ) else {
            return;
        };
        let saved = (self.hypotheses.len(), self.scope.len());
        for (frag, region, operand) in [(&fa, a, "A"), (&fb, b, "B")] {
            self.fragment_coverage(atom, frag, region, operand, span);
        }
        self.accumulator(atom, &fc, c, (mm, nn), span);
        self.hypotheses.truncate(saved.0);
        self.scope.truncate(saved.1);
    }

    /// The digits of one holder of `frag` (see [`Digits`]), with `mark`
    /// appended to their names (`'` for a second holder).
    fn digits(&mut self, frag: &FragmentLayout, rows: i128, mark: &str) -> Option<Digits> {
        let [lane_leaves, slot_leaves] = fragment_leaves(frag)?;
        let mut out = Digits {
            vars: Vec::new(),
            ranges: Vec::new(),
            lane: Term::Const(0),
            slot: Term::Const(0),
            index: Term::Const(0),
            row: Term::Const(0),
            col: Term::Const(0),
        };
        for (label, leaves) in [("lane", lane_leaves), ("slot", slot_leaves)] {
            let mut below = 1i128;
            let mut position = Term::Const(0);
            for (k, (extent, stride)) in leaves.into_iter().enumerate() {
                if extent > 1 {
                    let (d, _) = self.coordinate(&format!("{label}{k}{mark}"));
                    out.ranges.push(range(&d, 0, extent));
                    position = position.plus(d.clone().times(Term::Const(below)));
                    out.index = out.index.plus(d.clone().times(Term::Const(stride)));
                    out.row = out
                        .row
                        .plus(d.clone().times(Term::Const(stride.rem_euclid(rows))));
                    out.col = out
                        .col
                        .plus(d.clone().times(Term::Const(stride.div_euclid(rows))));
                    out.vars.push(d);
                }
                below = below.checked_mul(extent)?;
            }
            if label == "lane" {
                out.lane = position;
            } else {
                out.slot = position;
            }
        }
        Some(out)
    }

    /// `fragment-coverage` of an operand fragment over its atom tile: every
    /// (lane, slot) holds an element of the tile, no element has more
    /// holders than the declared replication `r` (no `r + 1` distinct
    /// holders share one), and there are `r` times as many holders as
    /// elements, so each element has exactly `r`.
    fn fragment_coverage(
        &mut self,
        atom: &MatrixAtom,
        frag: &FragmentLayout,
        region: &Region,
        operand: &'static str,
        span: Span,
    ) {
        let (lanes, slots) = (i128::from(frag.threads()), i128::from(frag.slots()));
        let Ok(copies) = usize::try_from(frag.replication()) else {
            return;
        };
        let tile: Vec<i128> = frag.tile().iter().map(|&e| i128::from(e)).collect();
        let [rows, cols] = tile.as_slice() else {
            return;
        };
        let size = rows * cols;
        let mut holders = Vec::new();
        let mut hypotheses = Vec::new();
        for copy in 0..=copies {
            let Some(h) = self.digits(frag, *rows, &"'".repeat(copy)) else {
                return;
            };
            hypotheses.extend(h.ranges.iter().cloned());
            holders.push(h);
        }
        for i in 0..holders.len() {
            for j in i + 1..holders.len() {
                let (a, b) = (&holders[i], &holders[j]);
                hypotheses.push(Formula::or(
                    a.vars
                        .iter()
                        .zip(&b.vars)
                        .map(|(x, y)| ne(x.clone(), y.clone()))
                        .collect(),
                ));
            }
        }
        let first = holders[0].index.clone();
        let goal = Formula::and(vec![
            first.clone().ge(Term::Const(0)),
            first.clone().lt(Term::Const(size)),
            Formula::or(
                holders[1..]
                    .iter()
                    .map(|h| ne(h.index.clone(), first.clone()))
                    .collect(),
            ),
            Term::Const(lanes * slots).eq(Term::Const(size * copies as i128)),
        ]);
        let mut shown = Vec::new();
        for (k, h) in holders.iter().enumerate() {
            let mark = "'".repeat(k);
            shown.push((format!("lane{mark}"), h.lane.clone()));
            shown.push((format!("slot{mark}"), h.slot.clone()));
            shown.push((format!("element index{mark}"), h.index.clone()));
        }
        let name = self.f.buffers[region.buffer].name.clone();
        let times = if copies == 1 {
            "once".to_string()
        } else {
            format!("{copies} times")
        };
        // A fact of the target's fragment, whatever the kernel does around
        // the gemm: no facts of the statement.
        self.push_raw(
            ObligationKind::FragmentCoverage {
                buffer: name.clone(),
                operand,
            },
            span,
            format!(
                "operand {operand} fragment of {} (for {name}) holds each element of its {rows}x{cols} tile {times}",
                atom.name
            ),
            hypotheses,
            goal,
            shown,
            Vec::new(),
        );
    }

    /// The accumulator fragments tiled over the issuing groups: they cover
    /// C's region (`fragment-coverage`) and write each element once
    /// (`layout-injective`). A coordinate `split` picks one of the splits
    /// `gm x gn` the lowering's rule allows; group `g = gi + gm * gj` owns
    /// atom tiles `(gi * tm + i, gj * tn + j)`; the goals hold for each.
    fn accumulator(
        &mut self,
        atom: &MatrixAtom,
        frag: &FragmentLayout,
        c: &Region,
        (mm, nn): (i128, i128),
        span: Span,
    ) {
        let (m, n) = (i128::from(atom.shape.m), i128::from(atom.shape.n));
        let group = i128::from(atom.issue.threads);
        let groups = i128::from(self.threads) / group;
        let (tiles_m, tiles_n) = (mm / m, nn / n);
        let (lanes, slots) = (i128::from(frag.threads()), i128::from(frag.slots()));
        let mut grids = Vec::new();
        for gm in 1..=groups.min(tiles_m) {
            if tiles_m % gm != 0 {
                continue;
            }
            for gn in 1..=(groups / gm).min(tiles_n) {
                if tiles_n % gn == 0 {
                    grids.push((gm, gn));
                }
            }
        }
        if grids.is_empty() {
            return;
        }
        let (split, split_index) = self.coordinate("split");
        let per_split = |f: &dyn Fn(i128, i128) -> i128| {
            select(
                &split,
                grids
                    .iter()
                    .map(|&(gm, gn)| Term::Const(f(gm, gn)))
                    .collect(),
            )
        };
        let (gm_of, gn_of) = (per_split(&|gm, _| gm), per_split(&|_, gn| gn));
        let (tm, tn) = (
            per_split(&|gm, _| tiles_m / gm),
            per_split(&|_, gn| tiles_n / gn),
        );
        // Facts of the atom and the lowering's split alone, whatever the
        // kernel does around the gemm: no facts of the statement.
        let mut hypotheses = vec![range(&split, 0, grids.len() as i128)];
        let scope = vec![split_index];
        struct Holder {
            vars: Vec<Term>,
            row: Term,
            col: Term,
            within: Vec<Formula>,
            shown: Vec<(String, Term)>,
        }
        let mut holders = Vec::new();
        for mark in ["", "'"] {
            let (gi, _) = self.coordinate(&format!("gi{mark}"));
            let (gj, _) = self.coordinate(&format!("gj{mark}"));
            let (ti, _) = self.coordinate(&format!("tile_m{mark}"));
            let (tj, _) = self.coordinate(&format!("tile_n{mark}"));
            let Some(d) = self.digits(frag, m, mark) else {
                return;
            };
            hypotheses.extend(d.ranges.iter().cloned());
            // Within the split: the group's place, its tiles. The products
            // of a split's constant and a coordinate are selects of
            // linear terms.
            let within = vec![
                gi.clone().ge(Term::Const(0)),
                gi.clone().lt(gm_of.clone()),
                gj.clone().ge(Term::Const(0)),
                gj.clone().lt(gn_of.clone()),
                ti.clone().ge(Term::Const(0)),
                ti.clone().lt(tm.clone()),
                tj.clone().ge(Term::Const(0)),
                tj.clone().lt(tn.clone()),
            ];
            // `coordinate * f(split)`, linear in each split.
            let scaled = |coordinate: &Term, f: &dyn Fn(i128, i128) -> i128| {
                select(
                    &split,
                    grids
                        .iter()
                        .map(|&(gm, gn)| coordinate.clone().times(Term::Const(f(gm, gn))))
                        .collect(),
                )
            };
            let row = scaled(&gi, &|gm, _| tiles_m / gm * m)
                .plus(ti.clone().times(Term::Const(m)))
                .plus(d.row.clone());
            let col = scaled(&gj, &|_, gn| tiles_n / gn * n)
                .plus(tj.clone().times(Term::Const(n)))
                .plus(d.col.clone());
            let group_index = gi.clone().plus(scaled(&gj, &|gm, _| gm));
            let shown = vec![
                (format!("group{mark}"), group_index),
                (format!("tile_m{mark}"), ti.clone()),
                (format!("tile_n{mark}"), tj.clone()),
                (format!("lane{mark}"), d.lane.clone()),
                (format!("slot{mark}"), d.slot.clone()),
                (format!("row{mark}"), row.clone()),
                (format!("col{mark}"), col.clone()),
            ];
            let mut vars = vec![gi, gj, ti, tj];
            vars.extend(d.vars);
            holders.push(Holder {
                vars,
                row,
                col,
                within,
                shown,
            });
        }
        let (x, y) = (&holders[0], &holders[1]);
        // As many holders as elements, in every split.
        let counted = Formula::and(
            grids
                .iter()
                .map(|&(gm, gn)| {
                    Term::Const(gm * gn * (tiles_m / gm) * (tiles_n / gn) * lanes * slots)
                        .eq(Term::Const(mm * nn))
                })
                .collect(),
        );
        let cover = Formula::and(vec![
            Formula::and(x.within.clone()).implies(Formula::and(vec![
                x.row.clone().ge(Term::Const(0)),
                x.row.clone().lt(Term::Const(mm)),
                x.col.clone().ge(Term::Const(0)),
                x.col.clone().lt(Term::Const(nn)),
            ])),
            counted,
        ]);
        let distinct = Formula::or(
            x.vars
                .iter()
                .zip(&y.vars)
                .map(|(a, b)| ne(a.clone(), b.clone()))
                .collect(),
        );
        let mut both = x.within.clone();
        both.extend(y.within.iter().cloned());
        both.push(distinct);
        let once = Formula::and(both).implies(Formula::or(vec![
            ne(x.row.clone(), y.row.clone()),
            ne(x.col.clone(), y.col.clone()),
        ]));
        let name = self.f.buffers[c.buffer].name.clone();
        let mut region_text = Vec::new();
        for r in &c.ranges {
            let start = self.term(r.start);
            let end = start.clone().plus(self.term(r.extent));
            region_text.push(format!("{start}:{end}"));
        }
        let region_text = region_text.join(", ");
        let group_word = match atom.issue.granularity {
            IssueGranularity::Warp => "warp",
            IssueGranularity::Warpgroup => "warpgroup",
            IssueGranularity::Wavefront => "wavefront",
            IssueGranularity::Simdgroup => "SIMD group",
        };
        let group_word = if groups == 1 {
            group_word.to_string()
        } else {
            format!("{group_word}s")
        };
        let splits = grids
            .iter()
            .map(|(gm, gn)| format!("{gm}x{gn}"))
            .collect::<Vec<_>>()
            .join(", ");
        let what = format!(
            "accumulator fragments of {} on {groups} {group_word} (split {splits})",
            atom.name
        );
        // Coverage speaks of one holder.
        let cover_hypotheses: Vec<Formula> = hypotheses
            .iter()
            .filter(|h| {
                let mut primed = false;
                h.visit_vars(&mut |v| primed |= v.ends_with('\''));
                !primed
            })
            .cloned()
            .collect();
        self.push_raw(
            ObligationKind::FragmentCoverage {
                buffer: name.clone(),
                operand: "C",
            },
            span,
            format!("{what} cover {name}[{region_text}]"),
            cover_hypotheses,
            cover,
            x.shown.clone(),
            scope.clone(),
        );
        let mut shown = x.shown.clone();
        shown.extend(y.shown.iter().cloned());
        self.push_raw(
            ObligationKind::LayoutInjective {
                buffer: name.clone(),
                source: LayoutSource::Accumulator,
            },
            span,
            format!("{what} write each element of {name}[{region_text}] once"),
            hypotheses,
            once,
            shown,
            scope,
        );
    }
}

/// `values[split]` as nested selects.
fn select(split: &Term, values: Vec<Term>) -> Term {
    let mut values = values.into_iter().enumerate().rev();
    let Some((_, mut out)) = values.next() else {
        return Term::Const(0);
    };
    for (k, value) in values {
        if value == out {
            continue;
        }
        out = Term::Ite(
            Box::new(split.clone().eq(Term::Const(k as i128))),
            Box::new(value),
            Box::new(out),
        );
    }
    out
}
